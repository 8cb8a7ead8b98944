"""What the content reading of a bundle holds: each page's cues, marks, title and learned readings
(verifiers/content.py makes them; a bundle may carry them from ingestion, verifiers/content_carry.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from arbiter.contracts import Page
from arbiter.ingest.pagination import PageMark
from arbiter.reader.model import PageReader, reader_for


class Cue(NamedTuple):
    """One thing seen on a page that points to a document type (a tuple: made in numbers, from carried ones too)."""

    doc_type: str
    kind: str  # "heading", "pattern", "table", "form", "about"
    seen: str  # the words seen, clipped, as the document prints them
    weight: float

    def describe(self) -> str:
        return {
            "heading": f'the heading "{self.seen}"',
            "pattern": self.seen,
            "table": f'the results-table header "{self.seen}"',
            "form": self.seen,
            "about": f'"{self.seen}" (naming what it sends, orders or refers to)',
        }[self.kind]


@dataclass(slots=True)
class PageReading:
    """The content reading of one page."""

    page: int
    readable: bool
    scores: dict[str, float] = field(default_factory=dict)
    cues: list[Cue] = field(default_factory=list)
    # (normalised line, is a fill-in field) per body line; None until asked for (a carried reading)
    lines: list[tuple[str, bool]] | None = None
    fields: int = 0
    marks: tuple[PageMark, ...] = ()
    title: str | None = None  # a document title in the title region, normalised
    title_seen: str | None = None  # the same as printed
    continuation: str | None = None  # a continuation marker in the title region
    probs: dict[str, float] | None = None  # the learned page reader's probability per type, when configured
    words: int = 0  # tokens the reader read
    text: str = ""  # the page's text (a reference, for explanations)
    source: Page | None = None  # the page read (a reference: a carried reading's lines are made from it)
    start: float | None = None  # the start reader's P(this page begins a document), given the page before
    start_why: list[str] = field(default_factory=list)  # what moved it most
    orders: bool = False  # it orders, authorizes or refers: an order title in its title region
    # a phrase addressed to an AI system ([traps] injection_phrases) is on it; None: not looked for (V3 looks)
    injection: bool | None = None

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    def cues_for(self, doc_type: str) -> list[Cue]:
        return sorted((c for c in self.cues if c.doc_type == doc_type), key=lambda c: -c.weight)

    def best(self, types: list[str]) -> str | None:
        if not self.scores:
            return None
        return max(types, key=lambda t: (self.scores.get(t, 0.0), -types.index(t)))


@dataclass(slots=True)
class ContentReading:
    """Every page's reading, and sums over page ranges."""

    pages: dict[int, PageReading]
    # The page reader's file and pinned sha256 when the profile names one: loaded (and checked) when first
    # asked for, by the explanations; a carried reading needs it for nothing else.
    settings: tuple[str, str] | None = None
    _reader: PageReader | None = field(default=None, repr=False)

    @property
    def reader(self) -> PageReader | None:
        if self._reader is None and self.settings is not None:
            self._reader = reader_for(*self.settings)
        return self._reader

    def scores(self, first: int, last: int) -> dict[str, float]:
        totals: dict[str, float] = {}
        for number in range(first, last + 1):
            reading = self.pages.get(number)
            if reading is None:
                continue
            for doc_type, value in reading.scores.items():
                totals[doc_type] = totals.get(doc_type, 0.0) + value
        return totals

    def cues(self, first: int, last: int, doc_type: str, limit: int = 3) -> list[tuple[int, Cue]]:
        """The strongest distinct cues for a type on a page range, with their page."""
        found = sorted(
            (
                (number, cue)
                for number in range(first, last + 1)
                if (reading := self.pages.get(number)) is not None
                for cue in reading.cues
                if cue.doc_type == doc_type
            ),
            key=lambda item: (-item[1].weight, item[0]),
        )
        seen: set[str] = set()
        out: list[tuple[int, Cue]] = []
        for number, cue in found:
            if cue.seen.lower() in seen:
                continue
            seen.add(cue.seen.lower())
            out.append((number, cue))
            if len(out) >= limit:
                break
        return out
