"""The profile's `[content]` table: what the content reading (verifiers/content.py) looks for on a page, and
the learned readers (`[content.reader]`, arbiter/reader) that decide V2's content rules."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ValuePattern(Strict):
    """A value pattern of the content reading: a regular expression whose matches point to one type."""

    type: str
    what: str = Field(description="What a match is, in words an SME understands (shown in messages).")
    regex: str = Field(description="Python regular expression, case-sensitive unless it starts with (?i).")
    weight: float = Field(gt=0)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str) -> str:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(f"value pattern {regex!r} is not a valid regular expression: {exc}") from exc
        return regex


class BaselineReader(Strict):
    """The offline baseline classifier's own learned page reader (`[baseline.reader]`): a separate file from
    the content check's, fitted on another view of the page (words, pairs and headings only), so that the
    primary and its check do not make the same mistakes. It decides each page's type; the cue phrases
    still find numbering and vendors. Pinned by sha256 like the check's reader."""

    model: str = Field(min_length=1, description="A file in arbiter/reader/models/, or a path.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The model file's sha256.")
    version: str = Field(min_length=1)
    min_share: float = Field(
        default=0.1, ge=0, lt=0.5, description="A type the reader gives a page less than this is not claimed."
    )
    min_words: int = Field(default=5, ge=0, description="A page with fewer words takes its neighbour's type.")
    min_line_chars: int = Field(default=12, ge=1, description="The shortest line quoted as evidence.")


class ReaderSettings(Strict):
    """The learned page reader (arbiter/reader): which model file, pinned by its sha256, and when its
    reading contradicts an answer. Adopting a new reader is a change of this table, so of the profile's
    digest and version, which every decision records."""

    model: str = Field(min_length=1, description="A file in arbiter/reader/models/, or a path.")
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="The model file's sha256: any other file is refused."
    )
    version: str = Field(min_length=1)
    support: float = Field(
        default=0.05, ge=0, lt=0.5, description="A segment whose type the reader gives at most this."
    )
    page_clear: float = Field(
        default=0.95, gt=0.5, le=1, description="The same for one page inside a longer segment..."
    )
    page_support: float = Field(
        default=0.02, ge=0, lt=0.5, description="...whose own type it gives at most this."
    )
    min_words: int = Field(default=12, ge=0, description="A page with fewer words is not judged on its own.")
    lexicons_too: bool = Field(
        default=False,
        description="The [content] lexicons' own contradiction rules also run, as a second opinion.",
    )
    starts: str | None = Field(default=None, description="The start reader (arbiter/reader/starts.py) file.")
    starts_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    start_keep: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="A boundary between pages of one type stands at this P(start) or more.",
    )
    start_continue: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="A boundary between two types whose later page has a P(start) below this splits a document.",
    )
    start_new: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="A page inside a segment with at least this P(start) begins another document.",
    )

    @model_validator(mode="after")
    def _starts_pinned(self) -> ReaderSettings:
        if (self.starts is None) != (self.starts_sha256 is None):
            raise ValueError("starts and starts_sha256 go together: name the start reader's file and pin it")
        return self


class Content(Strict):
    """The content reading (verifiers/content.py): what each page's own words, values and layout say about
    each document type, independent of the primary model and of the baseline classifier's cue list."""

    headings: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Type -> section heading or title phrase (lowercase) -> weight."
    )
    patterns: list[ValuePattern] = Field(default_factory=list)
    pattern_cap: int = Field(default=3, ge=1, description="Matches of one pattern counted per page.")
    heading_max_chars: int = Field(default=70, ge=10)
    results_header_words: list[str] = Field(default_factory=list)
    results_header_min_words: int = Field(default=3, ge=2)
    results_header_type: str | None = None
    results_header_weight: float = Field(default=3.0, ge=0)
    form_type: str | None = Field(default=None, description="The type a page of fill-in fields reads as.")
    form_min_fields: int = Field(default=4, ge=1)
    form_min_share: float = Field(default=0.25, ge=0, le=1)
    form_field_weight: float = Field(default=0.75, ge=0)
    form_field_cap: int = Field(default=10, ge=1)
    label_evidence_types: list[str] = Field(
        default_factory=list, description="Types for which a form label is fair evidence (forms)."
    )
    about_type: str | None = Field(
        default=None,
        description="The type a heading phrase counts for when the text is about that phrase's document "
        "(a letter's subject line, an order) rather than being one.",
    )
    about_markers: list[str] = Field(
        default_factory=list,
        description="Words (lowercase) that put a heading phrase after them on the same line in an "
        "'about' context: 're:', 'regarding', 'ordered', ...",
    )
    about_window: int = Field(
        default=40, ge=0, description="Most characters between a marker and the phrase it is about."
    )
    order_titles: list[str] = Field(
        default_factory=list,
        description="Titles (lowercase) of pages that order, authorize or refer: every heading phrase of "
        "another type on such a page counts for about_type.",
    )
    order_words: list[str] = Field(
        default_factory=list,
        description="Words (lowercase) that make a title line (no digits, no colon) in a page's title region "
        'an order, request or consent of any wording ("GENETIC TESTING REQUISITION"); a line such as '
        '"Requisition #: 4410" on a report is not a title.',
    )
    document_titles: list[str] = Field(default_factory=list)
    continuation_markers: list[str] = Field(default_factory=list)
    transmission_words: list[str] = Field(default_factory=list)
    clear_score: float = Field(default=6.0, gt=0)
    clear_share: float = Field(default=0.6, gt=0, le=1)
    support_share: float = Field(default=0.15, ge=0, lt=1)
    page_clear_score: float = Field(default=6.0, gt=0)
    evidence_other_score: float = Field(default=2.0, gt=0)
    reader: ReaderSettings | None = Field(
        default=None, description="The learned page reader; None: lexicons decide."
    )

    @model_validator(mode="after")
    def _lowercase_phrases(self) -> Content:
        for doc_type, phrases in self.headings.items():
            for phrase, weight in phrases.items():
                if phrase != phrase.lower() or not phrase.strip() or weight <= 0:
                    raise ValueError(
                        f"heading {phrase!r} of {doc_type} must be lowercase with a positive weight"
                    )
        for name in ("about_markers", "order_titles", "order_words"):
            for phrase in getattr(self, name):
                if phrase != phrase.lower() or not phrase.strip():
                    raise ValueError(f"{name} entry {phrase!r} must be lowercase and not blank")
        return self
