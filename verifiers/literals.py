"""Which words a regular expression cannot match without: a page that holds none of them is not scanned.

`Needs(regex).absent(text)` is True only when no match of the regex in `text` is possible, so skipping
the scan never changes what is found (docs/design.md §5.3). The words come from the parsed pattern: a run
of literal characters every match must contain, and for an alternation one such word per branch. A
case-insensitive pattern is pre-checked on ASCII text only (there, ignoring case is plain ASCII folding,
and a word with a character no ASCII character matches cannot occur); a pattern with no such word, inline
flags or a word the engine would match to ASCII text through case folding (the Kelvin sign) is never
skipped.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from typing import Any

from arbiter.errors import ArbiterError

_parser: Any = importlib.import_module("re._parser")  # the stdlib's own parser of the pattern syntax
_c: Any = importlib.import_module("re._constants")
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}


class _Unsure(ArbiterError):
    """A construct this reading does not vouch for: the pattern is always scanned."""


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    """The most selective set: the one whose shortest word is longest (fewest pages hold it)."""
    if not candidates:
        return None
    return max(candidates, key=lambda words: min(len(w) for w in words))


def _needed(items: Any) -> frozenset[str] | None:
    """Words one of which every match of this sequence contains (None: no such set known)."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op == _c.LITERAL:
            run.append(chr(av))
            continue
        if op == _c.BRANCH and run:  # the parser factors a common prefix out: "bp|blood" is b(?:p|lood)
            candidates.append(frozenset("".join(run) + _lead(alternative) for alternative in av[1]))
        close_run()
        if op == _c.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise _Unsure
            found = _needed(sub)
        elif op == _c.BRANCH:
            found = _branches(av[1])
        elif op in _REPEATS:
            low, _high, sub = av
            found = _needed(sub) if low >= 1 else None
        elif op == getattr(_c, "ATOMIC_GROUP", None):
            found = _needed(av)
        else:  # classes, anchors, lookarounds, backreferences...: no word of their own
            found = None
        if found:
            candidates.append(found)
    close_run()
    return _best(candidates)


def _lead(items: Any) -> str:
    """The literal characters a sequence starts with."""
    lead = []
    for op, av in items:
        if op != _c.LITERAL:
            break
        lead.append(chr(av))
    return "".join(lead)


def _branches(alternatives: Any) -> frozenset[str] | None:
    words: set[str] = set()
    for alternative in alternatives:
        found = _needed(alternative)
        if not found:
            return None  # one branch needs nothing: the alternation needs nothing
        words |= found
    return frozenset(words)


class Needs:
    """The words a pattern needs, and the one question asked of them."""

    def __init__(self, regex: str) -> None:
        self.words: tuple[str, ...] = ()
        self.fold = False
        try:
            parsed = _parser.parse(regex, 0)
            flags = parsed.state.flags
            if flags & (re.LOCALE | re.VERBOSE):
                raise _Unsure
            found = _needed(list(parsed))
        except (_Unsure, re.error, RecursionError):
            return
        if not found:
            return
        self.fold = bool(flags & re.IGNORECASE)
        if self.fold:
            if any(_folds_to_ascii(w) for w in found):
                return
            # A word with a character no ASCII character matches cannot be in ASCII text: no branch lost.
            found = frozenset(w.lower() for w in found if w.isascii())
            if not found:
                return
        self.words = tuple(sorted(found))

    def absent(self, text: str, folded: str | None = None) -> bool:
        """True only when the pattern cannot match anywhere in `text` (`folded`: text.lower(), if at hand)."""
        if not self.words:
            return False
        if self.fold:
            if not text.isascii():
                return False
            haystack = folded if folded is not None else text.lower()
        else:
            haystack = text
        return not any(map(haystack.__contains__, self.words))  # no generator: a check per pattern and page


def _folds_to_ascii(word: str) -> bool:
    """A non-ASCII character of the word matches an ASCII one when case is ignored (the Kelvin sign
    matches k): asked of the regex engine itself."""
    return any(not ch.isascii() and _ascii_matches(ch) for ch in word)


@lru_cache(maxsize=512)
def _ascii_matches(ch: str) -> bool:
    pattern = re.compile(re.escape(ch), re.IGNORECASE)
    return any(pattern.fullmatch(chr(code)) for code in range(128))


@lru_cache(maxsize=256)
def needs(regex: str) -> Needs:
    return Needs(regex)
