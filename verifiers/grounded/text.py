"""Offline reading of short texts for the grounded-answer checks: content words, numbers, negation,
modality and language. Deterministic, no model; the word lists come from the kind's profile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

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
_STEMMER = snowballstemmer.stemmer("english")  # Porter2, the Snowball English stemmer
PREFIX_MIN = 5  # a stem this long matches the stems it begins ("notif" ~ "notifi", "discov" ~ "discoveri")
# A sentence's leading enumerators and headings before its first word: "(2)", "(i)", "(A)", "§".
_LEAD = re.compile(r"^(?:\s*(?:\([0-9A-Za-z]{1,4}\)|§+|[0-9]+(?:\.[0-9]+)*\.?)\s*)*")


def words(text: str) -> list[str]:
    """Lower-case words and numbers, in order ("164.524" and "1,000" stay whole)."""
    return [w.strip(".,'’") for w in _WORD.findall(text.lower()) if w.strip(".,'’")]


@lru_cache(maxsize=65536)
def key(word: str) -> str:
    """The comparison key of a word: its Snowball (Porter2) stem ("disclosures", "disclose" → "disclos")."""
    return str(_STEMMER.stemWord(word.lower()))


def same_stem(a: str, b: str) -> bool:
    """Two keys of one word family: equal, or the shorter (PREFIX_MIN letters at least) begins the longer,
    which joins what the stemmer leaves apart ("notifi"/"notif": notify, notification)."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= PREFIX_MIN and long_.startswith(short)


def shared(part: Iterable[str], whole: Iterable[str]) -> frozenset[str]:
    """The keys of `part` that a key of `whole` matches (same_stem)."""
    have = frozenset(whole)
    return frozenset(k for k in part if k in have or any(same_stem(k, h) for h in have))


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
_CLAUSES = re.compile(r",(?!\d)|[;:()\[\]]|\.(?=\s|$)")
ANCHOR_WORDS = (
    6  # words after a quantity's unit that say what it is measured from ("after discovery of a breach")
)


@dataclass(frozen=True)
class Quantity:
    """A number with its unit ("days") and anchor: the content keys of the words after the unit in the same
    clause ("after discovery of a breach" → breach, discoveri)."""

    value: str
    unit: str
    anchor: frozenset[str]

    def measures_as(self, other: Quantity) -> bool:
        """The same measure: one unit and, when both name an anchor, a shared anchor word. Without an anchor
        on either side it cannot be told apart, and is compared (fail closed)."""
        if self.unit != other.unit:
            return False
        return not self.anchor or not other.anchor or bool(shared(self.anchor, other.anchor))


def quantities(text: str, stop: Iterable[str] = ()) -> list[Quantity]:
    """Numbers with the unit word that follows them ("30 days", "60 calendar days" → day) and their anchor;
    a paragraph reference such as "(b)(2)(i)" has no unit and is left out. `stop` words are no anchor."""
    skip = frozenset(stop) | _UNIT_SKIP
    found: list[Quantity] = []
    for clause in _CLAUSES.split(text.lower()):
        tokens = words(clause)
        for i, word in enumerate(tokens):
            value = word.replace(",", "") if _DIGITS.match(word) else str(_NUMBER_WORDS.get(word, ""))
            if not value:
                continue
            ahead = [(n, t) for n, t in enumerate(tokens[i + 1 : i + 4], i + 1) if t not in _UNIT_SKIP]
            if not ahead or not ahead[0][1].isalpha() or len(ahead[0][1]) <= 2:
                continue
            at, unit = ahead[0]
            after = tokens[at + 1 : at + 1 + ANCHOR_WORDS]
            anchor = frozenset(key(t) for t in after if t not in skip and t.isalpha() and len(t) > 2)
            found.append(Quantity(value, key(unit), anchor))
    return found


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
    imperatives: frozenset[str]

    @staticmethod
    def of(profile: GroundedProfile) -> _Lists:
        traps = profile.traps
        return _lists(
            tuple(profile.stopwords),
            tuple(traps.strong_modals),
            tuple(traps.weak_modals),
            tuple(traps.negations),
            tuple(traps.imperative_verbs),
        )


@lru_cache(maxsize=16)
def _lists(
    stop: tuple[str, ...],
    strong: tuple[str, ...],
    weak: tuple[str, ...],
    neg: tuple[str, ...],
    imperatives: tuple[str, ...],
) -> _Lists:
    return _Lists(frozenset(stop), frozenset(strong), frozenset(weak), frozenset(neg), frozenset(imperatives))


# A word after the opening one that makes that one a noun, not an imperative ("Review of ...", "Use is ...").
_NOT_AFTER_IMPERATIVE = frozenset(
    {"of", "is", "are", "was", "were", "must", "shall", "may", "should", "will", "can", "does", "has", "have"}
)


def imperative(text: str, verbs: Iterable[str]) -> bool:
    """A sentence opening (after its enumerators) with a capitalised bare verb of the list, the way a
    regulation states an obligation without "must": "(i) Retain the documentation ..."."""
    known = frozenset(verbs)
    for sentence in sentences(text):
        opening = _WORD.findall(_LEAD.sub("", sentence, count=1))
        if len(opening) < 2 or not opening[0][:1].isupper():
            continue
        if opening[0].lower() in known and opening[1].lower() not in _NOT_AFTER_IMPERATIVE:
            return True
    return False


@lru_cache(maxsize=4096)
def _read(text: str, lists: _Lists) -> Reading:
    lower = text.lower()
    plain = _COMPARATIVES.sub(" ", lower)
    tokens = words(plain)
    prohibition = bool(_PROHIBITION.search(plain))
    without_prohibition = _PROHIBITION.sub(" ", plain)
    rest = set(words(without_prohibition))
    obligation = (
        bool(rest & lists.strong)
        or bool(_BE_REQUIRED.search(without_prohibition))
        or imperative(text, lists.imperatives)
    )
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
    """Share of `part` matched in `whole` by stem (1.0 for an empty part)."""
    if not part:
        return 1.0
    return len(shared(part, whole)) / len(part)


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
