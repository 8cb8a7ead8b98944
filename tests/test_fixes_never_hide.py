"""No auto-fix hides a mislabel: for any classification, applying the fixes keeps every main type and
every issue no fix may touch (docs/design.md §6.2; issue "fixes never hide a mislabel")."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.contracts import Issue
from arbiter.contracts.schemas import load_subject
from arbiter.decide.autofix import Conflict, PatchFailed, apply_fixes, plan_fixes
from arbiter.verifiers import default_verifiers
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.shares import leads, type_shares
from arbiter.verify.runner import InlineExecutor, run_verifiers
from tests.test_content_rules import lab, note, pathology
from tests.v34_helpers import PROFILE, TYPES, classification, make_bundle, segment

BUNDLE = make_bundle(lab(1, "Page 1 of 2"), lab(2, "Page 2 of 2"), pathology(3, "Page 1 of 1"), note(4))
BASE = classification(
    segment(1, 2, "LAB_REPORT", {"LAB_REPORT": [(1, "Test Result Units Reference Range")]}),
    segment(3, 3, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": [(3, "Final Diagnosis")]}),
    segment(4, 4, "CLINICAL_NOTE", {"CLINICAL_NOTE": [(4, "History of Present Illness")]}),
)
TIE = PROFILE.tolerances.dominant_tie

SHARES = st.lists(
    st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 0.9, 1.0]), min_size=5, max_size=5
)


@st.composite
def classifications(draw: st.DrawFn) -> dict[str, Any]:
    """The base answer with any of: relabelled segments, other shares, another mixture or main type, a wrong
    page count or index, an evidence page moved, a type entry dropped."""
    data = json.loads(json.dumps(BASE))
    for seg in data["segments"]:
        if draw(st.booleans()):
            seg["dominant_type"] = draw(st.sampled_from(TYPES))
        if draw(st.booleans()):
            for entry, share in zip(seg["types"], draw(SHARES), strict=True):
                entry["share"] = share
        if draw(st.booleans()):
            seg["segment_page_count"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            for entry in seg["types"]:
                for ev in entry["evidence"]:
                    ev["page"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        data["segments"][0]["segment_index"] = draw(st.integers(1, 5))
    if draw(st.booleans()):
        for entry, share in zip(data["document_mixture"], draw(SHARES), strict=True):
            entry["share"] = share
    if draw(st.booleans()):
        data["dominant_type"] = draw(st.sampled_from(TYPES))
    if draw(st.booleans()):
        seg = draw(st.sampled_from(data["segments"]))
        dropped = draw(st.sampled_from(TYPES))
        if dropped != seg["dominant_type"]:
            seg["types"] = [t for t in seg["types"] if t["document_type"] != dropped]
    return data


def _issues(data: dict[str, Any]) -> list[Issue]:
    subject = load_subject(json.dumps(data))
    results = run_verifiers(
        subject, BUNDLE, PROFILE, default_verifiers(), VerifyContext(), executor=InlineExecutor()
    )
    return [issue for result in results for issue in result.issues]


def _main_types(data: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    """Each stated dominant type with the shares it is stated against (segments, then the document)."""

    class Entry:
        def __init__(self, raw: dict[str, Any]) -> None:
            self.document_type, self.share = raw["document_type"], raw["share"]

    out = [(s["dominant_type"], type_shares(map(Entry, s["types"]), TYPES)) for s in data["segments"]]
    out.append((data["dominant_type"], type_shares(map(Entry, data["document_mixture"]), TYPES)))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classifications())
def test_fixes_keep_main_types_and_unfixable_issues(data: dict[str, Any]) -> None:
    """Applying every fix leaves each stated main type and the type leading each share list unchanged, and
    every issue no fix may touch is still there afterwards."""
    before = _issues(data)
    plan = plan_fixes(before)
    if isinstance(plan, Conflict) or not plan:
        return
    try:
        fixed, _ = apply_fixes(data, plan)
    except PatchFailed:
        return
    for (stated, shares), (stated_after, shares_after) in zip(
        _main_types(data), _main_types(fixed), strict=True
    ):
        assert stated_after == stated
        if sum(shares.values()) > 0:
            leader = max(TYPES, key=lambda t: (shares[t], -TYPES.index(t)))
            assert leads(shares_after, leader, TIE + 1e-4), (leader, shares, shares_after)
    after = {(i.code, i.location.path) for i in _issues(fixed)}
    kept = {(i.code, i.location.path) for i in before if not i.auto_fixable}
    assert kept <= after, sorted(kept - after)


def test_the_mixture_fix_cannot_erase_a_relabel() -> None:
    """A relabelled segment whose mixture still names the old type: the mismatch is not fixable, so it stays."""
    data = json.loads(json.dumps(BASE))
    types = {t["document_type"]: t for t in data["segments"][0]["types"]}
    types["LAB_REPORT"].update(share=0.0, presence_level="NO_EVIDENCE")
    types["CLINICAL_NOTE"].update(
        share=1.0, presence_level="PRIMARY", evidence=types["LAB_REPORT"]["evidence"]
    )
    types["LAB_REPORT"]["evidence"] = []
    data["segments"][0]["dominant_type"] = "CLINICAL_NOTE"
    issues = _issues(data)
    mismatch = [i for i in issues if i.code == "V2.MIXTURE_MISMATCH"]
    assert mismatch
    assert not any(i.auto_fixable for i in mismatch)
    assert "V2.CONTENT_CONTRADICTS_TYPE" in {i.code for i in issues}
