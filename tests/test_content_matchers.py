"""The content reading's line matchers (fill-in fields, capitals headings, results-table headers) answer as
they did before they were made faster: the old ones are kept here as the reference."""

from __future__ import annotations

import re

import pytest

from arbiter.contracts.profile import load_profile
from arbiter.verifiers import content, content_lines
from arbiter.verifiers.textnorm import normalize_plain
from tests.test_literals import _texts

# The matchers as they were before the set of column words, the substring checks and the led check-box regex.
_OLD_BLANKS = re.compile(r"_{4,}")
_OLD_CHECKBOXES = re.compile(r"[☐□❏❑❒☑☒]|\[ \]|\(\s\)")
_OLD_YES_NO = re.compile(r"[?:]\s*yes\*?\s+no\b\s*$")


def _old_is_field(norm: str, heading_block: bool) -> bool:
    if _OLD_BLANKS.search(norm) or _OLD_CHECKBOXES.search(norm) or _OLD_YES_NO.search(norm):
        return True
    if not content_lines._FIELD_LINE.match(norm):
        return False
    return not (heading_block and norm.count(":") == 1)


def _old_capitals_heading(line: str) -> bool:
    text = line.strip()
    if not 4 <= len(text) <= 60:
        return False
    letters = [c for c in text if c.isalpha()]
    return (
        len(letters) >= 4
        and all(c.isupper() for c in letters)
        and not _OLD_BLANKS.search(text)
        and not _OLD_CHECKBOXES.search(text)
    )


def _old_results_header(norm: str, words_in_profile: list[str], min_words: int) -> bool:
    words = re.findall(r"[a-z]+", norm)
    header = [w for w in words if w in words_in_profile]
    return len(set(header)) >= min_words and 2 * len(header) >= len(words)


_TRICKY = [
    "",
    ":",
    "name:",
    "name: ____",
    "name: ___",
    "name ___ ____",
    "signature ________________",
    "☐ yes ☐ no",
    "☑",
    "[ ] smoker [x] non-smoker",
    "[x] done",
    "[  ]",
    "( ) none",
    "(\t)",
    "(\u00a0)",
    "(\u2003)",
    "()",
    "(  )",
    "((\n)",
    "[[ ]",
    "[ ]]",
    "allergies? yes no",
    "allergies: yes* no",
    "allergies: yes no ",
    "allergies: YES no",
    "allergies: yes nope",
    "do you smoke yes no",
    "patient name: date of birth:",
    "patient name: john smith",
    "DISCHARGE DIAGNOSES:",
    "GROSS DESCRIPTION",
    "GROSS ____ DESCRIPTION",
    "GROSS ( ) DESCRIPTION",
    "GROSS [ ] DESCRIPTION",
    "A B C",
    "test result units reference range flag",
    "test result flag",
    "test result",
    "tests tests tests",
    "test result units: the reference range of the assay is wide",
    "result",
    "test, result; flag",
    "TEST RESULT FLAG",
    "test result flag é",
    "résult test flag units",
]


def _lines() -> list[str]:
    lines = list(_TRICKY)
    for text in _texts():
        lines.extend(text.splitlines())
    return lines


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return _lines()


def test_is_field_answers_as_before(lines: list[str]) -> None:
    """A line is a fill-in field exactly when the old matcher said so, as written and normalised, in a
    heading block or not."""
    fields = 0
    for line in lines:
        for text in (line, normalize_plain(line).strip()):
            for heading_block in (False, True):
                expected = _old_is_field(text, heading_block)
                assert content_lines.is_field(text, heading_block) == expected, (text, heading_block)
                fields += expected
    assert fields > 20


def test_capitals_heading_answers_as_before(lines: list[str]) -> None:
    """A line is a heading by its capitals exactly when the old matcher said so."""
    headings = 0
    for line in lines:
        expected = _old_capitals_heading(line)
        assert content_lines._capitals_heading(line) == expected, line
        headings += expected
    assert headings > 10


def test_results_header_answers_as_before(lines: list[str]) -> None:
    """A line is a results table's header exactly when the old matcher said so, whatever the minimum."""
    profile = load_profile(None).content
    found = 0
    for min_words in (2, 3, 4):
        configured = profile.model_copy(update={"results_header_min_words": min_words})
        for line in lines:
            norm = normalize_plain(line).strip()
            expected = _old_results_header(norm, profile.results_header_words, min_words)
            assert content._results_header(norm, configured) == expected, (norm, min_words)
            found += expected
    assert found > 5
