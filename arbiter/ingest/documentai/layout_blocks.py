"""The layout parser form: `documentLayout.blocks`, a tree of text, table and list blocks, into page drafts.

Blocks are read depth first in the order given (the processor's reading order). Each text block is one
paragraph of its type; a table is one TABLE paragraph per page it covers (cells joined by a space, rows
by a newline, as a PDF's text layer reads a table) after its caption; each list entry is one LIST
paragraph. A paragraph goes on the first page of its `pageSpan` (a block without one inherits its
parent's page), so a section heading spanning pages 1-3 sits on page 1 while its children sit on their
own pages, and a table's rows follow their cells' pages. A page's text is its paragraphs joined by "\\n".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from arbiter.contracts.bundle import BlockType
from arbiter.ingest.documentai.draft import NormBox, PageDraft, Span, poly_box, split_lines, union
from arbiter.ingest.documentai.shape import DocumentAIFormatError, check_depth, integer, obj, objects, text

Blocks = list[tuple[str, Mapping[str, Any]]]

_KINDS = ("textBlock", "tableBlock", "listBlock")
# LayoutTextBlock.type values (API reference: paragraph, subtitle, heading-1 … heading-5, header, footer);
# "title" is listed among the layout parser's detected elements. Any other type reads as a paragraph.
TEXT_TYPES: dict[str, BlockType] = {
    "paragraph": BlockType.PARAGRAPH,
    "title": BlockType.HEADING,
    "subtitle": BlockType.HEADING,
    "header": BlockType.HEADER,
    "footer": BlockType.FOOTER,
}


def text_type(value: str) -> BlockType:
    """The block type of a LayoutTextBlock.type value."""
    key = value.strip().lower()
    if key.startswith("heading"):
        return BlockType.HEADING
    return TEXT_TYPES.get(key, BlockType.PARAGRAPH)


@dataclass
class _Item:
    page: int
    kind: BlockType
    text: str
    box: NormBox | None


def layout_drafts(document: Mapping[str, Any], page_limit: int) -> dict[int, PageDraft]:
    """Page drafts (by 1-based page number) from a Document holding `documentLayout.blocks`."""
    walker = _Walker(page_limit)
    items: list[_Item] = []
    walker.walk(objects(obj(document, "documentLayout", ""), "blocks", "documentLayout"), 1, 0, items)
    by_page: dict[int, list[_Item]] = defaultdict(list)
    for item in items:
        by_page[item.page].append(item)
    return {page: _draft(page_items) for page, page_items in by_page.items()}


def _draft(items: list[_Item]) -> PageDraft:
    draft = PageDraft()
    texts: list[str] = []
    pos = 0
    for item in items:
        if texts:
            pos += 1  # the "\n" between paragraphs
        texts.append(item.text)
        draft.spans.append(Span(pos, pos + len(item.text), item.kind))
        if item.box is not None:
            draft.lines.extend(split_lines(item.text, pos, item.box))
        pos += len(item.text)
    draft.text = "\n".join(texts)
    return draft


class _Walker:
    def __init__(self, page_limit: int) -> None:
        self.page_limit = page_limit

    def span(self, block: Mapping[str, Any], path: str, inherited: int) -> tuple[int, bool]:
        """The block's page (its pageStart, else the inherited one) and whether it stays on that page."""
        span = obj(block, "pageSpan", path)
        where = f"{path}.pageSpan"
        start, end = integer(span, "pageStart", where), integer(span, "pageEnd", where)
        if start <= 0:
            return inherited, end <= inherited
        if start > self.page_limit:
            raise DocumentAIFormatError(
                f"{where}.pageStart", f"names page {start}, beyond the {self.page_limit} page(s) of the PDF"
            )
        return start, end <= start

    @staticmethod
    def kind_of(block: Mapping[str, Any], path: str) -> str | None:
        present = [k for k in _KINDS if block.get(k) is not None]
        if len(present) > 1:
            raise DocumentAIFormatError(path, "holds more than one of textBlock, tableBlock and listBlock")
        return present[0] if present else None  # an image block (or an empty one) has no text

    def walk(self, blocks: Blocks, page: int, depth: int, out: list[_Item]) -> None:
        for path, block in blocks:
            check_depth(depth, path)
            start, one_page = self.span(block, path, page)
            box = poly_box(obj(block, "boundingBox", path), f"{path}.boundingBox") if one_page else None
            kind = self.kind_of(block, path)
            if kind == "textBlock":
                where = f"{path}.textBlock"
                body = obj(block, "textBlock", path)
                content = text(body, "text", where).strip()
                if content:
                    out.append(_Item(start, text_type(text(body, "type", where)), content, box))
                self.walk(objects(body, "blocks", where), start, depth + 1, out)
            elif kind == "tableBlock":
                self.table_items(obj(block, "tableBlock", path), f"{path}.tableBlock", start, box, depth, out)
            elif kind == "listBlock":
                self.list_items(obj(block, "listBlock", path), f"{path}.listBlock", start, depth, out)

    def table_items(
        self,
        table: Mapping[str, Any],
        path: str,
        page: int,
        box: NormBox | None,
        depth: int,
        out: list[_Item],
    ) -> None:
        caption = text(table, "caption", path).strip()
        if caption:
            out.append(_Item(page, BlockType.PARAGRAPH, caption, None))
        rows: list[tuple[int, str]] = []
        for key in ("headerRows", "bodyRows"):
            for row_path, row in objects(table, key, path):
                cells: list[str] = []
                row_page: int | None = None
                for cell_path, cell in objects(row, "cells", row_path):
                    parts: list[tuple[int, str, NormBox | None]] = []
                    self.gather(objects(cell, "blocks", cell_path), page, depth + 1, parts, None)
                    cell_text = " ".join(t for _, t, _ in parts)
                    if cell_text:
                        cells.append(cell_text)
                        row_page = row_page if row_page is not None else parts[0][0]
                if cells:
                    rows.append((row_page if row_page is not None else page, " ".join(cells)))
        pages = {p for p, _ in rows}
        for row_page, group in groupby(rows, key=lambda r: r[0]):
            kept = box if pages == {page} else None  # one box cannot place a table split over pages
            out.append(_Item(row_page, BlockType.TABLE, "\n".join(t for _, t in group), kept))

    def list_items(
        self, listing: Mapping[str, Any], path: str, page: int, depth: int, out: list[_Item]
    ) -> None:
        for entry_path, entry in objects(listing, "listEntries", path):
            parts: list[tuple[int, str, NormBox | None]] = []
            nested: Blocks = []
            self.gather(objects(entry, "blocks", entry_path), page, depth + 1, parts, nested)
            entry_page = parts[0][0] if parts else page
            if parts:
                box: NormBox | None = None
                for part_page, _, part_box in parts:
                    box = union(box, part_box) if part_page == entry_page else box
                out.append(_Item(entry_page, BlockType.LIST, "\n".join(t for _, t, _ in parts), box))
            self.walk(nested, entry_page, depth + 1, out)

    def gather(
        self,
        blocks: Blocks,
        page: int,
        depth: int,
        parts: list[tuple[int, str, NormBox | None]],
        nested: Blocks | None,
    ) -> None:
        """The text of a cell or list entry, in order, with each piece's page and box.

        Inside a list entry (`nested` given) tables and lists are set aside to become paragraphs of their
        own after the entry; inside a table cell everything is flattened into the cell's text.
        """
        for path, block in blocks:
            check_depth(depth, path)
            start, one_page = self.span(block, path, page)
            kind = self.kind_of(block, path)
            if kind == "textBlock":
                where = f"{path}.textBlock"
                body = obj(block, "textBlock", path)
                content = text(body, "text", where).strip()
                if content:
                    box = (
                        poly_box(obj(block, "boundingBox", path), f"{path}.boundingBox") if one_page else None
                    )
                    parts.append((start, content, box))
                self.gather(objects(body, "blocks", where), start, depth + 1, parts, nested)
            elif kind is not None and nested is not None:
                nested.append((path, block))
            elif kind == "tableBlock":
                table = obj(block, "tableBlock", path)
                where = f"{path}.tableBlock"
                for key in ("headerRows", "bodyRows"):
                    for row_path, row in objects(table, key, where):
                        for cell_path, cell in objects(row, "cells", row_path):
                            self.gather(objects(cell, "blocks", cell_path), start, depth + 1, parts, None)
            elif kind == "listBlock":
                where = f"{path}.listBlock"
                for entry_path, entry in objects(obj(block, "listBlock", path), "listEntries", where):
                    self.gather(objects(entry, "blocks", entry_path), start, depth + 1, parts, None)
