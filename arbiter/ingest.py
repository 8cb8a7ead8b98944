"""PDF ingestion with pypdfium2: a file becomes a DocumentBundle, or an IngestFailure that says why not.

`ingest_pdf` runs in-process (soft deadline between pages); `IsolatedIngestor` runs it in worker
processes so that a hung or crashing PDF engine costs one document, never the batch.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

import pypdfium2
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, ConfigDict

from arbiter.contracts.bundle import DocumentBundle, Extractor
from arbiter.diagnostics import describe
from arbiter.layout import (
    RawPage,
    build_page,
    read_text_page,
    repeated_margin_lines,
)

log = logging.getLogger(__name__)

EXTRACTOR_NAME = "pypdfium2"
EXTRACTOR_VERSION = f"{pypdfium2.PYPDFIUM_INFO.version}+layout1"

# pypdfium2 is not thread-safe: every call into it, from any thread, holds this lock.
PDFIUM_LOCK = threading.RLock()

# Files up to this size are read once, hashed and parsed from memory: pdfium then makes no system call
# for each object it reads, and the hash is of exactly the bytes parsed. Larger files are parsed from disk.
IN_MEMORY_MAX_BYTES = 64 * 1024 * 1024

FailureKind = Literal["encrypted", "broken", "empty", "not_pdf", "timeout", "too_large", "unreadable"]


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


class _Failed(Exception):
    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _open_document(source: Path | bytes, password: str | None, looks_like_pdf: bool) -> Any:
    """The raw FPDF_DOCUMENT of a file or of its bytes (which must outlive the document), trying the empty
    password first, then `password`; _Failed otherwise."""
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
            raise _Failed(
                "encrypted", "The PDF is password-protected and the password given did not open it."
            )
        raise _Failed(
            "encrypted",
            "The PDF is password-protected and does not open without a password (use --password).",
        )
    if err == pdfium_c.FPDF_ERR_SECURITY:
        raise _Failed("encrypted", "The PDF is encrypted with a security scheme that cannot be opened.")
    if err == pdfium_c.FPDF_ERR_FILE:
        raise _Failed("unreadable", "The file could not be opened for reading.")
    if not looks_like_pdf:
        raise _Failed("not_pdf", "The file is not a PDF: it has no PDF header and could not be read as one.")
    raise _Failed("broken", "The PDF is damaged: its internal structure could not be read.")


def _read_page(doc: Any, index: int) -> RawPage | None:
    """One page's text and lines; None when pdfium cannot load the page at all."""
    with PDFIUM_LOCK:
        page = pdfium_c.FPDF_LoadPage(doc, index)
        if not page:
            return None
        try:
            width = round(float(pdfium_c.FPDF_GetPageWidthF(page)), 2)
            height = round(float(pdfium_c.FPDF_GetPageHeightF(page)), 2)
            textpage = pdfium_c.FPDFText_LoadPage(page)
            if not textpage:
                return RawPage(index + 1, "", [], width, height)
            try:
                return read_text_page(textpage, index + 1, width, height)
            finally:
                pdfium_c.FPDFText_ClosePage(textpage)
        finally:
            pdfium_c.FPDF_ClosePage(page)


def _unreadable(exc: OSError) -> _Failed:
    if isinstance(exc, FileNotFoundError):
        return _Failed("unreadable", "The file does not exist.")
    if isinstance(exc, PermissionError):
        return _Failed("unreadable", "The file could not be read: permission denied.")
    return _Failed("unreadable", f"The file could not be read ({exc.strerror or 'input/output error'}).")


def _check_file(path: Path, max_bytes: int) -> tuple[int, bool]:
    """Size and header checks before the engine sees the file: its size, and True when it starts like a PDF."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise _Failed("unreadable", "The path is not a regular file.")
        with path.open("rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise _unreadable(exc) from None
    if size == 0:
        raise _Failed("empty", "The file is empty (0 bytes).")
    if size > max_bytes:
        raise _Failed(
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
                raise _Failed(
                    "encrypted", "The PDF is encrypted and no pages could be read with the password given."
                )
            raise _Failed("empty", "The PDF has no pages.")
        if total > max_pages:
            raise _Failed(
                "too_large", f"The PDF has {total:,} pages, more than the {max_pages:,}-page limit."
            )
        raw_pages: list[RawPage] = []
        unreadable = 0
        for index in range(total):
            if time.monotonic() - started > deadline_s:
                raise _Failed(
                    "timeout",
                    f"Reading the PDF took longer than the {deadline_s:g}-second limit "
                    f"(stopped after {index} of {total} pages).",
                )
            page = _read_page(doc, index)
            if page is None:
                unreadable += 1
                page = RawPage(index + 1, "", [], None, None)
            raw_pages.append(page)
        if unreadable == total:
            raise _Failed("broken", f"The PDF is damaged: none of its {total} pages could be read.")
    finally:
        with PDFIUM_LOCK:
            pdfium_c.FPDF_CloseDocument(doc)
    repeated = repeated_margin_lines(raw_pages)
    return DocumentBundle(
        doc_id=doc_id,
        file_path=str(path),
        file_sha256=sha,
        total_pages=total,
        pages=[build_page(raw, repeated) for raw in raw_pages],
        extractor=Extractor(name=EXTRACTOR_NAME, version=EXTRACTOR_VERSION),
        processing_timestamp=datetime.now(UTC),
    )


def ingest_pdf(
    path: Path,
    *,
    doc_id: str | None = None,
    password: str | None = None,
    deadline_s: float = 60.0,
    max_pages: int = 5000,
    max_bytes: int = 500_000_000,
) -> IngestResult:
    """Extract a PDF into a DocumentBundle; any problem with the file is an IngestFailure, never an exception.

    The deadline is checked between pages; use IsolatedIngestor for a hard bound.
    """
    path = Path(path)
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
        return _ingest(path, source, doc_id, sha, password, deadline_s, max_pages, head_ok)
    except _Failed as failed:
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


IngestTarget = Callable[..., IngestResult]


def _worker_main(conn: Connection, target: IngestTarget, memory_limit_mb: int | None) -> None:
    """Worker process loop: one job in, one result out, until told to stop."""
    if memory_limit_mb:
        import resource

        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        path, kwargs = job
        try:
            result = target(path, **kwargs)
        except BaseException as exc:
            log.error("ingestion worker failed on %s: %s", Path(path).name, describe(exc))
            result = IngestFailure(
                doc_id=kwargs.get("doc_id") or Path(path).stem,
                file_path=str(path),
                file_sha256=None,
                kind="unreadable",
                message="The PDF could not be read because of an unexpected problem in the PDF reader.",
            )
        conn.send(result)


class WorkerStartError(RuntimeError):
    """A worker process died before it could take any document: the environment is at fault, not a PDF."""


class _WorkerLost(Exception):
    """The worker process died or stopped answering."""


class _Worker:
    def __init__(self, ctx: Any, target: IngestTarget, memory_limit_mb: int | None) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker_main, args=(child, target, memory_limit_mb), name="arbiter-ingest", daemon=True
        )
        self.process.start()
        child.close()
        self.ready = False

    def run(self, job: tuple[Path, dict[str, Any]], timeout_s: float) -> IngestResult | None:
        """The job's result; None on timeout; _WorkerLost when the process died."""
        try:
            if not self.ready:
                # Interpreter start-up is not the document's fault: it does not count against the timeout.
                if not self.conn.poll(max(timeout_s, 60.0)) or self.conn.recv() != "ready":
                    raise EOFError
                self.ready = True
            self.conn.send(job)
            if not self.conn.poll(timeout_s):
                return None
            result = self.conn.recv()
        except (EOFError, OSError) as exc:
            if not self.ready:
                raise WorkerStartError(
                    "An ingestion worker process could not start. A script that uses IsolatedIngestor "
                    'must guard its entry point with `if __name__ == "__main__":`.'
                ) from exc
            raise _WorkerLost from exc
        if not isinstance(result, DocumentBundle | IngestFailure):
            raise _WorkerLost
        return result

    def stop(self, *, kill: bool) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                kill = True
            self.process.join(2.0)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self.conn.close()


class IsolatedIngestor:
    """Runs ingestion in worker processes with a hard time bound per document.

    Thread-safe: up to `workers` documents are in flight at once. A worker that overruns `timeout_s` is
    killed and replaced (kind "timeout"); one that dies, e.g. on a segfault in the engine, is replaced
    too (kind "unreadable"). `target` replaces ingest_pdf, for tests.
    """

    def __init__(
        self,
        workers: int = 1,
        timeout_s: float = 60.0,
        *,
        target: IngestTarget = ingest_pdf,
        memory_limit_mb: int | None = 4096,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.timeout_s = timeout_s
        self._target = target
        self._memory_limit_mb = memory_limit_mb
        # spawn, not fork: forking while another thread holds PDFIUM_LOCK would deadlock the child.
        self._ctx = multiprocessing.get_context("spawn")
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._closed = False

    def ingest(self, path: Path, *, doc_id: str | None = None, password: str | None = None) -> IngestResult:
        """Ingest one file in a worker; never raises for a bad file."""
        path = Path(path)
        doc_id = doc_id if doc_id is not None else path.stem
        # The soft deadline inside the worker normally answers first, with a cleaner message.
        kwargs = {"doc_id": doc_id, "password": password, "deadline_s": self.timeout_s * 0.9}
        with self._slots:
            if self._closed:
                raise RuntimeError("IsolatedIngestor is closed")
            worker = self._take()
            try:
                result = worker.run((path, kwargs), self.timeout_s)
            except WorkerStartError:
                worker.stop(kill=True)
                raise
            except _WorkerLost:
                worker.stop(kill=True)
                return self._failure(
                    path,
                    doc_id,
                    "unreadable",
                    "The PDF reader crashed on this file; it is probably damaged.",
                )
            if result is None:
                worker.stop(kill=True)
                return self._failure(
                    path,
                    doc_id,
                    "timeout",
                    f"Reading the PDF took longer than the {self.timeout_s:g}-second limit and was stopped.",
                )
            if self._closed:
                worker.stop(kill=False)
            else:
                self._idle.put(worker)
            return result

    def _take(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return _Worker(self._ctx, self._target, self._memory_limit_mb)

    @staticmethod
    def _failure(path: Path, doc_id: str, kind: FailureKind, message: str) -> IngestFailure:
        try:
            sha: str | None = file_sha256(path)
        except OSError:
            sha = None
        return IngestFailure(doc_id=doc_id, file_path=str(path), file_sha256=sha, kind=kind, message=message)

    def close(self) -> None:
        """Stop the idle workers; documents in flight finish first."""
        self._closed = True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            worker.stop(kill=False)

    def __enter__(self) -> IsolatedIngestor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
