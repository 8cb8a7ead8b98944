"""Offline reading of short texts for the grounded-answer checks: content words, numbers, negation,
modality and language. Deterministic, no model; the word lists come from the kind's profile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from arbiter.contracts.grounded import GroundedProfile

_WORD = re.compile(r"[^\W_]+(?:[.,'’][^\W_]+)*", re.UNICODE)
_DIGITS = re.compile(r"^\d+(?:[.,]\d+)*$")
# Comparatives that hold "no"/"not" without negating the rule ("no later than 30 days").
_COMPARATIVES = re.compile(r"\b(?:no|not)\s+(?:later|more|less|fewer|earlier|sooner|greater)\s+than\b")
_PROHIBITION = re.compile(r"\b(?:must|shall|may|can|will)\s+not\b|\bcannot\b|\bprohibited\b|\bmay\s+no\b")
_BE_REQUIRED = re.compile(r"\b(?:is|are|be|been|being)\s+required\s+to\b")
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100,
}  # fmt: skip
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "es", "ed", "s", "ly")
STEM_CHARS = 6  # words are compared on their first six letters after the suffix is cut


def words(text: str) -> list[str]:
    """Lower-case words and numbers, in order ("164.524" and "1,000" stay whole)."""
    return [w.strip(".,'’") for w in _WORD.findall(text.lower()) if w.strip(".,'’")]


def key(word: str) -> str:
    """The comparison key of a word: a crude stem ("disclosures" and "disclose" share "disclo")."""
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:STEM_CHARS]


def numbers(text: str) -> frozenset[str]:
    """The numbers a text states, digits or number words ("six years" and "6 years" agree)."""
    found: set[str] = set()
    for word in words(text):
        if _DIGITS.match(word):
            found.add(word.replace(",", ""))
        elif word in _NUMBER_WORDS:
            found.add(str(_NUMBER_WORDS[word]))
    return frozenset(found)


_UNIT_SKIP = {"calendar", "business", "full", "consecutive", "additional", "more", "fewer", "or"}


def quantities(text: str) -> dict[str, frozenset[str]]:
    """Numbers by the unit word that follows them ("30 days", "60 calendar days" → days: {30, 60});
    a paragraph reference such as "(b)(2)(i)" has no unit and is left out."""
    tokens = words(text)
    found: dict[str, set[str]] = {}
    for i, word in enumerate(tokens):
        value = word.replace(",", "") if _DIGITS.match(word) else str(_NUMBER_WORDS.get(word, ""))
        if not value:
            continue
        rest = [t for t in tokens[i + 1 : i + 4] if t not in _UNIT_SKIP]
        if rest and rest[0].isalpha() and len(rest[0]) > 2:
            found.setdefault(key(rest[0]), set()).add(value)
    return {unit: frozenset(values) for unit, values in found.items()}


@dataclass(frozen=True)
class Reading:
    """What a short text says, for comparison with another: content keys, numbers, negation, modality."""

    content: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    obligation: bool  # must / shall / required
    prohibition: bool  # must not / may not / prohibited
    permission: bool  # may / can / should, not negated


def read(text: str, profile: GroundedProfile) -> Reading:
    """The Reading of a text under the profile's word lists."""
    return _read(text, _Lists.of(profile))


@dataclass(frozen=True)
class _Lists:
    stop: frozenset[str]
    strong: frozenset[str]
    weak: frozenset[str]
    negations: frozenset[str]

    @staticmethod
    def of(profile: GroundedProfile) -> _Lists:
        traps = profile.traps
        return _lists(
            tuple(profile.stopwords),
            tuple(traps.strong_modals),
            tuple(traps.weak_modals),
            tuple(traps.negations),
        )


@lru_cache(maxsize=16)
def _lists(
    stop: tuple[str, ...], strong: tuple[str, ...], weak: tuple[str, ...], neg: tuple[str, ...]
) -> _Lists:
    return _Lists(frozenset(stop), frozenset(strong), frozenset(weak), frozenset(neg))


@lru_cache(maxsize=4096)
def _read(text: str, lists: _Lists) -> Reading:
    lower = text.lower()
    plain = _COMPARATIVES.sub(" ", lower)
    tokens = words(plain)
    prohibition = bool(_PROHIBITION.search(plain))
    without_prohibition = _PROHIBITION.sub(" ", plain)
    rest = set(words(without_prohibition))
    obligation = bool(rest & lists.strong) or bool(_BE_REQUIRED.search(without_prohibition))
    permission = bool(rest & lists.weak)
    content = frozenset(
        key(w)
        for w in words(lower)
        if w not in lists.stop
        and w not in lists.negations
        and not _DIGITS.match(w)
        and len(w) > 1
        and w not in _NUMBER_WORDS
    )
    return Reading(
        content=content,
        numbers=numbers(lower),
        negated=prohibition or any(w in lists.negations for w in tokens),
        obligation=obligation,
        prohibition=prohibition,
        permission=permission,
    )


def coverage(part: frozenset[str], whole: Iterable[str]) -> float:
    """Share of `part` found in `whole` (1.0 for an empty part)."""
    if not part:
        return 1.0
    have = set(whole)
    return len(part & have) / len(part)


def sentences(text: str) -> list[str]:
    """A chunk's sentences (split after . ; : followed by a space and a capital, digit or parenthesis)."""
    parts = re.split(r"(?<=[.;:])\s+(?=[A-Z0-9(§])", text.strip())
    return [p for p in (part.strip() for part in parts) if p]


def language(text: str, profile: GroundedProfile) -> str | None:
    """The language whose function words the text uses most (two at least, and more than any other),
    or None when it cannot tell."""
    tokens = words(text)
    counts = sorted(
        ((sum(t in set(vocab) for t in tokens), code) for code, vocab in profile.languages.items()),
        reverse=True,
    )
    if not counts or counts[0][0] < 2 or (len(counts) > 1 and counts[0][0] == counts[1][0]):
        return None
    return counts[0][1]


def phrases_in(text: str, phrases: Iterable[str]) -> list[str]:
    """The phrases found in the text as whole words (case-insensitive; hyphens read as spaces)."""
    haystack = " " + " ".join(words(text)) + " "
    return [p for p in phrases if (needle := " ".join(words(p))) and f" {needle} " in haystack]
