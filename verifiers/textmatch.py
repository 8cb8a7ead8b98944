"""Text normalisation and snippet location: find a claimed snippet in a page and map it back to the
original characters and PDF boxes. Pure and fast; shared by V3, V4 and the review app.
"""

from __future__ import annotations

import re
import threading
import unicodedata
import weakref
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import accumulate, chain, islice
from operator import attrgetter

from rapidfuzz import fuzz

from arbiter.contracts import DocumentBundle, LineBox, Page

Box = tuple[float, float, float, float]

# Characters that print as a hyphen or dash; all become "-" so "555‒0142" equals "555-0142".
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe31\ufe32\ufe58\ufe63\uff0d"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u00b4\u02bc\u02b9\uff07"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\u02ba\uff02"
_CHAR_MAP = {
    **dict.fromkeys(_DASHES, "-"),
    **dict.fromkeys(_SINGLE_QUOTES, "'"),
    **dict.fromkeys(_DOUBLE_QUOTES, '"'),
}
# PDFium writes U+0002 (or U+FFFE) where a hyphen ended a line; U+00AD is a soft hyphen.
_HYPHEN_MARKERS = "\u00ad\u0002\ufffe"
_LINE_BREAKS = "\n\r\u2028\u2029\x0b\x0c\x85"
# Characters whose normal form is one character that needs no context, filled as they are met.
_DIRECT: dict[str, str] = {}
# Only true hyphens join words across a line break; an en/em dash at a line end is punctuation.
_JOINING_HYPHENS = "-\u2010\u2011\ufe63\uff0d" + _HYPHEN_MARKERS
_BEFORE_JOIN = _JOINING_HYPHENS + " \t"

# What a plain ASCII run cannot hold: one character that is not printable ASCII (line breaks, tabs,
# non-ASCII) or a run of spaces. A charset-only pattern keeps the scan fast.
_SPECIAL = re.compile(r"[^\x21-\x7e ]|  +")


class Normalized:
    """Normalised text; origin[i] is the index in the original string of normalised character i.

    The ASCII fast paths keep the origin map as a few ranges and expand it only when a match needs it:
    most pages are searched (V3) far more often than a span on them is mapped back (V4).
    """

    __slots__ = ("_origin", "_ranges", "text")

    def __init__(
        self, text: str, origin: tuple[int, ...] | None = None, *, ranges: tuple[range, ...] = ()
    ) -> None:
        self.text = text
        self._origin = origin
        self._ranges = ranges

    @property
    def origin(self) -> tuple[int, ...]:
        if self._origin is None:
            self._origin = tuple(chain.from_iterable(self._ranges))
        return self._origin

    def at(self, index: int) -> int:
        """origin[index] without expanding the whole map when it is still kept as ranges."""
        if self._origin is not None:
            return self._origin[index]
        if index < 0:
            index += len(self.text)
        for span in self._ranges:
            if index < len(span):
                return span[index]
            index -= len(span)
        raise IndexError(index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Normalized) and (self.text, self.origin) == (other.text, other.origin)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Normalized({self.text!r})"


@lru_cache(maxsize=4096)
def _map_char(char: str) -> str:
    """The normalised form of one non-ASCII or control character ("" when it is dropped)."""
    if char in _CHAR_MAP:
        return _CHAR_MAP[char]
    if char.isspace():
        return " "
    category = unicodedata.category(char)
    if category in ("Cf", "Cc", "Cn") or char in _HYPHEN_MARKERS:
        return ""  # zero-width, format and control characters carry no text
    folded = unicodedata.normalize("NFKC", char).casefold()
    return "".join(_CHAR_MAP.get(c, " " if c.isspace() else c) for c in folded)


_identity: tuple[int, ...] = ()


def _ids(stop: int) -> tuple[int, ...]:
    """A shared tuple of 0..n-1 (n >= stop): slicing it avoids creating int objects for every page."""
    global _identity
    if len(_identity) < stop:
        _identity = tuple(range(max(stop, 2 * len(_identity), 8192)))
    return _identity


def normalize(text: str) -> Normalized:
    """NFKC, case-fold, unify dashes/quotes/whitespace, de-hyphenate line breaks, drop invisible chars."""
    if text.isascii() and not text.encode("ascii").translate(None, _PLAIN_LINE_BYTES):
        # Only printable ASCII and line breaks (what "the text with line breaks as spaces is printable"
        # means for ASCII, checked in C without the Unicode tables).
        flat = text.replace("\n", " ")
        if "  " not in flat and "-\n" not in text and flat[:1] != " " and flat[-1:] != " ":
            # Common case: plain ASCII lines; only case and line breaks change, one char for one char.
            return Normalized(flat.lower(), ranges=(range(len(text)),))
        if not _HYPHEN_BREAK.search(text):
            # Plain ASCII with runs of spaces (column gaps): keep each word, one space for each run.
            return _collapse_spaces(flat)
    return normalize_general(text)


def normalize_general(text: str) -> Normalized:
    """normalize without its ASCII fast paths: the reference they must agree with (and the way for
    everything else)."""
    out: list[str] = []
    origin: list[int] = []
    ids = _ids(len(text))

    def emit(chunk: str, source: int) -> None:
        for c in chunk:
            if c != " " or (out and out[-1] != " "):
                out.append(c)
                origin.append(source)

    pos = 0
    for match in _SPECIAL.finditer(text):
        begin = match.start()
        if begin < pos:
            continue  # swallowed by a de-hyphenated line break
        if begin > pos:
            # Printable ASCII with single spaces maps one to one (bar a space that would double up).
            if text[pos] == " " and (not out or out[-1] == " "):
                pos += 1
            out.extend(text[pos:begin].lower())
            origin.extend(ids[pos:begin])
        pos = match.end()
        char = match.group()
        direct = _DIRECT.get(char)
        if direct is not None:
            out.append(direct)
            origin.append(begin)
        elif char[0] == " " or char in _LINE_BREAKS:
            joined = None
            if char[0] != " " and begin and text[begin - 1] in _BEFORE_JOIN:
                joined = _joined_word_end(text, begin)
            if joined is not None:
                hyphen, pos = joined
                while origin and origin[-1] >= hyphen:
                    out.pop()
                    origin.pop()
            elif out and out[-1] != " ":
                out.append(" ")
                origin.append(begin)
        elif unicodedata.combining(char) and out and out[-1] != " ":
            # Compose with the previous character so "e\u0301" equals "é".
            source = origin[-1]
            composed = unicodedata.normalize("NFKC", out.pop() + char).casefold()
            origin.pop()
            out.extend(composed)
            origin.extend([source] * len(composed))
        elif char in "\u0002\ufffe":
            # A line-end hyphen marker inside a word joins it; elsewhere it stood for a printed hyphen.
            inside = begin > 0 and text[begin - 1].isalpha() and text[begin + 1 : begin + 2].isalpha()
            emit("" if inside else "-", begin)
        else:
            mapped = _map_char(char)
            if len(mapped) == 1 and mapped != " " and not unicodedata.combining(char):
                _DIRECT[char] = mapped  # one char for one, needing no context: the fast path next time
            emit(mapped, begin)
    if pos < len(text):
        if text[pos] == " " and (not out or out[-1] == " "):
            pos += 1
        out.extend(text[pos:].lower())
        origin.extend(ids[pos : len(text)])
    if out and out[-1] == " ":
        out.pop()
        origin.pop()
    return Normalized("".join(out), tuple(origin))


def _joined_word_end(text: str, brk: int) -> tuple[int, int] | None:
    """For a line break at `brk` that ends "letter, hyphen, [spaces]" and is followed by [whitespace]
    and a letter: the hyphen's index and the next letter's index (the word continues). Else None."""
    hyphen = brk - 1
    while hyphen >= 0 and text[hyphen] in " \t":
        hyphen -= 1
    if hyphen < 1 or text[hyphen] not in _JOINING_HYPHENS or not text[hyphen - 1].isalpha():
        return None
    nxt = brk + 1
    while nxt < len(text) and text[nxt].isspace():
        nxt += 1
    if nxt >= len(text) or not text[nxt].isalpha():
        return None
    return hyphen, nxt


_SPACES = re.compile(r" +")
_HYPHEN_BREAK = re.compile(r"-[ \t]*\n")
# Bytes of printable ASCII (space to tilde) and the line feed: deleting them leaves nothing on a plain page.
_PLAIN_LINE_BYTES = bytes(range(0x20, 0x7F)) + b"\n"


def _collapse_spaces(flat: str) -> Normalized:
    """Lower-case ASCII text with every run of spaces made one space; leading/trailing spaces dropped.

    Works run by run of 2+ spaces (a few per page), not word by word, so the cost stays in C: str.find
    jumps to the next double space (a regex scan tries every position and costs twenty times more).
    """
    begin = len(flat) - len(flat.lstrip(" "))
    stop = len(flat.rstrip(" "))
    keep: list[range] = []
    at = flat.find("  ", begin, stop)
    while at >= 0:
        keep.append(range(begin, at + 1))  # keep the run's first space
        run = _SPACES.match(flat, at)
        begin = run.end() if run is not None else at + 2  # a run never passes stop: flat[stop-1] is no space
        at = flat.find("  ", begin, stop)
    keep.append(range(begin, stop))
    text = "".join(flat[r.start : r.stop] for r in keep).lower()
    return Normalized(text, ranges=tuple(keep))


PLAIN_CACHE_CHARS = 512  # snippets, anchors, phrases and title lines; whole pages are not cached


def normalize_plain(text: str) -> str:
    """The normalised text alone (remembered for short texts: V3 and V4 normalise the same snippets)."""
    if len(text) <= PLAIN_CACHE_CHARS:
        return _plain_cached(text)
    return normalize(text).text


@lru_cache(maxsize=8192)
def _plain_cached(text: str) -> str:
    return normalize(text).text


@dataclass(frozen=True)
class Match:
    """A located snippet: page, span in the ORIGINAL page.text, score (100 exact) and line boxes."""

    page: int
    start: int
    end: int
    score: float
    boxes: tuple[Box, ...]


# The fallback ignores spaces and hyphens: PDFs split or join words oddly, and a real hyphen at a line
# end ("follow-\nup") is removed by de-hyphenation while the snippet keeps it.
_COMPACT_DROP = str.maketrans("", "", " -")
COMPACT_SCORE = 99.0  # exact apart from spaces and hyphens


def _compact_position(norm: str, kept: int) -> int:
    """Index in `norm` of its kept-th character that is not a space or hyphen."""
    seen = -1
    for i, char in enumerate(norm):
        if char not in " -":
            seen += 1
            if seen == kept:
                return i
    raise IndexError(kept)


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
        hyphens, else (OCR'd pages only) the best fuzzy alignment scoring at least the threshold."""
        located = self._locate(snippet, page)
        if located is None:
            return None
        source, norm, first, stop, score = located
        return self._match(source, norm, first, stop, score)

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
        at = norm.text.find(query)
        if at >= 0:
            return source, norm, at, at + len(query), 100.0
        # Only when the exact search failed (most snippets are found as they are).
        compact_query = self._compact_query(query)
        if compact_query:
            at = self._compact_of(page).find(compact_query)
            if at >= 0:
                first = _compact_position(norm.text, at)
                last = _compact_position(norm.text[first:], len(compact_query) - 1) + first
                return source, norm, first, last + 1, COMPACT_SCORE
        if source.ocr_applied and norm.text:
            found = fuzz.partial_ratio_alignment(query, norm.text, score_cutoff=self.fuzzy_threshold)
            if found is not None and found.dest_end > found.dest_start:
                return source, norm, found.dest_start, found.dest_end, round(found.score, 2)
        return None

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
        boxes: list[Box] = []
        for line in islice(lines, bisect_right(max_ends, start), None):
            if line.start >= end:
                break
            box = _clip(line, start, end)
            if box is not None:
                boxes.append(box)
        return tuple(boxes)


_START = attrgetter("start")
_END = attrgetter("end")


def _clip(line: LineBox, start: int, end: int) -> Box | None:
    """The part of a line's box covering [start, end), in proportion to its characters, or None."""
    length = line.end - line.start
    if length <= 0 or line.end <= start or line.start >= end:
        return None
    left, bottom, right, top = line.box
    width = right - left
    lo = (max(start, line.start) - line.start) / length
    hi = (min(end, line.end) - line.start) / length
    return (round(left + width * lo, 2), bottom, round(left + width * hi, 2), top)


def boxes_for_span(page: Page, start: int, end: int) -> tuple[Box, ...]:
    """Boxes of the lines overlapping [start, end), each clipped in proportion to the characters covered."""
    if end <= start:
        return ()
    return tuple(box for line in page.lines if (box := _clip(line, start, end)) is not None)
