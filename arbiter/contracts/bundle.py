"""DocumentBundle (docs/design.md §3.1): what ingestion produces and every verifier reads."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

# Why a PDF could not be read into a bundle (ingest/reader.py's IngestFailure.kind). A document that failed
# with one waits in the operations lane as `pdf_<kind>` (`arbiter ops list --kind KIND` takes FAILURE_KINDS).
FailureKind = Literal[
    "encrypted", "broken", "empty", "not_pdf", "timeout", "too_large", "unreadable", "extractor_failed"
]
FAILURE_KINDS: tuple[str, ...] = get_args(FailureKind)


class BlockType(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    TABLE = "table"
    LIST = "list"
    HEADER = "header"
    FOOTER = "footer"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Paragraph(Strict):
    text: str
    block_type: BlockType = BlockType.PARAGRAPH
    start: int = Field(default=0, ge=0, description="Offset of the paragraph's first character in page.text.")
    end: int = Field(
        default=0, ge=0, description="Offset one past the paragraph's last character in page.text."
    )


class WordBox(Strict):
    """One word of an OCR'd line: its character span in page.text and its box in PDF points."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    box: tuple[float, float, float, float]


class LineBox(Strict):
    """One text line of a page: its character span in page.text and its box in PDF points.

    Boxes are (left, bottom, right, top) from the page's bottom-left corner, as PDF engines report them.
    OCR'd lines also keep their words' boxes, so a highlight covers exactly the words matched.
    """

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    box: tuple[float, float, float, float]
    words: list[WordBox] | None = None


class OcrStatus(StrEnum):
    """Whether and how a page's text came from OCR."""

    NOT_NEEDED = "not_needed"  # the page has a usable text layer
    APPLIED = "applied"  # no usable text layer; the text was read by OCR
    NO_TEXT = "no_text"  # no usable text layer, and OCR found no readable text either
    UNAVAILABLE = "unavailable"  # no usable text layer, and no OCR engine is installed
    DISABLED = "disabled"  # no usable text layer, and OCR is turned off by configuration
    FAILED = "failed"  # no usable text layer, and OCR failed or ran out of time on this page


class Page(Strict):
    page_num: int = Field(ge=1)
    text: str = ""
    paragraphs: list[Paragraph] = Field(default_factory=list)
    has_tables: bool = False
    has_text_layer: bool = True
    ocr_applied: bool = False
    ocr_status: OcrStatus | None = Field(default=None, description="None when the extractor does not say.")
    ocr_confidence: float | None = Field(
        default=None, ge=0, le=100, description="Mean OCR word confidence (0-100) of an OCR'd page."
    )
    width: float | None = Field(default=None, description="Page width in PDF points.")
    height: float | None = Field(default=None, description="Page height in PDF points.")
    lines: list[LineBox] = Field(default_factory=list)


class PageReadingRecord(Strict):
    """One page's content reading as the content check made it (verifiers/content.py `PageReading`)."""

    page: int = Field(ge=1)
    readable: bool
    scores: dict[str, float] = Field(default_factory=dict)
    cues: list[tuple[str, str, str, float]] = Field(
        default_factory=list, description="(document type, kind, the words seen, weight) per cue."
    )
    fields: int = 0
    marks: list[tuple[int, int | None, str, str]] = Field(
        default_factory=list, description="(number, total, template, as printed) per page number printed."
    )
    title: str | None = None
    title_seen: str | None = None
    continuation: str | None = None
    probs: dict[str, float] | None = None
    words: int = 0
    start: float | None = None
    start_why: list[str] = Field(default_factory=list)
    orders: bool = False
    injection: bool | None = None


class BundleReadings(Strict):
    """The content check's reading of every page, made once right after extraction and carried with the
    bundle, so that verifying it again (retries, re-runs with another model, what-if simulations) reads
    nothing again. Used only when both seals match: `key` (the reading code's version and the profile's
    reading settings, the readers' files included) and `pages_sha256` (the pages' text and shape)."""

    key: str
    pages_sha256: str
    pages: list[PageReadingRecord]


class Extractor(Strict):
    name: str
    version: str


class DocumentBundle(Strict):
    doc_id: str
    file_path: str
    file_sha256: str
    total_pages: int = Field(ge=0)
    pages: list[Page]
    extractor: Extractor
    processing_timestamp: datetime
    readings: BundleReadings | None = Field(
        default=None,
        description="The content check's page readings (verifiers/content_carry.py); None: none.",
    )

    def page(self, page_num: int) -> Page | None:
        """The page with this 1-based number, or None when the document has no such page."""
        if 1 <= page_num <= len(self.pages) and self.pages[page_num - 1].page_num == page_num:
            return self.pages[page_num - 1]
        return next((p for p in self.pages if p.page_num == page_num), None)
