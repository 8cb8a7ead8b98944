"""Layout for ingestion: the raw lines of a page (arbiter/ingest/textpage.py) typed into paragraphs —
running headers and footers, headings, lists, tables — and built into the bundle's Page.

Pure Python over plain line records, testable without a PDF.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from arbiter.contracts.bundle import BlockType, LineBox, OcrStatus, Page, Paragraph, WordBox
from arbiter.ingest.textpage import HEADING_MAX_CHARS, RawLine, RawPage, has_text_layer

# Share of the page height at the top and bottom where lines count as running headers and footers.
MARGIN_SHARE = 0.08
# Wider band in which a line repeated on most pages is still a running header or footer.
REPEAT_BAND_SHARE = 0.15

_BULLET = re.compile(r"^\s*(?:[•◦▪▫‣∙·●○■□➢➤✓✔\-–—*]|\(?\d{1,2}[.)]|\(?[a-z]\))\s+\S")
# What a _BULLET match can start with besides a digit or a-z: checked first, as it costs less than the match.
_BULLET_FIRST = frozenset("•◦▪▫‣∙·●○■□➢➤✓✔-–—*(")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_NON_LETTERS = re.compile(r"[\W\d_]+")

_Model = TypeVar("_Model", bound=BaseModel)

# Looking up an enum member costs ten times reading a global; the per-line code reads these.
_HEADER, _FOOTER, _TABLE, _LIST = BlockType.HEADER, BlockType.FOOTER, BlockType.TABLE, BlockType.LIST
_HEADING, _PARAGRAPH = BlockType.HEADING, BlockType.PARAGRAPH


def _repeat_key(line: RawLine, height: float | None) -> tuple[str, str] | None:
    if line.box is None or not height:
        return None
    if line.box[1] >= height * (1 - REPEAT_BAND_SHARE):
        zone = "top"
    elif line.box[3] <= height * REPEAT_BAND_SHARE:
        zone = "bottom"
    else:
        return None
    # Whitespace runs become one space and the ends go: split() uses the same whitespace as \s and strip().
    norm = " ".join(_DIGITS.sub("#", line.text.lower()).split())
    return (norm, zone) if norm else None


def repeated_margin_lines(pages: Sequence[RawPage]) -> set[tuple[str, str]]:
    """Lines (digits ignored, so "Page 2 of 9" matches) repeated near the top or bottom of most pages."""
    if len(pages) < 2:
        return set()
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    for page in pages:
        height = page.height
        if not height:
            continue
        # _repeat_key's band test, first done here because most lines are outside the band.
        top, bottom = height * (1 - REPEAT_BAND_SHARE), height * REPEAT_BAND_SHARE
        for line in page.lines:
            box = line.box
            if box is not None and (box[1] >= top or box[3] <= bottom):
                key = _repeat_key(line, height)
                if key is not None:
                    seen[key].add(page.page_num)
    needed = len(pages) if len(pages) == 2 else max(2, (len(pages) + 1) // 2)
    return {key for key, nums in seen.items() if len(nums) >= needed}


def _body_font_size(lines: Sequence[RawLine]) -> float:
    sizes = [ln.font_size for ln in lines if ln.font_size > 0]
    long_sizes = [
        ln.font_size for ln in lines if ln.font_size > 0 and len(ln.text.strip()) > HEADING_MAX_CHARS
    ]
    if len(long_sizes) >= 3:
        sizes = long_sizes
    return statistics.median(sizes) if sizes else 0.0


def _looks_like_heading(text: str, font_size: float, body_size: float) -> bool:
    stripped = text.strip()
    if not stripped or len(stripped) > HEADING_MAX_CHARS or stripped[-1] in ",;":
        return False
    larger = body_size > 0 and font_size >= 1.2 * body_size
    if not (larger or stripped.isupper()) or len(stripped.split()) > 12:
        return False
    if stripped.isupper():
        letters = len(_NON_LETTERS.sub("", stripped))
        if letters >= 3 and letters >= 0.6 * len(_SPACES.sub("", stripped)):
            return True
    return larger and stripped[-1] != "." and stripped.upper() != stripped.lower()


def classify_line(
    line: RawLine, height: float | None, repeated: set[tuple[str, str]], body: float
) -> BlockType:
    """The block type of one line, by position first (running headers/footers), then by content."""
    box = line.box
    if box is not None and height:
        if box[1] >= height * (1 - MARGIN_SHARE):
            return _HEADER
        if box[3] <= height * MARGIN_SHARE:
            return _FOOTER
        if repeated and (box[1] >= height * (1 - REPEAT_BAND_SHARE) or box[3] <= height * REPEAT_BAND_SHARE):
            key = _repeat_key(line, height)
            if key is not None and key in repeated:
                return _HEADER if key[1] == "top" else _FOOTER
    if line.wide_gaps >= 2:
        return _TABLE
    text = line.text
    first = text[:1]
    if first.isspace():
        first = text.lstrip()[:1]
    if (first in _BULLET_FIRST or first.isdigit() or "a" <= first <= "z") and _BULLET.match(text):
        return _LIST
    if _looks_like_heading(text, line.font_size, body):
        return _HEADING
    return _PARAGRAPH


def _continues(prev: RawLine, line: RawLine, kind: BlockType, para_kind: BlockType, first: RawLine) -> bool:
    """Whether `line` (of type `kind`) belongs to the paragraph that `prev` ends."""
    box, prev_box = line.box, prev.box
    if box is None or prev_box is None:
        return kind in (para_kind, _PARAGRAPH)
    line_height = max(prev_box[3] - prev_box[1], box[3] - box[1], 1.0)
    gap = prev_box[1] - box[3]
    if gap > 0.8 * line_height or gap < -0.5 * line_height:
        return False
    if kind == para_kind:
        return kind != _LIST  # every bullet starts its own item
    # An indented plain line under a bullet is that item's continuation.
    return (
        para_kind == _LIST and kind == _PARAGRAPH and first.box is not None and box[0] >= first.box[0] + 3.0
    )


def _trusted(cls: type[_Model]) -> Callable[[dict[str, Any]], _Model]:
    """A constructor of `cls` from a dict holding every field's already valid value.

    It does what `model_construct` does, minus the generic per-field loop that makes model_construct
    slower than validating; ingestion builds some 80 of these per page from values it computed itself.
    Only plain models qualify (no aliases, private attributes or post-init hook), checked here once.
    """
    fields = cls.model_fields
    if (
        cls.__pydantic_post_init__
        or cls.__private_attributes__
        or cls.__pydantic_root_model__
        or any(f.alias or f.validation_alias for f in fields.values())
    ):
        raise TypeError(f"{cls.__name__} is not a plain model")
    names = frozenset(fields)
    new, set_attr = cls.__new__, object.__setattr__
    # BaseModel's slots, set through their descriptors: quicker than by name.
    slots = vars(BaseModel)
    set_fields_set = slots["__pydantic_fields_set__"].__set__
    set_extra = slots["__pydantic_extra__"].__set__
    set_private = slots["__pydantic_private__"].__set__

    def construct(values: dict[str, Any]) -> _Model:
        obj = new(cls)
        set_attr(obj, "__dict__", values)
        set_fields_set(obj, set(names))
        set_extra(obj, None)
        set_private(obj, None)
        return obj

    return construct


_new_line_box = _trusted(LineBox)
_new_word_box = _trusted(WordBox)
_new_paragraph = _trusted(Paragraph)
_new_page = _trusted(Page)


def _paragraph(text: str, first: RawLine, last: RawLine, kind: BlockType) -> Paragraph:
    start, end = first.start, last.end
    return _new_paragraph({"text": text[start:end], "block_type": kind, "start": start, "end": end})


def build_page(
    raw: RawPage,
    repeated: set[tuple[str, str]],
    *,
    text_layer: bool | None = None,
    ocr_status: OcrStatus | None = None,
    ocr_confidence: float | None = None,
) -> Page:
    """A contract Page with typed paragraphs and line boxes from one page's raw lines.

    `text_layer` overrides the character-count test of has_text_layer (ingestion's junk-layer check
    decides it); an OCR_APPLIED status marks the text as read by OCR.
    """
    text, height = raw.text, raw.height
    body = _body_font_size(raw.lines)
    paragraphs: list[Paragraph] = []
    first: RawLine | None = None  # first and last line of the paragraph being gathered
    last: RawLine | None = None
    kind_of_paragraph = _PARAGRAPH
    has_tables = False
    for line in raw.lines:
        kind = classify_line(line, height, repeated, body)
        if kind is _TABLE:
            has_tables = True
        if first is not None and last is not None:
            if _continues(last, line, kind, kind_of_paragraph, first):
                last = line
                continue
            paragraphs.append(_paragraph(text, first, last, kind_of_paragraph))
        first = last = line
        kind_of_paragraph = kind
    if first is not None and last is not None:
        paragraphs.append(_paragraph(text, first, last, kind_of_paragraph))
    return _new_page(
        {
            "page_num": raw.page_num,
            "text": text,
            "paragraphs": paragraphs,
            "has_tables": has_tables,
            "has_text_layer": has_text_layer(text) if text_layer is None else text_layer,
            "ocr_applied": ocr_status is OcrStatus.APPLIED,
            "ocr_status": ocr_status,
            "ocr_confidence": ocr_confidence,
            "width": raw.width,
            "height": height,
            "lines": [
                _new_line_box({"start": ln.start, "end": ln.end, "box": ln.box, "words": _words(ln)})
                for ln in raw.lines
                if ln.box is not None
            ],
        }
    )


def _words(line: RawLine) -> list[WordBox] | None:
    if line.words is None:
        return None
    return [_new_word_box({"start": a, "end": b, "box": box}) for a, b, box in line.words]
