"""V4 evidence quality: every snippet located on its page, its segment, the document, or nowhere."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import DocumentBundle, PhaseStatus, Severity, VerifierResult, VerifierStatus
from arbiter.verifiers import textmatch
from arbiter.verifiers.base import Subject, VerifyContext
from arbiter.verifiers.v4_evidence import NO_LLM_NOTE, V4Evidence
from tests.v34_helpers import PROFILE, classification, codes, make_bundle, make_page, run, segment

LAB = "LAB_REPORT"
PAGES = [
    "Quest Diagnostics\nComplete Blood Count\nHemoglobin 13.2 g/dL",
    "Lipid Panel\nLDL cholesterol 131 mg/dL",
    "Progress note\nPatient seen for follow-up of anemia",
]


def bundle3(**page3: Any) -> DocumentBundle:
    return make_bundle(make_page(1, PAGES[0]), make_page(2, PAGES[1]), make_page(3, PAGES[2], **page3))


def one(page: int, snippet: str, anchor: str | None = None, start: int = 1, end: int = 2) -> dict[str, Any]:
    """A classification with a lab segment (pages start..end) holding one evidence item, and a note on 3."""
    segs = [segment(start, end, LAB, {LAB: [(page, snippet, anchor)]})]
    if end < 3:
        segs.append(segment(3, 3, "CLINICAL_NOTE"))
    return classification(*segs)


def v4(data: dict[str, Any], bundle: DocumentBundle | None = None) -> VerifierResult:
    return run(V4Evidence(), data, bundle or bundle3())


STATUS_CASES = [
    ("on claimed page", one(1, "Complete Blood Count"), "verified", []),
    ("normalised match", one(2, "LDL  CHOLESTEROL 131"), "verified", []),
    ("other page in segment", one(1, "LDL cholesterol 131"), "wrong_page", ["V4.SNIPPET_WRONG_PAGE"]),
    (
        "claimed page beyond document",
        one(9, "LDL cholesterol 131", end=9),
        "wrong_page",
        ["V4.SNIPPET_WRONG_PAGE"],
    ),
    (
        "only outside segment",
        one(1, "follow-up of anemia"),
        "outside_segment",
        ["V4.SNIPPET_OUTSIDE_SEGMENT"],
    ),
    ("nowhere", one(1, "BRCA1 pathogenic variant"), "not_found", ["V4.SNIPPET_NOT_FOUND"]),
    ("blank snippet", one(1, "   "), "not_found", ["V4.SNIPPET_TOO_SHORT", "V4.SNIPPET_NOT_FOUND"]),
    ("short but found", one(2, "LDL"), "verified", ["V4.SNIPPET_TOO_SHORT"]),
    ("anchor present", one(1, "Hemoglobin 13.2 g/dL", "Hemoglobin"), "verified", []),
    ("anchor missing", one(1, "Hemoglobin 13.2 g/dL", "Ferritin"), "verified", ["V4.ANCHOR_NOT_FOUND"]),
    (
        "anchor checked on found page",
        one(1, "LDL cholesterol 131", "Lipid"),
        "wrong_page",
        ["V4.SNIPPET_WRONG_PAGE"],
    ),
    (
        "anchor of missing snippet on claimed page",
        one(1, "made up text", "Lipid"),
        "not_found",
        ["V4.SNIPPET_NOT_FOUND", "V4.ANCHOR_NOT_FOUND"],
    ),
]


@pytest.mark.parametrize(
    ("data", "status", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_evidence_status_and_codes(data: dict[str, Any], status: str, expected: list[str]) -> None:
    """Each evidence item gets one check with the right status and the right issues."""
    result = v4(data)
    assert [c.status for c in result.evidence_checks] == [status]
    assert codes(result) == expected


def test_no_text_layer_is_unverifiable() -> None:
    """A claim on a scanned page without OCR cannot be checked: MAJOR, not fixable."""
    result = v4(one(3, "Patient seen for follow-up", start=3, end=3), bundle3(has_text_layer=False))
    assert codes(result) == ["V4.PAGE_NO_TEXT_LAYER"]
    assert result.evidence_checks[0].status == "no_text_layer"
    assert "page 3 is a scanned image with no text" in result.issues[0].message
    assert not result.issues[0].auto_fixable


def test_ocr_page_is_checked_fuzzily() -> None:
    """An OCR'd page with recognition errors (a 1 read for an l) still verifies, with a score below 100."""
    noisy = make_page(3, PAGES[2].replace("follow", "fol1ow"), has_text_layer=False, ocr_applied=True)
    bundle = make_bundle(make_page(1, PAGES[0]), make_page(2, PAGES[1]), noisy)
    result = v4(one(3, "Patient seen for follow-up of anemia", start=3, end=3), bundle)
    check = result.evidence_checks[0]
    assert check.status == "verified"
    assert check.found is not None
    assert check.found.score < 100.0


def test_verified_check_has_highlight_with_span_and_boxes() -> None:
    """A verified snippet records page, original span and boxes for the review app."""
    result = v4(one(1, "Hemoglobin 13.2 g/dL"))
    found = result.evidence_checks[0].found
    assert found is not None
    assert (found.page, PAGES[0][found.start : found.end]) == (1, "Hemoglobin 13.2 g/dL")
    assert found.boxes
    assert found.score == 100.0


def test_wrong_page_issue_is_fixable_with_page_patch_and_highlight() -> None:
    """The wrong-page issue is MAJOR, auto-fixable, patches the evidence page and highlights the real page."""
    result = v4(one(1, "LDL cholesterol 131"))
    (issue,) = result.issues
    assert issue.severity == Severity.MAJOR
    assert issue.auto_fixable
    assert issue.fix == [{"op": "replace", "path": "/segments/0/types/1/evidence/0/page", "value": 2}]
    assert issue.highlight is not None
    assert issue.highlight.page == 2
    assert issue.location.path == "/segments/0/types/1/evidence/0"
    assert "is not on page 1; it appears on page 2" in issue.message


def test_wrong_page_fix_applies_and_then_verifies() -> None:
    """Applying the fix with jsonpatch yields a classification whose snippet verifies on the claimed page."""
    data = one(1, "LDL cholesterol 131", "LDL")
    (issue,) = v4(data).issues
    assert issue.fix is not None
    fixed = jsonpatch.apply_patch(data, issue.fix)
    again = v4(fixed)
    assert again.issues == []
    assert [c.status for c in again.evidence_checks] == ["verified"]
    assert data["segments"][0]["types"][1]["evidence"][0]["page"] == 1  # input not mutated


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (one(1, "follow-up of anemia"), "V4.SNIPPET_OUTSIDE_SEGMENT"),
        (one(1, "BRCA1 pathogenic variant"), "V4.SNIPPET_NOT_FOUND"),
    ],
)
def test_outside_and_not_found_are_major_not_fixable(data: dict[str, Any], code: str) -> None:
    """Outside-segment and not-found snippets are MAJOR issues without a fix."""
    (issue,) = v4(data).issues
    assert (issue.code, issue.severity, issue.auto_fixable, issue.fix) == (code, Severity.MAJOR, False, None)


def test_not_found_message_says_fabricated() -> None:
    """The not-found message tells the SME the snippet may be fabricated."""
    (issue,) = v4(one(1, "BRCA1 pathogenic variant")).issues
    assert "could not be found anywhere in the document; it may be fabricated" in issue.message


def test_outside_segment_highlights_where_found() -> None:
    """The outside-segment issue points at the page where the snippet is."""
    (issue,) = v4(one(1, "follow-up of anemia")).issues
    assert issue.highlight is not None
    assert issue.highlight.page == 3
    assert "page 3" in issue.message


def test_score_normalised_by_evidence_count() -> None:
    """score = 1 - (0.15 per MAJOR + 0.05 per MINOR) / evidence count."""
    data = classification(
        segment(
            1,
            2,
            LAB,
            {LAB: [(1, "Complete Blood Count"), (1, "made up text"), (2, "LDL", None), (2, "Lipid Panel")]},
        ),
        segment(3, 3, "CLINICAL_NOTE"),
    )
    result = v4(data)
    assert codes(result) == ["V4.SNIPPET_NOT_FOUND", "V4.SNIPPET_TOO_SHORT"]
    assert result.score == pytest.approx(1 - (0.15 + 0.05) / 4)


def test_clean_result_passes_with_llm_phase_skipped() -> None:
    """All evidence verified: PASSED, score 1, LLM phase SKIPPED with a note."""
    result = v4(one(1, "Complete Blood Count"))
    assert result.status == VerifierStatus.PASSED
    assert result.score == 1.0
    assert result.llm_phase == PhaseStatus.SKIPPED
    assert result.notes == [NO_LLM_NOTE]


def test_no_evidence_scores_one() -> None:
    """A classification with no evidence items has nothing to penalise."""
    result = v4(classification(segment(1, 3, LAB)))
    assert (result.status, result.score, result.evidence_checks) == (VerifierStatus.PASSED, 1.0, [])


def test_checks_record_segment_type_and_claimed_page() -> None:
    """Each EvidenceCheck names its segment, type, claimed page and JSON path."""
    check = v4(one(1, "LDL cholesterol 131")).evidence_checks[0]
    assert (check.segment_index, check.document_type, check.claimed_page, check.path) == (
        1,
        LAB,
        1,
        "/segments/0/types/1/evidence/0",
    )


def test_skipped_without_model() -> None:
    """A classification that failed the schema is not checked."""
    result = V4Evidence().verify(Subject(raw="{}", data={}), bundle3(), PROFILE, VerifyContext())
    assert result.status == VerifierStatus.SKIPPED


def test_ten_pages_fifty_snippets_normalise_each_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """50 verbatim snippets on a 10-page document: each page is normalised once, every snippet is found by
    the exact search (no compact or fuzzy pass) and verified. Its speed is bench/verify_throughput.py's."""
    normalised: list[str] = []
    compacted: list[int] = []
    real_normalize, real_compact = textmatch.normalize, textmatch.PageIndex._compact_of

    def counting_normalize(text: str) -> textmatch.Normalized:
        normalised.append(text)
        return real_normalize(text)

    def counting_compact(index: textmatch.PageIndex, page: int) -> str:
        compacted.append(page)
        return real_compact(index, page)

    monkeypatch.setattr(textmatch, "normalize", counting_normalize)
    monkeypatch.setattr(textmatch.PageIndex, "_compact_of", counting_compact)
    lines = [f"Line {n}: analyte {n} value {n * 7 % 97} mg/dL reference range normal" for n in range(40)]
    pages = [make_page(p, "\n".join(f"p{p} {line}" for line in lines)) for p in range(1, 11)]
    items = [(p, f"p{p} Line {n}: analyte {n} value") for p in range(1, 11) for n in range(0, 40, 8)]
    bundle = make_bundle(*pages)
    result = v4(classification(segment(1, 10, LAB, {LAB: items})), bundle)
    assert len(result.evidence_checks) == 50
    assert {c.status for c in result.evidence_checks} == {"verified"}
    assert sorted(normalised) == sorted(page.text for page in bundle.pages)
    assert compacted == []


@given(st.text(max_size=80), st.one_of(st.none(), st.text(max_size=30)), st.integers(1, 6))
def test_arbitrary_snippets_never_crash(snippet: str, anchor: str | None, page: int) -> None:
    """Any snippet, anchor and claimed page give a result with one check, never an exception."""
    result = v4(classification(segment(1, 2, LAB, {LAB: [(page, snippet, anchor)]}), segment(3, 3, LAB)))
    assert result.status in (VerifierStatus.PASSED, VerifierStatus.FAILED)
    assert len(result.evidence_checks) == 1
    assert 0.0 <= result.score <= 1.0
