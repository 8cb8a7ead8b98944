"""Where a content pattern is tried (verifiers/literals.py `Starts`): only where a match can begin, and what
it finds is exactly what a scan of the whole text finds; likewise the heading phrases a line is tried against."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arbiter.verifiers.content as content
from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import load_profile
from arbiter.reader.corpus import load_corpus
from arbiter.verifiers.content_match import _heading_index, _headings_in
from arbiter.verifiers.literals import Starts
from arbiter.verifiers.textnorm import normalize_plain
from bench import corpus
from tests.test_literals import _TRICKY, _texts

REPO = Path(__file__).resolve().parents[1]
PROFILE = load_profile(None)
PATTERNS = sorted({p.regex for p in PROFILE.content.patterns})

# Constructs the analysis reads: leads of bounded and unbounded width, factored prefixes, anchors, lookarounds.
CONSTRUCTS = [
    r"(?i)\b(?:cpt|hcpcs) code|\bmember (?:id|number)\b",
    r"(?i)\b(?:bp|blood pressure)\s*:?\s*\d{2,3}/\d{2,3}\b",
    r"[pyc](?<!\w[pyc])[pyc]?T(?:[0-4][a-d]?|is|x)\s*N[0-3x]\b",
    r"(?i)^(?:to|from|re|pages?)\s*:\s*\S",
    r"\d(?<!\w\d)\d*(?:\.\d+)?\s+(?:H|L|High)\b(?!\s*\d)",
    r"(?i)\d+\s*-\s*\d+\s*(?:mg|%)",
    r"(?i)(?:lympho)?vascular invasion",
    r"a.{0,3}bc",
    r"(?i)x ?10\^?\d",
    r"[a-z]+ing\b",
    r"(?i)\u212a\w+",  # the Kelvin sign folds to k: never located
    r"(?i)\u00b5g|mg",  # a word no ASCII text holds: dropped for ASCII text, whole scan otherwise
    r"(?:ab)+c",
    r"(?:x|y)?z1",
    r"\bq\d+h\b",
    r"(\w)\1x",  # a back reference: not read
    r"a(?i:B)c",  # inline flags: not read
]

ALPHABET = [*"0123456789 \n\t.-/:%_<>()", "mg", "mg/dl", "dL", "H", "L", "High", " x", "10^9/L", "fl"]
ALPHABET += ["pT2", "ypT", " N0", "T1", "Page", "To:", "RE:", "member", " id", "BP", "120/80", "é", "\u212a"]
ALPHABET += ["cpt", " code", "Gleason ", "3+4", "vascular invasion", "lympho", "abc", "ab", "z1", "q4h"]
ALPHABET += ["the patient ", "denies", "-year-old", "45", "ing", "K", "k", "µ", "a", "B", "c", "y"]


def _spans(matches: object) -> list[tuple[int, int]]:
    return [m.span() for m in matches]  # type: ignore[attr-defined]


def _same(regex: str, text: str) -> None:
    pattern = re.compile(regex, re.MULTILINE)
    assert _spans(Starts(regex).finditer(pattern, text, text.lower())) == _spans(pattern.finditer(text)), (
        regex,
        text[:120],
    )


@pytest.mark.parametrize(
    ("regex", "located"),
    [
        ("abc", [("abc", 0, 0, False)]),
        (r"(?i)\bCPT code|\bmember", [("cpt code", 0, 0, False), ("member", 0, 0, False)]),
        (r"(?i)\b(?:bp|blood pressure)\s*\d", [("blood pressure", 0, 0, False), ("bp", 0, 0, False)]),
        (r"[pyc][pyc]?T\d", [("T", 1, 2, False)]),
        (r"\d{1,3}-year-old", [("-year-old", 1, 3, False)]),
        (r"\d+\s*mg", [("mg", 1, None, True)]),
        (r"(?i)\d+\s*(?:mg|\u00b5g)", [("mg", 1, None, True)]),
        (r"\d(?<!\w\d)\d*\s*mg", []),  # the engine skips to the digits itself: scanned whole
        (r"[a-z]+", []),
        (r"x?", []),  # could match nothing
        (r"(?i)\u212aelvin", []),
        (r"a(?i:b)", [("a", 0, 0, False)]),  # the flags come after the word that begins every match
        (r"(?i:a)b", []),  # inline flags on the way to the word: not read
        (r"(a)\1", [("a", 0, 0, False)]),
        (r"(\w)\1x", []),  # a back reference before the word: not read
    ],
)
def test_words_that_locate_every_match(regex: str, located: list[tuple[str, int, int | None, bool]]) -> None:
    """Each pattern is located by exactly these words: (word, at least, at most — None: a run —, run)."""
    words = [
        (w, lo, hi if runs is None else None, runs is not None) for w, lo, hi, runs in Starts(regex).words
    ]
    assert words == located


def test_a_leading_caret_tries_only_line_starts() -> None:
    """A pattern that begins with ^ is tried at the starts of lines that begin with one of its words."""
    regex = r"(?i)^(?:to|re)\s*:"
    starts = Starts(regex)
    assert starts.line_start
    text = "store: x\nRE: hello\nto : y\n to: z"
    _same(regex, text)
    assert [m.start() for m in starts.finditer(re.compile(regex, re.MULTILINE), text)] == [9, 19]


def test_a_pattern_compiled_otherwise_is_scanned_whole() -> None:
    """A compiled pattern with other meaning flags than its regex says is scanned as finditer does."""
    regex = "abc"
    pattern = re.compile(regex, re.IGNORECASE)
    assert _spans(Starts(regex).finditer(pattern, "ABC abc")) == [(0, 3), (4, 7)]


def _corpus_pages() -> list[str]:
    return [page for doc in load_corpus() for page in doc.pages]


def test_every_profile_pattern_finds_what_a_whole_scan_finds_on_real_and_fixture_text() -> None:
    """On the corpus's pages, every fixture text (and its upper- and swapped-case forms) and tricky strings,
    each profile pattern finds the same spans located as scanned whole; many patterns are located."""
    texts = _TRICKY + _texts() + _corpus_pages()
    located = sum(bool(Starts(regex).words) for regex in PATTERNS)
    assert located >= 12
    found = 0
    for regex in PATTERNS + CONSTRUCTS:
        pattern = re.compile(regex, re.MULTILINE)
        starts = Starts(regex)
        for text in texts:
            spans = _spans(pattern.finditer(text))
            assert _spans(starts.finditer(pattern, text, text.lower())) == spans, (regex, text[:120])
            found += len(spans)
    assert found > 1000


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ALPHABET), max_size=40), st.sampled_from(PATTERNS + CONSTRUCTS))
def test_no_text_makes_a_located_pattern_find_otherwise(pieces: list[str], regex: str) -> None:
    """On any text made of the patterns' own pieces, located matching equals a whole scan."""
    _same(regex, "".join(pieces))


def test_reading_a_page_is_the_same_with_whole_scans() -> None:
    """Every page of the benchmark's documents reads the same (cues, scores) when each pattern scans the
    whole page."""
    profile = PROFILE

    class Whole:
        words = ()

        def finditer(self, pattern: re.Pattern[str], text: str, folded: str | None = None) -> object:
            return pattern.finditer(text)

    bundles = [
        DocumentBundle.model_validate(
            corpus.bundle_dict(corpus.make_doc(f"d{i}", pages=6, segments=3, seed=i))
        )
        for i in range(12)
    ]
    pages = [page for bundle in bundles for page in bundle.pages]
    assert len(pages) > 20
    located = [content.read_page(page, profile) for page in pages]
    original = content.starts
    try:
        content.starts = lambda regex: Whole()  # type: ignore[assignment,misc,return-value]
        whole = [content.read_page(page, profile) for page in pages]
    finally:
        content.starts = original
    assert located == whole
    assert sum(len(r.cues) for r in located) > 20


def test_headings_tried_by_first_word_find_what_every_phrase_finds() -> None:
    """On every line of the corpus and fixture texts, trying only the phrases whose first word the line
    holds finds the same headings as trying every phrase, at a line's start and anywhere in it."""
    index = _heading_index(PROFILE.content)
    assert index.by_first
    assert len(index.phrases) > 50
    lines = {
        normalize_plain(line).strip()
        for text in _texts() + _corpus_pages()
        for line in text.split("\n")
        if line.strip() and len(line) < 200
    }
    found = 0
    for norm in sorted(lines):
        for heading_block, anywhere in ((False, False), (True, False), (False, True)):
            expected = _headings_in(norm, index, heading_block, anywhere=anywhere, every=True)
            assert _headings_in(norm, index, heading_block, anywhere=anywhere) == expected, norm
            found += len(expected)
    assert found > 500
