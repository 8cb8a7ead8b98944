"""Text normalisation for matching: NFKC, case-fold, unified dashes/quotes/whitespace, de-hyphenated line
breaks, with a map from each normalised character back to the original. Pure; used through textmatch.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain

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
    return _plain(text)


@lru_cache(maxsize=8192)
def _plain_cached(text: str) -> str:
    return _plain(text)


def _plain(text: str) -> str:
    """normalize(text).text; plain ASCII lines skip building the origin map that only a match needs."""
    if text.isascii() and not text.encode("ascii").translate(None, _PLAIN_LINE_BYTES):
        flat = text.replace("\n", " ")
        if "  " not in flat and "-\n" not in text and flat[:1] != " " and flat[-1:] != " ":
            return flat.lower()  # normalize's first fast path, text only
    return normalize(text).text
