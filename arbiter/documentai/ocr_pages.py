"""The OCR form: `Document.text` plus `pages[]` whose layouts point into it by text anchors, into page drafts.

A page's text is the part of `Document.text` its layout anchors (trailing whitespace dropped). Its
paragraphs are the OCR paragraphs (else its blocks, else its lines), trimmed of surrounding whitespace;
OCR gives no types, so a paragraph inside a detected table is TABLE, one inside the top or bottom margin
band is HEADER or FOOTER (the band the local extractor uses), and the rest are PARAGRAPH. Lines keep
their boxes: normalizedVertices, else pixel vertices over the page's dimension.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arbiter.contracts.bundle import BlockType
from arbiter.documentai.draft import NormBox, PageDraft, Span, poly_box, size_in_points
from arbiter.documentai.shape import DocumentAIFormatError, integer, number, obj, objects, text
from arbiter.layout import MARGIN_SHARE

Range = tuple[int, int]


def anchor_range(layout: Mapping[str, Any], path: str, offset: int, size: int) -> Range | None:
    """The [start, end) of `Document.text` a Layout's textAnchor covers (first to last segment), or None.

    startIndex is omitted when 0; indices of a shard count from the whole document, hence `offset`.
    """
    where = f"{path}.textAnchor"
    found: Range | None = None
    for seg_path, segment in objects(obj(layout, "textAnchor", path), "textSegments", where):
        start = min(max(integer(segment, "startIndex", seg_path) - offset, 0), size)
        end = min(max(integer(segment, "endIndex", seg_path) - offset, 0), size)
        if end > start:
            found = (start, end) if found is None else (min(found[0], start), max(found[1], end))
    return found


def ocr_drafts(document: Mapping[str, Any], page_limit: int) -> dict[int, PageDraft]:
    """Page drafts (by 1-based page number) from a Document holding `text` and `pages`."""
    full = text(document, "text", "")
    offset = integer(obj(document, "shardInfo", ""), "textOffset", "shardInfo")
    drafts: dict[int, PageDraft] = {}
    for index, (path, page) in enumerate(objects(document, "pages", "")):
        number_given = integer(page, "pageNumber", path)
        page_num = number_given if number_given > 0 else index + 1
        if page_num > page_limit:
            raise DocumentAIFormatError(
                f"{path}.pageNumber", f"names page {page_num}, beyond the {page_limit} page(s) of the PDF"
            )
        if page_num in drafts:
            raise DocumentAIFormatError(f"{path}.pageNumber", "repeats a page number")
        drafts[page_num] = _page(page, path, full, offset)
    return drafts


def _page(page: Mapping[str, Any], path: str, full: str, offset: int) -> PageDraft:
    dim = obj(page, "dimension", path)
    where = f"{path}.dimension"
    width, height = number(dim, "width", where), number(dim, "height", where)
    pixels = (width, height) if width > 0 and height > 0 else None
    size = len(full)

    def ranged(key: str) -> list[tuple[Range, NormBox | None]]:
        found = []
        for el_path, element in objects(page, key, path):
            layout = obj(element, "layout", el_path)
            span = anchor_range(layout, f"{el_path}.layout", offset, size)
            if span is not None:
                box = poly_box(
                    obj(layout, "boundingPoly", f"{el_path}.layout"), f"{el_path}.layout.boundingPoly", pixels
                )
                found.append((span, box))
        return found

    paragraphs = ranged("paragraphs") or ranged("blocks") or ranged("lines")
    lines = ranged("lines")
    tables = _table_ranges(page, path, offset, size)
    page_span = anchor_range(obj(page, "layout", path), f"{path}.layout", offset, size)
    if page_span is None:
        covered = [span for span, _ in paragraphs + lines]
        page_span = (min(s for s, _ in covered), max(e for _, e in covered)) if covered else (0, 0)
    base = page_span[0]
    page_text = full[page_span[0] : page_span[1]].rstrip()
    draft = PageDraft(text=page_text, size_points=size_in_points(width, height, text(dim, "unit", where)))
    if not paragraphs and page_text.strip():
        paragraphs = [((base, base + len(page_text)), None)]
    for span, box in paragraphs:
        trimmed = _trim(page_text, span, base)
        if trimmed is not None:
            draft.spans.append(Span(*trimmed, _kind(span, box, tables)))
    draft.spans.sort(key=lambda s: (s.start, s.end))
    for span, box in lines:
        trimmed = _trim(page_text, span, base)
        if trimmed is not None and box is not None:
            draft.lines.append((trimmed[0], trimmed[1], box))
    draft.lines.sort(key=lambda line: (line[0], line[1]))
    return draft


def _table_ranges(page: Mapping[str, Any], path: str, offset: int, size: int) -> list[Range]:
    """Each table's range: its layout's anchor, else the extent of its cells' anchors."""
    found: list[Range] = []
    for table_path, table in objects(page, "tables", path):
        span = anchor_range(obj(table, "layout", table_path), f"{table_path}.layout", offset, size)
        if span is None:
            cells = [
                anchor_range(obj(cell, "layout", cell_path), f"{cell_path}.layout", offset, size)
                for key in ("headerRows", "bodyRows")
                for row_path, row in objects(table, key, table_path)
                for cell_path, cell in objects(row, "cells", row_path)
            ]
            known = [c for c in cells if c is not None]
            span = (min(s for s, _ in known), max(e for _, e in known)) if known else None
        if span is not None:
            found.append(span)
    return found


def _trim(page_text: str, span: Range, base: int) -> Range | None:
    """A document range as a range of the page's text without surrounding whitespace; None when empty."""
    start = min(max(span[0] - base, 0), len(page_text))
    end = min(max(span[1] - base, 0), len(page_text))
    while start < end and page_text[start].isspace():
        start += 1
    while end > start and page_text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _kind(span: Range, box: NormBox | None, tables: list[Range]) -> BlockType:
    middle = (span[0] + span[1]) / 2
    if any(start <= middle < end for start, end in tables):
        return BlockType.TABLE
    if box is not None:
        if box[3] <= MARGIN_SHARE:
            return BlockType.HEADER
        if box[1] >= 1 - MARGIN_SHARE:
            return BlockType.FOOTER
    return BlockType.PARAGRAPH
