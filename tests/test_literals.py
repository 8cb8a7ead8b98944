"""The words a content pattern needs (verifiers/literals.py): a page without them is not scanned, and
skipping never changes what a pattern finds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arbiter.contracts.profile import load_profile
from arbiter.verifiers.literals import Needs, needs

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("regex", "words"),
    [
        ("abc", ("abc",)),
        ("(?i)ABC|def", ("abc", "def")),
        ("a?b{2}c*(de)+", ("de",)),
        (r"\d+\s*(?:mg|g/dl)", ("g/dl", "mg")),
        ("x|y?", ()),  # a branch that needs nothing: the alternation needs nothing
        ("a(?i:b)", ()),  # inline flags: not read
        ("(?i)\u212aelvin", ()),  # the Kelvin sign matches an ASCII k when case is ignored
        ("(?i)abc|\u00b5x", ("abc",)),  # no ASCII character matches µ: that branch cannot match ASCII text
        ("[abc]+", ()),
        ("(?=foo)bar", ("bar",)),
        (r"(?i)\b(?:bp|blood pressure)", ("blood pressure", "bp")),  # the parser's b(?:p|lood pressure)
        ("the patient (?:is|was)", ("the patient is", "the patient was")),
    ],
)
def test_words_a_pattern_needs(regex: str, words: tuple[str, ...]) -> None:
    """Each pattern needs one of exactly these words (empty: it is always scanned)."""
    assert Needs(regex).words == words


@pytest.mark.parametrize(
    ("regex", "text", "absent"),
    [
        ("(?i)glucose", "GLUCOSE 90", False),
        ("(?i)glucose", "sodium 140", True),
        ("(?i)glucose", "glucose \u00e9", False),  # not ASCII: always scanned
        ("Gleason", "gleason", True),  # case-sensitive: case counts
        ("(?i)k", "\u212a", False),
    ],
)
def test_absent_only_when_no_match_is_possible(regex: str, text: str, absent: bool) -> None:
    """`absent` says True only for text the pattern cannot match."""
    assert needs(regex).absent(text) is absent
    if absent:
        assert re.search(regex, text) is None


def _texts() -> list[str]:
    """Every page text of the committed fixture bundles and demo classifications' snippets, and variants."""
    texts: list[str] = []
    for path in sorted((REPO / "fixtures").rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str) and len(item) > 3:
                texts.append(item)
    return texts + [t.upper() for t in texts[:500]] + [t.swapcase() for t in texts[:500]]


def test_skipping_never_changes_what_the_profile_patterns_find() -> None:
    """On every fixture text, a profile pattern judged absent finds nothing; some are skipped."""
    profile = load_profile(None)
    texts = _texts()
    skipped = 0
    for pattern in profile.content.patterns:
        compiled = re.compile(pattern.regex, re.MULTILINE)
        for text in texts:
            if needs(pattern.regex).absent(text):
                skipped += 1
                assert compiled.search(text) is None, (pattern.what, text[:80])
    assert skipped > 0


# The profile patterns as they were written before they started with their first character instead of \b.
_WITH_LEADING_BOUNDARY = {
    "a result with a laboratory unit": r"(?i)\b\d+(?:\.\d+)?\s*(?:mg/dl|g/dl|mmol/l|meq/l|u/l|iu/l|ng/ml|pg/ml"
    r"|ng/dl|ug/dl|µg/dl|miu/ml|uiu/ml|µiu/ml|k/ul|m/ul|x ?10\^?e?\d/u?l|fl|cells/ul|mm/hr|mosm/kg"
    r"|ml/min/1\.73)(?![a-z])",
    "a result flagged high or low": r"\b\d+(?:\.\d+)?\s+(?:H|L|HH|LL|High|Low|Abnormal)\b(?!\s*\d)",
    "a gene with an alteration": r"\b[A-Z][A-Z0-9]{1,6}\s+(?:[A-Z]\d{1,4}(?:[A-Z]|\*|fs)|amplification|loss"
    r"|deletion|fusion|rearrangement|exon \d+ (?:deletion|insertion|skipping))\b",
    "a TNM stage": r"\b[pyc]{1,2}T(?:[0-4][a-d]?|is|x)\s*N[0-3x][a-c]?\b",
    "a dosing instruction": r"(?i)\b\d+(?:\.\d+)?\s*(?:mg|mcg|units?)\b[^\n]{0,30}\b(?:p\.?o\.?|i\.?v\.?"
    r"|b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?d\.?|q\d+h|daily|twice a day|once a day|at bedtime|prn)\b",
}

_TRICKY = [
    "12 mg/dL",
    "a12 mg/dl",
    "_12 mg/dl",
    "é12 mg/dl",
    "-12 mg/dl",
    "(1.5mg/dl)",
    "x1.5 mg/dl 7 g/dl\n8 fl",
    "٣ mg/dl",
    "Na 140 H\nK 3.1 L 4",
    "A12 H",
    "12H 12 H",
    "KRAS G12D",
    "xKRAS G12D",
    "_KRAS G12D",
    "ERBB2 amplification, MET exon 14 skipping",
    "pT2 N0",
    "ypT2N1a",
    "apT2 N0",
    "cT1 N0 ypcT3N2",
    "pyT2N0 ppT2N0 PT2N0",
    "5 mg po daily",
    "x5 mg daily",
    "10 UNITS subcutaneous at bedtime",
    "",
    "1",
]


def test_patterns_starting_with_their_first_character_match_as_with_a_leading_boundary() -> None:
    """Each rewritten profile pattern finds the same spans as its \\b-led original, on tricky strings and on
    every fixture text."""
    profile = load_profile(None)
    rewritten = {p.what: p.regex for p in profile.content.patterns if p.what in _WITH_LEADING_BOUNDARY}
    assert rewritten.keys() == _WITH_LEADING_BOUNDARY.keys()
    texts = _TRICKY + _texts()
    found = 0
    for what, original in _WITH_LEADING_BOUNDARY.items():
        old, new = re.compile(original, re.MULTILINE), re.compile(rewritten[what], re.MULTILINE)
        assert rewritten[what] != original
        for text in texts:
            spans = [m.span() for m in old.finditer(text)]
            assert [m.span() for m in new.finditer(text)] == spans, (what, text[:80])
            found += len(spans)
    assert found > 30
