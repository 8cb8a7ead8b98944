"""Issue 14.11: the per-document OCR bound is a setting (ARBITER_OCR_DOC_BUDGET_S, default 900 s): pages
left when it runs out stay unverifiable and the document still gets its bundle."""

from __future__ import annotations

from pathlib import Path

from ocr_helpers import draw_page, fake_tesseract, image_pdf, word_row

from arbiter.contracts import DocumentBundle
from arbiter.contracts.bundle import OcrStatus
from arbiter.ingest import ingest_pdf
from arbiter.ingest.ocr import DOC_BUDGET_S, PAGE_TIMEOUT_S, OcrConfig


def test_the_budget_and_the_page_timeout_come_from_the_environment() -> None:
    config = OcrConfig.from_env({"ARBITER_OCR_DOC_BUDGET_S": "120", "ARBITER_OCR_PAGE_TIMEOUT_S": "20"})
    assert (config.doc_budget_s, config.page_timeout_s) == (120.0, 20.0)
    assert OcrConfig.from_env({}).doc_budget_s == DOC_BUDGET_S == 900.0
    for bad in ("", "soon", "-5", "0"):
        assert OcrConfig.from_env({"ARBITER_OCR_DOC_BUDGET_S": bad}).doc_budget_s == DOC_BUDGET_S
    assert OcrConfig.from_env({"ARBITER_OCR_PAGE_TIMEOUT_S": "x"}).page_timeout_s == PAGE_TIMEOUT_S


def test_pages_beyond_the_budget_stay_unverifiable(tmp_path: Path) -> None:
    """Six scanned pages, 0.4 s of OCR each, a 1 s budget: the first pages are read, the rest are not, and
    the document is extracted all the same (well inside the time six pages would take)."""
    images = [draw_page([(100, 100, f"PAGE {i}")])[0] for i in range(6)]
    pdf = image_pdf(tmp_path / "scan.pdf", images)
    cmd = fake_tesseract(tmp_path, [word_row("Glucose", 100, 100), word_row("98", 400, 100)], sleep=0.4)
    config = OcrConfig.from_env({"ARBITER_TESSERACT_CMD": cmd, "ARBITER_OCR_DOC_BUDGET_S": "1"})
    result = ingest_pdf(pdf, ocr=config)
    assert isinstance(result, DocumentBundle)
    statuses = [p.ocr_status for p in result.pages]
    assert statuses[0] == OcrStatus.APPLIED
    assert statuses[-1] == OcrStatus.FAILED
    assert 1 <= statuses.count(OcrStatus.APPLIED) < 6
