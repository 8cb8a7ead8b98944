"""The words a content pattern needs (verifiers/literals.py): a page without them is not scanned, and
skipping never changes what a pattern finds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arbiter.contracts.profile import load_profile
from verifiers.literals import Needs, needs

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
