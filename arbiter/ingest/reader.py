"""PDF ingestion with pypdfium2: a file becomes a DocumentBundle, or an IngestFailure that says why not.

Each page's text layer is read first; a page whose layer is missing or junk (textlayer) is then
rendered and read by Tesseract (ocr) when it is installed and OCR is on, else it stays a page without
text that V4 reports as unverifiable. `ingest_pdf` runs in-process (soft deadline between pages).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pypdfium2
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, ConfigDict

from arbiter.contracts.bundle import DocumentBundle, Extractor, FailureKind, OcrStatus
from arbiter.diagnostics import describe
from arbiter.errors import ExtractionError
from arbiter.ingest.layout import build_page, repeated_margin_lines
from arbiter.ingest.lock import PDFIUM_LOCK
from arbiter.ingest.ocr import OcrConfig, engine_probe
from arbiter.ingest.ocr_pass import ocr_pages, report_ocr_gaps
from arbiter.ingest.textlayer import OcrReason, image_share, ocr_reason
from arbiter.ingest.textpage import RawPage, read_text_page

log = logging.getLogger(__name__)

EXTRACTOR_NAME = "pypdfium2"
# Bumped when the layout or OCR rules change what a bundle holds: bundle caches key on the version.
LAYOUT_VERSION = "layout2"


def extractor_version(config: OcrConfig | None = None) -> str:
    """pdfium's version, the layout rules' and the OCR engine's (or that there is none): the cache key."""
    config = config if config is not None else OcrConfig.from_env()
    found = engine_probe(config)
    engine = found.engine if found is not None else None
    ocr = engine.tag if engine is not None else "ocr-missing" if found is not None else "ocr-off"
    return f"{pypdfium2.PYPDFIUM_INFO.version}+{LAYOUT_VERSION}+{ocr}"


# Files up to this size are read once, hashed and parsed from memory: pdfium then makes no system call
# for each object it reads, and the hash is of exactly the bytes parsed. Larger files are parsed from disk.
IN_MEMORY_MAX_BYTES = 64 * 1024 * 1024


class IngestFailure(BaseModel):
    """A document that could not be ingested, with a plain-English reason."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str
    file_path: str
    file_sha256: str | None
    kind: FailureKind
    message: str


IngestResult = DocumentBundle | IngestFailure


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class UnusableFile(ExtractionError):
    """The file cannot be ingested at all (empty, not a PDF, damaged, locked, unreadable): its `kind` and
    plain `message` become the document's IngestFailure. Raised by local and Document AI ingestion alike."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _open_document(source: Path | bytes, password: str | None, looks_like_pdf: bool) -> Any:
    """The raw FPDF_DOCUMENT of a file or of its bytes (which must outlive the document), trying the empty
    password first, then `password`; UnusableFile otherwise."""
    attempts: list[bytes | None] = [None]
    if password:
        attempts.append(password.encode("utf-8") + b"\0")
    err = 0
    for pw in attempts:
        with PDFIUM_LOCK:
            if isinstance(source, bytes):
                doc = pdfium_c.FPDF_LoadMemDocument64(source, len(source), pw)
            else:
                doc = pdfium_c.FPDF_LoadDocument(os.fsencode(source) + b"\0", pw)
            if doc:
                return doc
            err = int(pdfium_c.FPDF_GetLastError())
        if err != pdfium_c.FPDF_ERR_PASSWORD:
            break
    if err == pdfium_c.FPDF_ERR_PASSWORD:
        if password:
            raise UnusableFile(
                "encrypted", "The PDF is password-protected and the password given did not open it."
            )
        raise UnusableFile(
            "encrypted",
            "The PDF is password-protected and does not open without a password (use --password).",
        )
    if err == pdfium_c.FPDF_ERR_SECURITY:
        raise UnusableFile("encrypted", "The PDF is encrypted with a security scheme that cannot be opened.")
    if err == pdfium_c.FPDF_ERR_FILE:
        raise UnusableFile("unreadable", "The file could not be opened for reading.")
    if not looks_like_pdf:
        raise UnusableFile(
            "not_pdf", "The file is not a PDF: it has no PDF header and could not be read as one."
        )
    raise UnusableFile("broken", "The PDF is damaged: its internal structure could not be read.")


def _read_page(doc: Any, index: int) -> tuple[RawPage | None, OcrReason | None]:
    """One page's text and lines, and why its text layer is not usable (None: it is); (None, None) when
    pdfium cannot load the page at all."""
    with PDFIUM_LOCK:
        page = pdfium_c.FPDF_LoadPage(doc, index)
        if not page:
            return None, None
        try:
            width = round(float(pdfium_c.FPDF_GetPageWidthF(page)), 2)
            height = round(float(pdfium_c.FPDF_GetPageHeightF(page)), 2)
            textpage = pdfium_c.FPDFText_LoadPage(page)
            if not textpage:
                raw = RawPage(index + 1, "", [], width, height)
            else:
                try:
                    raw = read_text_page(textpage, index + 1, width, height)
                finally:
                    pdfium_c.FPDFText_ClosePage(textpage)
            return raw, ocr_reason(raw.text, lambda: image_share(page, width, height))
        finally:
            pdfium_c.FPDF_ClosePage(page)


def _unreadable(exc: OSError) -> UnusableFile:
    if isinstance(exc, FileNotFoundError):
        return UnusableFile("unreadable", "The file does not exist.")
    if isinstance(exc, PermissionError):
        return UnusableFile("unreadable", "The file could not be read: permission denied.")
    return UnusableFile("unreadable", f"The file could not be read ({exc.strerror or 'input/output error'}).")


def _check_file(path: Path, max_bytes: int) -> tuple[int, bool]:
    """Size and header checks before the engine sees the file: its size, and True when it starts like a PDF."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise UnusableFile("unreadable", "The path is not a regular file.")
        with path.open("rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise _unreadable(exc) from None
    if size == 0:
        raise UnusableFile("empty", "The file is empty (0 bytes).")
    if size > max_bytes:
        raise UnusableFile(
            "too_large", f"The file is {size / 1e6:,.0f} MB, more than the {max_bytes / 1e6:,.0f} MB limit."
        )
    return size, b"%PDF" in head


def _ingest(
    path: Path,
    source: Path | bytes,
    doc_id: str,
    sha: str,
    password: str | None,
    deadline_s: float,
    max_pages: int,
    head_ok: bool,
    ocr: OcrConfig,
) -> DocumentBundle:
    started = time.monotonic()
    doc = _open_document(source, password, head_ok)
    try:
        with PDFIUM_LOCK:
            total = int(pdfium_c.FPDF_GetPageCount(doc))
        if total <= 0:
            with PDFIUM_LOCK:
                encrypted = pdfium_c.FPDF_GetSecurityHandlerRevision(doc) != -1
            if encrypted:
                # Decrypting with the wrong key leaves an empty page tree rather than an error.
                raise UnusableFile(
                    "encrypted", "The PDF is encrypted and no pages could be read with the password given."
                )
            raise UnusableFile("empty", "The PDF has no pages.")
        if total > max_pages:
            raise UnusableFile(
                "too_large", f"The PDF has {total:,} pages, more than the {max_pages:,}-page limit."
            )
        raw_pages: list[RawPage] = []
        needs_ocr: list[int] = []
        unreadable = 0
        for index in range(total):
            if time.monotonic() - started > deadline_s:
                raise UnusableFile(
                    "timeout",
                    f"Reading the PDF took longer than the {deadline_s:g}-second limit "
                    f"(stopped after {index} of {total} pages).",
                )
            page, reason = _read_page(doc, index)
            if page is None:
                unreadable += 1
                page = RawPage(index + 1, "", [], None, None)
            elif reason is not None:
                needs_ocr.append(index)
            raw_pages.append(page)
        if unreadable == total:
            raise UnusableFile("broken", f"The PDF is damaged: none of its {total} pages could be read.")
        # OCR has its own time budget (per page and per document), outside the text pass's deadline.
        states = ocr_pages(doc, raw_pages, needs_ocr, ocr, doc_id) if needs_ocr else {}
    finally:
        with PDFIUM_LOCK:
            pdfium_c.FPDF_CloseDocument(doc)
    repeated = repeated_margin_lines(raw_pages)
    pages = []
    for index, raw in enumerate(raw_pages):
        if raw.width is None:  # pdfium could not load the page
            pages.append(build_page(raw, repeated))
            continue
        status, confidence = states.get(index, (OcrStatus.NOT_NEEDED, None))
        text_layer = status is OcrStatus.NOT_NEEDED
        pages.append(
            build_page(raw, repeated, text_layer=text_layer, ocr_status=status, ocr_confidence=confidence)
        )
    return DocumentBundle(
        doc_id=doc_id,
        file_path=str(path),
        file_sha256=sha,
        total_pages=total,
        pages=pages,
        extractor=Extractor(name=EXTRACTOR_NAME, version=extractor_version(ocr)),
        processing_timestamp=datetime.now(UTC),
        readings=None,  # the content reading is made next, by the run (verifiers/content_carry.py)
    )


def ingest_pdf(
    path: Path,
    *,
    doc_id: str | None = None,
    password: str | None = None,
    deadline_s: float = 60.0,
    max_pages: int = 5000,
    max_bytes: int = 500_000_000,
    ocr: OcrConfig | None = None,
) -> IngestResult:
    """Extract a PDF into a DocumentBundle; any problem with the file is an IngestFailure, never an exception.

    The deadline is checked between pages of the text pass; OCR (configured by `ocr`, else by the
    ARBITER_OCR* environment) has its own per-page and per-document limits. Use IsolatedIngestor for
    a hard bound.
    """
    result = _ingest_pdf(path, doc_id, password, deadline_s, max_pages, max_bytes, ocr)
    report_ocr_gaps(result, ocr)
    return result


def _ingest_pdf(
    path: Path,
    doc_id: str | None,
    password: str | None,
    deadline_s: float,
    max_pages: int,
    max_bytes: int,
    ocr: OcrConfig | None,
) -> IngestResult:
    path = Path(path)
    ocr = ocr if ocr is not None else OcrConfig.from_env()
    doc_id = doc_id if doc_id is not None else path.stem
    sha: str | None = None
    try:
        size, head_ok = _check_file(path, max_bytes)
        source: Path | bytes = path
        if size <= IN_MEMORY_MAX_BYTES:
            try:
                source = path.read_bytes()
            except OSError as exc:
                raise _unreadable(exc) from None
            sha = hashlib.sha256(source).hexdigest()
        else:
            sha = file_sha256(path)
        return _ingest(path, source, doc_id, sha, password, deadline_s, max_pages, head_ok, ocr)
    except UnusableFile as failed:
        return IngestFailure(
            doc_id=doc_id, file_path=str(path), file_sha256=sha, kind=failed.kind, message=failed.message
        )
    except MemoryError:
        message = "The PDF needs more memory to read than is available."
        return IngestFailure(
            doc_id=doc_id, file_path=str(path), file_sha256=sha, kind="too_large", message=message
        )
    except Exception as exc:
        # A bug or an engine surprise must cost this document only; the log says where, never what.
        log.error("unexpected error while ingesting %s: %s", doc_id, describe(exc))
        message = "The PDF could not be read because of an unexpected problem in the PDF reader."
        return IngestFailure(
            doc_id=doc_id, file_path=str(path), file_sha256=sha, kind="unreadable", message=message
        )
