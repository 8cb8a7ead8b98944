"""Text normalisation, origin mapping, snippet location and highlight boxes (arbiter.verifiers.textmatch)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.verifiers.textmatch import COMPACT_SCORE, PageIndex, boxes_for_span, normalize, normalize_plain
from tests.v34_helpers import CHAR_WIDTH, make_bundle, make_page

NORMALISE_CASES = [
    ("hyphen-minus", "555-0142", "555-0142"),
    ("U+2010 hyphen", "555\u20100142", "555-0142"),
    ("U+2011 non-breaking hyphen", "555\u20110142", "555-0142"),
    ("U+2012 figure dash", "555\u20120142", "555-0142"),
    ("U+2013 en dash", "555\u20130142", "555-0142"),
    ("U+2014 em dash", "555\u20140142", "555-0142"),
    ("U+2015 horizontal bar", "555\u20150142", "555-0142"),
    ("U+2212 minus", "555\u22120142", "555-0142"),
    ("U+FE58 small em dash", "555\ufe580142", "555-0142"),
    ("U+FE63 small hyphen-minus", "555\ufe630142", "555-0142"),
    ("U+FF0D fullwidth hyphen-minus", "555\uff0d0142", "555-0142"),
    ("phone with U+2212", "Fax: (617) 555\u22120142", "fax: (617) 555-0142"),
    ("ligature fi", "\ufb01nal report", "final report"),
    ("ligature ffl", "ba\ufb04ed", "baffled"),
    ("curly double quotes", "\u201cnormal\u201d", '"normal"'),
    ("curly single quotes", "\u2018it\u2019s\u2019", "'it's'"),
    ("primes", "5\u2032 10\u2033", "5' 10\""),
    ("NBSP", "tumor\u00a0mutational", "tumor mutational"),
    ("tabs and CRLF", "a\t\tb\r\nc", "a b c"),
    ("whitespace runs and strip", "  a   b \n\n c  ", "a b c"),
    ("hyphenation with -", "hema-\ntology", "hematology"),
    ("hyphenation with spaces", "hema- \n  tology", "hematology"),
    ("hyphenation with U+2010", "hema\u2010\r\ntology", "hematology"),
    ("soft hyphen at break", "hema\u00ad\ntology", "hematology"),
    ("soft hyphen inside word", "hema\u00adtology", "hematology"),
    ("U+0002 at break", "hema\u0002\ntology", "hematology"),
    ("U+0002 inside word", "hema\u0002tology", "hematology"),
    ("U+FFFE at break", "hema\ufffe\r\ntology", "hematology"),
    ("hyphen break before a digit is kept", "BRCA-\n1", "brca- 1"),
    ("dash after space is kept", "a -\nb", "a - b"),
    ("en dash at break is punctuation", "2019\u2013\n2020", "2019- 2020"),
    ("case", "QUEST Diagnostics", "quest diagnostics"),
    ("case fold sharp s", "Stra\u00dfe", "strasse"),
    ("fullwidth letters and digits", "\uff2d\uff32\uff2e\uff11\uff12", "mrn12"),
    ("zero-width chars", "gen\u200bomic\u200d \ufeffreport", "genomic report"),
    ("combining accent composes", "e\u0301", "\u00e9"),
    ("empty", "", ""),
    ("only whitespace", " \n\t ", ""),
]


@pytest.mark.parametrize(
    ("raw", "expected"), [c[1:] for c in NORMALISE_CASES], ids=[c[0] for c in NORMALISE_CASES]
)
def test_normalize_cases(raw: str, expected: str) -> None:
    """Each Unicode variant normalises to its plain form."""
    assert normalize_plain(raw) == expected


def test_origin_maps_ligature_and_dehyphenation() -> None:
    """origin points every normalised char at the original char it came from."""
    result = normalize("\ufb01ne hema-\ntology")
    assert result.text == "fine hematology"
    assert result.origin[:2] == (0, 0)
    assert result.origin[result.text.index("tology")] == "\ufb01ne hema-\ntology".index("tology")


def test_plain_ascii_fast_path_matches_general_path() -> None:
    """The ASCII fast path gives the same result as the general path."""
    fast = normalize("Line One\nLine Two")
    slow = normalize("Line One\nLine Two\u200b")
    assert fast.text == slow.text == "line one line two"
    assert fast.origin == slow.origin


@given(st.text())
def test_normalize_never_raises_and_origin_is_consistent(text: str) -> None:
    """For any text: one origin per output char, nondecreasing, within the original string."""
    result = normalize(text)
    assert len(result.origin) == len(result.text)
    assert all(a <= b for a, b in zip(result.origin, result.origin[1:], strict=False))
    assert all(0 <= i < len(text) for i in result.origin)


@given(st.text(alphabet="ab \n-\u2212\u00ad\u0002\ufb01\u00a0A"))
def test_normalize_is_idempotent(text: str) -> None:
    """Normalising normalised text changes nothing."""
    once = normalize_plain(text)
    assert normalize_plain(once) == once


@given(st.text(alphabet="abcXYZ ", min_size=1, max_size=60), st.data())
def test_find_locates_any_substring(text: str, data: st.DataObject) -> None:
    """Any non-blank substring is found and its original span normalises to the same text."""
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    snippet = text[start:end]
    index = PageIndex(make_bundle(make_page(1, text)))
    match = index.find(snippet, 1)
    if not snippet.strip():
        assert match is None
        return
    assert match is not None
    assert match.score == 100.0
    assert normalize_plain(text[match.start : match.end]) == normalize_plain(snippet)


def test_find_returns_original_span_and_boxes() -> None:
    """A match spans the original (un-normalised) characters and carries line boxes."""
    text = "Header line\nTumor\u00a0mutational burden: 12 mut/Mb"
    index = PageIndex(make_bundle(make_page(1, text)))
    match = index.find("TUMOR MUTATIONAL BURDEN", 1)
    assert match is not None
    assert text[match.start : match.end] == "Tumor\u00a0mutational burden"
    assert match.score == 100.0
    assert len(match.boxes) == 1


def test_find_across_hyphenated_line_break() -> None:
    """A snippet matches a word split over two lines; its span covers both lines."""
    text = "Referred to hema-\ntology clinic"
    page = make_page(1, text)
    match = PageIndex(make_bundle(page)).find("hematology clinic", 1)
    assert match is not None
    assert text[match.start : match.end] == "hema-\ntology clinic"
    assert len(match.boxes) == 2


def test_find_ignores_spaces_and_hyphens_as_fallback() -> None:
    """A real hyphen lost at a line break ("follow-\\nup") still matches "follow-up", scored below exact."""
    match = PageIndex(make_bundle(make_page(1, "Return for follow-\nup in 3 months"))).find(
        "follow-up in 3", 1
    )
    assert match is not None
    assert match.score == COMPACT_SCORE


def test_find_missing_or_blank_or_unknown_page() -> None:
    """No match for absent text, a blank snippet, or a page the document does not have."""
    index = PageIndex(make_bundle(make_page(1, "Complete blood count")))
    assert index.find("lipid panel", 1) is None
    assert index.find("   ", 1) is None
    assert index.find("blood", 9) is None


def test_fuzzy_only_on_ocr_pages() -> None:
    """An OCR-garbled snippet matches fuzzily on an OCR page and not on a born-digital page."""
    text = "Microsatellite instabi1ity: stable"
    ocr = PageIndex(make_bundle(make_page(1, text, ocr_applied=True, has_text_layer=False)))
    digital = PageIndex(make_bundle(make_page(1, text)))
    match = ocr.find("Microsatellite instability: stable", 1)
    assert match is not None
    assert 92.0 <= match.score < 100.0
    assert text[match.start : match.end].startswith("Microsatellite")
    assert digital.find("Microsatellite instability: stable", 1) is None


def test_find_any_lists_pages_in_order() -> None:
    """find_any reports every page holding the snippet, in page order, restricted when pages are given."""
    index = PageIndex(make_bundle("Page 1 of 3 alpha", "no", "Page 3 of 3 alpha"))
    assert [m.page for m in index.find_any("alpha")] == [1, 3]
    assert [m.page for m in index.find_any("alpha", [3, 2])] == [3]


def test_pages_are_normalised_once() -> None:
    """text_of caches: the same Normalized object is returned for repeated searches."""
    index = PageIndex(make_bundle("Some text here"))
    first = index.text_of(1)
    index.find("text", 1)
    assert index.text_of(1) is first


BOX_CASES = [
    ("whole first line", 0, 10, [(72.0, 750.0, 72.0 + 10 * CHAR_WIDTH, 760.0)]),
    ("a whole word", 3, 6, [(72.0 + 3 * CHAR_WIDTH, 750.0, 72.0 + 6 * CHAR_WIDTH, 760.0)]),
    ("inside a word: the whole word", 4, 5, [(72.0 + 3 * CHAR_WIDTH, 750.0, 72.0 + 6 * CHAR_WIDTH, 760.0)]),
    (
        "across two lines, from inside a word",
        8,
        13,
        [
            (72.0 + 7 * CHAR_WIDTH, 750.0, 72.0 + 10 * CHAR_WIDTH, 760.0),
            (72.0, 736.0, 72.0 + 2 * CHAR_WIDTH, 746.0),
        ],
    ),
    ("empty span", 3, 3, []),
    ("beyond the text", 100, 120, []),
]


@pytest.mark.parametrize(
    ("start", "end", "expected"), [c[1:] for c in BOX_CASES], ids=[c[0] for c in BOX_CASES]
)
def test_boxes_for_span(start: int, end: int, expected: list[tuple[float, ...]]) -> None:
    """Each overlapped line yields its box, clipped in proportion to the whole words covered."""
    page = make_page(1, "01 345 789\nab def hij")
    assert list(boxes_for_span(page, start, end)) == expected


def test_shared_index_is_reused_per_bundle_object() -> None:
    """PageIndex.shared returns one index per bundle object, so V3 and V4 normalise each page once."""
    bundle, other = make_bundle("text"), make_bundle("text")
    assert PageIndex.shared(bundle) is PageIndex.shared(bundle)
    assert PageIndex.shared(other) is not PageIndex.shared(bundle)
    assert PageIndex.shared(bundle, 80.0) is not PageIndex.shared(bundle)
