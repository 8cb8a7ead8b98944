"""Layout for ingestion: reads a pdfium text page into lines with boxes, then types them into paragraphs.

Everything after `read_text_page` is pure Python over plain line records, testable without a PDF.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pypdfium2.raw as pdfium_c

from arbiter.contracts.bundle import BlockType, LineBox, Page, Paragraph

Box = tuple[float, float, float, float]

# Share of the page height at the top and bottom where lines count as running headers and footers.
MARGIN_SHARE = 0.08
# Wider band in which a line repeated on most pages is still a running header or footer.
REPEAT_BAND_SHARE = 0.15
# A page with fewer non-space characters than this has no usable text layer (a scan, a photo).
MIN_TEXT_CHARS = 3
# Lines longer than this are never headings.
HEADING_MAX_CHARS = 80

_BULLET = re.compile(r"^\s*(?:[•◦▪▫‣∙·●○■□➢➤✓✔\-–—*]|\(?\d{1,2}[.)]|\(?[a-z]\))\s+\S")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_NON_LETTERS = re.compile(r"[\W\d_]+")
_ASTRAL = re.compile(r"[\U00010000-\U0010FFFF]")


@dataclass(slots=True)
class RawLine:
    """One extracted text line: its span in page.text, box, font size and count of wide column gaps."""

    start: int
    end: int
    text: str
    box: Box | None
    font_size: float = 0.0
    wide_gaps: int = 0


@dataclass(slots=True)
class RawPage:
    """What the PDF engine gave for one page, before layout analysis."""

    page_num: int
    text: str
    lines: list[RawLine]
    width: float | None
    height: float | None


def _text_to_char_index(textpage: Any, raw: str, n_chars: int) -> Callable[[int], int]:
    """Maps a str offset in `raw` to pdfium's char index (which `count_rects` and font calls take).

    pdfium's text counts UTF-16 units (characters beyond U+FFFF count 2) and may skip or insert
    characters relative to its char list; when neither happens, which is nearly always, the map is
    the identity and costs no calls.
    """
    if raw.isascii() or not _ASTRAL.search(raw):
        to_units: Callable[[int], int] = _identity
        units = len(raw)
    else:
        prefix = [0]
        for ch in raw:
            prefix.append(prefix[-1] + (2 if ord(ch) > 0xFFFF else 1))
        to_units = prefix.__getitem__
        units = prefix[-1]
    char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    if to_units is _identity and units == n_chars and char_index(textpage, units - 1) == n_chars - 1:
        return _identity
    return lambda i: int(char_index(textpage, to_units(i)))


def _identity(i: int) -> int:
    return i


def read_text_page(textpage: Any, page_num: int, width: float, height: float) -> RawPage:
    """The text and lines (boxes, font sizes, column gaps) of a pdfium text page; the caller holds PDFIUM_LOCK."""
    n_chars = pdfium_c.FPDFText_CountChars(textpage)
    if n_chars <= 0:
        return RawPage(page_num, "", [], width, height)
    buf = (ctypes.c_ushort * (2 * n_chars + 2))()
    written = pdfium_c.FPDFText_GetText(textpage, 0, n_chars, buf)
    raw = ctypes.string_at(buf, max(written - 1, 0) * 2).decode("utf-16-le", errors="replace")
    text = raw.replace("\r\n", "\n")
    to_char = _text_to_char_index(textpage, raw, n_chars)
    identity = to_char is _identity
    count_rects, get_rect = pdfium_c.FPDFText_CountRects, pdfium_c.FPDFText_GetRect
    font_size_at = pdfium_c.FPDFText_GetFontSize
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    refs = (ctypes.byref(left), ctypes.byref(top), ctypes.byref(right), ctypes.byref(bottom))
    body_samples = 0

    lines: list[RawLine] = []
    # Where each line starts in `raw`; with only CRLF breaks, each earlier line adds one "\r".
    line_texts = text.split("\n")
    raw_starts: list[int] | None = None
    if raw.count("\n") != raw.count("\r\n"):
        raw_starts, raw_pos = [], 0
        for line_text in line_texts:
            raw_starts.append(raw_pos)
            raw_pos += len(line_text)
            raw_pos += 2 if raw.startswith("\r\n", raw_pos) else 1
    pos = 0
    for index, line_text in enumerate(line_texts):
        start = pos
        end = pos = start + len(line_text)
        pos += 1
        stripped = line_text.lstrip()
        if not stripped:
            continue
        raw_start = start + index if raw_starts is None else raw_starts[index]
        first = raw_start + len(line_text) - len(stripped)
        last = raw_start + len(line_text) - 1
        if not identity:
            first, last = to_char(first), to_char(last)
        if first < 0 or last < first:
            lines.append(RawLine(start, end, line_text, None))
            continue
        rects = []
        for i in range(count_rects(textpage, first, last - first + 1)):
            if get_rect(textpage, i, *refs):
                rects.append((left.value, bottom.value, right.value, top.value))
        box: Box | None = None
        if len(rects) == 1:
            r = rects[0]
            box = (round(r[0], 2), round(r[1], 2), round(r[2], 2), round(r[3], 2))
        elif rects:
            box = (
                round(min(r[0] for r in rects), 2),
                round(min(r[1] for r in rects), 2),
                round(max(r[2] for r in rects), 2),
                round(max(r[3] for r in rects), 2),
            )
        # Font size only matters for possible headings and, from a few long lines, the body size.
        font_size = 0.0
        if len(stripped) <= HEADING_MAX_CHARS or body_samples < 5:
            font_size = float(font_size_at(textpage, first))
            body_samples += len(stripped) > HEADING_MAX_CHARS
        gaps = count_wide_gaps(rects) if len(rects) >= 3 else 0
        lines.append(RawLine(start, end, line_text, box, font_size, gaps))
    return RawPage(page_num, text, lines, width, height)


def count_wide_gaps(rects: Sequence[Box]) -> int:
    """Horizontal gaps between consecutive text rects of one line wide enough to separate table columns."""
    if len(rects) < 3:
        return 0
    height = max(r[3] - r[1] for r in rects)
    threshold = max(1.5 * height, 8.0)
    ordered = sorted(rects, key=lambda r: r[0])
    return sum(1 for a, b in itertools.pairwise(ordered) if b[0] - a[2] >= threshold)


def has_text_layer(text: str) -> bool:
    """True when the page carries enough extractable characters to be read without OCR."""
    count = 0
    for ch in text:
        if not ch.isspace():
            count += 1
            if count >= MIN_TEXT_CHARS:
                return True
    return False


def _repeat_key(line: RawLine, height: float | None) -> tuple[str, str] | None:
    if line.box is None or not height:
        return None
    if line.box[1] >= height * (1 - REPEAT_BAND_SHARE):
        zone = "top"
    elif line.box[3] <= height * REPEAT_BAND_SHARE:
        zone = "bottom"
    else:
        return None
    norm = _SPACES.sub(" ", _DIGITS.sub("#", line.text.strip().lower()))
    return (norm, zone) if norm else None


def repeated_margin_lines(pages: Sequence[RawPage]) -> set[tuple[str, str]]:
    """Lines (digits ignored, so "Page 2 of 9" matches) repeated near the top or bottom of most pages."""
    if len(pages) < 2:
        return set()
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    for page in pages:
        for line in page.lines:
            key = _repeat_key(line, page.height)
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
            return BlockType.HEADER
        if box[3] <= height * MARGIN_SHARE:
            return BlockType.FOOTER
        if repeated and (box[1] >= height * (1 - REPEAT_BAND_SHARE) or box[3] <= height * REPEAT_BAND_SHARE):
            key = _repeat_key(line, height)
            if key is not None and key in repeated:
                return BlockType.HEADER if key[1] == "top" else BlockType.FOOTER
    if line.wide_gaps >= 2:
        return BlockType.TABLE
    if _BULLET.match(line.text):
        return BlockType.LIST
    if _looks_like_heading(line.text, line.font_size, body):
        return BlockType.HEADING
    return BlockType.PARAGRAPH


def _continues(prev: RawLine, line: RawLine, kind: BlockType, para_kind: BlockType, first: RawLine) -> bool:
    """Whether `line` (of type `kind`) belongs to the paragraph that `prev` ends."""
    if line.box is None or prev.box is None:
        return kind == para_kind or kind == BlockType.PARAGRAPH
    line_height = max(prev.box[3] - prev.box[1], line.box[3] - line.box[1], 1.0)
    gap = prev.box[1] - line.box[3]
    if gap > 0.8 * line_height or gap < -0.5 * line_height:
        return False
    if kind == para_kind:
        return kind != BlockType.LIST  # every bullet starts its own item
    # An indented plain line under a bullet is that item's continuation.
    return (
        para_kind == BlockType.LIST
        and kind == BlockType.PARAGRAPH
        and first.box is not None
        and line.box[0] >= first.box[0] + 3.0
    )


def build_page(raw: RawPage, repeated: set[tuple[str, str]]) -> Page:
    """A contract Page with typed paragraphs and line boxes from one page's raw lines."""
    body = _body_font_size(raw.lines)
    paragraphs: list[Paragraph] = []
    current: list[RawLine] = []
    current_kind = BlockType.PARAGRAPH
    has_tables = False

    def flush() -> None:
        if current:
            start, end = current[0].start, current[-1].end
            paragraphs.append(
                Paragraph(text=raw.text[start:end], block_type=current_kind, start=start, end=end)
            )

    for line in raw.lines:
        kind = classify_line(line, raw.height, repeated, body)
        has_tables = has_tables or kind == BlockType.TABLE
        if current and _continues(current[-1], line, kind, current_kind, current[0]):
            current.append(line)
            continue
        flush()
        current, current_kind = [line], kind
    flush()

    return Page(
        page_num=raw.page_num,
        text=raw.text,
        paragraphs=paragraphs,
        has_tables=has_tables,
        has_text_layer=has_text_layer(raw.text),
        ocr_applied=False,
        width=raw.width,
        height=raw.height,
        lines=[LineBox(start=ln.start, end=ln.end, box=ln.box) for ln in raw.lines if ln.box is not None],
    )
