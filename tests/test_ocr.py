"""The OCR fallback's rules: junk text layers, Tesseract's TSV into rows and boxes, configuration, and what
happens when Tesseract is missing, slow, failing or reads nothing (a scripted stand-in for the program)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_helpers import make_image_only_pdf, make_text_pdf
from ocr_helpers import LAB_LINES, draw_page, fake_tesseract, image_pdf, word_row
from PIL import Image

from arbiter.contracts import DocumentBundle, OcrStatus
from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.ingest import PDFIUM_LOCK, IsolatedIngestor, OcrConfig, extractor_version, ingest_pdf, ocr_pass
from arbiter.ingest import ocr as ocr_module
from arbiter.ingest.ocr import BLANK_LEVEL, MIN_INK_SHARE, Rendered, is_blank, parse_tsv, render_gray
from arbiter.ingest.ocr_lines import rows, to_raw_page
from arbiter.ingest.textlayer import (
    MIN_WORDS_OVER_SCAN,
    OcrReason,
    image_share,
    layer_stats,
    ocr_reason,
    readable,
)
from tests.conftest import FIXTURES

MISSING = "/nonexistent/bin/tesseract"
SIGNATURE_PAGE = (
    "I attest that the information above is accurate and complete.\n"
    "Signed: Ana Ruvalcaba, MD    Date: 03/12/2026"
)
FULL_PAGE = (FIXTURES / "classifications" / "packet-06.json").read_text(encoding="utf-8")[:1500]


@pytest.mark.parametrize(
    ("text", "share", "reason"),
    [
        ("", 0.0, OcrReason.EMPTY),
        ("   \n\t \n", 1.0, OcrReason.EMPTY),
        ("a", 0.0, OcrReason.EMPTY),
        ("3", 1.0, OcrReason.EMPTY),
        ("• · ¬ ~ | . , ; ─ ─ ─", 0.0, OcrReason.GLYPH_GARBAGE),
        ("\ufffd\ufffd\ufffd\ufffd ab", 0.0, OcrReason.GLYPH_GARBAGE),
        ("lI1 rn ,:; Il xq zzk wwt Ill1 lIl rnrn hhj Il1", 0.0, OcrReason.NON_WORDS),
        ("ÐÑ Þß ÇÐ ÑÞ ßÇ ÐÐ ÑÑ ÞÞ ÇÇ", 0.0, OcrReason.NON_WORDS),
        ("Fax: (617) 555-0142  From: Riverside Oncology  Page 3/5", 0.97, OcrReason.SPARSE_OVER_IMAGE),
        ("Page 2 of 5", 1.0, OcrReason.SPARSE_OVER_IMAGE),
        # Not OCR'd: a short real page with no full-page image, or a full page of text over a background.
        ("Fax: (617) 555-0142  From: Riverside Oncology  Page 3/5", 0.0, None),
        ("Page 2 of 5", 0.05, None),
        (SIGNATURE_PAGE, 0.0, None),
        (SIGNATURE_PAGE, 0.1, None),
        (FULL_PAGE, 1.0, None),
        ("Hemoglobin 10.4 g/dL 11.7-15.5 Platelets 232 140-400 x10E3/uL WBC 5.9", 0.0, None),
        ("C34.11 C50.912 Z85.3 E11.9 I10 J44.1 N18.3 K21.9 M81.0 F32.A G47.33 R53.83", 0.0, None),
        ("➓ a159 [x2793] ➔ a160 [x2794] → a161 [x2192] ↔ a163 [x2194] ↕ a164 [x2195]", 0.0, None),
        ("lI1 0O1 Il1 1lI ll1 O0l lIl1 I1l", 0.0, OcrReason.NON_WORDS),
        ("患者は定期的な検査のために来院しました。血液検査の結果は正常範囲内です。", 0.0, None),
        ("Пациент поступил для планового обследования, анализы в норме", 0.0, None),
    ],
)
def test_junk_layer_detection(text: str, share: float, reason: OcrReason | None) -> None:
    """Empty, glyph-garbage, non-word and stamp-over-a-scan layers are OCR'd; real short pages are not."""
    assert ocr_reason(text, lambda: share) == reason


def test_image_share_is_only_measured_for_sparse_text() -> None:
    """A page with plenty of words never asks for its image coverage (it costs a walk over page objects)."""

    def never() -> float:
        raise AssertionError("image share asked for")

    assert ocr_reason(FULL_PAGE, never) is None
    assert layer_stats(FULL_PAGE).wordlike >= MIN_WORDS_OVER_SCAN


@given(st.text(max_size=400))
def test_junk_detection_never_crashes(text: str) -> None:
    """Any text gets a verdict, and text judged readable from OCR has some word in it."""
    ocr_reason(text, lambda: 1.0)
    if readable(text):
        assert layer_stats(text).wordlike >= 1


def test_image_share_measured_on_real_pages(tmp_path: Path) -> None:
    """A full-page scan covers the page, a 400 x 200 pt picture a sixth of it, a text page nothing."""
    import pypdfium2 as pdfium

    image, _ = draw_page([(300, 300, "x")])
    files = {
        1.0: image_pdf(tmp_path / "full.pdf", [image]),
        400 * 200 / (612 * 792): make_image_only_pdf(tmp_path / "small.pdf"),
        0.0: make_text_pdf(tmp_path / "text.pdf", [[(72, 700, "Signed: Dr A. Ruiz")]]),
    }
    for expected, path in files.items():
        doc = pdfium.PdfDocument(path)
        page = doc[0]
        with PDFIUM_LOCK:
            share = image_share(page.raw, page.get_width(), page.get_height())
        page.close()
        doc.close()
        assert share == pytest.approx(expected, abs=0.01), path.name


def test_stamped_line_over_a_scan_is_ocr_read(tmp_path: Path) -> None:
    """A fax header drawn as text over a full-page scan does not count as the page's text layer."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    image, _ = draw_page(LAB_LINES)
    path = tmp_path / "stamped.pdf"
    c = canvas.Canvas(str(path), pagesize=(612, 792), invariant=1)
    c.drawImage(ImageReader(image), 0, 0, width=612, height=792)
    c.setFont("Helvetica", 8)
    c.drawString(36, 780, "Fax: (617) 555-0142 From: Riverside Oncology Page 1/1")
    c.showPage()
    c.save()
    page = ingest_pdf(path, ocr=OcrConfig(enabled=False))
    assert isinstance(page, DocumentBundle)
    assert page.pages[0].ocr_status is OcrStatus.DISABLED
    assert not page.pages[0].has_text_layer


@pytest.mark.parametrize(
    ("env", "enabled", "cmd", "lang"),
    [
        ({}, True, "tesseract", "eng"),
        ({"ARBITER_OCR": "off"}, False, "tesseract", "eng"),
        ({"ARBITER_OCR": "0"}, False, "tesseract", "eng"),
        ({"ARBITER_OCR": "FALSE"}, False, "tesseract", "eng"),
        ({"ARBITER_OCR": "on"}, True, "tesseract", "eng"),
        (
            {"ARBITER_TESSERACT_CMD": "/opt/t/bin/tesseract", "ARBITER_OCR_LANG": "eng+spa"},
            True,
            "/opt/t/bin/tesseract",
            "eng+spa",
        ),
        ({"ARBITER_TESSERACT_CMD": "  ", "ARBITER_OCR_LANG": ""}, True, "tesseract", "eng"),
    ],
)
def test_config_from_environment(env: dict[str, str], enabled: bool, cmd: str, lang: str) -> None:
    """ARBITER_OCR turns OCR off; ARBITER_TESSERACT_CMD and ARBITER_OCR_LANG choose the program and language."""
    config = OcrConfig.from_env(env)
    assert (config.enabled, config.tesseract_cmd, config.language) == (enabled, cmd, lang)


def test_extractor_version_names_the_ocr_engine() -> None:
    """The bundle cache key changes when OCR is turned off or Tesseract goes missing."""
    on, off = extractor_version(OcrConfig()), extractor_version(OcrConfig(enabled=False))
    missing = extractor_version(OcrConfig(tesseract_cmd=MISSING))
    assert "tesseract" in on
    assert off.endswith("+ocr-off")
    assert missing.endswith("+ocr-missing")
    assert len({on, off, missing}) == 3


def test_tsv_parsing_keeps_words_only() -> None:
    """Rows of other levels, empty words and malformed rows are skipped; words keep box and confidence."""
    tsv = "\n".join(
        [
            "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
            "1\t1\t0\t0\t0\t0\t0\t0\t2550\t3300\t-1\t",
            "4\t1\t1\t1\t1\t0\t300\t300\t500\t40\t-1\t",
            "5\t1\t1\t1\t1\t1\t300\t300\t200\t40\t96.5\tHemoglobin",
            "5\t1\t1\t1\t1\t2\t520\t300\t80\t40\t91\t ",
            "5\t1\t1\t1\t1\t3\tx\t300\t80\t40\t91\tbroken",
            "5\t1",
        ]
    )
    (word,) = parse_tsv(tsv)
    assert (word.text, word.left, word.top, word.width, word.height, word.conf) == (
        "Hemoglobin",
        300,
        300,
        200,
        40,
        96.5,
    )


def test_table_columns_are_read_row_by_row() -> None:
    """Cells Tesseract put in separate column blocks join their rows, left to right, even on a skewed page."""
    # column 1 (block 1) and column 2 (block 2), on a page skewed by 2 px per 100 px
    rows_ = [
        word_row("WBC", 300, 1000, line=(1, 1, 1)),
        word_row("RBC", 300, 1060, line=(1, 1, 2)),
        word_row("5.9", 1300, 1020, line=(2, 1, 1)),
        word_row("H", 1420, 1022, line=(2, 1, 1)),
        word_row("5.4", 1300, 1080, line=(2, 1, 2)),
        word_row(";", 2000, 1500, conf=12.0, line=(3, 1, 1)),  # a speck read as a mark
        word_row("Reviewed", 300, 1600, line=(4, 1, 1)),
    ]
    tsv = "\n".join(["header", *rows_])
    page, confidence = to_raw_page(parse_tsv(tsv), 1, 612.0, 792.0, 300 / 72)
    assert page.text == "WBC 5.9 H\nRBC 5.4\n\nReviewed"
    assert [ln.text for ln in page.lines] == ["WBC 5.9 H", "RBC 5.4", "Reviewed"]
    assert confidence == 95.0
    for line in page.lines:
        assert line.words is not None
        assert [page.text[a:b] for a, b, _ in line.words] == line.text.split(" ")


def test_word_boxes_are_pdf_points_from_the_bottom_left() -> None:
    """A word at pixel (300, 300)-(600, 340) at 300 dpi is (72, 710.4)-(144, 720) in points on a letter page."""
    page, _ = to_raw_page(parse_tsv("h\n" + word_row("Hemoglobin", 300, 300)), 1, 612.0, 792.0, 300 / 72)
    (line,) = page.lines
    assert line.words is not None
    assert line.words[0][2] == (72.0, 710.4, 144.0, 720.0)
    assert line.box == (72.0, 710.4, 144.0, 720.0)


def test_rows_never_merge_overlapping_lines() -> None:
    """Two lines at one height that overlap horizontally stay two rows (text written over text)."""
    words = parse_tsv(
        "h\n"
        + word_row("alpha", 300, 1000, line=(1, 1, 1))
        + "\n"
        + word_row("beta", 320, 1005, line=(2, 1, 1))
    )
    assert len(rows(words)) == 2


@pytest.fixture
def one_report() -> None:
    """Let the one-per-run warning fire again in this test."""
    ocr_pass._reported = False


def test_missing_tesseract_leaves_pages_unverifiable_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, one_report: None
) -> None:
    """Without Tesseract, scanned pages keep no text, say why, and the run is warned once, without document text."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image])
    config = OcrConfig(tesseract_cmd=MISSING)
    with caplog.at_level(logging.WARNING, logger="arbiter.ingest"):
        first = ingest_pdf(pdf, ocr=config)
        second = ingest_pdf(pdf, ocr=config)
    for bundle in (first, second):
        assert isinstance(bundle, DocumentBundle)
        page = bundle.pages[0]
        assert (page.has_text_layer, page.ocr_applied, page.ocr_status) == (
            False,
            False,
            OcrStatus.UNAVAILABLE,
        )
        assert bundle.extractor.version.endswith("+ocr-missing")
    warnings = [r.getMessage() for r in caplog.records if "text layer" in r.getMessage()]
    assert len(warnings) == 1
    assert "Tesseract OCR is not installed" in warnings[0]
    assert "tesseract-ocr" in warnings[0]
    assert "Hemoglobin" not in warnings[0]


def test_missing_tesseract_escalates_a_scanned_fixture_with_a_plain_reason(one_report: None) -> None:
    """A correct classification of a scan is escalated, never accepted, saying OCR is not available."""
    result = ingest_pdf(
        FIXTURES / "scanned/pdfs/path-colon-03-scan.pdf", ocr=OcrConfig(tesseract_cmd=MISSING)
    )
    assert isinstance(result, DocumentBundle)
    raw = (FIXTURES / "scanned/classifications/path-colon-03-scan.json").read_bytes()
    outcome = verify_with_retries(raw, result, load_profile())
    assert outcome.final_decision == "ESCALATE_TO_SME"
    issues = [i for i in outcome.final_issues if i.code == "V4.PAGE_NO_TEXT_LAYER"]
    assert issues
    assert all(
        "page 1 is a scanned image with no text layer, and OCR is not available" in i.message for i in issues
    )


def test_isolated_workers_read_the_environment_and_the_parent_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, one_report: None
) -> None:
    """Worker processes take ARBITER_TESSERACT_CMD from the environment; the warning comes from the parent, once."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image])
    monkeypatch.setenv("ARBITER_TESSERACT_CMD", MISSING)
    with (
        caplog.at_level(logging.WARNING, logger="arbiter.ingest"),
        IsolatedIngestor(workers=1, timeout_s=30) as ingestor,
    ):
        results = [ingestor.ingest(pdf, doc_id=f"scan-{n}") for n in range(2)]
    for result in results:
        assert isinstance(result, DocumentBundle)
        assert result.pages[0].ocr_status is OcrStatus.UNAVAILABLE
    assert len([r for r in caplog.records if "text layer" in r.getMessage()]) == 1


@pytest.mark.parametrize(
    ("rows_", "status", "text"),
    [
        (
            [word_row("Hemoglobin", 300, 400), word_row("10.4", 700, 400)],
            OcrStatus.APPLIED,
            "Hemoglobin 10.4",
        ),
        ([word_row(".", 300, 400, conf=90.0), word_row(",", 900, 900, conf=80.0)], OcrStatus.NO_TEXT, ""),
        ([], OcrStatus.NO_TEXT, ""),
    ],
)
def test_what_tesseract_reads_decides_the_page(
    tmp_path: Path, rows_: list[str], status: OcrStatus, text: str
) -> None:
    """Words become the page's text; marks alone or nothing leave the page without text (NO_TEXT)."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image])
    bundle = ingest_pdf(pdf, ocr=OcrConfig(tesseract_cmd=fake_tesseract(tmp_path, rows_)))
    assert isinstance(bundle, DocumentBundle)
    page = bundle.pages[0]
    assert (page.ocr_status, page.text, page.ocr_applied, page.has_text_layer) == (
        status,
        text,
        status is OcrStatus.APPLIED,
        False,
    )


def test_blank_scan_skips_tesseract(tmp_path: Path) -> None:
    """A blank scanned page is NO_TEXT without running the program (a failing one would say FAILED)."""
    blank, _ = draw_page([])
    pdf = image_pdf(tmp_path / "blank.pdf", [blank])
    bundle = ingest_pdf(pdf, ocr=OcrConfig(tesseract_cmd=fake_tesseract(tmp_path, [], status=3)))
    assert isinstance(bundle, DocumentBundle)
    assert bundle.pages[0].ocr_status is OcrStatus.NO_TEXT


@pytest.mark.parametrize(
    ("sleep", "status", "timeout"),
    [(0.0, 1, 30.0), (5.0, 0, 0.5)],
    ids=["crash", "timeout"],
)
def test_tesseract_failure_costs_the_page_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sleep: float, status: int, timeout: float
) -> None:
    """A crashing or hung Tesseract marks the page FAILED (V4 says OCR failed); the document still ingests."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image])
    program = fake_tesseract(tmp_path, [word_row("Hemoglobin", 300, 400)], sleep=sleep, status=status)
    with caplog.at_level(logging.WARNING, logger="arbiter.ingest"):
        bundle = ingest_pdf(pdf, ocr=OcrConfig(tesseract_cmd=program, page_timeout_s=timeout))
    assert isinstance(bundle, DocumentBundle)
    assert bundle.pages[0].ocr_status is OcrStatus.FAILED
    assert any("OCR failed on page 1" in r.getMessage() for r in caplog.records)


def test_document_budget_stops_ocr_and_leaves_the_rest_failed(tmp_path: Path) -> None:
    """Past the per-document OCR budget, remaining scanned pages are not read (FAILED), the document ingests."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image, image, image])
    program = fake_tesseract(tmp_path, [word_row("Hemoglobin", 300, 400)])
    bundle = ingest_pdf(pdf, ocr=OcrConfig(tesseract_cmd=program, doc_budget_s=0.0))
    assert isinstance(bundle, DocumentBundle)
    assert [p.ocr_status for p in bundle.pages] == [OcrStatus.APPLIED, OcrStatus.FAILED, OcrStatus.FAILED]


def test_ocr_pages_extend_the_hard_timeout(tmp_path: Path) -> None:
    """Each OCR page adds its own allowance to the worker's hard limit: 3 slow pages outlast a 2 s limit."""
    image, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [image, image, image])
    program = fake_tesseract(tmp_path, [word_row("Hemoglobin", 300, 400)], sleep=1.0)
    config = OcrConfig(tesseract_cmd=program, page_timeout_s=5.0)
    with IsolatedIngestor(workers=1, timeout_s=2.0, ocr=config) as ingestor:
        result = ingestor.ingest(pdf)
    assert isinstance(result, DocumentBundle), result
    assert [p.ocr_status for p in result.pages] == [OcrStatus.APPLIED] * 3


def _histogram_blank(pixels: np.ndarray) -> bool:
    """The rule as PIL's whole-image histogram counted it before is_blank counted band by band."""
    image = Image.fromarray(np.ascontiguousarray(pixels))
    return sum(image.histogram()[:BLANK_LEVEL]) < MIN_INK_SHARE * image.width * image.height


@given(
    st.integers(1, 700),
    st.integers(1, 90),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=40),
)
def test_banded_blank_check_decides_as_the_whole_histogram(height: int, width: int, ink: list) -> None:
    """is_blank answers exactly as counting the whole page's histogram, wherever the ink falls (last band too)."""
    pixels = np.full((height, width), 255, dtype=np.uint8)
    for spot, level in ink:
        pixels.flat[spot % pixels.size] = level
    assert is_blank(pixels) is _histogram_blank(pixels)


def test_rendered_pixels_are_the_image(tmp_path: Path) -> None:
    """render_gray's pixel array is the image's own pixels (no stride padding), so the ink counted is the page's."""
    drawn, _ = draw_page([(100, 100, "Hemoglobin 10.4 g/dL")])
    doc = pdfium.PdfDocument(image_pdf(tmp_path / "scan.pdf", [drawn]))
    try:
        page = doc[0]
        with PDFIUM_LOCK:
            got = render_gray(page.raw, page.get_width(), page.get_height(), 150)
        image, pixels = got.image, got.pixels
        assert (
            image.width % 4
        )  # 1,275 pixels a row: pdfium would pad each row of its own bitmap to 1,276 bytes
        assert pixels.shape == (image.height, image.width)
        assert pixels.tobytes() == image.tobytes()
        assert not is_blank(pixels)
        page.close()
    finally:
        doc.close()


def rendered(tmp_path: Path, lines: list[tuple[int, int, str]]) -> Rendered:
    drawn, _ = draw_page(lines) if lines else (Image.new("L", (1275, 1650), 255), None)
    doc = pdfium.PdfDocument(image_pdf(tmp_path / "scan.pdf", [drawn]))
    try:
        page = doc[0]
        with PDFIUM_LOCK:
            got = render_gray(page.raw, page.get_width(), page.get_height(), 150)
        page.close()
        return got
    finally:
        doc.close()


def test_a_page_is_drawn_into_the_file_tesseract_reads(tmp_path: Path) -> None:
    """The page's pixels, its binary PGM and the in-memory file Tesseract opens are one memory, drawn once."""
    got = rendered(tmp_path, [(100, 100, "Hemoglobin 10.4 g/dL")])
    header = f"P5\n{got.image.width} {got.image.height}\n255\n".encode()
    assert bytes(got.pgm[: len(header)]) == header
    assert bytes(got.pgm[len(header) :]) == got.pixels.tobytes() == got.image.tobytes()
    assert np.shares_memory(got.pixels, np.frombuffer(got.pgm, dtype=np.uint8))
    fd = got.page_file.take()
    assert fd is not None
    try:
        with open(f"/dev/fd/{fd}", "rb") as fh:  # as Tesseract opens it
            assert fh.read() == bytes(got.pgm)
    finally:
        os.close(fd)
    assert got.page_file.take() is None  # handed to one run only


def test_a_blank_pages_in_memory_file_is_closed_when_it_is_let_go(tmp_path: Path) -> None:
    """A page never read (blank: no Tesseract run) leaves no descriptor open once it is let go."""
    got = rendered(tmp_path, [])
    assert is_blank(got.pixels)
    assert page_files() > 0  # the file, and the mapping's own descriptor
    del got
    assert page_files() == 0


def page_files() -> int:
    """This process's open in-memory page files."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            found += "arbiter-ocr-page" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
    return found


def test_without_in_memory_files_a_page_is_drawn_in_plain_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there is no memfd, the page is drawn into this process's memory, the same PGM, and no file."""
    with_file = rendered(tmp_path, [(100, 100, "Hemoglobin 10.4 g/dL")])
    monkeypatch.delattr(ocr_module.os, "memfd_create", raising=False)
    plain = rendered(tmp_path, [(100, 100, "Hemoglobin 10.4 g/dL")])
    assert plain.page_file.take() is None
    assert bytes(plain.pgm) == bytes(with_file.pgm)


def test_tesseract_reads_the_same_words_without_an_in_memory_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no in-memory file can be made, the page goes through Tesseract's standard input: same words."""
    drawn, _ = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path / "scan.pdf", [drawn])
    via_file = ingest_pdf(pdf, ocr=OcrConfig())
    monkeypatch.delattr(ocr_module.os, "memfd_create", raising=False)
    via_stdin = ingest_pdf(pdf, ocr=OcrConfig())
    assert isinstance(via_file, DocumentBundle)
    assert isinstance(via_stdin, DocumentBundle)
    assert via_file.pages[0].ocr_status is OcrStatus.APPLIED
    assert "Hemoglobin" in via_file.pages[0].text
    assert via_stdin.pages[0].text == via_file.pages[0].text


def test_a_tesseract_that_cannot_open_the_in_memory_file_is_given_the_page_on_its_input(
    tmp_path: Path,
) -> None:
    """A Tesseract (or wrapper) that fails on the /dev/fd path reads the page from its standard input instead."""
    script = Path(fake_tesseract(tmp_path, [word_row("Hemoglobin", 300, 400), word_row("10.4", 700, 400)]))
    lines = script.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("esac\n") + 1  # after the version and language answers
    lines.insert(at, 'if [ "$1" != stdin ]; then echo "cannot open $1" >&2; exit 1; fi\n')
    script.write_text("".join(lines), encoding="utf-8")
    drawn, _ = draw_page(LAB_LINES)
    bundle = ingest_pdf(image_pdf(tmp_path / "scan.pdf", [drawn]), ocr=OcrConfig(tesseract_cmd=str(script)))
    assert isinstance(bundle, DocumentBundle)
    assert (bundle.pages[0].ocr_status, bundle.pages[0].text) == (OcrStatus.APPLIED, "Hemoglobin 10.4")


def test_the_page_is_let_go_once_tesseract_holds_it(tmp_path: Path) -> None:
    """While Tesseract reads the page, the process that drew it maps the page's memory no longer (one copy)."""
    script = Path(fake_tesseract(tmp_path, [word_row("Hemoglobin", 300, 400), word_row("MAPS", 700, 400)]))
    lines = script.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("esac\n") + 1
    # The word MAPS becomes the number of mappings of the page in the process that started this one.
    lines.insert(at, "n=$(grep -c arbiter-ocr-page /proc/$PPID/maps)\n")
    script.write_text("".join(lines).replace("\tMAPS", "\tmaps'\"$n\"'"), encoding="utf-8")
    drawn, _ = draw_page(LAB_LINES)
    bundle = ingest_pdf(image_pdf(tmp_path / "scan.pdf", [drawn]), ocr=OcrConfig(tesseract_cmd=str(script)))
    assert isinstance(bundle, DocumentBundle)
    assert (bundle.pages[0].ocr_status, bundle.pages[0].text) == (OcrStatus.APPLIED, "Hemoglobin maps0")


def test_a_released_page_keeps_its_scale_and_closes_its_mapping(tmp_path: Path) -> None:
    """Rendered.release drops the image, pixels and PGM (their memory is unmapped); the scale stays."""
    got = rendered(tmp_path, [(100, 100, "Hemoglobin 10.4 g/dL")])
    fd = got.page_file.take()
    assert fd is not None
    os.close(fd)
    assert _page_mappings() == 1
    got.release()
    assert not any(hasattr(got, name) for name in ("image", "pixels", "pgm"))
    assert got.scale == pytest.approx(150 / 72)
    assert _page_mappings() == 0


def _page_mappings() -> int:
    with open("/proc/self/maps", encoding="utf-8") as fh:
        return sum("arbiter-ocr-page" in line for line in fh)
