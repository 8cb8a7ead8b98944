"""The Document AI mapping: layout parser blocks and the OCR form become the same Pages local ingestion makes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import DocumentBundle, Page
from arbiter.ingest import IngestFailure, ingest_pdf
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.layout_blocks import text_type
from arbiter.ingest.documentai.mapping import PageFacts, UnplacedTextError, document_of, map_document
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.shape import MAX_DEPTH, DocumentAIFormatError
from arbiter.ingest.documentai.sources import ReplaySource
from tests.conftest import FIXTURES

EXAMPLES = FIXTURES / "documentai" / "examples"
REPLAY = FIXTURES / "documentai" / "replay"
REPLAYED = ("lab-quest-01", "admin-priorauth-02", "gen-caris-04", "record-30p")
LETTER = PageFacts(612.0, 792.0, True)


def layout(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"documentLayout": {"blocks": list(blocks)}}


def text(
    kind: str, content: str, page: int | None = None, end: int | None = None, **extra: Any
) -> dict[str, Any]:
    block: dict[str, Any] = {"textBlock": {"text": content, "type": kind}}
    if "blocks" in extra:
        block["textBlock"]["blocks"] = extra.pop("blocks")
    if page is not None:
        block["pageSpan"] = {"pageStart": page, "pageEnd": end if end is not None else page}
    return {**block, **extra}


def cell(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"blocks": list(blocks)}


def row(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells)}


def entry(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"blocks": list(blocks)}


def paras(page: Page) -> list[tuple[str, str]]:
    return [(p.block_type.value, p.text) for p in page.paragraphs]


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("paragraph", "paragraph"),
        ("subtitle", "heading"),
        ("title", "heading"),
        ("heading-1", "heading"),
        ("heading-5", "heading"),
        ("HEADING-2", "heading"),
        ("header", "header"),
        ("footer", "footer"),
        ("caption", "paragraph"),
        ("", "paragraph"),
    ],
)
def test_text_block_types_map_to_block_types(value: str, expected: str) -> None:
    """Each LayoutTextBlock.type of the API reference maps to a block type; unknown types are paragraphs."""
    assert text_type(value).value == expected


# Each case: blocks, page count, and the expected (type, text) paragraphs of each page.
LAYOUT_CASES: dict[str, tuple[dict[str, Any], int, list[list[tuple[str, str]]]]] = {
    "nested text blocks read depth first": (
        layout(
            text(
                "heading-1",
                "REPORT",
                1,
                blocks=[text("paragraph", "First.", 1), text("heading-2", "Part", 1)],
            ),
            text("paragraph", "Last.", 1),
        ),
        1,
        [[("heading", "REPORT"), ("paragraph", "First."), ("heading", "Part"), ("paragraph", "Last.")]],
    ),
    "a block without pageSpan inherits its parent's page": (
        layout(text("heading-1", "A", 2, blocks=[text("paragraph", "child")])),
        2,
        [[], [("heading", "A"), ("paragraph", "child")]],
    ),
    "a parent spanning pages sits on its first page, children on theirs": (
        layout(text("heading-1", "S", 1, 3, blocks=[text("paragraph", "p1", 1), text("paragraph", "p3", 3)])),
        3,
        [[("heading", "S"), ("paragraph", "p1")], [], [("paragraph", "p3")]],
    ),
    "a leaf spanning pages goes on its first page": (
        layout(text("paragraph", "across the break", 2, 3)),
        3,
        [[], [("paragraph", "across the break")], []],
    ),
    "surrounding whitespace is dropped and blank blocks skipped": (
        layout(text("paragraph", "  padded \n", 1), text("paragraph", " \n ", 1)),
        1,
        [[("paragraph", "padded")]],
    ),
    "a table: caption, then header and body rows, cells joined by a space": (
        layout(
            {
                "pageSpan": {"pageStart": 1, "pageEnd": 1},
                "tableBlock": {
                    "caption": "Table 1",
                    "headerRows": [row(cell(text("paragraph", "Test")), cell(text("paragraph", "Result")))],
                    "bodyRows": [row(cell(text("paragraph", "WBC")), cell(text("paragraph", "5.2")))],
                },
            }
        ),
        1,
        [[("paragraph", "Table 1"), ("table", "Test Result\nWBC 5.2")]],
    ),
    "empty cells and rows add nothing": (
        layout(
            {"tableBlock": {"bodyRows": [row(cell(), cell(text("paragraph", "x"))), row(cell(), cell())]}}
        ),
        1,
        [[("table", "x")]],
    ),
    "a cell's nested blocks, lists included, are flattened into its text": (
        layout(
            {
                "tableBlock": {
                    "bodyRows": [
                        row(
                            cell(text("paragraph", "232"), text("paragraph", "(repeat)")),
                            cell({"listBlock": {"listEntries": [entry(text("paragraph", "140-400"))]}}),
                        )
                    ]
                }
            }
        ),
        1,
        [[("table", "232 (repeat) 140-400")]],
    ),
    "a table's rows follow their cells' pages": (
        layout(
            {
                "pageSpan": {"pageStart": 1, "pageEnd": 2},
                "tableBlock": {
                    "bodyRows": [
                        row(cell(text("paragraph", "a", 1)), cell(text("paragraph", "1", 1))),
                        row(cell(text("paragraph", "b", 2)), cell(text("paragraph", "2", 2))),
                        row(cell(text("paragraph", "c", 2))),
                    ]
                },
            }
        ),
        2,
        [[("table", "a 1")], [("table", "b 2\nc")]],
    ),
    "a list: one LIST paragraph per entry": (
        layout(
            {
                "listBlock": {
                    "type": "unordered",
                    "listEntries": [entry(text("paragraph", "• a")), entry(text("paragraph", "• b"))],
                }
            }
        ),
        1,
        [[("list", "• a"), ("list", "• b")]],
    ),
    "an entry's blocks join into one item; nested lists and tables follow it": (
        layout(
            {
                "listBlock": {
                    "listEntries": [
                        entry(
                            text("paragraph", "• report"),
                            text("paragraph", "continued"),
                            {
                                "listBlock": {
                                    "type": "ordered",
                                    "listEntries": [entry(text("paragraph", "1. sub"))],
                                }
                            },
                            {
                                "tableBlock": {
                                    "bodyRows": [
                                        row(
                                            cell(text("paragraph", "2025")), cell(text("paragraph", "FOLFOX"))
                                        )
                                    ]
                                }
                            },
                        )
                    ]
                }
            }
        ),
        1,
        [[("list", "• report\ncontinued"), ("list", "1. sub"), ("table", "2025 FOLFOX")]],
    ),
    "list entries follow their blocks' pages": (
        layout(
            {
                "listBlock": {
                    "listEntries": [entry(text("paragraph", "• a", 1)), entry(text("paragraph", "• b", 2))]
                }
            }
        ),
        2,
        [[("list", "• a")], [("list", "• b")]],
    ),
    "a block with no text, table or list (an image) adds nothing": (
        layout({"blockId": "img", "pageSpan": {"pageStart": 1}}, text("paragraph", "after", 1)),
        1,
        [[("paragraph", "after")]],
    ),
    "header and footer blocks keep their types": (
        layout(
            text("header", "Clinic — MRN 1", 1),
            text("paragraph", "body", 1),
            text("footer", "Page 1 of 1", 1),
        ),
        1,
        [[("header", "Clinic — MRN 1"), ("paragraph", "body"), ("footer", "Page 1 of 1")]],
    ),
}


@pytest.mark.parametrize("name", list(LAYOUT_CASES))
def test_layout_blocks_map_to_typed_paragraphs(name: str) -> None:
    """The layout parser's blocks become typed paragraphs on the pages their spans name (table of cases)."""
    document, count, expected = LAYOUT_CASES[name]
    pages = map_document(document, [LETTER] * count)
    assert [paras(page) for page in pages] == expected
    for page in pages:
        assert page.text == "\n".join(p.text for p in page.paragraphs)
        assert all(page.text[p.start : p.end] == p.text for p in page.paragraphs)
        assert page.has_tables == any(p.block_type == "table" for p in page.paragraphs)


def test_nested_multipage_example() -> None:
    """The hand-shaped nested example: headers, subtitle, inherited pages, a multi-page leaf, an empty page."""
    pages = map_document(document_of(example("layout-nested-multipage")), [LETTER] * 3)
    assert [paras(p) for p in pages] == [
        [
            ("header", "Riverside Oncology Associates  MRN 000-55-0101"),
            ("heading", "DISCHARGE SUMMARY"),
            ("heading", "Inpatient stay, oncology ward"),
            ("paragraph", "Admitted on 03/02/2026 with fever and neutropenia."),
            ("heading", "Hospital course"),
            ("paragraph", "Started on cefepime.\nCultures negative at 48 hours."),
            ("heading", "Medications at discharge"),
            ("footer", "Page 1 of 3"),
        ],
        [
            ("paragraph", "Counts recovered on day 5."),
            ("paragraph", "Follow-up in clinic in two weeks; this note continues overleaf."),
            ("footer", "Page 2 of 3"),
        ],
        [],
    ]
    assert pages[2].text == ""
    assert pages[2].lines == []


def test_tables_example_splits_a_table_over_two_pages() -> None:
    """A table whose rows sit on pages 1 and 2 is a TABLE paragraph on each; both pages have tables."""
    pages = map_document(document_of(example("layout-tables")), [LETTER] * 2)
    assert [paras(p) for p in pages] == [
        [
            ("heading", "COMPLETE BLOOD COUNT"),
            ("paragraph", "Table 1. Results"),
            ("table", "Test Result Range\nWBC 5.2 4.0-10.5\nHemoglobin 11.7-15.5"),
        ],
        [("table", "Platelets 232 (repeat) 140-400"), ("table", "TSH 2.1")],
    ]
    assert [p.has_tables for p in pages] == [True, True]
    # The split table's one box cannot be placed on either page; the single-page table's can.
    assert [(line.start, line.end) for line in pages[1].lines] == [(31, 38)]


def test_lists_example() -> None:
    """Entries, continuation blocks, a nested ordered list and a table inside an entry, over two pages."""
    pages = map_document(document_of(example("layout-lists")), [LETTER] * 2)
    assert [paras(p) for p in pages] == [
        [
            ("paragraph", "Documents enclosed:"),
            ("list", "• Most recent clinic note"),
            ("list", "• Pathology report\nconfirming the diagnosis"),
            ("list", "1. Left breast core biopsy"),
            ("list", "2. Sentinel node"),
        ],
        [("list", "• Treatment history"), ("table", "2025 FOLFOX")],
    ]


def test_ocr_pages_example() -> None:
    """The older OCR form: page texts from text anchors (int64 strings, omitted zeros), typed by table and margin."""
    pages = map_document(document_of(example("ocr-pages")), [LETTER] * 3)
    assert [p.text for p in pages] == [
        "Riverside Oncology Associates\nProgress note\nPatient seen for cycle 3.\nTolerating treatment well.",
        "Test Result\nTSH 2.1\nPlan: continue.",
        "",
    ]
    assert [paras(p) for p in pages] == [
        [
            ("header", "Riverside Oncology Associates"),
            ("paragraph", "Progress note"),
            ("paragraph", "Patient seen for cycle 3.\nTolerating treatment well."),
        ],
        [("table", "Test Result\nTSH 2.1"), ("paragraph", "Plan: continue.")],
        [],
    ]
    assert [p.has_tables for p in pages] == [False, True, False]
    # Pixel vertices over the 1700 x 2200 pixel page, in points on a letter page from the bottom-left.
    first = pages[0].lines[0]
    assert (first.start, first.end) == (0, 29)
    assert first.box == (61.2, 752.4, 324.0, 770.4)
    assert [(ln.start, ln.end) for ln in pages[0].lines] == [(0, 29), (30, 43), (44, 69), (70, 96)]


def test_ocr_form_without_facts_uses_dimension_in_points() -> None:
    """Without the PDF, OCR boxes are placed only when the page dimension has a unit convertible to points."""
    doc = example("ocr-pages")["document"]
    pixels = map_document(doc)
    assert [p.width for p in pixels] == [None, None, None]
    assert pixels[0].lines == []
    doc["pages"][0]["dimension"] = {"width": 1700, "height": 2200, "unit": "pt"}
    doc["pages"][1]["dimension"] = {"width": 8.5, "height": 11, "unit": "inches"}
    points = map_document(doc)
    assert points[0].lines[0].box == (170.0, 2090.0, 900.0, 2140.0)
    assert [(p.width, p.height) for p in points] == [(1700.0, 2200.0), (612.0, 792.0), (None, None)]


def test_boxes_become_pdf_points_split_by_line() -> None:
    """A block's normalised box becomes PDF points from the bottom-left, one equal strip per text line."""
    box = {
        "normalizedVertices": [
            {"x": 0.1, "y": 0.5},
            {"x": 0.6, "y": 0.5},
            {"x": 0.6, "y": 0.6},
            {"y": 0.6, "x": 0.1},
        ]
    }
    page = map_document(layout(text("paragraph", "one\ntwo", 1, boundingBox=box)), [LETTER])[0]
    assert [(ln.start, ln.end, ln.box) for ln in page.lines] == [
        (0, 3, (61.2, 356.4, 367.2, 396.0)),
        (4, 7, (61.2, 316.8, 367.2, 356.4)),
    ]
    without_size = map_document(layout(text("paragraph", "one", 1, boundingBox=box)))[0]
    assert without_size.lines == []
    assert without_size.width is None


@pytest.mark.parametrize(
    ("layer", "content", "has_text_layer", "ocr_applied", "status"),
    [
        (True, "Typed text", True, False, "not_needed"),
        (False, "Read from the image", False, True, "applied"),
        (False, "", False, False, "no_text"),
        (True, "", True, False, "not_needed"),
    ],
)
def test_text_layer_and_ocr_flags_come_from_the_pdf(
    layer: bool, content: str, has_text_layer: bool, ocr_applied: bool, status: str
) -> None:
    """has_text_layer is the PDF's own; text on a page without one was OCR'd by the processor."""
    document = layout(text("paragraph", content, 1)) if content else layout()
    page = map_document(document, [PageFacts(612.0, 792.0, layer)])[0]
    assert (page.has_text_layer, page.ocr_applied, page.ocr_status) == (has_text_layer, ocr_applied, status)
    if content:
        assert map_document(document)[0].ocr_status is None  # without the PDF it cannot say


def test_pages_without_facts_follow_the_response() -> None:
    """Without the PDF, the response's highest page is the page count and text decides has_text_layer."""
    pages = map_document(layout(text("paragraph", "late text", 3)))
    assert [p.page_num for p in pages] == [1, 2, 3]
    assert [p.has_text_layer for p in pages] == [False, False, True]
    assert map_document({}) == []


def test_process_response_and_bare_document_are_both_accepted() -> None:
    """document_of unwraps a ProcessResponse and reads a bare Document as it is (canonical JSON stays)."""
    doc = layout(text("paragraph", "x", 1))
    assert document_of({"document": doc, "humanReviewStatus": {}}) == doc
    assert document_of(doc) == doc


@pytest.mark.parametrize(
    "document",
    [{"documentLayout": []}, layout("block")],
)
def test_values_protobuf_reads_as_empty_messages_map_to_nothing(document: Any) -> None:
    """protobuf's JSON parser (the official type's) reads a list or string where a message belongs as an
    empty message: such a response places nothing, and with no text that is an empty page, not a crash."""
    pages = map_document(document, [LETTER])
    assert [page.text for page in pages] == [""]


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ("a string", ""),
        ([], ""),
        ({"documentLayout": {"blocks": {}}}, "documentLayout.blocks"),
        (layout({"textBlock": {"text": 5}}), "documentLayout.blocks[0].textBlock.text"),
        (
            layout({"pageSpan": {"pageStart": "one"}, "textBlock": {"text": "x"}}),
            "documentLayout.blocks[0].pageSpan.pageStart",
        ),
        (
            layout({"pageSpan": {"pageStart": 9}, "textBlock": {"text": "x"}}),
            "documentLayout.blocks[0].pageSpan.pageStart",
        ),
        (layout({"textBlock": {"text": "x"}, "tableBlock": {}}), "documentLayout.blocks[0]"),
        (
            layout({"textBlock": {"text": "x"}, "boundingBox": {"normalizedVertices": [{"x": "left"}, {}]}}),
            "documentLayout.blocks[0].boundingBox.normalizedVertices[0].x",
        ),
        (
            layout({"textBlock": {"text": "x"}, "boundingBox": {"normalizedVertices": [{"x": "NaN"}, {}]}}),
            "documentLayout.blocks[0].boundingBox.normalizedVertices[0].x",
        ),
        (
            layout({"tableBlock": {"bodyRows": [{"cells": "a"}]}}),
            "documentLayout.blocks[0].tableBlock.bodyRows[0].cells",
        ),
        (
            layout({"listBlock": {"listEntries": [{"blocks": [{"textBlock": {"text": True}}]}]}}),
            "documentLayout.blocks[0].listBlock.listEntries[0].blocks[0].textBlock.text",
        ),
        (
            {"text": "abc", "pages": [{"layout": {"textAnchor": {"textSegments": [{"endIndex": "x"}]}}}]},
            "pages[0].layout.textAnchor.textSegments[0].endIndex",
        ),
        ({"text": "abc", "pages": [{"pageNumber": 1}, {"pageNumber": 1}]}, "pages[1].pageNumber"),
        ({"text": "abc"}, "text"),
    ],
)
def test_malformed_documents_raise_a_format_error_naming_the_field(document: Any, path: str) -> None:
    """A wrong shape is a DocumentAIFormatError whose path names the field (and whose message quotes no value)."""
    with pytest.raises(DocumentAIFormatError) as caught:
        map_document(document, [LETTER] * 2)
    assert caught.value.path == path


def test_nesting_deeper_than_the_limit_is_a_format_error() -> None:
    """Blocks nested past MAX_DEPTH levels are refused, not recursed into without bound."""
    block = text("paragraph", "leaf")
    for _ in range(MAX_DEPTH + 2):
        block = text("paragraph", "x", blocks=[block])
    with pytest.raises(DocumentAIFormatError, match="levels deep"):
        map_document(layout(block), [LETTER])


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
# Document-shaped values: the API's own fields with values of the right type (int64 as strings too).
_INT = st.integers(0, 4) | st.integers(0, 4).map(str)
_NUM = st.floats(-0.2, 1.2) | st.just("0.5")
_TEXT = st.sampled_from(["", " ", "A", "line\nnext", "• item", "Test 5.2", "  x  "])
_VERTICES = st.lists(st.fixed_dictionaries({}, optional={"x": _NUM, "y": _NUM}), max_size=4)
_POLY = st.fixed_dictionaries({}, optional={"normalizedVertices": _VERTICES, "vertices": _VERTICES})
_COMMON = {
    "pageSpan": st.fixed_dictionaries({}, optional={"pageStart": _INT, "pageEnd": _INT}),
    "boundingBox": _POLY,
}
_TYPES = st.sampled_from(["paragraph", "heading-1", "subtitle", "header", "footer", "other"])


def _block(kind: str, body: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({kind: body}, optional=_COMMON)


def _blocks(size: int) -> st.SearchStrategy[Any]:
    return st.lists(_BLOCK, max_size=size)


_CELLS = st.lists(st.fixed_dictionaries({}, optional={"blocks": st.deferred(lambda: _blocks(2))}), max_size=3)
_ROWS = st.lists(st.fixed_dictionaries({}, optional={"cells": _CELLS}), max_size=3)
_ENTRIES = st.lists(
    st.fixed_dictionaries({}, optional={"blocks": st.deferred(lambda: _blocks(3))}), max_size=3
)
_BLOCK: st.SearchStrategy[Any] = st.deferred(
    lambda: (
        _block(
            "textBlock",
            st.fixed_dictionaries({"text": _TEXT}, optional={"type": _TYPES, "blocks": _blocks(3)}),
        )
        | _block(
            "tableBlock",
            st.fixed_dictionaries({}, optional={"caption": _TEXT, "headerRows": _ROWS, "bodyRows": _ROWS}),
        )
        | _block("listBlock", st.fixed_dictionaries({}, optional={"listEntries": _ENTRIES}))
        | st.fixed_dictionaries({}, optional=_COMMON)
    )
)
_INDEX = st.integers(0, 60).map(str)
_SEGMENTS = st.lists(
    st.fixed_dictionaries({}, optional={"startIndex": _INDEX, "endIndex": _INDEX}), max_size=2
)
_LAYOUT = st.fixed_dictionaries(
    {}, optional={"textAnchor": st.fixed_dictionaries({"textSegments": _SEGMENTS}), "boundingPoly": _POLY}
)
_ELEMENTS = st.lists(st.fixed_dictionaries({"layout": _LAYOUT}), max_size=3)
_DIMENSION = st.fixed_dictionaries(
    {"width": st.sampled_from([0, 612, 1700]), "height": st.sampled_from([0, 792, 2200])},
    optional={"unit": st.sampled_from(["pixels", "points", "inches"])},
)
_PAGE = st.fixed_dictionaries(
    {},
    optional={
        "pageNumber": st.integers(0, 3),
        "dimension": _DIMENSION,
        "layout": _LAYOUT,
        "paragraphs": _ELEMENTS,
        "blocks": _ELEMENTS,
        "lines": _ELEMENTS,
        "tables": _ELEMENTS,
    },
)
_DOCUMENTS = st.fixed_dictionaries({"documentLayout": st.fixed_dictionaries({"blocks": _blocks(4)})}) | (
    st.fixed_dictionaries(
        {"text": st.text(max_size=60)},
        optional={
            "pages": st.lists(_PAGE, max_size=3),
            "shardInfo": st.fixed_dictionaries({"textOffset": _INDEX}),
        },
    )
)
_WRONG = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4) | st.just([]) | st.just({})
)


def _fields(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every field (key of an object) inside a JSON value."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*path, key))
            found.extend(_fields(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_fields(item, (*path, index)))
    return found


def _never_crashes(document: Any, facts: list[PageFacts] | None) -> None:
    try:
        pages = map_document(document, facts)
    except DocumentAIFormatError:
        return
    for page in pages:
        assert all(page.text[p.start : p.end] == p.text for p in page.paragraphs)
        assert all(0 <= line.start <= line.end <= len(page.text) for line in page.lines)


@given(document=_JSON, count=st.none() | st.integers(0, 3))
def test_no_json_crashes_the_mapper(document: Any, count: int | None) -> None:
    """Any JSON value maps to pages or raises DocumentAIFormatError, never anything else."""
    _never_crashes(document, [LETTER] * count if count is not None else None)


@given(document=_DOCUMENTS, count=st.none() | st.integers(1, 3))
def test_no_document_shaped_json_crashes_the_mapper(document: dict[str, Any], count: int | None) -> None:
    """Documents built from the API's own fields map to consistent pages or a DocumentAIFormatError."""
    _never_crashes(document, [LETTER] * count if count is not None else None)


@given(document=_DOCUMENTS, data=st.data())
def test_one_field_of_the_wrong_type_never_crashes_the_mapper(
    document: dict[str, Any], data: st.DataObject
) -> None:
    """A Document with one field set to a value of any other type still maps or raises DocumentAIFormatError."""
    fields = _fields(document)
    if fields:
        *parents, last = data.draw(st.sampled_from(fields))
        target: Any = document
        for key in parents:
            target = target[key]
        target[last] = data.draw(_WRONG)
    _never_crashes(document, [LETTER] * 3)


# -- the recorded examples equal local ingestion -------------------------------------------------------


def _documentai_bundle(pdf: Path) -> DocumentBundle:
    settings = DocumentAISettings(replay_dir=REPLAY)
    with DocumentAIIngestor(settings, ReplaySource(REPLAY)) as ingestor:
        result = ingestor.ingest(pdf)
    assert isinstance(result, DocumentBundle), result
    return result


@pytest.mark.parametrize("doc_id", REPLAYED)
def test_recorded_response_gives_the_same_bundle_as_local_ingestion(doc_id: str) -> None:
    """Page texts, paragraphs (text, type, offsets), flags and sizes are equal; every line box contains the local line."""
    pdf = FIXTURES / "pdfs" / f"{doc_id}.pdf"
    local = ingest_pdf(pdf)
    assert isinstance(local, DocumentBundle)
    remote = _documentai_bundle(pdf)
    assert remote.extractor.name == "documentai"
    assert (remote.doc_id, remote.file_sha256, remote.total_pages) == (
        local.doc_id,
        local.file_sha256,
        local.total_pages,
    )
    for ours, theirs in zip(remote.pages, local.pages, strict=True):
        assert ours.page_num == theirs.page_num
        assert ours.text == theirs.text
        assert [p.model_dump() for p in ours.paragraphs] == [p.model_dump() for p in theirs.paragraphs]
        assert (ours.has_tables, ours.has_text_layer, ours.ocr_applied, ours.ocr_status) == (
            theirs.has_tables,
            theirs.has_text_layer,
            theirs.ocr_applied,
            theirs.ocr_status,
        )
        assert (ours.width, ours.height) == (theirs.width, theirs.height)
        boxes = {(line.start, line.end): line.box for line in ours.lines}
        assert set(boxes) == {(line.start, line.end) for line in theirs.lines}
        for line in theirs.lines:
            left, bottom, right, top = boxes[(line.start, line.end)]
            middle = (line.box[1] + line.box[3]) / 2
            # The block's box is shared by its lines: it covers each line across and holds its middle.
            assert left <= line.box[0] + 0.05
            assert right >= line.box[2] - 0.05
            assert bottom - 0.05 <= middle <= top + 0.05


# -- shards, spellings, boxes, unplaced text (issue 13; the real responses are in test_documentai_corpus) --


def _seg(start: int, end: int) -> dict[str, Any]:
    return {"textAnchor": {"textSegments": [{"startIndex": str(start), "endIndex": str(end)}]}}


def _box(x0: float, y0: float, x1: float, y1: float) -> dict[str, Any]:
    return {
        "normalizedVertices": [{"x": x0, "y": y0}, {"x": x1, "y": y0}, {"x": x1, "y": y1}, {"x": x0, "y": y1}]
    }


def _shard(
    index: int, count: int, offset: int, body: str, first_page: int, *, global_anchors: bool = False
) -> Any:
    base = offset if global_anchors else 0
    return {
        "shardInfo": {"shardIndex": str(index), "shardCount": str(count), "textOffset": str(offset)},
        "text": body,
        "pages": [{"pageNumber": first_page, "layout": _seg(base, base + len(body))}],
    }


def test_shards_merge_with_anchors_counted_from_each_shards_own_text() -> None:
    """Three shards in any order give three pages, each with its own shard's text."""
    shards = [
        _shard(0, 3, 0, "first page\n", 1),
        _shard(1, 3, 11, "second page\n", 2),
        _shard(2, 3, 23, "third\n", 3),
    ]
    pages = map_document([shards[2], shards[0], shards[1]], [LETTER] * 3)
    assert [page.text for page in pages] == ["first page", "second page", "third"]


def test_shards_whose_anchors_count_from_the_whole_document_merge_too() -> None:
    """A shard writer that counts anchors from the whole document's text (not Google's) is recognised."""
    shards = [_shard(0, 2, 0, "alpha\n", 1), _shard(1, 2, 6, "beta\n", 2, global_anchors=True)]
    pages = map_document(shards, [LETTER] * 2)
    assert [page.text for page in pages] == ["alpha", "beta"]


@pytest.mark.parametrize(
    ("shards", "path"),
    [
        ([_shard(0, 2, 0, "alpha\n", 1)], "shardInfo"),
        ([_shard(0, 2, 0, "alpha\n", 1), _shard(0, 2, 6, "beta\n", 2)], "shardInfo"),
        ([_shard(0, 2, 0, "alpha\n", 1), _shard(1, 2, 9, "beta\n", 2)], "shardInfo.textOffset"),
        ([], ""),
    ],
)
def test_an_incomplete_or_inconsistent_set_of_shards_is_a_format_error(shards: list[Any], path: str) -> None:
    """Missing, repeated or misplaced shards fail loudly instead of leaving pages blank."""
    with pytest.raises(DocumentAIFormatError) as caught:
        map_document(shards, [LETTER] * 2)
    assert caught.value.path == path


def test_snake_case_and_mixed_spellings_map_like_lower_camel_case() -> None:
    """proto field names (snake_case), as Google's samples save responses, read as the REST spelling."""
    camel = {
        "text": "Hello world\n",
        "pages": [
            {
                "pageNumber": 1,
                "dimension": {"width": 1000, "height": 1000, "unit": "pixels"},
                "layout": _seg(0, 12),
                "lines": [{"layout": {**_seg(0, 11), "boundingPoly": _box(0.1, 0.1, 0.5, 0.2)}}],
            }
        ],
    }
    snake = {
        "text": "Hello world\n",
        "pages": [
            {
                "page_number": 1,
                "dimension": {"width": 1000, "height": 1000, "unit": "pixels"},
                "layout": {"text_anchor": {"text_segments": [{"start_index": "0", "end_index": "12"}]}},
                "lines": [
                    {
                        "layout": {
                            "textAnchor": {"text_segments": [{"end_index": 11}]},
                            "bounding_poly": {
                                "normalized_vertices": _box(0.1, 0.1, 0.5, 0.2)["normalizedVertices"]
                            },
                        }
                    }
                ],
            }
        ],
    }
    assert map_document(snake, [LETTER]) == map_document(camel, [LETTER])
    assert map_document(snake, [LETTER])[0].lines[0].box == (61.2, 633.6, 306.0, 712.8)


def test_boxes_come_from_the_finest_layout_the_page_has() -> None:
    """Without lines, paragraphs give the boxes (with the tokens inside as words); with tokens only, each
    token is a box; pixel vertices are read over the page's dimension."""
    tokens = [
        {"layout": {**_seg(0, 5), "boundingPoly": _box(0.1, 0.1, 0.3, 0.2)}},
        {
            "layout": {
                **_seg(6, 11),
                "boundingPoly": {"vertices": [{"x": 400, "y": 100}, {"x": 500, "y": 200}]},
            }
        },
    ]
    page = {
        "dimension": {"width": 1000, "height": 1000, "unit": "pixels"},
        "layout": _seg(0, 12),
        "tokens": tokens,
    }
    with_paragraphs = {
        **page,
        "paragraphs": [{"layout": {**_seg(0, 11), "boundingPoly": _box(0.1, 0.1, 0.5, 0.2)}}],
    }
    (para,) = map_document({"text": "Hello world\n", "pages": [with_paragraphs]}, [LETTER])
    assert [(line.start, line.end) for line in para.lines] == [(0, 11)]
    assert [(w.start, w.end, w.box) for w in para.lines[0].words or []] == [
        (0, 5, (61.2, 633.6, 183.6, 712.8)),
        (6, 11, (244.8, 633.6, 306.0, 712.8)),
    ]
    (only_tokens,) = map_document({"text": "Hello world\n", "pages": [page]}, [LETTER])
    assert [(line.start, line.end) for line in only_tokens.lines] == [(0, 5), (6, 11)]


def test_a_response_that_places_under_a_tenth_of_its_text_fails_the_document(tmp_path: Path) -> None:
    """Text whose anchors point nowhere on the pages is an extraction failure with a plain reason, never a
    bundle of blank pages that then escalates as "no text"."""
    document = {"text": "A" * 200, "pages": [{"pageNumber": 1, "layout": _seg(0, 10)}]}
    with pytest.raises(UnplacedTextError):
        map_document(document, [LETTER])
    assert map_document({**document, "pages": [{"pageNumber": 1, "layout": _seg(0, 25)}]}, [LETTER])[0].text
    pdf = FIXTURES / "pdfs" / "lab-quest-01.pdf"
    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    (tmp_path / f"{sha}.json").write_text(json.dumps({"document": document}), encoding="utf-8")
    with DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path)) as ingestor:
        result = ingestor.ingest(pdf)
    assert isinstance(result, IngestFailure)
    assert result.kind == "extractor_failed"
    assert "did not say which pages it is on (10 of 200 characters placed)" in result.message


def test_a_whole_recorded_response_replays_whatever_the_request_limits() -> None:
    """Replay sends nothing: a PDF whose whole response is recorded replays even when it is larger than
    one request may be, or longer than the pages per request."""
    settings = DocumentAISettings(replay_dir=REPLAY, max_request_bytes=1, pages_per_request=1)
    with DocumentAIIngestor(settings, ReplaySource(REPLAY)) as ingestor:
        result = ingestor.ingest(FIXTURES / "pdfs" / "lab-quest-01.pdf")
    assert isinstance(result, DocumentBundle), result
    assert len(result.pages) == 2
