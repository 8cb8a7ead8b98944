"""`--extractor documentai`: a PDF through a Document AI processor into a DocumentBundle, or an IngestFailure.

The PDF is opened locally first (pypdfium2, under the process-wide lock): a file that is empty, not a
PDF, damaged, locked or too long fails here as it would locally, at no cost. The same pass reads each
page's size (boxes are given in PDF points) and whether it has a text layer. A PDF within the online
limits (settings.py: 40 MB, 30 pages in imageless mode) is sent as it is in one request. A longer or
larger one goes through batch processing when a Cloud Storage folder is configured (1 GB and 500 pages
per document; longer PDFs in 500-page parts), else as online parts of up to `pages_per_request` pages;
a PDF that needed a password is always sent as decrypted copies, since the service cannot open a locked
file. Responses are keyed `<sha256>` (whole file) or `<sha256>.p<first>-<last>` (part) for recording and
replay; a replay that holds the whole file's response (one file, or a folder of a batch operation's
output shards) answers for the whole file however long it is, and one that holds parts covering the
file answers from them, whatever pages-per-request setting recorded them.
"""

from __future__ import annotations

import hashlib
import io
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pypdfium2
import pypdfium2.raw as pdfium_c

from arbiter.contracts.bundle import DocumentBundle, Extractor, Page
from arbiter.diagnostics import describe
from arbiter.ingest import PDFIUM_LOCK, IngestFailure, IngestResult
from arbiter.ingest.documentai.client import DocumentAIError
from arbiter.ingest.documentai.mapping import PageFacts, UnplacedTextError, map_document
from arbiter.ingest.documentai.settings import BATCH_MAX_BYTES, BATCH_PAGES, DocumentAISettings
from arbiter.ingest.documentai.shape import DocumentAIFormatError
from arbiter.ingest.documentai.sources import DocumentSource
from arbiter.ingest.reader import UnusableFile
from arbiter.ingest.textlayer import image_share, ocr_reason

log = logging.getLogger(__name__)

EXTRACTOR_NAME = "documentai"


@dataclass(frozen=True)
class Part:
    """One request's worth of the PDF: pages [first, last] (1-based), its bytes, its recording key and
    whether it goes through batch processing."""

    first: int
    last: int
    content: bytes
    key: str
    batch: bool = False


class DocumentAIIngestor:
    """Ingests PDFs through `source` (the live processor or recordings); thread-safe, never raises for a file."""

    def __init__(
        self,
        settings: DocumentAISettings,
        source: DocumentSource,
        *,
        max_pages: int = 5000,
        max_bytes: int = 500_000_000,
    ) -> None:
        self.settings = settings
        self.source = source
        self.max_pages = max_pages
        self.max_bytes = max_bytes
        self.extractor = Extractor(name=EXTRACTOR_NAME, version=settings.version)

    def ingest(self, path: Path, *, doc_id: str | None = None, password: str | None = None) -> IngestResult:
        path = Path(path)
        doc_id = doc_id if doc_id is not None else path.stem
        sha: str | None = None
        try:
            data = _read(path, self.max_bytes)
            sha = hashlib.sha256(data).hexdigest()
            facts, parts = self._prepare(data, sha, password)
            pages: list[Page] = []
            for part in parts:
                pages.extend(self._pages(part, facts[part.first - 1 : part.last]))
            unboxed = [p.page_num for p in pages if p.text.strip() and not p.lines]
            if unboxed:
                # The layout parser may return no bounding boxes at all: evidence then cannot be highlighted.
                log.info(
                    "documentai: %s: no text positions in the response for %d page(s) (first: %d); "
                    "evidence on them cannot be highlighted",
                    doc_id,
                    len(unboxed),
                    unboxed[0],
                )
            return DocumentBundle(
                doc_id=doc_id,
                file_path=str(path),
                file_sha256=sha,
                total_pages=len(facts),
                pages=pages,
                extractor=self.extractor,
                processing_timestamp=datetime.now(UTC),
            )
        except UnusableFile as failed:
            kind, message = failed.kind, failed.message
        except DocumentAIError as error:
            kind, message = error.kind, error.message
        except UnplacedTextError as error:
            log.warning(
                "documentai: %s placed %d of %d characters on pages", doc_id, error.placed, error.total
            )
            kind = "extractor_failed"
            message = (
                "Google Document AI read text from this PDF but did not say which pages it is on "
                f"({error.placed:,} of {error.total:,} characters placed), so its pages cannot be trusted."
            )
        except DocumentAIFormatError as error:
            # The path names a field, never a value: safe to log and to show.
            log.warning("documentai: unreadable response for %s at %s", doc_id, error.path)
            kind = "extractor_failed"
            message = f"Google Document AI returned a response Arbiter cannot read ({error})."
        except MemoryError:
            kind, message = "too_large", "The PDF needs more memory to process than is available."
        except Exception as exc:
            log.error("documentai: unexpected error on %s: %s", doc_id, describe(exc))
            kind = "extractor_failed"
            message = "The PDF could not be processed because of an unexpected problem with Document AI."
        return IngestFailure(doc_id=doc_id, file_path=str(path), file_sha256=sha, kind=kind, message=message)

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> DocumentAIIngestor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pages(self, part: Part, facts: list[PageFacts]) -> list[Page]:
        if part.batch:
            document = self.source.batch_document(part.content, part.key)
        else:
            document = self.source.document(part.content, part.key)
        pages = map_document(document, facts)
        if part.first == 1:
            return pages
        return [page.model_copy(update={"page_num": page.page_num + part.first - 1}) for page in pages]

    def _prepare(self, data: bytes, sha: str, password: str | None) -> tuple[list[PageFacts], list[Part]]:
        """The PDF's page facts and the parts to send, or UnusableFile for a file the service need not see."""
        with PDFIUM_LOCK:
            pdf, unlocked = _open(data, password)
            try:
                total = len(pdf)
                if total <= 0:
                    raise UnusableFile("empty", "The PDF has no pages.")
                if total > self.max_pages:
                    raise UnusableFile(
                        "too_large",
                        f"The PDF has {total:,} pages, more than the {self.max_pages:,}-page limit.",
                    )
                facts = [_facts(pdf, index) for index in range(total)]
                parts, recorded = self._parts(pdf, data, sha, total, unlocked)
            finally:
                pdf.close()
        if not recorded:
            for part in parts:
                self._check_size(part, len(parts))
        return facts, parts

    def _parts(
        self, pdf: pypdfium2.PdfDocument, data: bytes, sha: str, total: int, unlocked: bool
    ) -> tuple[list[Part], bool]:
        """The parts to send and whether they are recorded (replay: nothing is sent); the caller holds
        PDFIUM_LOCK."""
        has_whole = getattr(self.source, "has_whole", None)
        if callable(has_whole) and has_whole(sha):
            return [Part(1, total, data, sha)], True
        recorded_parts = getattr(self.source, "recorded_parts", None)
        ranges = recorded_parts(sha, total) if callable(recorded_parts) else None
        if ranges:
            return [
                Part(first, last, _copy(pdf, first, last), f"{sha}.p{first}-{last}") for first, last in ranges
            ], True
        settings = self.settings
        online = total <= settings.per_request and len(data) <= settings.max_request_bytes
        batch = settings.batch_enabled and (settings.batch == "always" or not online)
        per = BATCH_PAGES if batch else settings.per_request
        if total <= per and not unlocked:
            return [Part(1, total, data, sha, batch)], False
        spans = [(start, min(start + per - 1, total)) for start in range(1, total + 1, per)]
        parts = [
            Part(
                first,
                last,
                _copy(pdf, first, last),
                sha if (first, last) == (1, total) else f"{sha}.p{first}-{last}",
                batch,
            )
            for first, last in spans
        ]
        return parts, False

    def _check_size(self, part: Part, count: int) -> None:
        """UnusableFile (too_large) for a part over its request's size limit, naming what to change."""
        limit = BATCH_MAX_BYTES if part.batch else self.settings.max_request_bytes
        if len(part.content) <= limit:
            return
        span = f"pages {part.first}-{part.last}" if count > 1 else "the PDF"
        size = f"{span} take {len(part.content) / 1e6:.1f} MB"
        if part.batch:
            hint = "split the PDF"
        elif self.settings.batch_enabled:
            hint = "lower ARBITER_DOCUMENTAI_PAGES_PER_REQUEST"
        else:
            hint = (
                "set ARBITER_DOCUMENTAI_GCS_URI=gs://BUCKET/PREFIX to send it through batch processing "
                f"(up to {BATCH_MAX_BYTES / 1e9:g} GB), or lower ARBITER_DOCUMENTAI_PAGES_PER_REQUEST"
            )
        kind = "a batch" if part.batch else "an online"
        raise UnusableFile(
            "too_large",
            f"Document AI accepts at most {limit / 1e6:g} MB per file in {kind} request; {size} ({hint}).",
        )


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        if not path.is_file():
            raise UnusableFile(
                "unreadable",
                "The file does not exist." if not path.exists() else "The path is not a regular file.",
            )
        size = path.stat().st_size
        if size == 0:
            raise UnusableFile("empty", "The file is empty (0 bytes).")
        if size > max_bytes:
            raise UnusableFile(
                "too_large",
                f"The file is {size / 1e6:,.0f} MB, more than the {max_bytes / 1e6:,.0f} MB limit.",
            )
        return path.read_bytes()
    except PermissionError:
        raise UnusableFile("unreadable", "The file could not be read: permission denied.") from None
    except OSError as exc:
        raise UnusableFile(
            "unreadable", f"The file could not be read ({exc.strerror or 'input/output error'})."
        ) from None


def _open(data: bytes, password: str | None) -> tuple[pypdfium2.PdfDocument, bool]:
    """The document and whether it needed the password; the caller holds PDFIUM_LOCK."""
    try:
        return pypdfium2.PdfDocument(data), False
    except pypdfium2.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD and password:
            try:
                return pypdfium2.PdfDocument(data, password=password), True
            except pypdfium2.PdfiumError:
                raise UnusableFile(
                    "encrypted", "The PDF is password-protected and the password given did not open it."
                ) from None
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise UnusableFile(
                "encrypted",
                "The PDF is password-protected and does not open without a password (use --password).",
            ) from None
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise UnusableFile(
                "encrypted", "The PDF is encrypted with a security scheme that cannot be opened."
            ) from None
        if b"%PDF" not in data[:1024]:
            raise UnusableFile(
                "not_pdf", "The file is not a PDF: it has no PDF header and could not be read as one."
            ) from None
        raise UnusableFile(
            "broken", "The PDF is damaged: its internal structure could not be read."
        ) from None


def _facts(pdf: pypdfium2.PdfDocument, index: int) -> PageFacts:
    """One page's size (rounded as the local extractor rounds it) and whether its text layer is usable,
    by the rules local ingestion uses to decide whether to OCR it; the caller holds PDFIUM_LOCK."""
    try:
        page = pdf[index]
    except pypdfium2.PdfiumError:
        return PageFacts(None, None, False)
    try:
        width, height = (float(v) for v in page.get_size())
        textpage = page.get_textpage()
        try:
            text = textpage.get_text_range()
        finally:
            textpage.close()
        usable = ocr_reason(text, lambda: image_share(page.raw, width, height)) is None
        return PageFacts(round(width, 2), round(height, 2), usable)
    finally:
        page.close()


def _copy(pdf: pypdfium2.PdfDocument, first: int, last: int) -> bytes:
    """Pages [first, last] as a new, unencrypted PDF; the caller holds PDFIUM_LOCK."""
    part = pypdfium2.PdfDocument.new()
    try:
        part.import_pages(pdf, pages=list(range(first - 1, last)))
        buffer = io.BytesIO()
        part.save(buffer)
        return buffer.getvalue()
    finally:
        part.close()
