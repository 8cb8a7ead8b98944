"""Tests for PDF ingestion (arbiter.ingest, arbiter.ingest.layout) and the bundle cache."""

from __future__ import annotations

import hashlib
import re
import struct
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ingest_helpers import (
    HEIGHT,
    PARAGRAPH_LINES,
    SECOND_PARAGRAPH,
    behaving_target,
    make_clinical_pdf,
    make_encrypted_pdf,
    make_image_only_pdf,
    make_text_pdf,
    make_zero_page_pdf,
)

from arbiter.contracts.bundle import BlockType, DocumentBundle, OcrStatus, Page
from arbiter.ingest import (
    EXTRACTOR_NAME,
    EXTRACTOR_VERSION,
    PDFIUM_LOCK,
    IngestFailure,
    IsolatedIngestor,
    OcrConfig,
    WorkerStartError,
    file_sha256,
    ingest_pdf,
)
from arbiter.ingest import reader as ingest_reader
from arbiter.ingest.cache import BundleCache
from arbiter.ingest.layout import _BULLET, classify_line, repeated_margin_lines
from arbiter.ingest.textpage import RawLine, RawPage, count_wide_gaps, has_text_layer, round_box

FIXTURE_PDF = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "packet-01.pdf"


@pytest.fixture(scope="module")
def clinical(tmp_path_factory: pytest.TempPathFactory) -> DocumentBundle:
    path = make_clinical_pdf(tmp_path_factory.mktemp("clinical") / "clinical.pdf", pages=3)
    bundle = ingest_pdf(path)
    assert isinstance(bundle, DocumentBundle)
    return bundle


def bundle_of(result: DocumentBundle | IngestFailure) -> DocumentBundle:
    assert isinstance(result, DocumentBundle), result
    return result


def failure_of(result: DocumentBundle | IngestFailure) -> IngestFailure:
    assert isinstance(result, IngestFailure), result
    return result


def types_of(page: Page) -> list[BlockType]:
    return [p.block_type for p in page.paragraphs]


# --- bundles from good PDFs -------------------------------------------------------------------------


def test_bundle_identifies_the_file_and_extractor(tmp_path: Path) -> None:
    """The bundle carries doc_id (the file stem by default), path, content hash and extractor."""
    path = make_clinical_pdf(tmp_path / "report-17.pdf")
    bundle = bundle_of(ingest_pdf(path))
    assert bundle.doc_id == "report-17"
    assert bundle.file_path == str(path)
    assert bundle.file_sha256 == hashlib.sha256(path.read_bytes()).hexdigest() == file_sha256(path)
    assert (bundle.extractor.name, bundle.extractor.version) == (EXTRACTOR_NAME, EXTRACTOR_VERSION)
    assert bundle_of(ingest_pdf(path, doc_id="custom")).doc_id == "custom"


def test_pages_are_numbered_with_size_and_text(clinical: DocumentBundle) -> None:
    """Every page is present, 1-based, with its size in points and its text layer."""
    assert clinical.total_pages == 3
    assert [p.page_num for p in clinical.pages] == [1, 2, 3]
    page = clinical.pages[0]
    assert (page.width, page.height) == (612.0, 792.0)
    assert page.has_text_layer
    assert not page.ocr_applied
    assert "Troponin levels were normal" in page.text


def test_page_text_uses_plain_newlines(clinical: DocumentBundle) -> None:
    """pdfium's CRLF line breaks become "\\n"."""
    text = clinical.pages[0].text
    assert "\r" not in text
    assert PARAGRAPH_LINES[0] + "\n" + PARAGRAPH_LINES[1] in text


def test_line_offsets_slice_exactly_one_line(clinical: DocumentBundle) -> None:
    """text[line.start:line.end] is one whole line of the page text, in order."""
    page = clinical.pages[0]
    expected = [line for line in page.text.split("\n") if line.strip()]
    assert [page.text[ln.start : ln.end] for ln in page.lines] == expected


def test_line_boxes_lie_on_the_page_where_drawn(clinical: DocumentBundle) -> None:
    """Line boxes are (left, bottom, right, top) in points from the bottom-left corner."""
    page = clinical.pages[0]
    line = next(ln for ln in page.lines if page.text[ln.start : ln.end] == PARAGRAPH_LINES[0])
    left, bottom, right, top = line.box
    assert 70 < left < 75
    assert bottom < HEIGHT - 180 < top
    assert left < right <= 612


def test_paragraph_offsets_match_their_text(clinical: DocumentBundle) -> None:
    """Each paragraph's text is page.text[start:end]."""
    paragraphs = [(page, para) for page in clinical.pages for para in page.paragraphs]
    assert len(paragraphs) >= len(clinical.pages)
    for page, para in paragraphs:
        assert page.text[para.start : para.end] == para.text


def test_consecutive_lines_form_one_paragraph(clinical: DocumentBundle) -> None:
    """Closely spaced lines are one paragraph; a vertical gap starts the next."""
    texts = [p.text for p in clinical.pages[0].paragraphs if p.block_type == BlockType.PARAGRAPH]
    assert texts == ["\n".join(PARAGRAPH_LINES), "\n".join(SECOND_PARAGRAPH)]


def test_block_types_of_a_clinical_page(clinical: DocumentBundle) -> None:
    """Header, larger-font heading, paragraphs, caps heading, table, list items and footer are typed."""
    assert types_of(clinical.pages[0]) == [
        BlockType.HEADER,
        BlockType.HEADING,
        BlockType.PARAGRAPH,
        BlockType.PARAGRAPH,
        BlockType.HEADING,
        BlockType.TABLE,
        BlockType.LIST,
        BlockType.LIST,
        BlockType.FOOTER,
    ]


def test_column_layout_marks_the_page_as_having_tables(clinical: DocumentBundle) -> None:
    """Rows with two or more wide column gaps are a table, and the page says it has tables."""
    page = clinical.pages[0]
    table = next(p for p in page.paragraphs if p.block_type == BlockType.TABLE)
    assert table.text.splitlines()[1] == "Sodium 140 mmol/L"
    assert page.has_tables


def test_lines_repeated_near_the_top_of_every_page_are_headers(tmp_path: Path) -> None:
    """A line repeated at the same place on each page, even below the top margin, is a running header."""
    body = [(72, 500, "Body text that differs on each page number {n}.")]
    pages = [
        [(72, HEIGHT - 90, f"Patient: Jane Doe  MRN 00{n}"), (72, 500, body[0][2].format(n=n))]
        for n in range(3)
    ]
    bundle = bundle_of(ingest_pdf(make_text_pdf(tmp_path / "repeat.pdf", pages)))
    assert all(types_of(page)[0] == BlockType.HEADER for page in bundle.pages)
    assert all(types_of(page)[1] == BlockType.PARAGRAPH for page in bundle.pages)


def test_a_single_page_line_below_the_margin_is_not_a_header(tmp_path: Path) -> None:
    """Without repetition, only the outer 8% of the page counts as header or footer."""
    bundle = bundle_of(
        ingest_pdf(make_text_pdf(tmp_path / "one.pdf", [[(72, HEIGHT - 90, "Patient: Jane Doe")]]))
    )
    assert types_of(bundle.pages[0]) == [BlockType.PARAGRAPH]


def test_image_only_page_has_no_text_layer(tmp_path: Path) -> None:
    """Without OCR, a scanned page (an image, no text) has has_text_layer False, empty text, and says so."""
    scan = make_image_only_pdf(tmp_path / "scan.pdf")
    page = bundle_of(ingest_pdf(scan, ocr=OcrConfig(enabled=False))).pages[0]
    assert not page.has_text_layer
    assert not page.ocr_applied
    assert page.ocr_status == OcrStatus.DISABLED
    assert page.text.strip() == ""
    assert page.paragraphs == []


def test_pdfium_lock_serialises_ingestion(tmp_path: Path) -> None:
    """Ingestion waits while another thread holds the process-wide pdfium lock."""
    path = make_clinical_pdf(tmp_path / "locked.pdf")
    done = threading.Event()
    with PDFIUM_LOCK:

        def run() -> None:
            ingest_pdf(path)
            done.set()

        worker = threading.Thread(target=run)
        worker.start()
        assert not done.wait(0.3)
    assert done.wait(30)
    worker.join()


# --- per-document failures --------------------------------------------------------------------------


def test_encrypted_pdf_without_password_is_an_encrypted_failure(tmp_path: Path) -> None:
    """A PDF with a user password fails as "encrypted" and says a password is needed."""
    path = make_encrypted_pdf(tmp_path / "locked.pdf", "s3cret", "owner")
    failure = failure_of(ingest_pdf(path))
    assert failure.kind == "encrypted"
    assert "password" in failure.message
    assert failure.file_sha256 == file_sha256(path)


def test_encrypted_pdf_with_wrong_password_says_so(tmp_path: Path) -> None:
    """A wrong password gives a plain message that the password did not open it."""
    failure = failure_of(
        ingest_pdf(make_encrypted_pdf(tmp_path / "locked.pdf", "s3cret", "owner"), password="no")
    )
    assert failure.kind == "encrypted"
    assert failure.message == "The PDF is password-protected and the password given did not open it."


def test_encrypted_pdf_opens_with_the_right_password(tmp_path: Path) -> None:
    """The password given opens the document."""
    bundle = bundle_of(
        ingest_pdf(make_encrypted_pdf(tmp_path / "locked.pdf", "s3cret", "owner"), password="s3cret")
    )
    assert "Confidential results" in bundle.pages[0].text


def test_owner_only_encryption_opens_with_the_empty_password(tmp_path: Path) -> None:
    """A PDF with only an owner password opens without asking for one."""
    bundle = bundle_of(ingest_pdf(make_encrypted_pdf(tmp_path / "owner.pdf", "", "owner")))
    assert "Confidential results" in bundle.pages[0].text


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("empty.pdf", b"", "empty"),
        ("notes.pdf", b"Just some notes, not a PDF at all.\n" * 10, "not_pdf"),
        ("garbage.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8, "broken"),
    ],
)
def test_bad_files_give_a_failure_kind(tmp_path: Path, name: str, content: bytes, kind: str) -> None:
    """Empty, non-PDF and garbage files each give their failure kind with a message."""
    path = tmp_path / name
    path.write_bytes(content)
    failure = failure_of(ingest_pdf(path))
    assert failure.kind == kind
    assert failure.message.endswith(".")
    assert failure.doc_id == Path(name).stem


def test_truncated_pdf_is_a_result_not_a_crash(tmp_path: Path) -> None:
    """A PDF cut in half is either repaired into a bundle or reported broken."""
    data = make_clinical_pdf(tmp_path / "full.pdf", pages=3).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    result = ingest_pdf(cut)
    assert isinstance(result, DocumentBundle) or result.kind == "broken"


def test_zero_page_pdf_is_empty(tmp_path: Path) -> None:
    """A well-formed PDF without pages is an "empty" failure."""
    failure = failure_of(ingest_pdf(make_zero_page_pdf(tmp_path / "nopages.pdf")))
    assert (failure.kind, failure.message) == ("empty", "The PDF has no pages.")


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    """A path that does not exist is reported, not raised."""
    failure = failure_of(ingest_pdf(tmp_path / "nowhere.pdf"))
    assert (failure.kind, failure.file_sha256) == ("unreadable", None)


def test_directory_is_unreadable(tmp_path: Path) -> None:
    """A directory given as a PDF is reported as unreadable."""
    assert failure_of(ingest_pdf(tmp_path)).kind == "unreadable"


def test_file_over_the_byte_limit_is_too_large(tmp_path: Path) -> None:
    """A file bigger than max_bytes is refused before parsing."""
    failure = failure_of(ingest_pdf(make_clinical_pdf(tmp_path / "big.pdf"), max_bytes=100))
    assert failure.kind == "too_large"


def test_pdf_over_the_page_limit_is_too_large(tmp_path: Path) -> None:
    """A document with more than max_pages pages is refused."""
    failure = failure_of(ingest_pdf(make_clinical_pdf(tmp_path / "long.pdf", pages=3), max_pages=2))
    assert failure.kind == "too_large"
    assert "3 pages" in failure.message


def test_exceeded_deadline_is_a_timeout(tmp_path: Path) -> None:
    """The deadline is checked between pages."""
    failure = failure_of(ingest_pdf(make_clinical_pdf(tmp_path / "slow.pdf"), deadline_s=-1))
    assert failure.kind == "timeout"


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=4096), pdf_header=st.booleans())
def test_arbitrary_bytes_never_raise(data: bytes, pdf_header: bool) -> None:
    """Whatever bytes a file holds, ingest_pdf returns a result."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.pdf"
        path.write_bytes((b"%PDF-1.4\n" if pdf_header else b"") + data)
        assert isinstance(ingest_pdf(path), DocumentBundle | IngestFailure)


# --- layout rules -----------------------------------------------------------------------------------


def line(
    text: str, box: tuple[float, float, float, float] | None = (72, 400, 300, 410), **kw: float
) -> RawLine:
    return RawLine(0, len(text), text, box, kw.get("font_size", 11.0), int(kw.get("wide_gaps", 0)))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (line("General Hospital", (72, 740, 200, 750)), BlockType.HEADER),
        (line("Page 2 of 9", (72, 20, 120, 30)), BlockType.FOOTER),
        (line("Sodium 140 mmol/L", wide_gaps=2), BlockType.TABLE),
        (line("Sodium 140", wide_gaps=1), BlockType.PARAGRAPH),
        (line("• Aspirin 81 mg"), BlockType.LIST),
        (line("2. Follow up in clinic"), BlockType.LIST),
        (line("b) Repeat the test"), BlockType.LIST),
        (line("2.5 mg were given at night"), BlockType.PARAGRAPH),
        (line("PHYSICAL EXAMINATION"), BlockType.HEADING),
        (line("Assessment and Plan", font_size=16.0), BlockType.HEADING),
        (line("MRN: 1234567"), BlockType.PARAGRAPH),
        (line("The patient is well.", font_size=16.0), BlockType.PARAGRAPH),
        (line("Assessment and plan were discussed"), BlockType.PARAGRAPH),
        (line("Text with no box", None), BlockType.PARAGRAPH),
    ],
)
def test_line_block_types(raw: RawLine, expected: BlockType) -> None:
    """Each line gets the block type its position and content suggest."""
    assert classify_line(raw, 792.0, set(), 11.0) == expected


@pytest.mark.parametrize(
    ("rects", "gaps"),
    [
        ([(72, 0, 100, 10), (250, 0, 280, 10), (400, 0, 430, 10)], 2),
        ([(72, 0, 100, 10), (102, 0, 140, 10), (142, 0, 160, 10)], 0),
        ([(72, 0, 100, 10), (250, 0, 280, 10)], 0),
    ],
)
def test_wide_gaps_between_text_rects(rects: list[tuple[float, float, float, float]], gaps: int) -> None:
    """Only gaps much wider than a space between rects on a line count as column gaps."""
    assert count_wide_gaps(rects) == gaps


@pytest.mark.parametrize(("text", "expected"), [("", False), (" \n a b \n", False), ("abc", True)])
def test_text_layer_needs_three_visible_characters(text: str, expected: bool) -> None:
    """A page with fewer than three non-space characters has no usable text layer."""
    assert has_text_layer(text) is expected


# --- fast paths give what the plain ones gave -------------------------------------------------------


def test_fixture_bundle_round_trips_through_json() -> None:
    """A bundle built from trusted values serialises to JSON and validates back to an equal bundle."""
    bundle = bundle_of(ingest_pdf(FIXTURE_PDF))
    again = DocumentBundle.model_validate_json(bundle.model_dump_json())
    assert again == bundle
    assert again.model_dump(exclude_unset=True) == bundle.model_dump(exclude_unset=True)
    assert DocumentBundle.model_validate(bundle.model_dump()) == bundle


def test_file_read_from_disk_gives_the_same_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over the in-memory limit is parsed from disk, password included, into the same bundle."""
    path = make_encrypted_pdf(tmp_path / "locked.pdf", "s3cret", "owner")
    in_memory = bundle_of(ingest_pdf(path, password="s3cret"))
    monkeypatch.setattr(ingest_reader, "IN_MEMORY_MAX_BYTES", 0)
    from_disk = bundle_of(ingest_pdf(path, password="s3cret"))
    exclude = {"processing_timestamp"}
    assert from_disk.model_dump(exclude=exclude) == in_memory.model_dump(exclude=exclude)
    assert failure_of(ingest_pdf(path)).kind == "encrypted"


def single(value: float) -> float:
    """The nearest single-precision float, as pdfium's coordinates are."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


# Ties and near-ties of the hundredths and values that round to a signed zero, besides any single.
COORDINATES = st.floats(width=32) | st.sampled_from([-0.001, -0.005, 0.005, 0.125, -0.375, 2.675]).map(single)


@given(st.lists(COORDINATES, min_size=4, max_size=4))
def test_round_box_rounds_exactly_like_round(values: list[float]) -> None:
    """round_box gives round(value, 2) bit for bit (sign of zero, NaN, infinity) for single-precision values."""
    assert repr(round_box(*values)) == repr(tuple(round(v, 2) for v in values))


@given(st.text(st.sampled_from(" \t\u00a0•◦–-*(1)9.abzAZ") | st.characters(), max_size=10))
def test_list_lines_are_exactly_those_the_bullet_pattern_matches(text: str) -> None:
    """A plain mid-page line is a list item exactly when the bullet pattern matches it."""
    kind = classify_line(line(text, font_size=0.0), 792.0, set(), 11.0)
    assert (kind == BlockType.LIST) == bool(_BULLET.match(text))


@given(st.text(st.sampled_from(" \t\n\u2003\x1fAb7z") | st.characters(), max_size=16))
def test_repeated_line_key_ignores_case_digits_and_spacing(text: str) -> None:
    """A top line on both pages repeats as its lower-cased text, digit runs as "#", spaces collapsed."""
    pages = [
        RawPage(n, text, [RawLine(0, len(text), text, (72.0, 760.0, 300.0, 770.0))], 612.0, 792.0)
        for n in (1, 2)
    ]
    norm = re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.strip().lower()))
    assert repeated_margin_lines(pages) == ({(norm, "top")} if norm else set())


# --- isolated ingestion -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def isolated() -> Iterator[IsolatedIngestor]:
    with IsolatedIngestor(workers=2, timeout_s=5.0, target=behaving_target) as ingestor:
        yield ingestor


def test_isolated_ingestion_matches_in_process(isolated: IsolatedIngestor, tmp_path: Path) -> None:
    """A worker returns the same bundle as ingesting in-process."""
    path = make_clinical_pdf(tmp_path / "same.pdf", pages=2)
    remote, local = bundle_of(isolated.ingest(path, doc_id="d1")), bundle_of(ingest_pdf(path, doc_id="d1"))
    assert remote.model_dump(exclude={"processing_timestamp"}) == local.model_dump(
        exclude={"processing_timestamp"}
    )


def test_isolated_ingestion_passes_the_password(isolated: IsolatedIngestor, tmp_path: Path) -> None:
    """The password reaches the worker."""
    path = make_encrypted_pdf(tmp_path / "locked.pdf", "s3cret", "owner")
    assert failure_of(isolated.ingest(path)).kind == "encrypted"
    assert bundle_of(isolated.ingest(path, password="s3cret")).total_pages == 1


def test_hung_worker_is_killed_and_replaced(
    isolated: IsolatedIngestor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document that overruns the timeout (its worker sleeps for a minute) is a "timeout" failure naming
    the limit; the next one still works."""
    slow = make_clinical_pdf(tmp_path / "slow.pdf")
    monkeypatch.setattr(isolated, "timeout_s", 1.5)
    failure = failure_of(isolated.ingest(slow))
    monkeypatch.undo()
    assert failure.kind == "timeout"
    assert "1.5-second limit" in failure.message
    assert failure.file_sha256 == file_sha256(slow)
    assert bundle_of(isolated.ingest(make_clinical_pdf(tmp_path / "fine.pdf"))).total_pages == 1


def test_crashed_worker_is_unreadable_and_replaced(isolated: IsolatedIngestor, tmp_path: Path) -> None:
    """A worker that dies mid-document gives "unreadable"; the pool keeps working."""
    failure = failure_of(isolated.ingest(make_clinical_pdf(tmp_path / "crash.pdf"), doc_id="c1"))
    assert (failure.kind, failure.doc_id) == ("unreadable", "c1")
    assert bundle_of(isolated.ingest(make_clinical_pdf(tmp_path / "fine.pdf"))).total_pages == 1


def test_exception_in_worker_is_unreadable(isolated: IsolatedIngestor, tmp_path: Path) -> None:
    """An unexpected error inside the worker is a per-document failure."""
    assert failure_of(isolated.ingest(make_clinical_pdf(tmp_path / "raise.pdf"))).kind == "unreadable"


def test_two_threads_ingest_concurrently(isolated: IsolatedIngestor, tmp_path: Path) -> None:
    """Several threads share one ingestor; every document gets its own result."""
    paths = [make_clinical_pdf(tmp_path / f"doc{n}.pdf", pages=n) for n in range(1, 5)]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(isolated.ingest, paths))
    assert [bundle_of(r).total_pages for r in results] == [1, 2, 3, 4]
    assert [r.doc_id for r in results] == ["doc1", "doc2", "doc3", "doc4"]


def test_closed_ingestor_refuses_work(tmp_path: Path) -> None:
    """After close(), ingest() raises instead of hanging."""
    ingestor = IsolatedIngestor()
    ingestor.close()
    with pytest.raises(RuntimeError):
        ingestor.ingest(tmp_path / "any.pdf")


# --- bundle cache -----------------------------------------------------------------------------------


def test_cache_round_trip(tmp_path: Path, clinical: DocumentBundle) -> None:
    """A stored bundle comes back equal, keyed by content hash and extractor version."""
    cache = BundleCache(tmp_path / "bundles")
    assert cache.get(clinical.file_sha256, EXTRACTOR_VERSION) is None
    cache.put(clinical)
    assert cache.get(clinical.file_sha256, EXTRACTOR_VERSION) == clinical
    assert [p.name for p in cache.path_for(clinical.file_sha256, EXTRACTOR_VERSION).parent.iterdir()] == [
        cache.path_for(clinical.file_sha256, EXTRACTOR_VERSION).name
    ]


def test_cache_misses_another_extractor_version(tmp_path: Path, clinical: DocumentBundle) -> None:
    """A bundle made by another extractor version is not served."""
    cache = BundleCache(tmp_path)
    cache.put(clinical)
    assert cache.get(clinical.file_sha256, EXTRACTOR_VERSION + "x") is None


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"doc_id": "x"}', b"\xff\xfe"])
def test_corrupted_cache_file_is_a_miss(tmp_path: Path, clinical: DocumentBundle, content: bytes) -> None:
    """A truncated or invalid cache file reads as absent."""
    cache = BundleCache(tmp_path)
    cache.put(clinical)
    cache.path_for(clinical.file_sha256, EXTRACTOR_VERSION).write_bytes(content)
    assert cache.get(clinical.file_sha256, EXTRACTOR_VERSION) is None


def test_cache_rejects_a_key_that_is_not_a_hash(tmp_path: Path) -> None:
    """Keys must be SHA-256 hex digests, so no key can name a path outside the cache."""
    with pytest.raises(ValueError, match="SHA-256"):
        BundleCache(tmp_path).get("../../etc/passwd", EXTRACTOR_VERSION)


def test_worker_that_cannot_start_raises_instead_of_blaming_the_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker dying before its first document is an environment error, not a per-document failure."""
    ghost = types.ModuleType("ghost_target_module")

    def target(path: Path, **kwargs: object) -> IngestFailure:
        raise AssertionError("never runs: the worker cannot import this module")

    target.__module__ = ghost.__name__
    target.__qualname__ = "target"
    ghost.target = target  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, ghost.__name__, ghost)
    with IsolatedIngestor(target=target) as ingestor, pytest.raises(WorkerStartError):
        ingestor.ingest(make_clinical_pdf(tmp_path / "fine.pdf"))
