"""V2 internal consistency: rule table, canonical mixture fixes that merge and round-trip, LLM-phase notes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import ClassificationOutput, PhaseStatus, Severity, VerifierStatus
from arbiter.verifiers.shares import canonical_mixture, round_to_one
from arbiter.verifiers.v2_consistency import BLOCKER_NOTE, NO_LLM_NOTE, UNAVAILABLE_NOTE, V2Consistency
from tests.test_schemas import DESIGN_EXAMPLE, JSON
from tests.v12_helpers import (
    PROFILE,
    TYPES,
    apply_fixes,
    codes,
    make_bundle,
    make_classification,
    run_v1,
    run_v2,
)

Mutation = Callable[[dict[str, Any]], Any]


def mutated(mutate: Mutation) -> dict[str, Any]:
    data = make_classification()
    mutate(data)
    return data


def scale_segment(data: dict[str, Any], position: int, factor: float) -> None:
    for entry in data["segments"][position]["types"]:
        entry["share"] *= factor


def set_shares(data: dict[str, Any], position: int, shares: dict[str, float]) -> None:
    for entry in data["segments"][position]["types"]:
        entry["share"] = shares.get(entry["document_type"], 0.0)


def mixture(data: dict[str, Any], shares: dict[str, float]) -> None:
    data["document_mixture"] = [{"document_type": name, "share": shares.get(name, 0.0)} for name in TYPES]


def with_canonical_mixture(data: dict[str, Any], total_pages: int = 3) -> dict[str, Any]:
    entries = canonical_mixture(ClassificationOutput.model_validate(data), total_pages, TYPES)
    assert entries is not None
    data["document_mixture"] = entries
    return data


def test_valid_classification_passes_with_llm_phase_skipped() -> None:
    """A consistent classification passes; without an LLM the phase is SKIPPED and the note says why."""
    result = run_v2(make_classification())
    assert result.status == VerifierStatus.PASSED
    assert result.issues == []
    assert result.score == 1.0
    assert result.llm_phase == PhaseStatus.SKIPPED
    assert result.notes == [NO_LLM_NOTE]
    assert V2Consistency().output_file == "v2_consistency_check.json"


# (id, mutation, bundle pages, expected codes, path of the first, severity, fixable)
RULES: list[tuple[str, Mutation, int, list[str], str, Severity, bool]] = [
    (
        "segment_sum_low",
        lambda d: scale_segment(d, 0, 0.8),
        3,
        ["V2.SEGMENT_SHARES_SUM"],
        "/segments/0/types",
        Severity.MAJOR,
        True,
    ),
    (
        "segment_sum_zero",
        lambda d: scale_segment(d, 1, 0.0),
        3,
        ["V2.SEGMENT_SHARES_SUM"],
        "/segments/1/types",
        Severity.MAJOR,
        False,
    ),
    (
        "mixture_sum_only",
        lambda d: mixture(d, {"LAB_REPORT": 0.6667 + 0.015, "ADMINISTRATIVE": 0.3333}),
        3,
        ["V2.MIXTURE_SHARES_SUM"],
        "/document_mixture",
        Severity.MAJOR,
        True,
    ),
    (
        "mixture_sum_and_mismatch",
        lambda d: mixture(d, {"LAB_REPORT": 0.8, "ADMINISTRATIVE": 0.4}),
        3,
        ["V2.MIXTURE_MISMATCH", "V2.MIXTURE_SHARES_SUM"],
        "/document_mixture",
        Severity.MAJOR,
        True,
    ),
    (
        "mixture_mismatch",
        lambda d: mixture(d, {"LAB_REPORT": 0.5, "ADMINISTRATIVE": 0.2, "CLINICAL_NOTE": 0.3}),
        3,
        ["V2.MIXTURE_MISMATCH"],
        "/document_mixture",
        Severity.MAJOR,
        True,
    ),
    (
        "mixture_swapped_not_fixable_main_type_differs",
        lambda d: mixture(d, {"LAB_REPORT": 0.3333, "ADMINISTRATIVE": 0.6667}),
        3,
        ["V2.MIXTURE_MISMATCH"],
        "/document_mixture",
        Severity.MAJOR,
        False,
    ),
    (
        "overlap",
        lambda d: d["segments"][1].update(start_page=2),
        3,
        ["V2.PAGE_OVERLAP"],
        "/segments/1",
        Severity.BLOCKER,
        False,
    ),
    (
        "inverted",
        lambda d: d["segments"][1].update(start_page=3, end_page=2),
        3,
        ["V2.INVERTED_PAGE_RANGE"],
        "/segments/1",
        Severity.BLOCKER,
        False,
    ),
    (
        "segment_dominant",
        lambda d: d["segments"][0].update(dominant_type="CLINICAL_NOTE"),
        3,
        ["V2.DOMINANT_TYPE_MISMATCH"],
        "/segments/0/dominant_type",
        Severity.MAJOR,
        False,
    ),
    (
        "document_dominant",
        lambda d: d.update(dominant_type="ADMINISTRATIVE"),
        3,
        ["V2.DOMINANT_TYPE_MISMATCH"],
        "/dominant_type",
        Severity.MAJOR,
        False,
    ),
    (
        "uncovered",
        lambda d: None,
        5,
        ["V2.UNCOVERED_PAGES"],
        "/segments",
        Severity.MAJOR,
        False,
    ),
]


@pytest.mark.parametrize(
    ("mutate", "pages", "expected", "path", "severity", "fixable"),
    [row[1:] for row in RULES],
    ids=[row[0] for row in RULES],
)
def test_rule(
    mutate: Mutation, pages: int, expected: list[str], path: str, severity: Severity, fixable: bool
) -> None:
    """Each defect gives exactly the expected codes; the one at `path` has the severity and fixability."""
    result = run_v2(mutated(mutate), make_bundle(pages))
    assert codes(result) == expected
    first = next(issue for issue in result.issues if issue.location.path == path)
    assert first.severity == severity
    assert first.auto_fixable is fixable
    assert result.status == VerifierStatus.FAILED


FIXABLE = [row for row in RULES if row[6]]


@pytest.mark.parametrize("mutate", [row[1] for row in FIXABLE], ids=[row[0] for row in FIXABLE])
def test_fix_round_trip(mutate: Mutation) -> None:
    """Applying every fix (identical operations merged) gives a classification that passes V1 and V2."""
    data = mutated(mutate)
    fixed = apply_fixes(data, run_v1(data), run_v2(data))
    assert run_v1(fixed).issues == []
    assert run_v2(fixed).issues == []


def test_mixture_faults_emit_identical_canonical_patch() -> None:
    """MIXTURE_SHARES_SUM and MIXTURE_MISMATCH carry the same patch: the page-weighted mixture in taxonomy order."""
    data = mutated(lambda d: mixture(d, {"LAB_REPORT": 0.8, "ADMINISTRATIVE": 0.4}))
    by_code = {issue.code: issue for issue in run_v2(data).issues}
    patch = by_code["V2.MIXTURE_SHARES_SUM"].fix
    assert patch == by_code["V2.MIXTURE_MISMATCH"].fix
    assert patch == [
        {
            "op": "replace",
            "path": "/document_mixture",
            "value": [
                {"document_type": "GENOMIC_REPORT", "share": 0.0},
                {"document_type": "LAB_REPORT", "share": 0.6667},
                {"document_type": "PATHOLOGY_REPORT", "share": 0.0},
                {"document_type": "CLINICAL_NOTE", "share": 0.0},
                {"document_type": "ADMINISTRATIVE", "share": 0.3333},
            ],
        }
    ]


def test_canonical_mixture_uses_normalised_segment_shares() -> None:
    """Un-normalised segment shares do not change the canonical mixture (weights are real page counts)."""
    data = mutated(lambda d: mixture(d, {"LAB_REPORT": 0.9, "ADMINISTRATIVE": 0.1}))
    scale_segment(data, 0, 0.5)
    data["segments"][0]["segment_page_count"] = 7
    by_code = {issue.code: issue for issue in run_v2(data).issues}
    value = by_code["V2.MIXTURE_MISMATCH"].fix[0]["value"]  # type: ignore[index]
    assert [entry["share"] for entry in value] == [0.0, 0.6667, 0.0, 0.0, 0.3333]


def test_segment_fix_normalises_and_sums_to_one() -> None:
    """The segment fix divides each share by the sum, rounds to 4 decimals and sums to exactly 1."""
    data = mutated(
        lambda d: set_shares(d, 0, {"LAB_REPORT": 0.5, "CLINICAL_NOTE": 0.2, "GENOMIC_REPORT": 0.2})
    )
    issue = next(i for i in run_v2(data).issues if i.code == "V2.SEGMENT_SHARES_SUM")
    assert issue.fix is not None
    values = [op["value"] for op in issue.fix]
    assert [op["path"] for op in issue.fix] == [f"/segments/0/types/{i}/share" for i in range(5)]
    assert values == [0.2222, 0.5556, 0.0, 0.2222, 0.0]
    assert sum(values) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "values", [[1, 1, 1], [0.1, 0.2, 0.7], [2, 0, 0], [1e-9, 1, 1], [1] * 7, [0.33333, 0.33333, 0.33334]]
)
def test_round_to_one_sums_to_one_within_bounds(values: list[float]) -> None:
    """Normalised shares are 4-decimal values in 0..1 that sum to 1."""
    result = round_to_one(values)
    assert result is not None
    assert sum(result) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= v <= 1.0 and round(v, 4) == v for v in result)


def test_round_to_one_of_zeros_is_none() -> None:
    """All-zero shares cannot be normalised."""
    assert round_to_one([0.0, 0.0]) is None


def test_dominant_tie_is_not_a_mismatch() -> None:
    """A dominant type tied with another for the largest share is no mismatch: it is the primary's doubt."""
    data = mutated(lambda d: set_shares(d, 0, {"LAB_REPORT": 0.5, "CLINICAL_NOTE": 0.5}))
    data["segments"][0]["dominant_type"] = "CLINICAL_NOTE"
    data["segments"][0]["types"][3]["presence_level"] = "PRIMARY"
    data["segments"][0]["types"][3]["evidence"] = [{"page": 1, "snippet": "Report text on page 1."}]
    result = run_v2(with_canonical_mixture(data))
    assert codes(result) == ["V2.PRIMARY_TYPE_TIE"]


def test_segment_dominant_mismatch_is_never_fixed() -> None:
    """A dominant type that is not the arg-max is reported, never rewritten: which one is wrong needs a person."""
    data = mutated(lambda d: set_shares(d, 0, {"LAB_REPORT": 0.5, "GENOMIC_REPORT": 0.5}))
    data["segments"][0]["dominant_type"] = "CLINICAL_NOTE"
    (issue,) = [
        i for i in run_v2(with_canonical_mixture(data)).issues if i.code == "V2.DOMINANT_TYPE_MISMATCH"
    ]
    assert (issue.auto_fixable, issue.fix) == (False, None)


def test_mixture_that_disagrees_about_the_main_type_is_not_fixed() -> None:
    """A mixture led by another type than the segments' is reported with why it is not fixed, and no patch."""
    data = mutated(lambda d: d.update(dominant_type="CLINICAL_NOTE"))
    mixture(data, {"CLINICAL_NOTE": 0.3, "PATHOLOGY_REPORT": 0.7})
    by_code = {issue.code: issue for issue in run_v2(data).issues}
    assert by_code["V2.DOMINANT_TYPE_MISMATCH"].fix is None
    mismatch = by_code["V2.MIXTURE_MISMATCH"]
    assert (mismatch.auto_fixable, mismatch.fix) == (False, None)
    assert "not fixed automatically" in mismatch.message
    assert "PATHOLOGY_REPORT" in mismatch.message
    assert "LAB_REPORT" in mismatch.message


def test_all_fixes_apply_together_cleanly() -> None:
    """Segment-sum, mixture and dominant fixes of one document apply as one patch and then pass."""
    data = mutated(lambda d: scale_segment(d, 0, 0.7))
    mixture(data, {"LAB_REPORT": 0.5, "ADMINISTRATIVE": 0.3})
    v2 = run_v2(data)
    assert codes(v2) == ["V2.MIXTURE_MISMATCH", "V2.MIXTURE_SHARES_SUM", "V2.SEGMENT_SHARES_SUM"]
    fixed = apply_fixes(data, v2)
    assert run_v2(fixed).issues == []
    assert run_v1(fixed).issues == []


def test_every_patch_applies_with_jsonpatch() -> None:
    """Each fix is a valid RFC 6902 patch against the classification; applied in turn they clear V2."""
    data = mutated(lambda d: scale_segment(d, 1, 0.5))
    mixture(data, {"LAB_REPORT": 0.2})
    fixable = [issue for issue in run_v2(data).issues if issue.fix]
    assert [issue.code for issue in fixable] == [
        "V2.SEGMENT_SHARES_SUM",
        "V2.MIXTURE_SHARES_SUM",
        "V2.MIXTURE_MISMATCH",
    ]
    for issue in fixable:
        data = jsonpatch.JsonPatch(issue.fix).apply(data)
    assert run_v2(data).issues == []


def test_overlap_one_issue_per_pair() -> None:
    """Three segments that all share page 2 give one overlap per pair, and the LLM-phase note names the blocker."""
    data = make_classification(((1, 2, "LAB_REPORT"), (2, 2, "CLINICAL_NOTE"), (2, 3, "ADMINISTRATIVE")))
    result = run_v2(data)
    assert codes(result) == ["V2.PAGE_OVERLAP"] * 3
    assert [i.message for i in result.issues] == [
        "Segments 1 and 2 both claim page 2.",
        "Segments 1 and 3 both claim page 2.",
        "Segments 2 and 3 both claim page 2.",
    ]
    assert result.notes == [BLOCKER_NOTE]
    assert result.llm_phase == PhaseStatus.SKIPPED


@pytest.mark.parametrize(
    ("bundle_kwargs", "ranges", "message"),
    [
        ({}, ((1, 3, "LAB_REPORT"),), "Pages 4–5 have text but belong to no segment."),
        (
            {},
            ((1, 1, "LAB_REPORT"), (3, 3, "LAB_REPORT")),
            "Pages 2 and 4–5 have text but belong to no segment.",
        ),
        ({"blank": (5,)}, ((1, 3, "LAB_REPORT"),), "Page 4 has text but belongs to no segment."),
        ({"blank": (2,), "no_text_layer": (4, 5)}, ((1, 1, "LAB_REPORT"), (3, 3, "LAB_REPORT")), None),
    ],
)
def test_uncovered_pages(bundle_kwargs: dict[str, Any], ranges: Any, message: str | None) -> None:
    """Pages with text in no segment are one MAJOR listing them; blank or scanned pages are not reported."""
    result = run_v2(make_classification(ranges), make_bundle(5, **bundle_kwargs))
    found = [i.message for i in result.issues if i.code == "V2.UNCOVERED_PAGES"]
    assert found == ([message] if message else [])


def test_llm_present_but_phase_not_built() -> None:
    """With an LLM configured the phase is still SKIPPED, saying it is not available."""
    result = run_v2(make_classification(), llm=object())
    assert result.llm_phase == PhaseStatus.SKIPPED
    assert result.notes == [UNAVAILABLE_NOTE]


def test_schema_failure_skips_v2() -> None:
    """A classification that failed the schema is SKIPPED, never passed."""
    result = run_v2('{"doc_id": 1}')
    assert result.status == VerifierStatus.SKIPPED
    assert result.issues == []


def test_score_formula() -> None:
    """Score is 1 - 0.4 per blocker - 0.2 per major - 0.05 per minor, clamped."""
    data = mutated(lambda d: d["segments"][1].update(start_page=2))  # one blocker
    scale_segment(data, 0, 0.5)  # one major
    result = run_v2(data)
    assert codes(result) == ["V2.PAGE_OVERLAP", "V2.SEGMENT_SHARES_SUM"]
    assert result.score == pytest.approx(0.4)


def test_design_example() -> None:
    """docs/design.md §3.2's example on a one-page bundle: its mixture and main type disagree with its only segment."""
    result = run_v2(DESIGN_EXAMPLE, make_bundle(1, "packet-0007"))
    by_code = {issue.code: issue for issue in result.issues}
    assert sorted(by_code) == ["V2.DOMINANT_TYPE_MISMATCH", "V2.MIXTURE_MISMATCH"]
    assert "GENOMIC_REPORT 0.80 instead of 0.00" in by_code["V2.MIXTURE_MISMATCH"].message
    assert [issue.fix for issue in by_code.values()] == [None, None]


def test_mixture_fault_moves_the_document_dominant_check_to_the_canonical_mixture() -> None:
    """When the mixture is being replaced, a dominant type that leads the segments is not blamed."""
    data = mutated(lambda d: mixture(d, {"LAB_REPORT": 0.8, "ADMINISTRATIVE": 0.1}))
    assert codes(run_v2(data)) == ["V2.MIXTURE_MISMATCH", "V2.MIXTURE_SHARES_SUM"]


def test_v2_does_not_mutate_input() -> None:
    """V2 leaves the subject data unchanged."""
    data = mutated(lambda d: scale_segment(d, 0, 0.5))
    before = json.dumps(data, sort_keys=True)
    run_v2(data)
    assert json.dumps(data, sort_keys=True) == before


@given(JSON)
def test_arbitrary_json_never_raises(value: Any) -> None:
    """V2 never raises on arbitrary JSON; it skips what failed the schema."""
    assert run_v2(json.dumps(value)).status in {
        VerifierStatus.SKIPPED,
        VerifierStatus.PASSED,
        VerifierStatus.FAILED,
    }


SEGMENT = st.tuples(st.integers(1, 6), st.integers(1, 6), st.sampled_from(TYPES))


@given(
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.lists(st.floats(0, 1), min_size=len(TYPES), max_size=len(TYPES)),
    st.integers(0, 6),
)
def test_random_structures_never_raise_and_fixes_apply(ranges: Any, mix: list[float], pages: int) -> None:
    """Random ranges and mixtures never crash V1/V2; fixes apply, and without blockers one round fixes all."""
    data = make_classification(ranges)
    data["document_mixture"] = [{"document_type": n, "share": s} for n, s in zip(TYPES, mix, strict=True)]
    bundle = make_bundle(pages)
    v1, v2 = run_v1(data, bundle), run_v2(data, bundle)
    for issue in [*v1.issues, *v2.issues]:
        assert issue.auto_fixable == bool(issue.fix)
        if issue.fix:
            jsonpatch.JsonPatch(issue.fix).apply(data)
    if not any(i.severity == Severity.BLOCKER for i in [*v1.issues, *v2.issues]):
        fixed = apply_fixes(data, v1, v2)
        left = set(codes(run_v2(fixed, bundle)))
        if not left & {"V2.MIXTURE_MISMATCH", "V2.MIXTURE_SHARES_SUM"}:
            assert PROFILE.tolerances.share_sum >= abs(sum(e["share"] for e in fixed["document_mixture"]) - 1)
        # What one round leaves is only what no fix may touch: a disagreement about the main type.
        assert left <= {
            "V2.UNCOVERED_PAGES",
            "V2.DOMINANT_TYPE_MISMATCH",
            "V2.MIXTURE_MISMATCH",
            "V2.MIXTURE_SHARES_SUM",
        }
        assert run_v1(fixed, bundle).issues == []
