"""PDF ingestion: a file becomes a DocumentBundle (docs/design.md §3.1), or an IngestFailure that says why not.

- `reader`: pypdfium2 text extraction and the OCR fallback, in-process (`ingest_pdf`);
- `textlayer`: whether a page's text layer is usable or the page must be OCR'd;
- `ocr`: rendering, Tesseract and its configuration (ARBITER_OCR, ARBITER_TESSERACT_CMD, ARBITER_OCR_LANG);
- `ocr_pass`: the OCR pass over a document's unusable pages, and the once-per-run missing-OCR warning;
- `isolated`: worker processes with a hard time bound per document (`IsolatedIngestor`);
- `lock`: the process-wide pypdfium2 lock.

`EXTRACTOR_VERSION` names pdfium's, the layout rules' and the OCR engine's versions (or that OCR is off
or missing), so a bundle cache keyed on it is invalidated when any of them changes. It is worked out on
first access, from the environment at that moment.
"""

from __future__ import annotations

from typing import Any

from arbiter.contracts.bundle import FailureKind
from arbiter.ingest.isolated import IngestTarget, IsolatedIngestor, WorkerStartError
from arbiter.ingest.lock import PDFIUM_LOCK
from arbiter.ingest.ocr import OcrConfig
from arbiter.ingest.reader import (
    EXTRACTOR_NAME,
    IN_MEMORY_MAX_BYTES,
    IngestFailure,
    IngestResult,
    extractor_version,
    file_sha256,
    ingest_pdf,
)

__all__ = [
    "EXTRACTOR_NAME",
    "EXTRACTOR_VERSION",
    "IN_MEMORY_MAX_BYTES",
    "PDFIUM_LOCK",
    "FailureKind",
    "IngestFailure",
    "IngestResult",
    "IngestTarget",
    "IsolatedIngestor",
    "OcrConfig",
    "WorkerStartError",
    "extractor_version",
    "file_sha256",
    "ingest_pdf",
]


def __getattr__(name: str) -> Any:
    if name == "EXTRACTOR_VERSION":
        return extractor_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
