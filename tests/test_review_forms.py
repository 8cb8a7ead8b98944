"""The correct and agree forms: rows to classification, and the V1/V2 check that gates a save."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from review_helpers import FIXTURES, PDFS

from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.review.forms import (
    PRODUCER,
    CorrectionDraft,
    check_agreement,
    check_correction,
    corrections_of,
    mixture_rows,
    segment_rows,
)

TYPES = ("GENOMIC_REPORT", "LAB_REPORT", "PATHOLOGY_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE")


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def bundle() -> DocumentBundle:
    result = ingest_pdf(PDFS / "packet-01.pdf", doc_id="packet-01")
    assert isinstance(result, DocumentBundle)
    return result


@pytest.fixture(scope="module")
def truth() -> dict[str, Any]:
    """packet-01's correct classification: fax cover (p1), genomic report (p2-4), requisition (p5)."""
    data: dict[str, Any] = json.loads((FIXTURES / "classifications" / "packet-01.json").read_text())
    return data


def _rows(truth: dict[str, Any], profile: Profile) -> list[dict[str, Any]]:
    return copy.deepcopy(segment_rows(truth, profile))


def _codes(checked: Any) -> set[str]:
    return {p.code for p in checked.blocking}


def test_rows_have_pages_dominant_and_a_share_per_type(truth: dict[str, Any], profile: Profile) -> None:
    """Each segment becomes one editor row with a share column for every taxonomy type."""
    rows = segment_rows(truth, profile)
    assert [(r["start_page"], r["end_page"], r["dominant_type"]) for r in rows] == [
        (1, 1, "ADMINISTRATIVE"),
        (2, 4, "GENOMIC_REPORT"),
        (5, 5, "ADMINISTRATIVE"),
    ]
    assert set(rows[0]) == {"start_page", "end_page", "dominant_type", *TYPES}


def test_unchanged_rows_pass_with_a_note(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """The machine's own rows pass the rules; the reviewer is told to use Agree instead."""
    checked = check_correction(CorrectionDraft(_rows(truth, profile)), truth, bundle, profile)
    assert checked.ok
    assert [p.blocking for p in checked.problems] == [False]
    assert "use Agree instead" in checked.problems[0].message


def _merge_first_two(rows: list[dict[str, Any]]) -> None:
    rows[0]["end_page"] = 4
    del rows[1]


def _overlap(rows: list[dict[str, Any]]) -> None:
    rows[0]["end_page"] = 2


def _gap(rows: list[dict[str, Any]]) -> None:
    rows[1]["end_page"] = 3


def _beyond_end(rows: list[dict[str, Any]]) -> None:
    rows[2]["end_page"] = 9


def _inverted(rows: list[dict[str, Any]]) -> None:
    rows[2]["start_page"], rows[2]["end_page"] = 5, 4
    rows[1]["end_page"] = 3


def _half_shares(rows: list[dict[str, Any]]) -> None:
    rows[1]["GENOMIC_REPORT"] = 0.5


def _share_above_one(rows: list[dict[str, Any]]) -> None:
    rows[1]["GENOMIC_REPORT"] = 1.5


def _dominant_not_largest(rows: list[dict[str, Any]]) -> None:
    rows[1]["dominant_type"] = "LAB_REPORT"


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (_overlap, "V2.PAGE_OVERLAP"),
        (_gap, "V2.UNCOVERED_PAGES"),
        (_beyond_end, "V1.PAGE_OUT_OF_RANGE"),
        (_inverted, "V1.INVERTED_PAGE_RANGE"),
        (_half_shares, "V2.SEGMENT_SHARES_SUM"),
        (_share_above_one, "V1.SHARE_OUT_OF_RANGE"),
        (_dominant_not_largest, "V2.DOMINANT_TYPE_MISMATCH"),
    ],
)
def test_rule_breaking_edits_block_the_save(
    edit: Any, code: str, truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """Each edit that breaks a V1/V2 rule is reported by that rule's code and blocks the save."""
    rows = _rows(truth, profile)
    edit(rows)
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert not checked.ok
    assert code in _codes(checked)


@pytest.mark.parametrize(
    ("cell", "value", "message"),
    [
        ("start_page", "two", "Row 1: the start page must be a whole page number."),
        ("end_page", 1.5, "Row 1: the end page must be a whole page number."),
        ("end_page", None, "Row 1: the end page must be a whole page number."),
        ("LAB_REPORT", "lots", "Row 1: the LAB_REPORT share must be a number."),
        ("LAB_REPORT", float("inf"), "Row 1: the LAB_REPORT share must be a number."),
    ],
)
def test_unreadable_cells_are_named(
    cell: str, value: Any, message: str, truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A cell that is not a number is reported by row and column, in words."""
    rows = _rows(truth, profile)
    rows[0][cell] = value
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert checked.classification is None
    assert message in [p.message for p in checked.blocking]


def test_empty_table_is_refused(truth: dict[str, Any], bundle: DocumentBundle, profile: Profile) -> None:
    """Blank rows are ignored; a table with only blank rows cannot be saved."""
    blank = dict.fromkeys(["start_page", "end_page", "dominant_type", *TYPES])
    checked = check_correction(CorrectionDraft([blank]), truth, bundle, profile)
    assert not checked.ok
    assert "at least one segment" in checked.blocking[0].message


def test_valid_correction_builds_a_full_classification(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A merged segment saves with renumbered segments, page counts, page-weighted mixture and producer."""
    rows = _rows(truth, profile)
    _merge_first_two(rows)
    rows[0].update(dominant_type=None, GENOMIC_REPORT=0.75, ADMINISTRATIVE=0.25)
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert checked.ok, checked.blocking
    data = checked.classification
    assert data is not None
    assert data["producer"] == PRODUCER
    assert [(s["segment_index"], s["segment_page_count"]) for s in data["segments"]] == [(1, 4), (2, 1)]
    assert data["segments"][0]["dominant_type"] == "GENOMIC_REPORT"
    mixture = {e["document_type"]: e["share"] for e in data["document_mixture"]}
    assert mixture["GENOMIC_REPORT"] == pytest.approx(0.6)
    assert mixture["ADMINISTRATIVE"] == pytest.approx(0.4)
    assert data["dominant_type"] == "GENOMIC_REPORT"


def test_content_findings_warn_but_never_block_a_correction(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A reviewer who merges two documents is warned (page numbering restarts inside), and may still save."""
    rows = _rows(truth, profile)
    _merge_first_two(rows)
    rows[0].update(dominant_type=None, GENOMIC_REPORT=0.75, ADMINISTRATIVE=0.25)
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert checked.ok
    warnings = [p for p in checked.problems if p.code == "V2.SEGMENT_SPANS_DOCUMENTS"]
    assert warnings
    assert not any(p.blocking for p in warnings)


def test_evidence_inside_the_new_pages_is_kept(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """The machine's evidence for a type stays with the segment whose pages contain it."""
    rows = _rows(truth, profile)
    _merge_first_two(rows)
    rows[0].update(GENOMIC_REPORT=0.75, ADMINISTRATIVE=0.25, dominant_type="GENOMIC_REPORT")
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert checked.classification is not None
    entries = {t["document_type"]: t for t in checked.classification["segments"][0]["types"]}
    assert {e["page"] for e in entries["ADMINISTRATIVE"]["evidence"]} == {1}
    assert entries["GENOMIC_REPORT"]["evidence"]
    assert entries["LAB_REPORT"] == {
        "document_type": "LAB_REPORT",
        "presence_level": "NO_EVIDENCE",
        "share": 0.0,
        "confidence": 1.0,
        "evidence": [],
    }


def test_a_typed_mixture_is_checked_against_the_segments(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A mixture entered by hand that disagrees with the segments is a V2 mixture problem."""
    mixture = mixture_rows(truth, profile)
    for entry in mixture:
        entry["share"] = 0.2
    draft = CorrectionDraft(_rows(truth, profile), mixture=mixture)
    assert "V2.MIXTURE_MISMATCH" in _codes(check_correction(draft, truth, bundle, profile))


def test_rows_are_ordered_by_page(truth: dict[str, Any], bundle: DocumentBundle, profile: Profile) -> None:
    """A segment added at the bottom for the first pages is numbered first."""
    rows = _rows(truth, profile)
    rows.append(rows.pop(0))
    checked = check_correction(CorrectionDraft(rows), truth, bundle, profile)
    assert checked.ok
    assert checked.classification is not None
    assert [s["start_page"] for s in checked.classification["segments"]] == [1, 2, 5]


def test_corrections_block_carries_the_checked_answer(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """The review's corrections hold the checked segments, mixture, dominant type and notes."""
    rows = _rows(truth, profile)
    rows[2]["dominant_type"] = None
    draft = CorrectionDraft(rows, notes="page 5 is a requisition")
    checked = check_correction(draft, truth, bundle, profile)
    corrections = corrections_of(checked, draft)
    assert corrections.corrected_dominant_type == "GENOMIC_REPORT"
    assert corrections.corrected_segments == checked.classification["segments"]  # type: ignore[index]
    assert corrections.correction_notes == "page 5 is a requisition"


def test_agreeing_needs_a_readable_classification(bundle: DocumentBundle, profile: Profile) -> None:
    """Nothing to agree with, or a classification outside the schema, cannot be agreed to."""
    assert not check_agreement(None, bundle, profile).ok
    broken = check_agreement({"doc_id": "packet-01"}, bundle, profile)
    assert not broken.ok
    assert "cannot be saved as it is" in broken.blocking[0].message


def _set(path: tuple[Any, ...], value: Any) -> Any:
    """A mutation of the truth: the value at `path` replaced."""

    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


GENOMIC_EVIDENCE = ("segments", 1, "types", 0, "evidence")
# What agreeing with a flawed classification runs into: the same V1/V2 checks as a correction, plus the
# evidence V4 cannot find where it is claimed (docs/design.md §8.3).
AGREE_BLOCKED = [
    ("confidence 1.3", _set(("segments", 1, "types", 0, "confidence"), 1.3), "V1.CONFIDENCE_OUT_OF_RANGE"),
    ("share 1.4", _set(("segments", 1, "types", 0, "share"), 1.4), "V1.SHARE_OUT_OF_RANGE"),
    ("shares sum to 0.5", _set(("segments", 1, "types", 0, "share"), 0.5), "V2.SEGMENT_SHARES_SUM"),
    (
        "fabricated snippet",
        _set((*GENOMIC_EVIDENCE, 0, "snippet"), "Whole-genome duplication was detected in the tumor sample."),
        "V4.SNIPPET_NOT_FOUND",
    ),
    (
        "snippet from another segment",
        _set((*GENOMIC_EVIDENCE, 0), {"page": 2, "snippet": "TEST REQUISITION FORM", "anchor": None}),
        "V4.SNIPPET_OUTSIDE_SEGMENT",
    ),
]


@pytest.mark.parametrize(("case", "mutate", "code"), AGREE_BLOCKED, ids=[c[0] for c in AGREE_BLOCKED])
def test_agreeing_with_a_rule_breaking_classification_is_refused(
    case: str, mutate: Any, code: str, truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A classification failing V1/V2 or citing evidence V4 cannot find cannot be agreed with; the problem is named."""
    flawed = copy.deepcopy(truth)
    mutate(flawed)
    checked = check_agreement(flawed, bundle, profile)
    assert not checked.ok, case
    assert code in _codes(checked)


def test_agreeing_shows_minor_findings_without_blocking(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """Minor findings on an agreed classification (an anchor not on its page) are shown but do not stop the save."""
    flawed = copy.deepcopy(truth)
    flawed["segments"][1]["types"][0]["evidence"][0]["anchor"] = "zanzibar"
    checked = check_agreement(flawed, bundle, profile)
    assert checked.ok
    assert "V4.ANCHOR_NOT_FOUND" in {p.code for p in checked.notes}


def test_agreeing_with_the_truth_passes(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """The correct classification of the document can be agreed with: nothing blocks."""
    assert check_agreement(truth, bundle, profile).blocking == []


def test_correction_leaves_out_evidence_not_on_its_page(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A correction does not keep the machine's fabricated quotes: they are left out, and a note says so."""
    fabricated = copy.deepcopy(truth)
    fabricated["segments"][1]["types"][0]["evidence"][0]["snippet"] = "Bone marrow shows 40% myeloblasts."
    checked = check_correction(CorrectionDraft(_rows(truth, profile)), fabricated, bundle, profile)
    assert checked.classification is not None
    kept = [e["snippet"] for t in checked.classification["segments"][1]["types"] for e in t["evidence"]]
    assert "Bone marrow shows 40% myeloblasts." not in kept
    assert kept  # the real quotes stay
    assert "V4.SNIPPET_NOT_FOUND" not in _codes(checked)
    assert any("Bone marrow" in p.message for p in checked.notes)


CELL = st.one_of(
    st.none(),
    st.integers(-3, 12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from(TYPES),
)


@given(
    st.lists(
        st.fixed_dictionaries(
            {"start_page": CELL, "end_page": CELL, "dominant_type": CELL, **dict.fromkeys(TYPES, CELL)}
        ),
        max_size=4,
    )
)
def test_no_table_crashes_the_check(rows: list[dict[str, Any]]) -> None:
    """Whatever the cells hold, the check returns problems instead of raising."""
    bundle = _BUNDLE.get("b") or _BUNDLE.setdefault("b", _load_bundle())
    profile = _PROFILE.get("p") or _PROFILE.setdefault("p", load_profile())
    checked = check_correction(CorrectionDraft(rows), None, bundle, profile)
    assert checked.ok or checked.blocking


_BUNDLE: dict[str, DocumentBundle] = {}
_PROFILE: dict[str, Profile] = {}  # read once for all examples


def _load_bundle() -> DocumentBundle:
    result = ingest_pdf(Path(PDFS / "packet-01.pdf"), doc_id="packet-01")
    assert isinstance(result, DocumentBundle)
    return result


def test_an_unchanged_table_after_a_refused_agree_does_not_send_the_reviewer_back_to_agree(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """When Agree was refused (confidence 1.3), the correction editor never says "use Agree instead"."""
    flawed = copy.deepcopy(truth)
    flawed["segments"][1]["types"][0]["confidence"] = 1.3
    assert not check_agreement(flawed, bundle, profile).ok
    checked = check_correction(CorrectionDraft(_rows(flawed, profile)), flawed, bundle, profile)
    said = " ".join(p.message for p in checked.problems)
    assert "use Agree instead" not in said
    assert "Agree cannot save the machine's answer as it is" in said
    fine = check_correction(CorrectionDraft(_rows(truth, profile)), truth, bundle, profile)
    assert "use Agree instead" in " ".join(p.message for p in fine.problems)
