"""Which words a regular expression cannot match without: a page that holds none of them is not scanned.

`Needs(regex).absent(text)` is True only when no match of the regex in `text` is possible, so skipping
the scan never changes what is found (docs/design.md §5.3). The words come from the parsed pattern: a run
of literal characters every match must contain, and for an alternation one such word per branch. A
case-insensitive pattern is pre-checked on ASCII text only (there, ignoring case is plain ASCII folding,
and a word with a character no ASCII character matches cannot occur); a pattern with no such word, inline
flags or a word the engine would match to ASCII text through case folding (the Kelvin sign) is never
skipped.

`Starts(regex).finditer(pattern, text)` goes further on a page that holds such words: it tries the pattern
only where a match can begin, at or a few characters before a word that locates every match (or before it
over a run of the characters the pattern's lead can match: the digits and spaces before a range's dash), and
yields exactly what `pattern.finditer(text)` yields.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from arbiter.errors import ArbiterError

_parser: Any = importlib.import_module("re._parser")  # the stdlib's own parser of the pattern syntax
_c: Any = importlib.import_module("re._constants")
_compiler: Any = importlib.import_module("re._compiler")
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


_ZERO_WIDTH = {_c.AT, _c.ASSERT, _c.ASSERT_NOT}
_CHARS = {_c.LITERAL, _c.NOT_LITERAL, _c.IN, _c.ANY}  # the operations that match one character
# Flags that change what matches (as plain ints: the enum's own operators cost microseconds a call).
_MEANING = int(re.IGNORECASE | re.DOTALL | re.VERBOSE | re.ASCII | re.LOCALE)
_MULTILINE = int(re.MULTILINE)
_REACH = 8  # a bounded lead longer than this is treated as unbounded (tried over its characters' run)

# A locating word: (word, lo, hi, lead): a match begins between lo and hi characters before the word, the
# characters between being matched by `lead` (the one-character items of what precedes the word).
_Locator = tuple[str, int, int, tuple[Any, ...]]


def _chars(items: Any) -> list[Any]:
    """The one-character items a sequence can consume characters with (zero-width ones left out)."""
    out: list[Any] = []
    for op, av in items:
        if op in _CHARS:
            out.append((op, av))
        elif op == _c.SUBPATTERN:
            if av[1] or av[2]:
                raise _Unsure
            out.extend(_chars(av[3]))
        elif op == _c.BRANCH:
            for alternative in av[1]:
                out.extend(_chars(alternative))
        elif op in _REPEATS:
            out.extend(_chars(av[2]))
        elif op == getattr(_c, "ATOMIC_GROUP", None):
            out.extend(_chars(av))
        elif op not in _ZERO_WIDTH:
            raise _Unsure  # group references and the like: no vouching for what they consume
    return out


def _starts(items: Any, state: Any) -> list[_Locator] | None:
    """Words that locate every match of this sequence (None: no such list known)."""
    items = list(items)
    lo = hi = 0
    lead: list[Any] = []
    index = 0
    while index < len(items):
        op, av = items[index]
        if op in _ZERO_WIDTH:
            index += 1
            continue
        found: list[_Locator] | None = None
        if op == _c.LITERAL:
            run = []
            while index < len(items) and items[index][0] == _c.LITERAL:
                run.append(chr(items[index][1]))
                index += 1
            word = "".join(run)
            found = [(word, 0, 0, ())]
            if index < len(items) and items[index][0] == _c.BRANCH:  # a prefix the parser factored out
                tails = [_lead(alternative) for alternative in items[index][1][1]]
                if all(tails):
                    found = [(word + tail, 0, 0, ()) for tail in tails]
        elif op == _c.BRANCH:
            found = []
            for alternative in av[1]:
                located = _starts(alternative, state)
                if located is None:
                    found = None
                    break
                found.extend(located)
        elif op == _c.SUBPATTERN:
            if av[1] or av[2]:
                raise _Unsure
            found = _starts(av[3], state)
        elif op in _REPEATS and av[0] >= 1:
            found = _starts(av[2], state)
        if found is not None:
            return [(word, lo + a, hi + b, (*lead, *more)) for word, a, b, more in found]
        low, high = _parser.SubPattern(state, [(op, av)]).getwidth()
        lo, hi = lo + low, hi + high
        lead.extend(_chars([(op, av)]))
        index += 1
    return None


class Starts:
    """Where a match of a pattern can begin: at, or before, one of its locating words.

    `Starts(regex).finditer(pattern, text, folded)` yields exactly what `pattern.finditer(text)` yields,
    trying the pattern only where a match could begin (docs/design.md §5.3). Every match contains one of
    the words, at most a few characters after its beginning or after a run of characters that what comes
    before the word can match (the digits and spaces before a range's dash), so no other position can begin a match;
    the positions are tried in order from the end of the last match, as finditer does. A pattern that could
    match nothing, one with inline flags or without such words, or one the engine skips through by its first
    character class while its words would need walks back, is scanned whole; so is a case-insensitive
    one on text that is not ASCII, and any text where the words are so common that one scan costs less.
    """

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self.words: tuple[tuple[str, int, int, Callable[[str], bool] | None], ...] = ()
        self.fold = False
        self.line_start = False  # every match begins at a line's start (a leading ^)
        self._heads: tuple[str, ...] = ()  # the words a match begins with, when it begins with one
        self._flags = 0
        try:
            parsed = _parser.parse(regex, 0)
            flags = parsed.state.flags
            if flags & (re.LOCALE | re.VERBOSE) or parsed.getwidth()[0] == 0:
                raise _Unsure
            items = list(parsed)
            found = _starts(items, parsed.state)
            if not found:
                return
            fold = bool(flags & re.IGNORECASE)
            if fold:  # only ASCII text is searched: a word with other characters cannot be in it ...
                if any(_folds_to_ascii(word) for word, *_ in found):
                    return  # ... unless case folding matches it to ASCII text (the Kelvin sign)
                found = [located for located in found if located[0].isascii()]
            if items[0][0] == _c.IN and any(hi > _REACH for _, _, hi, _ in found):
                # The engine itself skips to where its first character class matches (the digit that
                # begins a value with a unit): a walk back from every unit word costs more than that.
                return
            words = []
            for word, lo, hi, lead in sorted(found, key=lambda located: located[:3]):
                runs = _one_of(lead, parsed.state, flags) if hi > _REACH else None
                words.append((word.lower() if fold else word, lo, hi, runs))
        except (_Unsure, re.error, RecursionError, TypeError, ValueError, AttributeError):
            return
        self.fold = fold
        self._flags = flags
        self.words = tuple(words)
        if all(lo == hi == 0 for _, lo, hi, _ in words):
            self._heads = tuple(word for word, *_ in words)
            self.line_start = bool(items) and items[0] == (_c.AT, _c.AT_BEGINNING)

    def finditer(
        self, pattern: re.Pattern[str], text: str, folded: str | None = None
    ) -> Iterator[re.Match[str]]:
        """The matches of `pattern` (compiled from this regex) in `text`, as pattern.finditer gives them."""
        different = pattern.pattern != self.regex or (pattern.flags ^ self._flags) & _MEANING
        if different or not self.words or (self.fold and not text.isascii()):
            yield from pattern.finditer(text)
            return
        haystack = (folded if folded is not None else text.lower()) if self.fold else text
        where: set[int] = set()
        if self.line_start and pattern.flags & _MULTILINE:  # ^ is a line's start: only those are tried
            heads, at = self._heads, 0
            while at >= 0:
                if haystack.startswith(heads, at):
                    where.add(at)
                at = haystack.find("\n", at) + 1 or -1
        else:
            most = len(text) // 32 + 1  # more tries than this cost more than one scan of the whole text
            for word, lo, hi, runs in self.words:
                at = haystack.find(word)
                while at >= 0:
                    first = at - hi
                    if runs is not None:  # back over the characters the lead can match
                        first = at
                        while first > 0 and runs(text[first - 1]):
                            first -= 1
                    where.update(range(max(first, 0), at - lo + 1))
                    if len(where) > most:
                        yield from pattern.finditer(text)
                        return
                    at = haystack.find(word, at + 1)
        end = 0
        match = pattern.match
        for start in sorted(where):
            if start < end:
                continue
            found = match(text, start)
            if found is not None:
                yield found
                end = found.end()


def _one_of(lead: tuple[Any, ...], state: Any, flags: int) -> Callable[[str], bool]:
    """Whether one character can be matched by any of these one-character items (remembered per character)."""
    if not lead:
        raise _Unsure
    parsed = _parser.SubPattern(
        state, [(_c.BRANCH, (None, [_parser.SubPattern(state, [item]) for item in lead]))]
    )
    one = _compiler.compile(parsed, flags).fullmatch
    seen: dict[str, bool] = {}

    def matches(ch: str) -> bool:
        found = seen.get(ch)
        if found is None:
            found = seen[ch] = one(ch) is not None
        return found

    return matches


@lru_cache(maxsize=256)
def starts(regex: str) -> Starts:
    return Starts(regex)
