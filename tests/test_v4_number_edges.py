"""No snippet match starts or ends inside a number, on pages with a text layer and OCR'd pages alike: a
truncated number ("Hemoglobin 1" for "Hemoglobin 13.2") or one without its minus sign ("2.1" for "-2.1") is
a different number, reported as numbers differ."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.contracts import Severity
from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.verifiers.number_edges import cuts_number
from arbiter.verifiers.textmatch import PageIndex
from arbiter.verifiers.v4_evidence import V4Evidence
from tests.v34_helpers import PROFILE, classification, codes, make_bundle, make_page, run, segment

THRESHOLD = PROFILE.tolerances.fuzzy_match_threshold

# (snippet, page text, verified?, why)
CASES = [
    ("Hemoglobin 1", "Hemoglobin 13.2 g/dL", False, "decimal value cut to its first digit"),
    ("Hemoglobin 13.2", "Hemoglobin 13.2 g/dL", True, "whole decimal value"),
    ("Hemoglobin 13", "Hemoglobin 13.2 g/dL", False, "decimal part dropped"),
    ("Hemoglobin 13.", "Hemoglobin 13.2 g/dL", False, "ends on the decimal point of a longer number"),
    ("dose 5", "Give dose 50 mg daily", False, "dose cut short"),
    ("dose 50", "Give dose 50 mg daily", True, "whole dose"),
    ("EGFR exon 1", "EGFR exon 19 deletion detected", False, "exon number cut short"),
    ("EGFR exon 19", "EGFR exon 19 deletion detected", True, "whole exon number"),
    ("12", "Platelets 112 x10E3/uL", False, "number ending in the snippet's digits"),
    ("112", "Platelets 112 x10E3/uL", True, "whole count"),
    ("value 5.", "The value 5. Next line", True, "a number at a sentence end, with its full stop"),
    ("value 5", "The value 5. Next line", True, "a full stop not followed by a digit ends the number"),
    ("WBC 1", "WBC 1,000 cells", False, "thousands cut at the grouping comma"),
    ("WBC 1,000", "WBC 1,000 cells", True, "whole thousands"),
    ("Hemoglobin 1", "Hemoglobin 13.2 (prior)\nHemoglobin 1 on repeat", True, "whole number elsewhere"),
    ("3.2 g/dL", "Hemoglobin 13.2 g/dL", False, "starts mid-number"),
    (".2 g/dL", "Hemoglobin 13.2 g/dL", False, "starts at the decimal point of a number"),
    ("2 g/dL", "Hemoglobin 13.2 g/dL", False, "starts after the decimal point of a number"),
    ("13.2 g/dL", "Hemoglobin 13.2 g/dL", True, "whole number at the start"),
    ("12", "Reference 12-15 g/dL", True, "a hyphen ends the number"),
    ("15 g/dL", "Reference 12-15 g/dL", True, "a hyphen ends the number before it"),
    ("Hemoglobin", "Hemoglobin 13.2 g/dL", True, "letters only: no number check"),
    (
        "follow-up in 1",
        "Return for follow-\nup in 12 months",
        False,
        "space-insensitive match cutting a number",
    ),
    ("follow-up in 12", "Return for follow-\nup in 12 months", True, "space-insensitive match, whole number"),
    ("2.1 mmol/L", "pH -2.1 mmol/L", False, "minus sign dropped"),
    ("2.1 mmol/L", "pH \u22122.1 mmol/L", False, "minus sign U+2212 dropped"),
    ("2.1 mmol/L", "-2.1 mmol/L", False, "minus sign at the page start dropped"),
    ("2.1 mmol/L", "pH (-2.1 mmol/L)", False, "minus sign after a bracket dropped"),
    ("-2.1 mmol/L", "pH -2.1 mmol/L", True, "snippet with the minus sign"),
    ("-2.1 mmol /L", "pH -2.1 mmol/L", True, "space-insensitive match keeping the minus sign"),
    ("2.1 mmol/L", "range 1.0-2.1 mmol/L", True, "a range hyphen is no sign"),
    ("67", "Ki-67 index 40%", True, "a hyphen in a word is no sign"),
    ("2.1 mmol/L", "pH -2.1 mmol/L (prior)\npH 2.1 mmol/L now", True, "a later occurrence without sign"),
    ("base excess 3", "base excess -3 mmol/L", False, "space-insensitive match dropping a sign"),
    ("base excess -3", "base excess 3 mmol/L", False, "space-insensitive match adding a sign"),
    ("base excess -3", "base excess -3 mmol/L", True, "signed value kept"),
]


def page_index(text: str, ocr: bool) -> PageIndex:
    page = make_page(1, text, has_text_layer=not ocr, ocr_applied=ocr)
    return PageIndex(make_bundle(page), THRESHOLD)


@pytest.mark.parametrize("ocr", [False, True], ids=["text layer", "OCR"])
@pytest.mark.parametrize(("snippet", "page", "verified"), [c[:3] for c in CASES], ids=[c[3] for c in CASES])
def test_match_never_cuts_a_number(snippet: str, page: str, verified: bool, ocr: bool) -> None:
    """A snippet verifies only where its numbers are whole on the page; find and contains agree."""
    index = page_index(page, ocr)
    match = index.find(snippet, 1)
    assert (match is not None) == verified
    assert index.contains(snippet, 1) == verified
    if match is not None:
        assert index.near_miss(snippet, 1) is None


@pytest.mark.parametrize(
    ("snippet", "text", "after"),
    [
        ("Hemoglobin 1", "Hemoglobin 13.2 (prior)\nHemoglobin 1 on repeat", " on"),
        ("2.1 mmol/L", "pH -2.1 mmol/L (prior)\npH 2.1 mmol/L now", " now"),
    ],
    ids=["cut number", "dropped sign"],
)
def test_second_occurrence_is_the_match(snippet: str, text: str, after: str) -> None:
    """When the first occurrence cuts a number or drops its sign, the match is the later, whole one."""
    match = page_index(text, False).find(snippet, 1)
    assert match is not None
    assert match.score == 100.0
    assert text[match.start : match.end + len(after)] == snippet + after


@pytest.mark.parametrize(
    ("snippet", "page", "mine", "theirs"),
    [
        ("Hemoglobin 1", "Hemoglobin 13.2 g/dL", "1", "13.2"),
        ("3.2 g/dL", "Hemoglobin 13.2 g/dL", "3.2", "13.2"),
        ("WBC 1", "WBC 1,000 cells", "1", "1,000"),
        ("2.1 mmol/L", "pH -2.1 mmol/L", "2.1", "-2.1"),
        ("base excess 3", "base excess -3 mmol/L", "3", "-3"),
    ],
)
def test_near_miss_names_the_whole_number(snippet: str, page: str, mine: str, theirs: str) -> None:
    """A snippet found only cutting a number is a near miss whose span covers the whole page number."""
    near = page_index(page, False).near_miss(snippet, 1)
    assert near is not None
    assert near.cut_number
    ours, page_numbers = near.numbers.differences()
    assert ([n.text for n in ours], [n.text for n in page_numbers]) == ([mine], [theirs])
    assert theirs in page[near.match.start : near.match.end]
    assert near.match.boxes


PAGE = "Complete Blood Count\nHemoglobin 13.2 g/dL within the reference range"


@pytest.mark.parametrize("ocr", [False, True], ids=["text layer", "OCR"])
def test_v4_reports_a_cut_number_as_numbers_differ(ocr: bool) -> None:
    """V4 reports a snippet that cuts a number as a MAJOR non-fixable numbers-differ naming both numbers."""
    bundle = make_bundle(make_page(1, PAGE, has_text_layer=not ocr, ocr_applied=ocr))
    data = classification(segment(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Hemoglobin 1", "Hemoglobin")]}))
    result = run(V4Evidence(), data, bundle)
    assert codes(result) == ["V4.SNIPPET_NUMBERS_DIFFER"]
    (issue,) = result.issues
    assert (issue.severity, issue.auto_fixable, issue.fix) == (Severity.MAJOR, False, None)
    assert "only as part of a longer number: the snippet has 1 where the page has 13.2" in issue.message
    assert issue.highlight is not None
    assert PAGE[issue.highlight.start : issue.highlight.end] == "Hemoglobin 13.2"
    (check,) = result.evidence_checks
    assert check.status == "numbers_differ"


@pytest.mark.parametrize("ocr", [False, True], ids=["text layer", "OCR"])
def test_v4_reports_a_dropped_sign_as_numbers_differ(ocr: bool) -> None:
    """V4 reports a snippet found only without the page's minus sign as numbers differ, naming both."""
    text = "Blood gas\nBase excess \u22122.1 mmol/L"
    bundle = make_bundle(make_page(1, text, has_text_layer=not ocr, ocr_applied=ocr))
    data = classification(segment(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "2.1 mmol/L", "Base excess")]}))
    result = run(V4Evidence(), data, bundle)
    assert codes(result) == ["V4.SNIPPET_NUMBERS_DIFFER"]
    (issue,) = result.issues
    assert "the snippet has 2.1 where the page has -2.1" in issue.message
    assert issue.highlight is not None
    assert text[issue.highlight.start : issue.highlight.end] == "\u22122.1 mmol/L"


@pytest.mark.parametrize(
    ("snippet", "decision"),
    [("Hemoglobin 1", "ESCALATE_TO_SME"), ("Hemoglobin 13.2", "AUTO_ACCEPT")],
    ids=["cut number", "whole number"],
)
def test_default_policy_never_accepts_a_cut_number(snippet: str, decision: str) -> None:
    """Through V1-V4, the arbiter and the governor: a cut number escalates, the whole one is accepted."""
    bundle = make_bundle(make_page(1, PAGE))
    data = classification(segment(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, snippet, "Hemoglobin")]}))
    outcome = verify_with_retries(json.dumps(data).encode(), bundle, load_profile())
    assert outcome.final_decision == decision


DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(DIGITS, DIGITS, st.booleans())
def test_snippet_ending_inside_a_number_never_verifies(d: str, e: str, ocr: bool) -> None:
    """For any digit strings d and e, "x {d}" is never found in the page "x {d}{e} y"."""
    index = page_index(f"x {d}{e} y", ocr)
    assert index.find(f"x {d}", 1) is None
    assert index.near_miss(f"x {d}", 1) is not None


@settings(max_examples=200, deadline=None)
@given(DIGITS, DIGITS, st.booleans())
def test_snippet_dropping_a_sign_never_verifies(d: str, e: str, ocr: bool) -> None:
    """ "{d} u" is never found in "p -{d} u" (a sign), always in "r {e}-{d} u" (a range)."""
    assert page_index(f"p -{d} u", ocr).find(f"{d} u", 1) is None
    assert page_index(f"r {e}-{d} u", ocr).find(f"{d} u", 1) is not None


@given(st.text(alphabet="0123456789.,- ab", max_size=30), st.integers(0, 32), st.integers(0, 32))
def test_cuts_number_never_crashes(text: str, first: int, stop: int) -> None:
    """Any span of any text gets an answer, and a span of the whole text cuts nothing."""
    first, stop = sorted((min(first, len(text)), min(stop, len(text))))
    if first < stop:
        cuts_number(text, first, stop, True, True)
    assert not cuts_number(text, 0, len(text), True, True)
