"""The profile's heading phrases and results-table words, compiled once per profile, and the matchers
that find them in a normalised line (verifiers/content.py)."""

from __future__ import annotations

import re
from functools import lru_cache

from arbiter.contracts.profile import Content
from arbiter.verifiers.made_once import made_once
from arbiter.verifiers.textnorm import normalize_plain

_WORDS = re.compile(r"[a-z]+")
_LEAD = re.compile(r"[\s#*\-•.:0-9()]+")  # list numbers and bullets before a heading

_Phrase = tuple[str, str, float, re.Pattern[str]]  # (type, normalised phrase, weight, its pattern)
_TOKEN = re.compile(r"\w+")


class _HeadingIndex:
    """The profile's heading phrases, longest first, and where to look for each: a phrase that begins with a
    word character can only match where that first word stands whole in the line (it is preceded by no word
    character and followed by the phrase's next character, a non-word one, or by none), so a line is only
    tried against the phrases whose first word it holds, and against those that begin otherwise."""

    def __init__(self, phrases: list[_Phrase]) -> None:
        self.phrases = tuple(sorted(phrases, key=lambda item: -len(item[1])))
        self.by_first: dict[str, list[int]] = {}
        self.always: list[int] = []
        for n, (_type, words, _weight, _pattern) in enumerate(self.phrases):
            first = _TOKEN.match(words)
            if first is None:
                self.always.append(n)
            else:
                self.by_first.setdefault(first.group(), []).append(n)

    def candidates(self, norm: str) -> list[_Phrase]:
        """The phrases that could match in this line, in the index's order (longest first)."""
        by_first = self.by_first
        found = list(self.always)
        for token in set(_TOKEN.findall(norm)):
            found.extend(by_first.get(token, ()))
        found.sort()
        phrases = self.phrases
        return [phrases[n] for n in found]


_INDEXES: dict[int, tuple[object, _HeadingIndex]] = {}


def _heading_index(content: Content) -> _HeadingIndex:
    """The profile's heading phrases compiled once per profile (profiles are frozen)."""
    return made_once(_INDEXES, content, lambda: _build_heading_index(content))


def _build_heading_index(content: Content) -> _HeadingIndex:
    out = []
    for doc_type, phrases in content.headings.items():
        for phrase, weight in phrases.items():
            words = normalize_plain(phrase)
            pattern = re.compile(r"(?<![\w])" + re.escape(words) + r"(?![\w])")
            out.append((doc_type, words, weight, pattern))
    # Longest first: "final diagnosis" is taken before "diagnosis" on the same line.
    return _HeadingIndex(out)


def _headings_in(
    norm: str,
    index: _HeadingIndex,
    heading_block: bool = False,
    *,
    anywhere: bool = False,
    every: bool = False,
) -> list[tuple[str, int, float]]:
    """Heading phrases a line starts with (or holds, in a heading block or a quoted snippet), as (type,
    where it starts, weight); a phrase inside a longer one already found is not counted again. Only the
    phrases the line could hold are tried (`every`: all of them, as the index's tests compare)."""
    found: list[tuple[str, int, float]] = []
    taken: list[tuple[int, int]] = []
    for doc_type, phrase, weight, pattern in index.phrases if every else index.candidates(norm):
        if phrase not in norm:
            continue
        for match in pattern.finditer(norm):
            start, end = match.span()
            if not (anywhere or heading_block) and _LEAD.sub("", norm[:start]) != "":
                continue
            if any(s <= start and end <= e for s, e in taken):
                continue
            taken.append((start, end))
            found.append((doc_type, start, weight))
            break
    return found


def _results_header(norm: str, content: Content) -> bool:
    """A results table's header row: enough column words, making at least half of the line (a sentence
    that mentions a reference range is not a header)."""
    if not _may_hold_header(norm, content):
        return False  # fewer column words even as parts of words than the distinct ones needed
    columns = _header_words(content)
    words = _WORDS.findall(norm)
    header = [w for w in words if w in columns]
    return len(set(header)) >= content.results_header_min_words and 2 * len(header) >= len(words)


def _may_hold_header(text: str, content: Content) -> bool:
    """Whether some line of this text could be a results table's header (enough column words occur in it
    even as parts of words): False only when none can."""
    return sum(map(text.__contains__, _header_words(content))) >= content.results_header_min_words


_HEADER_WORDS: dict[int, tuple[object, frozenset[str]]] = {}


def _header_words(content: Content) -> frozenset[str]:
    """The profile's results-table column words as a set, made once per profile (profiles are frozen)."""
    return made_once(_HEADER_WORDS, content, lambda: frozenset(content.results_header_words))


@lru_cache(maxsize=256)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.MULTILINE)
