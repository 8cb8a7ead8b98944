"""Quick corrections (arbiter/review/quick.py): one action each, checked once by the correction form."""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from review_helpers import FIXTURES, PDFS

from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.review import quick
from arbiter.review.answer_view import (
    evidence_quotes,
    segment_heading,
    summary_line,
    type_rows,
    types_in_play,
)
from arbiter.review.forms import CorrectionDraft, check_correction, segment_rows
from arbiter.review.rows import DOMINANT_COLUMN

TYPES = ["GENOMIC_REPORT", "LAB_REPORT", "PATHOLOGY_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE"]


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


def _row(start: int, end: int, dominant: str | None = None, **shares: float) -> dict[str, Any]:
    return {
        "start_page": start,
        "end_page": end,
        DOMINANT_COLUMN: dominant,
        **dict.fromkeys(TYPES, 0.0),
        **shares,
    }


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (_row(1, 2, LAB_REPORT=0.7, CLINICAL_NOTE=0.3), "LAB_REPORT"),
        (_row(1, 2, "CLINICAL_NOTE", LAB_REPORT=0.7, CLINICAL_NOTE=0.3), "CLINICAL_NOTE"),
        (_row(1, 2, LAB_REPORT=0.5, CLINICAL_NOTE=0.5), "LAB_REPORT"),
        (_row(1, 2, "NOT_A_TYPE", ADMINISTRATIVE=1.0), "ADMINISTRATIVE"),
    ],
    ids=["largest", "pinned", "tie-taxonomy-order", "unknown-pin-ignored"],
)
def test_the_dominant_type_follows_the_shares_unless_pinned(row: dict[str, Any], expected: str) -> None:
    """A row's dominant type is its pin, else the largest share (first in taxonomy order on a tie)."""
    assert quick.dominant_of(row, TYPES) == expected


def test_machine_rows_follow_the_shares_where_the_machine_did() -> None:
    """A dominant type equal to the largest share is left blank so it follows later edits; another stays."""
    rows = [
        _row(1, 1, "LAB_REPORT", LAB_REPORT=1.0),
        _row(2, 2, "CLINICAL_NOTE", LAB_REPORT=0.6, CLINICAL_NOTE=0.4),
    ]
    assert [r[DOMINANT_COLUMN] for r in quick.following_rows(rows, TYPES)] == [None, "CLINICAL_NOTE"]


def test_segment_is_x_sets_one_type_and_unpins() -> None:
    """'This segment is X' makes X the only share (1.0) and the dominant type; other rows are untouched."""
    rows = [_row(1, 2, "CLINICAL_NOTE", LAB_REPORT=0.6, CLINICAL_NOTE=0.4), _row(3, 3, LAB_REPORT=1.0)]
    out = quick.set_type(rows, 0, "ADMINISTRATIVE", TYPES)
    assert quick.shares_of(out[0], TYPES) == {**dict.fromkeys(TYPES, 0.0), "ADMINISTRATIVE": 1.0}
    assert quick.dominant_of(out[0], TYPES) == "ADMINISTRATIVE"
    assert out[1] == rows[1]
    assert rows[0][DOMINANT_COLUMN] == "CLINICAL_NOTE"


@pytest.mark.parametrize(
    ("rows", "action", "expected_pages"),
    [
        ([_row(1, 5, LAB_REPORT=1.0)], lambda r: quick.split(r, 0, 3), [(1, 2), (3, 5)]),
        ([_row(1, 5, LAB_REPORT=1.0)], lambda r: quick.split(r, 0, 5), [(1, 4), (5, 5)]),
        (
            [_row(1, 2, LAB_REPORT=1.0), _row(3, 5, CLINICAL_NOTE=1.0)],
            lambda r: quick.merge_next(r, 0, TYPES),
            [(1, 5)],
        ),
        (
            [_row(1, 1), _row(2, 3), _row(4, 4)],
            lambda r: quick.merge_next(r, 1, TYPES),
            [(1, 1), (2, 4)],
        ),
    ],
    ids=["split-middle", "split-last-page", "merge-two", "merge-middle"],
)
def test_split_and_merge_move_page_ranges(
    rows: list[dict[str, Any]], action: Any, expected_pages: list[Any]
) -> None:
    """Splitting at page P ends the segment at P-1 and starts one at P; merging joins two ranges."""
    assert [(r["start_page"], r["end_page"]) for r in action(rows)] == expected_pages


@pytest.mark.parametrize(
    "action",
    [
        lambda: quick.split([_row(1, 3)], 0, 1),
        lambda: quick.split([_row(1, 3)], 0, 4),
        lambda: quick.split([_row(1, 3)], 1, 2),
        lambda: quick.merge_next([_row(1, 3)], 0, TYPES),
        lambda: quick.set_type([_row(1, 3)], 0, "MEMO", TYPES),
        lambda: quick.split([{"start_page": None, "end_page": 3}], 0, 2),
    ],
    ids=[
        "split-at-first-page",
        "split-beyond",
        "no-such-segment",
        "merge-last",
        "unknown-type",
        "blank-pages",
    ],
)
def test_impossible_quick_actions_are_refused(action: Any) -> None:
    """A quick action that cannot apply raises ValueError (the page shows it) instead of guessing."""
    with pytest.raises(ValueError, match=r"\w"):
        action()


def test_merge_weights_shares_by_pages() -> None:
    """A merged segment's shares are the page-weighted mean; its dominant follows them."""
    merged = quick.merge_next([_row(1, 1, LAB_REPORT=1.0), _row(2, 4, CLINICAL_NOTE=1.0)], 0, TYPES)[0]
    assert (merged["LAB_REPORT"], merged["CLINICAL_NOTE"]) == (0.25, 0.75)
    assert quick.dominant_of(merged, TYPES) == "CLINICAL_NOTE"


def test_evidence_pool_add_remove_and_by_segment() -> None:
    """Quotes are added once, removed exactly, and a segment sees only its own pages' quotes of a type."""
    pool = quick.add_evidence([], "LAB_REPORT", 2, "  Hemoglobin 13.1 g/dL ")
    pool = quick.add_evidence(pool, "LAB_REPORT", 2, "Hemoglobin 13.1 g/dL")
    pool = quick.add_evidence(pool, "LAB_REPORT", 4, "Platelets 250")
    assert len(pool) == 2
    assert quick.evidence_for(pool, "LAB_REPORT", 1, 3) == [{"page": 2, "snippet": "Hemoglobin 13.1 g/dL"}]
    assert quick.evidence_for(pool, "CLINICAL_NOTE", 1, 5) == []
    assert quick.remove_evidence(pool, "LAB_REPORT", 4, "Platelets 250") == pool[:1]
    with pytest.raises(ValueError, match="blank"):
        quick.add_evidence(pool, "LAB_REPORT", 2, "   ")


def test_page_lines_are_whole_lines_without_blanks_or_repeats() -> None:
    """A page's text becomes pickable lines: spaces collapsed, blank and repeated lines left out."""
    assert quick.page_lines("A  b\n\n  c\nA b\n") == ["A b", "c"]


def test_segment_is_x_on_a_real_packet_passes_the_checks(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """The machine called the genomic segment a lab report: one quick action fixes it and the check passes."""
    wrong = copy.deepcopy(truth)
    seg = wrong["segments"][1]
    seg["dominant_type"] = "LAB_REPORT"
    rows = quick.following_rows(segment_rows(wrong, profile), TYPES)
    rows = quick.set_type(rows, 1, "GENOMIC_REPORT", TYPES)
    checked = check_correction(CorrectionDraft(segments=rows), wrong, bundle, profile)
    assert checked.ok, [p.message for p in checked.blocking]
    assert checked.classification is not None
    assert checked.classification["segments"][1]["dominant_type"] == "GENOMIC_REPORT"
    levels = {e["document_type"]: e["presence_level"] for e in checked.classification["segments"][1]["types"]}
    assert levels["GENOMIC_REPORT"] == "PRIMARY"
    assert {lvl for name, lvl in levels.items() if name != "GENOMIC_REPORT"} == {"NO_EVIDENCE"}


def test_evidence_follows_its_page_through_a_split(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """After a split, each half keeps exactly the quotes on its own pages."""
    rows = quick.split(segment_rows(truth, profile), 1, 3)
    checked = check_correction(CorrectionDraft(segments=rows), truth, bundle, profile)
    assert checked.classification is not None
    for seg in checked.classification["segments"]:
        for entry in seg["types"]:
            assert all(seg["start_page"] <= e["page"] <= seg["end_page"] for e in entry["evidence"])


def test_a_picked_line_becomes_saved_evidence_and_a_removed_one_goes(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A line picked from page 5 is the requisition's evidence in the checked answer; removing it drops it."""
    line = next(x for x in quick.page_lines(bundle.pages[4].text) if len(x) > 12)
    pool = quick.add_evidence(quick.evidence_pool(truth), "ADMINISTRATIVE", 5, line)
    rows = segment_rows(truth, profile)
    checked = check_correction(CorrectionDraft(segments=rows, evidence=pool), truth, bundle, profile)
    assert checked.classification is not None
    assert not checked.blocking
    quotes = [q for seg in checked.classification["segments"] for q in evidence_quotes(seg)]
    assert ("ADMINISTRATIVE", 5, line) in quotes
    assert not any("use Agree instead" in p.message for p in checked.problems)
    gone = quick.remove_evidence(pool, "ADMINISTRATIVE", 5, line)
    again = check_correction(CorrectionDraft(segments=rows, evidence=gone), truth, bundle, profile)
    assert again.classification is not None
    assert ("ADMINISTRATIVE", 5, line) not in [
        q for s in again.classification["segments"] for q in evidence_quotes(s)
    ]


def test_an_invented_quote_cannot_be_saved_as_evidence(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile
) -> None:
    """A quote that is not on its page is left out of the answer with a note, never saved as evidence."""
    pool = quick.add_evidence(
        quick.evidence_pool(truth), "ADMINISTRATIVE", 5, "Patient has zebra syndrome 999"
    )
    checked = check_correction(
        CorrectionDraft(segments=segment_rows(truth, profile), evidence=pool), truth, bundle, profile
    )
    assert checked.classification is not None
    assert any(p.code == "FORM.EVIDENCE_LEFT_OUT" for p in checked.problems)
    quotes = [q[2] for s in checked.classification["segments"] for q in evidence_quotes(s)]
    assert "Patient has zebra syndrome 999" not in quotes


@settings(max_examples=25, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=2),
    name=st.sampled_from(TYPES),
    split_at=st.integers(min_value=1, max_value=6),
)
def test_no_quick_action_yields_a_silent_mislabel(
    truth: dict[str, Any], bundle: DocumentBundle, profile: Profile, index: int, name: str, split_at: int
) -> None:
    """Whatever quick action: the checked answer's segment says what the rows say, or a problem is shown."""
    rows = quick.set_type(segment_rows(truth, profile), index, name, TYPES)
    with contextlib.suppress(ValueError):
        rows = quick.split(rows, index, split_at)
    checked = check_correction(CorrectionDraft(segments=rows), truth, bundle, profile)
    assert checked.classification is not None
    for row, seg in zip(
        sorted(rows, key=lambda r: r["start_page"]), checked.classification["segments"], strict=True
    ):
        assert seg["dominant_type"] == quick.dominant_of(row, TYPES)
        primary = [e["document_type"] for e in seg["types"] if e["presence_level"] == "PRIMARY"]
        assert primary == [seg["dominant_type"]]


def test_readable_answer_rows(truth: dict[str, Any]) -> None:
    """The readable view names the dominant type, the segments, each type's share and every quote's page."""
    assert summary_line(truth).startswith(f"{truth['dominant_type']} · {len(truth['segments'])} segments")
    rows = type_rows(truth["segments"][1])
    assert rows[0]["Type"] == truth["segments"][1]["dominant_type"]
    assert rows[0]["Share"] > 0
    assert all(isinstance(p, int) for _t, p, _q in evidence_quotes(truth["segments"][1]))
    assert truth["dominant_type"] in types_in_play(truth)
    assert summary_line(None) == "No readable classification."


def test_guidance_is_given_for_the_types_in_play(profile: Profile) -> None:
    """The bundled profile has guidance for every type; only the types asked for are returned, in order."""
    assert set(profile.guidance) == set(TYPES)
    assert [n for n, _ in quick.guidance_for(profile, ["ADMINISTRATIVE", "LAB_REPORT"])] == [
        "LAB_REPORT",
        "ADMINISTRATIVE",
    ]


def test_guidance_for_an_unknown_type_is_refused(profile: Profile) -> None:
    """A [guidance] entry for a type the taxonomy does not have fails the profile's validation."""
    data = profile.model_dump()
    data["guidance"] = {"MEMO": "A memo."}
    with pytest.raises(ValueError, match="MEMO"):
        Profile.model_validate(data)


def test_guidance_does_not_change_the_profile_digest(profile: Profile) -> None:
    """Guidance decides nothing, so editing it keeps the digest that lets a re-run skip a document."""
    data = profile.model_dump()
    data["guidance"] = {"LAB_REPORT": "Different words."}
    assert Profile.model_validate(data).digest == profile.digest


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(2, 2, "Segment 1 · page 2 · LAB_REPORT"), (1, 3, "Segment 1 · pages 1–3 · LAB_REPORT")],
)
def test_segment_heading_names_its_pages(start: int, end: int, expected: str) -> None:
    """A segment's heading names one page or a page range, then its dominant type."""
    segment = {"segment_index": 1, "start_page": start, "end_page": end, "dominant_type": "LAB_REPORT"}
    assert segment_heading(segment) == expected


MACHINE = {
    "segments": [
        {
            "start_page": 1,
            "end_page": 2,
            "dominant_type": "LAB_REPORT",
            "classification_reasoning": "CBC panel.",
        },
        {"start_page": 3, "end_page": 3, "dominant_type": "CLINICAL_NOTE", "classification_reasoning": "  "},
        "not a segment",
        {"start_page": "4", "end_page": 5, "dominant_type": "ADMINISTRATIVE"},
    ]
}


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (1, 1, ["Machine, pages 1–2, LAB_REPORT: CBC panel."]),
        (
            2,
            3,
            [
                "Machine, pages 1–2, LAB_REPORT: CBC panel.",
                "Machine, page 3, CLINICAL_NOTE (no reasoning given)",
            ],
        ),
        (4, 9, []),
        (None, 2, []),
    ],
)
def test_a_card_shows_what_the_machine_said_of_its_pages(start: Any, end: Any, expected: list[str]) -> None:
    """A segment card lists the machine's segments overlapping its pages, with their reasoning."""
    assert quick.machine_said(MACHINE, start, end) == expected


@pytest.mark.parametrize(
    ("rows", "page", "action", "expected_pages"),
    [
        ([_row(1, 5, LAB_REPORT=1.0)], 3, "split", [(1, 2), (3, 5)]),
        ([_row(1, 2, LAB_REPORT=1.0), _row(3, 5, CLINICAL_NOTE=1.0)], 3, "join", [(1, 5)]),
        ([_row(1, 2, LAB_REPORT=1.0), _row(3, 5, CLINICAL_NOTE=1.0)], 5, "split", [(1, 2), (3, 4), (5, 5)]),
        ([_row(1, 1), _row(2, 3), _row(4, 4)], 4, "join", [(1, 1), (2, 4)]),
        ([_row(1, 2)], 1, None, None),
        ([_row(1, 2)], 3, None, None),
        ([_row(1, 2), _row("x", 4)], 3, None, None),
    ],
    ids=["split", "join", "split-second", "join-last", "first-page", "outside", "unreadable-pages"],
)
def test_a_click_on_the_page_strip_splits_inside_a_segment_and_joins_at_its_start(
    rows: list[dict[str, Any]], page: int, action: str | None, expected_pages: list[Any] | None
) -> None:
    """A strip click inside a segment starts a new one there; at a later segment's start it joins the two."""
    assert quick.boundary_at(rows, page) == action
    if expected_pages is None:
        with pytest.raises(ValueError, match="neither starts a later segment"):
            quick.toggle_boundary(rows, page, TYPES)
    else:
        after = quick.toggle_boundary(rows, page, TYPES)
        assert [(r["start_page"], r["end_page"]) for r in after] == expected_pages


def test_split_then_join_at_the_same_page_gives_the_pages_back() -> None:
    """Two strip clicks on the same page undo each other's page ranges."""
    rows = [_row(1, 5, LAB_REPORT=1.0)]
    again = quick.toggle_boundary(quick.toggle_boundary(rows, 3, TYPES), 3, TYPES)
    assert [(r["start_page"], r["end_page"]) for r in again] == [(1, 5)]
    assert again[0]["LAB_REPORT"] == 1.0


def test_the_strip_sees_the_table_edits_not_yet_drawn() -> None:
    """Pending data-editor edits (changed, added and deleted rows) apply to the rows as Streamlit does."""
    base = [_row(1, 2), _row(3, 4), _row(5, 6)]
    delta = {
        "edited_rows": {0: {"end_page": 1}, "1": {"start_page": 2}},
        "added_rows": [{"start_page": 7, "end_page": 7}],
        "deleted_rows": [2],
    }
    assert [(r["start_page"], r["end_page"]) for r in quick.rows_with_edits(base, delta)] == [
        (1, 1),
        (2, 4),
        (7, 7),
    ]
    assert quick.rows_with_edits(base, None) == base
