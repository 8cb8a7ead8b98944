"""The OCR pass of ingestion: read the pages whose text layer is not usable, and say once per run when
that cannot be done (OCR off, Tesseract missing)."""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import Any

import pypdfium2.raw as pdfium_c

from arbiter.contracts.bundle import DocumentBundle, OcrStatus
from arbiter.ingest.lock import PDFIUM_LOCK
from arbiter.ingest.ocr import (
    RENDER_ALLOWANCE_S,
    OcrConfig,
    OcrError,
    Rendered,
    announce,
    engine_probe,
    is_blank,
    render_gray,
    run_tesseract,
)
from arbiter.ingest.ocr_lines import to_raw_page
from arbiter.ingest.textlayer import readable
from arbiter.ingest.textpage import RawPage

log = logging.getLogger(__name__)

PageState = tuple[OcrStatus, float | None]  # OCR status and confidence of one page


def ocr_pages(
    doc: Any, raw_pages: list[RawPage], wanted: list[int], config: OcrConfig, doc_id: str
) -> dict[int, PageState]:
    """OCR the pages at `wanted` (0-based), replacing their RawPage when Tesseract reads text on them."""
    found = engine_probe(config)
    if found is None:
        return dict.fromkeys(wanted, (OcrStatus.DISABLED, None))
    engine = found.engine
    if engine is None:
        return dict.fromkeys(wanted, (OcrStatus.UNAVAILABLE, None))
    states: dict[int, PageState] = {}
    spent = 0.0
    for index in wanted:
        raw = raw_pages[index]
        if spent > config.doc_budget_s or raw.width is None or raw.height is None:
            states[index] = (OcrStatus.FAILED, None)
            continue
        started = time.monotonic()
        announce(config.page_timeout_s + RENDER_ALLOWANCE_S)
        try:
            drawn = _draw(doc, index, raw.width, raw.height, config.dpi)
            if is_blank(drawn.pixels):
                states[index] = (OcrStatus.NO_TEXT, None)
            else:
                redraw = functools.partial(
                    _draw, doc, index, raw.width, raw.height, config.dpi, in_file=False
                )
                words = run_tesseract(engine, drawn, config.page_timeout_s, redraw)
                read, confidence = to_raw_page(words, index + 1, raw.width, raw.height, drawn.scale)
                if readable(read.text):
                    raw_pages[index] = read
                    states[index] = (OcrStatus.APPLIED, confidence)
                else:
                    states[index] = (OcrStatus.NO_TEXT, None)
        except OcrError as exc:
            log.warning("OCR failed on page %d of %s: %s", index + 1, doc_id, exc)
            states[index] = (OcrStatus.FAILED, None)
        except MemoryError:
            log.warning("OCR ran out of memory on page %d of %s", index + 1, doc_id)
            states[index] = (OcrStatus.FAILED, None)
        spent += time.monotonic() - started
    applied = sum(1 for state, _ in states.values() if state is OcrStatus.APPLIED)
    log.info("OCR read %d of %d page(s) without a usable text layer in %s", applied, len(wanted), doc_id)
    return states


def _draw(doc: Any, index: int, width: float, height: float, dpi: float, *, in_file: bool = True) -> Rendered:
    """Page `index` of the open document, `width` × `height` points, drawn for OCR (arbiter/ingest/ocr_page.py)."""
    with PDFIUM_LOCK:
        page = pdfium_c.FPDF_LoadPage(doc, index)
        if not page:
            raise OcrError("the page could not be loaded")
        try:
            return render_gray(page, width, height, dpi, in_file=in_file)
        finally:
            pdfium_c.FPDF_ClosePage(page)


_reported = False
_report_lock = threading.Lock()
_quiet = False  # set in worker processes: their parent reports instead


def quiet_ocr_reports() -> None:
    """Leave the missing-OCR warning to the parent process (called in ingestion workers)."""
    global _quiet
    _quiet = True


def report_ocr_gaps(result: object, config: OcrConfig | None = None) -> None:
    """Once per process (a run): warn that pages without a text layer could not be OCR'd, and why."""
    global _reported
    if _quiet or _reported or not isinstance(result, DocumentBundle):
        return
    gaps = [p for p in result.pages if p.ocr_status in (OcrStatus.UNAVAILABLE, OcrStatus.DISABLED)]
    if not gaps:
        return
    with _report_lock:
        if _reported:
            return
        _reported = True
    if any(p.ocr_status is OcrStatus.UNAVAILABLE for p in gaps):
        config = config if config is not None else OcrConfig.from_env()
        found = engine_probe(config)
        problem = found.problem if found is not None and found.problem else "OCR is not available."
        log.warning(
            "Pages without a text layer cannot be read: %s Such pages stay unverifiable and their "
            "documents are escalated (first seen in %s; said once per run).",
            problem,
            result.doc_id,
        )
    else:
        log.info(
            "OCR is turned off (ARBITER_OCR=off): pages without a text layer stay unverifiable and their "
            "documents are escalated (first seen in %s; said once per run).",
            result.doc_id,
        )
