"""Document AI `Document` JSON (REST v1, as `:process` returns it) into the contract's Pages.

Every response is first read through Google's own `Document` type (proto.py): both field spellings, a
ProcessResponse or a bare Document, one Document or the shards of a batch output. Two forms are read: the layout parser's `documentLayout.blocks` (layout_blocks.py) and, when there are
none, the older OCR form of `text` plus `pages[]` (ocr_pages.py). What the PDF itself says (page sizes,
text layers; PageFacts) fixes the page count, puts boxes in PDF points and tells text the processor
read from an image (ocr_applied) from a text layer it parsed. Any shape error is a DocumentAIFormatError
naming the field; nothing else is raised for any JSON input. A response whose text is (almost) nowhere on
its pages is an UnplacedTextError, never a bundle of blank pages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.contracts.bundle import BlockType, LineBox, OcrStatus, Page, Paragraph, WordBox
from arbiter.ingest.documentai.draft import BoxedLine, PageDraft, to_points
from arbiter.ingest.documentai.layout_blocks import layout_drafts
from arbiter.ingest.documentai.ocr_pages import ocr_drafts
from arbiter.ingest.documentai.proto import canonical, merge_shards
from arbiter.ingest.documentai.shape import DocumentAIFormatError, obj, objects, text
from arbiter.ingest.textpage import has_text_layer

# Bumped whenever the mapping changes what it produces: it is part of the extractor version (cache key).
MAPPING_VERSION = 2
# Without the PDF's page count, a response naming a page beyond this is taken as malformed.
MAX_PAGES = 5000
# A response that places less than this share of its text's visible characters on its pages has failed.
MIN_PLACED_SHARE = 0.1


class UnplacedTextError(DocumentAIFormatError):
    """The response read text from the PDF but did not say (or barely said) which pages it is on."""

    def __init__(self, placed: int, total: int) -> None:
        super().__init__(
            "text",
            f"is not placed on the pages: {placed:,} of its {total:,} characters are "
            "(the response's layout anchors do not point into its text)",
        )
        self.placed = placed
        self.total = total


@dataclass(frozen=True)
class PageFacts:
    """What the PDF says about one page: its size in points (None if unreadable) and whether its text layer
    is usable (by local ingestion's rules: not empty, not glyph garbage, not a stamp over a scan)."""

    width: float | None
    height: float | None
    has_text_layer: bool


def document_of(payload: Any) -> Mapping[str, Any]:
    """The Document of a ProcessResponse (`{"document": {...}}`) or a bare Document, in either spelling,
    as canonical JSON checked by the official type (proto.canonical); DocumentAIFormatError otherwise."""
    return canonical(payload)


def map_document(document: Any, facts: Sequence[PageFacts] | None = None) -> list[Page]:
    """The pages of a Document (or of a list of a batch output's shards), numbered from 1: one per PDF page
    when `facts` is given, else as many as the response names. Pages the response says nothing about are
    empty; text the response does not place on its pages is an UnplacedTextError."""
    doc = merge_shards(document if isinstance(document, list) else [document])
    limit = len(facts) if facts is not None else MAX_PAGES
    if objects(obj(doc, "documentLayout", ""), "blocks", "documentLayout"):
        drafts = layout_drafts(doc, limit)
    elif objects(doc, "pages", ""):
        drafts = ocr_drafts(doc, limit)
        _check_placed(text(doc, "text", ""), drafts)
    elif text(doc, "text", "").strip():
        raise DocumentAIFormatError(
            "text", "is not placed on any page: the response has no pages and no blocks"
        )
    else:
        drafts = {}
    count = len(facts) if facts is not None else max(drafts, default=0)
    return [
        _page(num, drafts.get(num) or PageDraft(), facts[num - 1] if facts is not None else None)
        for num in range(1, count + 1)
    ]


def _check_placed(full: str, drafts: Mapping[int, PageDraft]) -> None:
    """UnplacedTextError when the pages carry under MIN_PLACED_SHARE of the text's visible characters."""
    total = _visible(full)
    if total == 0:
        return
    placed = sum(_visible(draft.text) for draft in drafts.values())
    if placed < MIN_PLACED_SHARE * total:
        raise UnplacedTextError(placed, total)


def _visible(value: str) -> int:
    return sum(1 for char in value if not char.isspace())


def _line(line: BoxedLine, width: float, height: float) -> LineBox:
    start, end, box, words = line
    return LineBox(
        start=start,
        end=end,
        box=to_points(box, width, height),
        words=[WordBox(start=s, end=e, box=to_points(b, width, height)) for (s, e), b in words] or None,
    )


def _page(page_num: int, draft: PageDraft, fact: PageFacts | None) -> Page:
    page_text = draft.text
    size = draft.size_points
    if fact is not None and fact.width and fact.height:
        size = (fact.width, fact.height)
    lines = [_line(line, *size) for line in draft.lines] if size else []
    layer = fact.has_text_layer if fact is not None else has_text_layer(page_text)
    # Text on a page without a usable text layer can only have been read from its image by the processor.
    ocr_applied = fact is not None and not layer and has_text_layer(page_text)
    status = None
    if fact is not None:
        status = OcrStatus.NOT_NEEDED if layer else OcrStatus.APPLIED if ocr_applied else OcrStatus.NO_TEXT
    return Page(
        page_num=page_num,
        text=page_text,
        paragraphs=[
            Paragraph(text=page_text[s.start : s.end], block_type=s.kind, start=s.start, end=s.end)
            for s in draft.spans
        ],
        has_tables=any(s.kind == BlockType.TABLE for s in draft.spans),
        has_text_layer=layer,
        ocr_applied=ocr_applied,
        ocr_status=status,
        width=size[0] if size else None,
        height=size[1] if size else None,
        lines=lines,
    )
