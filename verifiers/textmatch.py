"""Snippet location: find a claimed snippet in a page (after normalisation, see textnorm) and map it back
to the original characters and PDF boxes. Pure and fast; shared by V3, V4 and the review app.
"""

from __future__ import annotations

import threading
import unicodedata
import weakref
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, islice
from operator import attrgetter

from rapidfuzz import fuzz

from arbiter.contracts import DocumentBundle, LineBox, Page
from arbiter.verifiers.number_edges import cuts_number, numeric_edges, signs_differ, whole_numbers
from arbiter.verifiers.ocr_numbers import NumberCheck, check_numbers
from arbiter.verifiers.span_boxes import Box, boxes_for_span, clip_line, word_span
from arbiter.verifiers.textnorm import Normalized, normalize, normalize_plain

__all__ = [
    "COMPACT_SCORE",
    "Box",
    "Match",
    "NearMiss",
    "Normalized",
    "PageIndex",
    "boxes_for_span",
    "normalize",
    "normalize_plain",
]


@dataclass(frozen=True)
class Match:
    """A located snippet: page, span in the ORIGINAL page.text, score (100 exact) and line boxes."""

    page: int
    start: int
    end: int
    score: float
    boxes: tuple[Box, ...]


@dataclass(frozen=True)
class NearMiss:
    """A match refused because its numbers are not the snippet's: an approximate one on an OCR'd page, or
    (`cut_number`) one on any page that starts or ends inside a number (its span covers the whole number)."""

    match: Match
    numbers: NumberCheck
    cut_number: bool = False


@dataclass(frozen=True)
class _Fuzzy:
    """The fuzzy search of one snippet on one OCR'd page: the accepted span, or the best refused one."""

    found: tuple[int, int, float] | None
    refused: tuple[int, int, float, NumberCheck] | None


# How many approximate alignments of a snippet are tried on a page before it is not found: each one
# refused for its numbers is blanked out and the next best is tried (a lab table repeats its row names).
FUZZY_CANDIDATES = 8

# The fallback ignores spaces and hyphens: PDFs split or join words oddly, and a real hyphen at a line
# end ("follow-\nup") is removed by de-hyphenation while the snippet keeps it.
_COMPACT_DROP = str.maketrans("", "", " -")
COMPACT_SCORE = 99.0  # exact apart from spaces and hyphens


class _CompactCursor:
    """Maps indexes of the compact text (spaces and hyphens dropped) back to `norm`, for increasing
    indexes, in one pass over `norm` however many occurrences are mapped."""

    def __init__(self, norm: str) -> None:
        self._norm = norm
        self._at = -1  # index in norm of the kept-th compact character
        self._kept = -1

    def position(self, kept: int) -> int:
        """Index in `norm` of its kept-th character that is not a space or hyphen (kept never decreases)."""
        norm, at, seen = self._norm, self._at, self._kept
        while seen < kept:
            at += 1
            if norm[at] not in " -":
                seen += 1
        self._at, self._kept = at, seen
        return at


_SharedKey = tuple[int, float]
# Each entry holds its bundle weakly: an index lives no longer than its bundle (a callback drops it), so
# a finished document's pages are freed at once instead of staying in memory behind a cache.
_SHARED: dict[_SharedKey, tuple[weakref.ref[DocumentBundle], PageIndex]] = {}
_SHARED_LOCK = threading.RLock()  # re-entrant: a bundle may die (and its callback run) while it is held
_SHARED_SIZE = 4


def _forget(key: _SharedKey, ref: weakref.ref[DocumentBundle]) -> None:
    """Weakref callback: the bundle is gone, so is its shared index (unless the key was reused since)."""
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and entry[0] is ref:
            del _SHARED[key]


class PageIndex:
    """Normalised pages of one bundle (each normalised once, lazily) and snippet search over them."""

    def __init__(self, bundle: DocumentBundle, fuzzy_threshold: float = 92.0) -> None:
        self._bundle = weakref.ref(bundle)
        self.fuzzy_threshold = fuzzy_threshold
        self._pages: dict[int, Page] = {page.page_num: page for page in bundle.pages}
        self.page_numbers: tuple[int, ...] = tuple(sorted(self._pages))
        self._norm: dict[int, Normalized] = {}
        self._compact: dict[int, str] = {}
        self._lines: dict[int, tuple[list[LineBox], list[int]]] = {}
        self._compact_queries: dict[str, str] = {}
        self._fuzzy: dict[tuple[str, int], _Fuzzy] = {}
        # find's answers: an answer fixed and verified again quotes the same snippets (retries search no page again)
        self._found: dict[tuple[str, int], Match | None] = {}
        # The first occurrence (normalised span and score) refused for cutting a number, for near_miss.
        self._cut: dict[tuple[str, int], tuple[int, int, float]] = {}

    @classmethod
    def shared(cls, bundle: DocumentBundle, fuzzy_threshold: float = 92.0) -> PageIndex:
        """The index of this very bundle object, reused across verifiers (V3 and V4 read the same pages).

        Remembers the indexes of the last few bundles still alive, without keeping any bundle alive;
        bundles are never mutated, so the cached text stays right.
        """
        key = (id(bundle), fuzzy_threshold)
        with _SHARED_LOCK:
            entry = _SHARED.get(key)
            if entry is not None and entry[0]() is bundle:
                return entry[1]
            index = cls(bundle, fuzzy_threshold)
            _SHARED[key] = (weakref.ref(bundle, partial(_forget, key)), index)
            while len(_SHARED) > _SHARED_SIZE:
                _SHARED.pop(next(iter(_SHARED)), None)
            return index

    @property
    def bundle(self) -> DocumentBundle | None:
        """The indexed bundle; None once nothing else holds it (the index never keeps it alive)."""
        return self._bundle()

    def page(self, page_num: int) -> Page | None:
        return self._pages.get(page_num)

    def text_of(self, page: int) -> Normalized:
        """The normalised text of a page (empty for a page the document does not have)."""
        cached = self._norm.get(page)
        if cached is None:
            source = self._pages.get(page)
            cached = normalize(source.text if source is not None else "")
            self._norm[page] = cached
        return cached

    def _compact_of(self, page: int) -> str:
        cached = self._compact.get(page)
        if cached is None:
            cached = self.text_of(page).text.translate(_COMPACT_DROP)
            self._compact[page] = cached
        return cached

    def _compact_query(self, query: str) -> str:
        cached = self._compact_queries.get(query)
        if cached is None:
            cached = query.translate(_COMPACT_DROP)
            self._compact_queries[query] = cached
        return cached

    def find(self, snippet: str, page: int) -> Match | None:
        """Where the snippet is on the page: exact after normalisation, else ignoring spaces and
        hyphens, else (OCR'd pages only) the best fuzzy alignment scoring at least the threshold. On an
        OCR'd page a match that is not exact must also have the snippet's numbers (ocr_numbers)."""
        key = (snippet, page)
        if key in self._found:
            return self._found[key]
        located = self._locate(snippet, page)
        found = None if located is None else self._match(*located)
        self._found[key] = found
        return found

    def contains(self, snippet: str, page: int) -> bool:
        """`find(snippet, page) is not None`, without mapping the span back to the page and its boxes."""
        return self._locate(snippet, page) is not None

    def _locate(self, snippet: str, page: int) -> tuple[Page, Normalized, int, int, float] | None:
        """The page, its normalised text and the normalised span [first, stop) with its score, or None."""
        source = self._pages.get(page)
        if source is None:
            return None
        query = normalize_plain(snippet)
        if not query:
            return None
        norm = self.text_of(page)
        text = norm.text
        at = text.find(query)
        # A match may not start or end inside a number ("Hemoglobin 1" is not in "Hemoglobin 13.2"); this
        # is checked only for a query beginning or ending with a digit (most snippets are words).
        lead, tail = numeric_edges(query)
        if at >= 0 and (lead or tail):
            while at >= 0 and cuts_number(text, at, at + len(query), lead, tail):
                self._cut.setdefault((query, page), (at, at + len(query), 100.0))
                at = text.find(query, at + 1)
        if at >= 0:
            return source, norm, at, at + len(query), 100.0
        # Only when the exact search failed (most snippets are found as they are).
        compact_query = self._compact_query(query)
        if compact_query:
            compact = self._compact_of(page)
            at = compact.find(compact_query)
            lead, tail = numeric_edges(compact_query)
            signed = query.startswith("-")
            starts, ends = _CompactCursor(text), _CompactCursor(text)
            while at >= 0:
                first = starts.position(at)
                stop = ends.position(at + len(compact_query) - 1) + 1
                if ((lead or tail) and cuts_number(text, first, stop, lead, tail, signed=signed)) or (
                    signs_differ(query, text, first, stop)
                ):
                    self._cut.setdefault((query, page), (first, stop, COMPACT_SCORE))
                elif not source.ocr_applied or check_numbers(query, text, first, stop).agree:
                    return source, norm, first, stop, COMPACT_SCORE
                at = compact.find(compact_query, at + 1)
        if source.ocr_applied and text:
            found = self._fuzzy_search(query, text, page).found
            if found is not None:
                return source, norm, *found
        return None

    def _fuzzy_search(self, query: str, text: str, page: int) -> _Fuzzy:
        """The best alignment scoring at least the threshold whose numbers are the snippet's (remembered,
        with the best one refused for its numbers, for near_miss)."""
        key = (query, page)
        cached = self._fuzzy.get(key)
        if cached is not None:
            return cached
        refused: tuple[int, int, float, NumberCheck] | None = None
        result: _Fuzzy | None = None
        searched = text
        for _ in range(FUZZY_CANDIDATES):
            found = fuzz.partial_ratio_alignment(query, searched, score_cutoff=self.fuzzy_threshold)
            if found is None or found.dest_end <= found.dest_start:
                break
            first, stop, score = found.dest_start, found.dest_end, round(found.score, 2)
            numbers = check_numbers(query, text, first, stop)
            if numbers.agree:
                result = _Fuzzy((first, stop, score), None)
                break
            refused = refused or (first, stop, score, numbers)
            # NUL never survives normalisation, so the blanked span matches nothing in the next round.
            searched = searched[:first] + "\0" * (stop - first) + searched[stop:]
        result = result or _Fuzzy(None, refused)
        self._fuzzy[key] = result
        return result

    def near_miss(self, snippet: str, page: int) -> NearMiss | None:
        """Where the snippet is not found: its match refused for cutting a number (on any page), else on an
        OCR'd page its best approximate match that scored the threshold but was refused because the
        numbers differ (None when there is neither)."""
        source = self._pages.get(page)
        if source is None or self._locate(snippet, page) is not None:
            return None
        query = normalize_plain(snippet)
        norm = self.text_of(page)
        cut = self._cut.get((query, page))
        if cut is not None:
            first, stop, score = cut
            whole = whole_numbers(norm.text, first, stop)
            numbers = check_numbers(query, norm.text, first, stop)
            return NearMiss(self._match(source, norm, *whole, score), numbers, cut_number=True)
        cached = self._fuzzy.get((query, page)) if source.ocr_applied else None
        if cached is None or cached.refused is None:
            return None
        first, stop, score, numbers = cached.refused
        return NearMiss(self._match(source, norm, first, stop, score), numbers)

    def span(self, page: int, first: int, stop: int) -> Match | None:
        """The match of the normalised span [first, stop) of a page's text_of (a rule's regex match there),
        mapped back to the original characters and boxes."""
        source = self._pages.get(page)
        norm = self.text_of(page)
        if source is None or not 0 <= first < stop <= len(norm.text):
            return None
        return self._match(source, norm, first, stop, 100.0)

    def find_any(self, snippet: str, pages: Iterable[int] | None = None) -> list[Match]:
        """Every page (of those given, or of the document) where the snippet is found, in page order."""
        wanted = sorted({p for p in pages if p in self._pages}) if pages is not None else self.page_numbers
        return [m for m in (self.find(snippet, p) for p in wanted) if m is not None]

    def _match(self, page: Page, norm: Normalized, first: int, stop: int, score: float) -> Match:
        """Map the normalised span [first, stop) back to the original text."""
        start = norm.at(first)
        end = norm.at(stop - 1) + 1
        text = page.text
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        return Match(page.page_num, start, end, score, self._boxes(page, start, end))

    def _boxes(self, page: Page, start: int, end: int) -> tuple[Box, ...]:
        """boxes_for_span with a per-page table, so a page with many lines is not scanned per snippet."""
        table = self._lines.get(page.page_num)
        if table is None:
            lines = sorted(page.lines, key=_START)
            table = (lines, list(accumulate(map(_END, lines), max)))
            self._lines[page.page_num] = table
        lines, max_ends = table
        if end <= start:
            return ()
        start, end = word_span(page.text, start, end)
        boxes: list[Box] = []
        for line in islice(lines, bisect_right(max_ends, start), None):
            if line.start >= end:
                break
            box = clip_line(line, start, end)
            if box is not None:
                boxes.append(box)
        return tuple(boxes)


_START = attrgetter("start")
_END = attrgetter("end")
