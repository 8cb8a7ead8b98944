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
from arbiter.ingest.documentai.draft import BoxedLine, NormBox, PageDraft, Span, poly_box, size_in_points
from arbiter.ingest.documentai.shape import DocumentAIFormatError, integer, number, obj, objects, text
from arbiter.ingest.layout import MARGIN_SHARE

Range = tuple[int, int]


def anchor_range(layout: Mapping[str, Any], path: str, offset: int, size: int) -> Range | None:
    """The [start, end) of `Document.text` a Layout's textAnchor covers (first to last segment), or None.

    startIndex is omitted when 0; `offset` is subtracted from each index.
    """
    where = f"{path}.textAnchor"
    found: Range | None = None
    for seg_path, segment in objects(obj(layout, "textAnchor", path), "textSegments", where):
        start = min(max(integer(segment, "startIndex", seg_path) - offset, 0), size)
        end = min(max(integer(segment, "endIndex", seg_path) - offset, 0), size)
        if end > start:
            found = (start, end) if found is None else (min(found[0], start), max(found[1], end))
    return found


def anchor_offset(document: Mapping[str, Any], size: int) -> int:
    """What to subtract from a shard's anchors to count them from its own text: 0 when they fit it (Google
    writes each shard's anchors from its own text, whatever its shardInfo.textOffset); the shard's
    textOffset only when its page anchors overrun its text and fit once it is subtracted."""
    offset = integer(obj(document, "shardInfo", ""), "textOffset", "shardInfo")
    if offset <= 0:
        return 0
    ends = [
        integer(segment, "endIndex", seg_path)
        for path, page in objects(document, "pages", "")
        for seg_path, segment in objects(
            obj(obj(page, "layout", path), "textAnchor", f"{path}.layout"),
            "textSegments",
            f"{path}.layout.textAnchor",
        )
    ]
    if ends and max(ends) > size and min(ends) > offset and max(ends) <= offset + size:
        return offset
    return 0


def ocr_drafts(document: Mapping[str, Any], page_limit: int) -> dict[int, PageDraft]:
    """Page drafts (by 1-based page number) from a Document holding `text` and `pages`."""
    full = text(document, "text", "")
    offset = 0  # shards are merged first (proto.merge_shards): anchors count from this text
    pages = objects(document, "pages", "")
    drafts: dict[int, PageDraft] = {}
    for index, (path, page) in enumerate(pages):
        number_given = integer(page, "pageNumber", path)
        page_num = number_given if number_given > 0 else index + 1
        if page_num > page_limit:
            raise DocumentAIFormatError(
                f"{path}.pageNumber", f"names page {page_num}, beyond the {page_limit} page(s) of the PDF"
            )
        if page_num in drafts:
            raise DocumentAIFormatError(f"{path}.pageNumber", "repeats a page number")
        drafts[page_num] = _page(page, path, full, offset, whole=len(pages) == 1)
    return drafts


Ranged = list[tuple[Range, NormBox | None]]


def _page(page: Mapping[str, Any], path: str, full: str, offset: int, *, whole: bool) -> PageDraft:
    """One page. Its text is what its layout anchors; a response's only page whose layout anchors nothing
    has all of the text (a form parser page may anchor nothing but its form fields); any other page has
    the extent of everything on it that anchors text (paragraphs, blocks, lines, tokens, form fields,
    table cells)."""
    dim = obj(page, "dimension", path)
    where = f"{path}.dimension"
    width, height = number(dim, "width", where), number(dim, "height", where)
    pixels = (width, height) if width > 0 and height > 0 else None
    size = len(full)

    def ranged_layouts(layouts: list[tuple[str, Mapping[str, Any]]]) -> Ranged:
        found = []
        for lay_path, layout in layouts:
            span = anchor_range(layout, lay_path, offset, size)
            if span is not None:
                box = poly_box(obj(layout, "boundingPoly", lay_path), f"{lay_path}.boundingPoly", pixels)
                found.append((span, box))
        return found

    def ranged(key: str) -> Ranged:
        return ranged_layouts(
            [
                (f"{el_path}.layout", obj(element, "layout", el_path))
                for el_path, element in objects(page, key, path)
            ]
        )

    paragraphs, blocks, lines, tokens = (
        ranged("paragraphs"),
        ranged("blocks"),
        ranged("lines"),
        ranged("tokens"),
    )
    fields = ranged_layouts(
        [
            (f"{field_path}.{key}", obj(field, key, field_path))
            for field_path, field in objects(page, "formFields", path)
            for key in ("fieldName", "fieldValue")
        ]
    )
    cells = ranged_layouts(_cell_layouts(page, path))
    tables = _table_ranges(page, path, offset, size)
    page_layout = obj(page, "layout", path)
    page_span = anchor_range(page_layout, f"{path}.layout", offset, size)
    if page_span is None:
        covered = [span for span, _ in paragraphs + blocks + lines + tokens + fields + cells]
        anchored = bool(obj(page_layout, "textAnchor", f"{path}.layout").get("textSegments"))
        if whole and not anchored and full.strip():
            page_span = (0, size)
        elif covered:
            page_span = (min(s for s, _ in covered), max(e for _, e in covered))
        else:
            page_span = (0, 0)
    base = page_span[0]
    page_text = full[page_span[0] : page_span[1]].rstrip()
    draft = PageDraft(text=page_text, size_points=size_in_points(width, height, text(dim, "unit", where)))
    spans = paragraphs or blocks or lines
    if not spans and page_text.strip():
        spans = [((base, base + len(page_text)), None)]
    for span, box in spans:
        trimmed = _trim(page_text, span, base)
        if trimmed is not None:
            draft.spans.append(Span(*trimmed, _kind(span, box, tables)))
    draft.spans.sort(key=lambda s: (s.start, s.end))
    draft.lines = _boxes(page_text, base, [lines, paragraphs, blocks, fields, cells], tokens)
    return draft


def _boxes(page_text: str, base: int, levels: list[Ranged], tokens: Ranged) -> list[BoxedLine]:
    """Line boxes from the finest layout that has boxes: lines, else paragraphs, blocks, form fields or
    table cells; the tokens inside each become its words. A page with tokens only gets one box per token."""
    words = sorted(
        (trimmed, box)
        for span, box in tokens
        if box is not None and (trimmed := _trim(page_text, span, base)) is not None
    )
    for level in levels:
        boxed = sorted(
            (trimmed, box)
            for span, box in level
            if box is not None and (trimmed := _trim(page_text, span, base)) is not None
        )
        if boxed:
            return [
                (start, end, box, [w for w in words if start <= w[0][0] and w[0][1] <= end])
                for (start, end), box in boxed
            ]
    return [(start, end, box, []) for (start, end), box in words]


def _cell_layouts(page: Mapping[str, Any], path: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [
        (f"{cell_path}.layout", obj(cell, "layout", cell_path))
        for table_path, table in objects(page, "tables", path)
        for key in ("headerRows", "bodyRows")
        for row_path, row in objects(table, key, table_path)
        for cell_path, cell in objects(row, "cells", row_path)
    ]


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
