"""Document AI `Document` JSON (REST v1, as `:process` returns it) into the contract's Pages.

Two forms are read: the layout parser's `documentLayout.blocks` (layout_blocks.py) and, when there are
none, the older OCR form of `text` plus `pages[]` (ocr_pages.py). What the PDF itself says (page sizes,
text layers; PageFacts) fixes the page count, puts boxes in PDF points and tells text the processor
read from an image (ocr_applied) from a text layer it parsed. Any shape error is a DocumentAIFormatError
naming the field; nothing else is raised for any JSON input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.contracts.bundle import BlockType, LineBox, OcrStatus, Page, Paragraph
from arbiter.documentai.draft import PageDraft, to_points
from arbiter.documentai.layout_blocks import layout_drafts
from arbiter.documentai.ocr_pages import ocr_drafts
from arbiter.documentai.shape import DocumentAIFormatError, as_object, obj, objects, text
from arbiter.layout import has_text_layer

# Bumped whenever the mapping changes what it produces: it is part of the extractor version (cache key).
MAPPING_VERSION = 1
# Without the PDF's page count, a response naming a page beyond this is taken as malformed.
MAX_PAGES = 5000


@dataclass(frozen=True)
class PageFacts:
    """What the PDF says about one page: its size in points (None if unreadable) and whether its text layer
    is usable (by local ingestion's rules: not empty, not glyph garbage, not a stamp over a scan)."""

    width: float | None
    height: float | None
    has_text_layer: bool


def document_of(payload: Any) -> Mapping[str, Any]:
    """The Document of a ProcessResponse (`{"document": {...}}`), or the payload itself when it is one."""
    root = as_object(payload, "")
    if "document" in root:
        return obj(root, "document", "")
    return root


def map_document(document: Any, facts: Sequence[PageFacts] | None = None) -> list[Page]:
    """The pages of a Document, numbered from 1: one per PDF page when `facts` is given, else as many as
    the response names. Pages the response says nothing about are empty."""
    doc = as_object(document, "")
    limit = len(facts) if facts is not None else MAX_PAGES
    if objects(obj(doc, "documentLayout", ""), "blocks", "documentLayout"):
        drafts = layout_drafts(doc, limit)
    elif objects(doc, "pages", ""):
        drafts = ocr_drafts(doc, limit)
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


def _page(page_num: int, draft: PageDraft, fact: PageFacts | None) -> Page:
    page_text = draft.text
    size = draft.size_points
    if fact is not None and fact.width and fact.height:
        size = (fact.width, fact.height)
    lines = [LineBox(start=s, end=e, box=to_points(box, *size)) for s, e, box in draft.lines] if size else []
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
