"""V4 on OCR'd pages is number-exact: an approximate match verifies only when the snippet's numbers are the
page's (verifiers/ocr_numbers.py); OCR's O/0, l/1, I/1, S/5 misreads are tolerated in the page text only."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ocr_helpers import ocr_bundle, text_only_bundle

from arbiter.contracts import DocumentBundle, Severity, VerifierResult
from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.verifiers.ocr_numbers import CONFUSABLE, check_numbers, numbers
from arbiter.verifiers.textmatch import PageIndex
from arbiter.verifiers.v4_evidence import V4Evidence
from tests.conftest import FIXTURES
from tests.v34_helpers import PROFILE, classification, codes, make_bundle, make_page, run, segment

THRESHOLD = PROFILE.tolerances.fuzzy_match_threshold
VERIFIED, REFUSED, ABSENT = "verified", "numbers differ", "not found"

# (snippet, OCR'd page text, outcome, why). REFUSED rows score at least the threshold: before the number
# rule they verified.
CASES = [
    (
        "Hemoglobin 10.4 g/dL, below the reference range",
        "Hemoglohin 10.4 g/dL, be1ow the reference range",
        VERIFIED,
        "same numbers; OCR noise in letters (h for b, 1 for l inside a word)",
    ),
    (
        "Hemoglobin 10.4 g/dL below the reference range",
        "Hemoglobin 1O.4 g/dL below the reference range",
        VERIFIED,
        "O read for 0 inside a number",
    ),
    (
        "Neutrophils 5.9 x10E3/uL within normal limits",
        "Neutrophils S.9 x10E3/uL within normal limits",
        VERIFIED,
        "S read for 5 inside a number",
    ),
    (
        "Specimen collected 03/12/2026 at the main laboratory",
        "Specimen collected 03/l2/2026 at the main laboratory",
        VERIFIED,
        "l read for 1 inside a date",
    ),
    (
        "Hemoglobin 10.0 g/dL below the reference range",
        "Hemoglobin 16.0 g/dL below the reference range",
        REFUSED,
        "one digit changed",
    ),
    (
        "Hemoglobin 10.0 g/dL below the reference range",
        "Hemoglobin 16.0 g/dL below the reference range (prior)\nHemog1obin 10.0 g/dL below the reference range",
        VERIFIED,
        "the best alignment has another value; the next one has the snippet's",
    ),
    (
        "EGFR exon 21 L858R mutation detected in the tumor",
        "EGFR exon 21 L868R mutation detected in the tumor",
        REFUSED,
        "gene variant with one digit changed",
    ),
    (
        "EGFR exon 21 L858R mutation detected in the tumor",
        "EGFR exon 2l L858R rnutation detected in the tumor",
        VERIFIED,
        "gene variant intact; l for 1 in the exon number, rn for m",
    ),
    (
        "EGFR exon 21 L858R mutation detected in the tumor",
        "EGFR exon 21 L8S8R mutation detected in the tumor",
        REFUSED,
        "inside a code with other letters (L8S8R) no letter is read as a digit",
    ),
    (
        "Specimen collected 03/12/2026 at the main laboratory",
        "Specimen collected 03/13/2026 at the main laboratory",
        REFUSED,
        "date with the day changed",
    ),
    (
        "Tamoxifen 20 mg by mouth once daily for five years",
        "Tamoxifen 10 mg by mouth once daily for five years",
        REFUSED,
        "dose changed",
    ),
    (
        "Return for follow-up in 3 months with repeat CBC",
        "Return for follow-up in 8 months with repeat CBC",
        REFUSED,
        "interval changed",
    ),
    (
        "Platelets 232 within the normal range on repeat testing",
        "Platelets within the normal range on repeat testing",
        REFUSED,
        "extra number in the snippet",
    ),
    (
        "Hemoglobin g/dL, below the reference range on repeat testing this morning",
        "Hemoglobin 10.4 g/dL, below the reference range on repeat testing this morning",
        REFUSED,
        "the page's number missing from the snippet",
    ),
    (
        "Hemoglobin 10 g/dL below the reference range on repeat testing",
        "Hemoglobin 10.4 g/dL below the reference range on repeat testing",
        REFUSED,
        "number cut short (10 for 10.4)",
    ),
    (
        "Potassium 4.1 mmol/L within the reference interval",
        "Potassium 4,1 mmol/L within the reference interval",
        VERIFIED,
        "decimal comma for point: the digit runs are the same",
    ),
    (
        "WBC 1,000 cells per microliter on the manual count",
        "WBC 1.000 cells per microliter on the manual count",
        VERIFIED,
        "grouping point for comma: the digit runs are the same",
    ),
    (
        "WBC 1,000 cells per microliter on the manual count",
        "WBC 1000 cells per microliter on the manual count",
        REFUSED,
        "separator dropped: the runs break differently",
    ),
    (
        "Hemoglobin 10.4 g/dL below the reference range",
        "Hemoglobin 104 g/dL below the reference range",
        REFUSED,
        "decimal point dropped",
    ),
    (
        "Base excess -2.1 mmol/L on the arterial blood gas",
        "Base excess 2.1 mmol/L on the arterial blood gas",
        REFUSED,
        "minus sign dropped",
    ),
    (
        "Reference range 11.7-15.5 g/dL for adult women",
        "Reference range 11.7-15.S g/dL for adu1t women",
        VERIFIED,
        "a range's hyphen is no minus sign",
    ),
    (
        "Microsatellite instability: stable, no loss of expression",
        "Microsatellite instabi1ity: stab1e, no loss of expression",
        VERIFIED,
        "numbers-free snippet; 1 read for l inside words",
    ),
    (
        "Whole-genome duplication detected in the tumor",
        "Hemoglobin 10.4 g/dL below the reference range",
        ABSENT,
        "numbers-free snippet not on the page",
    ),
    (
        "ALK (D5F3): negative. ROS1: negative by FISH",
        "ALK (O5F3): negative. ROS]: negative by FISH",
        REFUSED,
        "] is not read as 1 (only O, l, I, S are)",
    ),
    (
        "Tumor proportion score 60% by PD-L1 22C3",
        "Tumor proportion score 6O% by PD-Ll 22C3",
        REFUSED,
        "l is read as 1 only in a run holding a real digit, not in PD-Ll",
    ),
]


def ocr_index(text: str) -> PageIndex:
    return PageIndex(make_bundle(make_page(1, text, has_text_layer=False, ocr_applied=True)), THRESHOLD)


@pytest.mark.parametrize(("snippet", "page", "outcome"), [c[:3] for c in CASES], ids=[c[3] for c in CASES])
def test_ocr_match_is_number_exact(snippet: str, page: str, outcome: str) -> None:
    """Each snippet verifies on the OCR'd page, is refused for its numbers (a near miss with its score), or
    is not found."""
    index = ocr_index(page)
    match, near = index.find(snippet, 1), index.near_miss(snippet, 1)
    got = VERIFIED if match is not None else REFUSED if near is not None else ABSENT
    assert got == outcome
    if match is not None:
        assert THRESHOLD <= match.score < 100.0
    if near is not None:
        assert THRESHOLD <= near.match.score < 100.0
        assert not near.numbers.agree
        assert near.match.boxes


def lab_result(page_text: str, snippet: str) -> tuple[VerifierResult, DocumentBundle, dict[str, Any]]:
    """V4 on a one-page OCR'd lab report whose classification quotes `snippet` on page 1."""
    bundle = make_bundle(make_page(1, page_text, has_text_layer=False, ocr_applied=True))
    data = classification(segment(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, snippet, "Hemoglobin")]}))
    return run(V4Evidence(), data, bundle), bundle, data


HB_PAGE = "Complete Blood Count\nHemoglobin 16.0 g/dL below the reference range"
HB_SNIPPET = "Hemoglobin 10.0 g/dL below the reference range"
HB_TRUE = "Hemoglobin 16.0 g/dL below the reference range"


def test_v4_reports_numbers_differ_as_major_with_score() -> None:
    """The refused snippet is a MAJOR, non-fixable V4.SNIPPET_NUMBERS_DIFFER naming the numbers, highlighted
    where it resembles the page, its score kept on the evidence check; no approximate-match note."""
    result, _, _ = lab_result(HB_PAGE, HB_SNIPPET)
    assert codes(result) == ["V4.SNIPPET_NUMBERS_DIFFER"]
    (issue,) = result.issues
    assert (issue.severity, issue.auto_fixable, issue.fix) == (Severity.MAJOR, False, None)
    assert "the snippet has 10.0 where the page has 16.0" in issue.message
    assert "on page 1 (score 97.83 of 100)" in issue.message
    assert issue.highlight is not None
    assert issue.highlight.score == 97.83
    assert HB_PAGE[issue.highlight.start : issue.highlight.end].startswith("Hemoglobin 16.0")
    (check,) = result.evidence_checks
    assert check.status == "numbers_differ"
    assert check.found is not None
    assert check.found.score == 97.83
    assert not any("approximately" in note for note in result.notes)
    assert result.score == pytest.approx(1 - 0.15)


def test_missing_number_message_says_none() -> None:
    """A snippet that leaves out the page's number says so: the snippet has none where the page has one."""
    page = "Hemoglobin 10.4 g/dL, below the reference range on repeat testing this morning"
    result, _, _ = lab_result(
        page, "Hemoglobin g/dL, below the reference range on repeat testing this morning"
    )
    (issue,) = result.issues
    assert "the snippet has none where the page has 10.4" in issue.message


@pytest.mark.parametrize(
    ("page", "snippet", "decision", "reason"),
    [
        (HB_PAGE, HB_SNIPPET, "ESCALATE_TO_SME", "non_fixable_major"),
        (HB_PAGE, HB_TRUE, "AUTO_ACCEPT", None),
        (HB_PAGE.replace("below", "be1ow"), HB_TRUE, "AUTO_ACCEPT", None),
    ],
    ids=["number changed", "true snippet", "true snippet, OCR noise in a word"],
)
def test_default_policy_never_accepts_a_changed_number(
    page: str, snippet: str, decision: str, reason: str | None
) -> None:
    """Through V1-V4, the arbiter and the governor: a changed number escalates, the true value is accepted."""
    _, bundle, data = lab_result(page, snippet)
    outcome = verify_with_retries(json.dumps(data).encode(), bundle, load_profile())
    assert (outcome.final_decision, outcome.escalation_reason) == (decision, reason)


@pytest.mark.parametrize(
    ("snippet", "page", "found"),
    [
        (
            "Hemoglobin 10.0 g/dL below the reference range",
            "Hemoglobin 16.0 g/dL below the reference range",
            None,
        ),
        ("Return in 10 days", "Return in 1 0 days", 99.0),
        ("Hemoglobin 16.0", "Complete Blood Count\nHemoglobin 16.0 g/dL", 100.0),
    ],
    ids=["no fuzzy match", "spaces ignored, numbers unchecked", "exact"],
)
def test_text_layer_pages_are_unchanged(snippet: str, page: str, found: float | None) -> None:
    """On a page with a text layer: exact and space-insensitive matches as before, never fuzzy, no near miss."""
    index = PageIndex(make_bundle(make_page(1, page)), THRESHOLD)
    match = index.find(snippet, 1)
    assert (match.score if match is not None else None) == found
    assert index.near_miss(snippet, 1) is None


def test_space_insensitive_match_on_ocr_page_checks_numbers() -> None:
    """On an OCR'd page "1 0 days" is not "10 days": the digits break into other runs."""
    index = ocr_index("Return in 1 0 days")
    assert index.find("Return in 10 days", 1) is None


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("hemoglobin 10.4 g/dl", [("", "10", "4")]),
        ("wbc 1,000 and 1.000", [("", "1", "000"), ("", "1", "000")]),
        ("base excess -2.1, range 11.7-15.5", [("-", "2", "1"), ("", "11", "7"), ("", "15", "5")]),
        ("ki-67 30%", [("", "67"), ("", "30")]),
        ("03/12/2026", [("", "03"), ("", "12"), ("", "2026")]),
        ("egfr l858r", [("", "858")]),
        ("score ٣", [("", "3")]),
        ("no numbers here", []),
    ],
)
def test_numbers_are_digit_runs_with_sign(text: str, keys: list[tuple[str, ...]]) -> None:
    """A number is its sign and digit runs joined by . or ,; other separators split numbers."""
    assert [n.key for n in numbers(text)] == keys


def test_packet_fixture_with_changed_number_escalates_with_and_without_ocr() -> None:
    """packet-07's number-changed case: SNIPPET_NUMBERS_DIFFER with OCR, PAGE_NO_TEXT_LAYER without; both
    escalate for a non-fixable major."""
    case = next(
        c
        for c in json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
        if c["case"] == "packet-07-scanned__ocr-number-changed"
    )
    raw = (FIXTURES / case["classification"]).read_bytes()
    for bundle, code in (
        (ocr_bundle(case["pdf"]), "V4.SNIPPET_NUMBERS_DIFFER"),
        (text_only_bundle(case["pdf"]), "V4.PAGE_NO_TEXT_LAYER"),
    ):
        outcome = verify_with_retries(raw, bundle, load_profile())
        assert (outcome.final_decision, outcome.escalation_reason) == ("ESCALATE_TO_SME", "non_fixable_major")
        (issue,) = [i for i in outcome.final_issues if i.location.page == 4]
        assert issue.code == code


WORDS = [
    "hemoglobin", "reference", "microsatellite", "instability", "specimen", "collected", "mutation",
    "egfr", "l858r", "stable", "low", "soil", "mg/dl", "exon", "ros1", "pd-l1", "so", "io",
]  # fmt: skip


def digits(most: int) -> st.SearchStrategy[str]:
    return st.text(alphabet="0123456789", min_size=1, max_size=most)


def number(sign: str, most: int) -> st.SearchStrategy[str]:
    """`{sign}[0-9]{1,most}([.,][0-9]{1,3})?` built from text strategies (st.from_regex is several times slower)."""
    fraction = st.one_of(st.just(""), st.tuples(st.sampled_from(".,"), digits(3)).map("".join))
    return st.tuples(st.sampled_from(["", sign] if sign else [""]), digits(most), fraction).map("".join)


NUMBER = number("-", 4)
PAGE_TOKENS = st.lists(st.one_of(st.sampled_from(WORDS), NUMBER), min_size=8, max_size=24)


def liberal_runs(text: str) -> list[str]:
    """The page's digit runs with EVERY O, l, I, S read as a digit: a superset of what the rule may read."""
    return re.findall(r"\d+", "".join(CONFUSABLE.get(c, c) for c in text.lower()))


@settings(max_examples=300, deadline=None)
@given(PAGE_TOKENS, st.data())
def test_snippet_with_a_number_not_on_the_page_never_verifies(tokens: list[str], data: st.DataObject) -> None:
    """A snippet quoting the page but for one number whose digits are on the page nowhere (not even
    reading O, l, I, S as digits) is never found on the OCR'd page."""
    start = data.draw(st.integers(0, len(tokens) - 6))
    stop = data.draw(st.integers(start + 6, len(tokens)))
    at = data.draw(st.integers(start, stop - 1))
    fake = data.draw(number("", 6))
    page = " ".join(tokens)
    runs = liberal_runs(page)
    assume(any(all(run not in r for r in runs) for run in re.findall(r"\d+", fake)))
    replace = data.draw(st.booleans())
    quoted = [*tokens[start:at], fake, *tokens[at + (1 if replace else 0) : stop]]
    snippet = " ".join(quoted)
    index = ocr_index(page)
    assert index.find(snippet, 1) is None
    assert not index.contains(snippet, 1)


@given(st.text(max_size=120), st.text(max_size=300), st.integers(0, 320), st.integers(0, 320))
def test_number_check_never_crashes(query: str, text: str, first: int, stop: int) -> None:
    """Any texts and any span give a verdict, and a query compared with itself agrees."""
    check_numbers(query, text, min(first, stop), max(first, stop))
    assert check_numbers(query, query, 0, len(query)).agree


@given(st.text(max_size=200), st.text(min_size=1, max_size=80))
def test_ocr_search_never_crashes(page: str, snippet: str) -> None:
    """find and near_miss answer on any OCR'd text; a snippet is never both found and a near miss."""
    index = ocr_index(page)
    assert not (index.find(snippet, 1) is not None and index.near_miss(snippet, 1) is not None)
