"""The Document AI mapping on real processor responses: Google's own samples in ../shared/corpora/documentai
(Apache-2.0; sources in that folder's README), read in place, never copied into the repository.

Checked: every response maps to pages that carry its text, or fails with a clear error; both field
spellings give the same pages; the 48-page document's five batch-output shards give 48 pages of text; the
two documents that come with their PDFs agree with local ingestion (text similarity, line boxes within a
tolerance in PDF points); a table row quoted as local extraction reads it still verifies.
"""

from __future__ import annotations

import json
import logging
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz

from arbiter.contracts import DocumentBundle
from arbiter.contracts.bundle import OcrStatus
from arbiter.ingest import ingest_pdf
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.mapping import PageFacts, UnplacedTextError, map_document
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.shape import DocumentAIFormatError
from arbiter.ingest.documentai.sources import LiveSource, ReplaySource
from arbiter.net import switch
from arbiter.verifiers.textmatch import PageIndex

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "documentai"
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"the real Document AI responses are not here ({CORPUS}: ../shared/corpora/documentai beside the repo)",
)

SHARDS = "tb_toolbox_large_document_test"
INVOICE = "tb_toolbox_invoice_test"
# Each response (a batch output's shards as one) and what its pages must carry.
RESPONSES = (
    "dais_a._Form_fields",
    "dais_a._Multiple_levels",
    "dais_d._Table_with_borders",
    "dais_formTestProto",
    "dais_ocrTestProto",
    "tb_blank_document",
    "tb_layout_parser",
    "tb_patent",
    "tb_pretrained-form-parser-v1.0-2020-09-23_full-output",
    "tb_pretrained-ocr-v2.0-2023-06-02_math_output",
    f"{INVOICE}-0",
    SHARDS,
)
# Page text from Document AI against local ingestion of the same PDF (whitespace collapsed): the reading
# order of a few blocks differs (OCR reads a two-column address block column by column) and OCR puts
# each table cell on its own line, so the ratio is below 100 while the words are the same.
MIN_RATIO = 90.0
MIN_TOKEN_SORT_RATIO = 98.0
# A local line and the Document AI line with the same text: every edge within this many PDF points.
BOX_TOLERANCE_PT = 6.0


@cache
def _load(name: str) -> Any:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


def _response(name: str) -> list[Any]:
    """The response's JSON: one Document, or the shards of a batch output."""
    if name == SHARDS:
        return [_load(path.stem) for path in sorted(CORPUS.glob(f"{SHARDS}-*.json"))]
    return [_load(name)]


def _text(document: Any) -> str:
    doc = document.get("document", document)
    return str(doc.get("text", ""))


def _visible(value: str) -> int:
    return sum(1 for char in value if not char.isspace())


def _snake(value: Any) -> Any:
    """The JSON with every key in snake_case (as MessageToJson(preserving_proto_field_name=True) writes)."""
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): _snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value


def _camel(value: Any) -> Any:
    """The JSON with every key in lowerCamelCase (as the REST API writes)."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _norm(text: str) -> str:
    return " ".join(text.split())


@cache
def _local(name: str) -> DocumentBundle:
    bundle = ingest_pdf(CORPUS / f"{name}.pdf")
    assert isinstance(bundle, DocumentBundle), bundle
    return bundle


def _facts(bundle: DocumentBundle) -> list[PageFacts]:
    return [PageFacts(p.width, p.height, p.has_text_layer) for p in bundle.pages]


@cache
def _mapped(name: str) -> list[Any]:
    shards = _response(name)
    return map_document(shards if len(shards) > 1 else shards[0])


def _page_count(shards: list[Any]) -> int:
    return sum(len(s.get("pages", s.get("document", {}).get("pages", []))) for s in shards) or 15


@pytest.mark.parametrize("name", RESPONSES)
def test_every_real_response_maps_to_pages_that_carry_its_text(name: str) -> None:
    """All of a response's visible text is on its pages (OCR form), or every page has text (layout parser);
    a response with no text gives blank pages, never an error."""
    shards = _response(name)
    pages = _mapped(name)
    total = sum(_visible(_text(shard)) for shard in shards)
    placed = sum(_visible(page.text) for page in pages)
    assert pages
    if total:
        assert placed >= 0.99 * total, (placed, total)
        assert all(page.text.strip() for page in pages)
    elif name == "tb_layout_parser":
        assert len(pages) == 15
        assert all(page.text.strip() for page in pages)
    else:
        assert [page.text for page in pages] == [""]


@pytest.mark.parametrize("name", RESPONSES)
def test_both_spellings_give_the_same_pages(name: str) -> None:
    """lowerCamelCase and snake_case field names (each file turned into the other spelling by renaming its
    keys, not through protobuf) map to identical pages."""
    shards = _response(name)
    facts = [PageFacts(612.0, 792.0, False)] * _page_count(shards)
    camel = map_document([_camel(s) for s in shards], facts)
    snake = map_document([_snake(s) for s in shards], facts)
    assert [p.model_dump() for p in camel] == [p.model_dump() for p in snake]
    assert (
        any(page.text for page in camel) == any(_text(s).strip() for s in shards)
        or name == "tb_layout_parser"
    )


def test_the_snake_case_scans_keep_their_text_and_boxes() -> None:
    """The snake_case responses (a stained scan's form fields, nested levels, a bordered table) used to map
    to blank pages with status no_text: their text and line boxes are there."""
    for name in ("dais_a._Form_fields", "dais_a._Multiple_levels", "dais_d._Table_with_borders"):
        assert "text_anchor" in json.dumps(_load(name))
        (page,) = map_document(_load(name), [PageFacts(612.0, 792.0, False)])
        assert _visible(page.text) == _visible(_text(_load(name)))
        assert page.ocr_status == OcrStatus.APPLIED
        assert page.lines
        assert all(page.text[line.start : line.end].strip() for line in page.lines)


def test_a_lone_shard_of_a_batch_output_is_an_error_not_a_document_with_missing_pages() -> None:
    """One shard of five says it is one of five: mapped alone it fails, naming shardInfo."""
    with pytest.raises(DocumentAIFormatError) as caught:
        map_document(_load(f"{SHARDS}-2"))
    assert caught.value.path == "shardInfo"


def test_the_five_shards_give_48_pages_of_text_in_any_order() -> None:
    """Anchors in each shard count from the shard's own text: merged, pages 1-48 all carry their text
    (pages 11-48 came out blank when shardInfo.textOffset was subtracted)."""
    shards = _response(SHARDS)
    pages = map_document(list(reversed(shards)))
    assert [p.model_dump() for p in pages] == [p.model_dump() for p in _mapped(SHARDS)]
    assert [page.page_num for page in pages] == list(range(1, 49))
    assert all(page.text.startswith("Invoice\nDATE: 01/01/1970") for page in pages)
    assert sum(len(page.text) for page in pages) >= sum(len(_text(s)) for s in shards) - 48


def _replay_bundle(
    tmp_path: Path, name: str, files: list[Path], pages_per_request: int = 15
) -> DocumentBundle:
    """The documentai extractor's bundle of CORPUS/<name>.pdf, replaying `files` (linked, not copied) as
    that PDF's recorded response: one file, or a folder of shards."""
    import hashlib

    pdf = CORPUS / f"{name}.pdf"
    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    if len(files) == 1:
        (tmp_path / f"{sha}.json").symlink_to(files[0])
    else:
        (tmp_path / sha).mkdir()
        for file in files:
            (tmp_path / sha / file.name).symlink_to(file)
    settings = DocumentAISettings(replay_dir=tmp_path, pages_per_request=pages_per_request)
    with DocumentAIIngestor(settings, ReplaySource(tmp_path)) as ingestor:
        result = ingestor.ingest(pdf)
    assert isinstance(result, DocumentBundle), result
    return result


def _assert_like_local(remote: DocumentBundle, local: DocumentBundle) -> None:
    assert remote.total_pages == local.total_pages == len(remote.pages)
    matched = 0
    for ours, theirs in zip(remote.pages, local.pages, strict=True):
        assert (ours.width, ours.height) == (theirs.width, theirs.height)
        assert ours.ocr_status == theirs.ocr_status == OcrStatus.NOT_NEEDED
        assert fuzz.ratio(_norm(ours.text), _norm(theirs.text)) >= MIN_RATIO
        assert fuzz.token_sort_ratio(_norm(ours.text), _norm(theirs.text)) >= MIN_TOKEN_SORT_RATIO
        boxes: dict[str, list[tuple[float, float, float, float]]] = {}
        for line in ours.lines:
            boxes.setdefault(_norm(ours.text[line.start : line.end]), []).append(line.box)
        for line in theirs.lines:
            same = boxes.get(_norm(theirs.text[line.start : line.end]), [])
            if same:
                matched += 1
                worst = min(max(abs(a - b) for a, b in zip(line.box, box, strict=True)) for box in same)
                assert worst <= BOX_TOLERANCE_PT, (theirs.text[line.start : line.end], line.box, same)
    # Lines local extraction reads whole and OCR reads cell by cell (table rows) have no same-text line.
    assert matched >= 0.6 * sum(len(p.lines) for p in local.pages)


def test_the_invoice_agrees_with_local_ingestion_of_its_pdf(tmp_path: Path) -> None:
    """The invoice's page text, size and line boxes agree with local ingestion of the same PDF."""
    remote = _replay_bundle(tmp_path, INVOICE, [CORPUS / f"{INVOICE}-0.json"])
    _assert_like_local(remote, _local(INVOICE))
    assert all(line.words for line in remote.pages[0].lines)  # tokens are the lines' words


def test_the_sharded_document_replays_from_a_folder_and_agrees_with_local_ingestion(tmp_path: Path) -> None:
    """A folder of the five shards replays as the whole 48-page PDF (whatever the pages per request), and
    every page agrees with local ingestion."""
    files = sorted(CORPUS.glob(f"{SHARDS}-*.json"))
    remote = _replay_bundle(tmp_path, SHARDS, files, pages_per_request=15)
    assert len(remote.pages) == 48
    assert all(page.text.strip() and page.lines for page in remote.pages)
    _assert_like_local(remote, _local(SHARDS))


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("Item Description Quantity Price Amount", 4),
        ("Tool A 500 $1.00 $500.00", 4),
        ("Resource C 50 $12.00 $600.00", 4),
        ("BALANCE DUE $2140.00", 2),
    ],
)
def test_evidence_quoting_a_table_row_verifies_on_the_documentai_path(
    row: str, cells: int, tmp_path: Path
) -> None:
    """OCR puts each cell of the invoice's table on its own line where local extraction reads the row as
    one line: a quote of the whole row (as local extraction reads it) is still found exactly, with a box
    on each cell."""
    local = _local(INVOICE)
    assert row in local.pages[0].text
    remote = _replay_bundle(tmp_path, INVOICE, [CORPUS / f"{INVOICE}-0.json"])
    assert row not in remote.pages[0].text
    match = PageIndex(remote).find(row, 1)
    assert match is not None
    assert match.score == 100
    assert len(match.boxes) == cells


def test_a_page_with_form_fields_only_keeps_all_its_text() -> None:
    """The form parser sample anchors nothing on its only page but form fields: the page keeps all 408
    characters (it lost them), with the form fields' boxes."""
    (page,) = map_document(_load("dais_formTestProto"), [PageFacts(612.0, 792.0, False)])
    assert len(_text(_load("dais_formTestProto"))) == 408
    assert page.text == _text(_load("dais_formTestProto")).rstrip()
    assert len(page.lines) == 20  # ten fields: a name and a value each


def test_a_page_with_blocks_but_no_lines_gets_the_blocks_boxes() -> None:
    """The OCR sample has blocks with normalizedVertices but no lines: each block becomes a line box."""
    (page,) = map_document(_load("dais_ocrTestProto"), [PageFacts(612.0, 792.0, False)])
    assert len(page.lines) == 30
    first = page.lines[0]
    assert page.text[first.start : first.end] == "Invoice"
    left, bottom, right, top = first.box
    assert 0.8 * 612 < left < right < 612
    assert 0.9 * 792 < bottom < top <= 792


def test_the_layout_parser_response_has_no_boxes_and_the_run_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Google's Layout Parser sample carries no bounding boxes at all: its 15 pages have text and no line
    boxes, and the ingestor says evidence on them cannot be highlighted."""
    pages = map_document(_load("tb_layout_parser"), [PageFacts(612.0, 792.0, True)] * 15)
    assert all(page.text and not page.lines for page in pages)
    pdf = REPO / "fixtures" / "pdfs" / "record-30p.pdf"
    import hashlib

    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    (tmp_path / f"{sha}.json").symlink_to(CORPUS / "tb_layout_parser.json")
    with (
        caplog.at_level(logging.INFO, logger="arbiter.ingest.documentai.ingestor"),
        DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path)) as ingestor,
    ):
        result = ingestor.ingest(pdf)
    assert isinstance(result, DocumentBundle), result
    assert "cannot be highlighted" in caplog.text


def test_text_the_response_does_not_place_is_an_extraction_failure() -> None:
    """The real OCR response with its page anchors pointing past its text (as a wrong shard offset did) is
    an UnplacedTextError, never a page of no text."""
    broken = _camel(_load("tb_patent"))
    for segment in broken["pages"][0]["layout"]["textAnchor"]["textSegments"]:
        segment["startIndex"] = str(int(segment.get("startIndex", 0)) + 10_000)
        segment["endIndex"] = str(int(segment["endIndex"]) + 10_000)
    for key in ("blocks", "paragraphs", "lines", "tokens"):
        broken["pages"][0].pop(key)
    with pytest.raises(UnplacedTextError) as caught:
        map_document(broken, [PageFacts(612.0, 792.0, False)])
    assert caught.value.placed == 0
    assert caught.value.total == _visible(_text(_load("tb_patent")))


def test_the_corpus_benchmark_reports_what_each_response_maps_to() -> None:
    """bench/documentai_mapping.py --corpus: per response, its pages and the characters placed on them."""
    from bench import documentai_mapping

    report = documentai_mapping.map_corpus(
        CORPUS, only={"dais_formTestProto", f"{INVOICE}-0", "tb_layout_parser"}
    )
    assert set(report) == {"dais_formTestProto", f"{INVOICE}-0", "tb_layout_parser"}
    form = report["dais_formTestProto"]
    assert form["chars_on_pages"] == form["text_chars"] == 349
    assert (form["pages_with_text"], form["line_boxes"]) == (1, 20)
    assert report[f"{INVOICE}-0"]["pdf"] is True
    assert report["tb_layout_parser"]["line_boxes"] == 0


def test_arbiter_run_replays_the_real_responses_end_to_end(tmp_path: Path) -> None:
    """`arbiter run --extractor documentai --documentai-replay DIR` on the two PDFs that come with real
    responses (the invoice as one file, the 48-page document as a folder of its five shards) writes bundles
    whose pages all carry text and boxes; neither document fails extraction."""
    import hashlib

    from typer.testing import CliRunner

    from arbiter.cli.main import app

    pdfs, replay, out = tmp_path / "in", tmp_path / "replay", tmp_path / "out"
    pdfs.mkdir()
    replay.mkdir()
    for name in (INVOICE, SHARDS):
        (pdfs / f"{name}.pdf").symlink_to(CORPUS / f"{name}.pdf")
    invoice_sha = hashlib.sha256((CORPUS / f"{INVOICE}.pdf").read_bytes()).hexdigest()
    (replay / f"{invoice_sha}.json").symlink_to(CORPUS / f"{INVOICE}-0.json")
    shards_sha = hashlib.sha256((CORPUS / f"{SHARDS}.pdf").read_bytes()).hexdigest()
    (replay / shards_sha).mkdir()
    for shard in sorted(CORPUS.glob(f"{SHARDS}-*.json")):
        (replay / shards_sha / shard.name).symlink_to(shard)
    args = [
        "run",
        str(pdfs),
        "--out",
        str(out),
        "--extractor",
        "documentai",
        "--documentai-replay",
        str(replay),
    ]
    result = CliRunner().invoke(app, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    (summary,) = (out / "runs").glob("*/summary.json")
    assert "pdf_extractor_failed" not in json.loads(summary.read_text()).get("errors_by_reason", {})
    for name, count in ((INVOICE, 1), (SHARDS, 48)):
        bundle = DocumentBundle.model_validate_json((out / "bundles" / f"{name}.json").read_text())
        assert len(bundle.pages) == count
        assert all(page.text.strip() and page.lines for page in bundle.pages)


@pytest.mark.parametrize("name", [name for name in RESPONSES if name != SHARDS])
def test_each_response_through_googles_client_maps_as_its_recording_does(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served over HTTP to Google's own client (its parser, either spelling), every real response gives the
    same pages as replaying the file, or the same error."""
    from tests.test_documentai_client import PROCESSOR, Server, client, reply

    monkeypatch.setattr(switch, "ALLOW_NETWORK", True)  # the fake adapter keeps every byte local
    payload = _load(name)
    response = payload if "document" in payload else {"document": payload}
    config = DocumentAISettings(processor=PROCESSOR)
    live = LiveSource(client(Server(reply(200, response)), config))
    replayed = _pages_or_error(lambda: map_document(ReplaySource(CORPUS).document(b"", name)))
    assert _pages_or_error(lambda: map_document(live.document(b"%PDF", "key"))) == replayed


def _pages_or_error(read: Any) -> Any:
    try:
        return read()
    except DocumentAIFormatError as error:
        return (type(error).__name__, str(error))
