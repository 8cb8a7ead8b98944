"""The auto-fix engine: merging, conflicts, application with before/after records, fingerprints."""

from __future__ import annotations

import pytest

from arbiter.contracts import Severity
from arbiter.decide.autofix import Conflict, FixPlan, PatchFailed, apply_fixes, fingerprint, plan_fixes
from tests.governor_helpers import issue, replace

MIXTURE = [{"document_type": "LAB_REPORT", "share": 1.0}]


def plan(*issues) -> FixPlan:
    made = plan_fixes(issues)
    assert isinstance(made, FixPlan), made
    return made


def test_identical_fixes_merge() -> None:
    """Two checks reporting one fault with the same canonical patch give one operation and two records."""
    made = plan(replace("V2", "/document_mixture", MIXTURE), replace("V1", "/document_mixture", MIXTURE))
    assert made.patch == [{"op": "replace", "path": "/document_mixture", "value": MIXTURE}]
    assert sorted(r.issue_id[:2] for r in made.records) == ["V1", "V2"]


def test_different_values_at_one_path_conflict() -> None:
    """Two fixes setting one path to different values are a conflict naming both issues."""
    a, b = (
        replace("V2", "/segments/0/dominant_type", "LAB_REPORT"),
        replace("V4", "/segments/0/dominant_type", "X"),
    )
    conflict = plan_fixes([a, b])
    assert isinstance(conflict, Conflict)
    assert set(conflict.issue_ids) == {a.issue_id, b.issue_id}
    assert "/segments/0/dominant_type" in conflict.message


def test_ancestor_and_descendant_conflict() -> None:
    """Replacing a list while another fix edits an item inside it is a conflict."""
    conflict = plan_fixes(
        [replace("V2", "/document_mixture", MIXTURE), replace("V1", "/document_mixture/0/share", 0.5)]
    )
    assert isinstance(conflict, Conflict)


def test_root_replacement_conflicts_with_everything() -> None:
    """A fix replacing the whole document conflicts with any other fix."""
    assert isinstance(plan_fixes([replace("V1", "", {}), replace("V2", "/x", 1)]), Conflict)


def test_appends_to_one_array_do_not_conflict() -> None:
    """Two fixes appending different items to one array both apply."""
    add = [{"op": "add", "path": "/items/-", "value": "a"}]
    other = [{"op": "add", "path": "/items/-", "value": "b"}]
    made = plan(issue("V1", fix=add), issue("V2", fix=other))
    fixed, _ = apply_fixes({"items": []}, made)
    assert fixed == {"items": ["a", "b"]}


def test_removal_at_an_index_conflicts_with_a_later_sibling() -> None:
    """Removing an array item shifts its siblings, so another fix addressing one by index conflicts."""
    remove = issue("V1", fix=[{"op": "remove", "path": "/segments/1"}])
    assert isinstance(plan_fixes([remove, replace("V2", "/segments/2/end_page", 4)]), Conflict)


def test_operations_of_one_issue_never_conflict_with_each_other() -> None:
    """A test-then-replace fix of one issue is a single intention, not a conflict."""
    fix = [{"op": "test", "path": "/x", "value": 0}, {"op": "replace", "path": "/x", "value": 1}]
    fixed, _ = apply_fixes({"x": 0}, plan(issue("V1", fix=fix)))
    assert fixed == {"x": 1}


def test_non_fixable_issues_are_ignored() -> None:
    """Only auto-fixable issues contribute; with none, the plan is empty and falsy."""
    made = plan(issue("V1", Severity.MAJOR), issue("V3", Severity.MINOR))
    assert not made
    assert made.records == []


def test_plan_order_is_deterministic() -> None:
    """The merged patch does not depend on the order the issues arrive in."""
    fixes = [replace("V4", "/a", 1), replace("V1", "/b", 2), replace("V2", "/c", 3)]
    assert plan(*fixes).patch == plan(*reversed(fixes)).patch


def test_before_and_after_are_recorded() -> None:
    """Each record holds the value at each patched path before and after the fix."""
    made = plan(
        replace("V1", "/segments/0/segment_page_count", 2),
        issue("V2", fix=[{"op": "add", "path": "/types/-", "value": {"t": "ADMIN"}}]),
        issue("V2", fix=[{"op": "add", "path": "/note", "value": "n"}]),
    )
    data = {"segments": [{"segment_page_count": 5}], "types": [{"t": "LAB"}]}
    fixed, records = apply_fixes(data, made)
    by_code = {r.patch[0]["path"]: r for r in records}
    assert by_code["/segments/0/segment_page_count"].before == {"/segments/0/segment_page_count": 5}
    assert by_code["/segments/0/segment_page_count"].after == {"/segments/0/segment_page_count": 2}
    assert by_code["/types/-"].before == {"/types/-": None}
    assert by_code["/types/-"].after == {"/types/-": {"t": "ADMIN"}}
    assert by_code["/note"].before == {"/note": None}
    assert fixed["note"] == "n"


def test_merged_fix_is_recorded_for_both_issues() -> None:
    """When two issues share one operation, both records show its before and after."""
    _, records = apply_fixes({"x": 0}, plan(replace("V1", "/x", 1), replace("V2", "/x", 1)))
    assert [r.after for r in records] == [{"/x": 1}, {"/x": 1}]
    assert [r.before for r in records] == [{"/x": 0}, {"/x": 0}]


def test_apply_does_not_modify_the_input() -> None:
    """The input classification is left as it was: fixes go to a deep copy."""
    data = {"segments": [{"segment_page_count": 5}]}
    apply_fixes(data, plan(replace("V1", "/segments/0/segment_page_count", 2)))
    assert data == {"segments": [{"segment_page_count": 5}]}


@pytest.mark.parametrize(
    "fix",
    [
        pytest.param([{"op": "replace", "path": "/missing/deep", "value": 1}], id="missing-path"),
        pytest.param([{"op": "remove", "path": "/segments/9"}], id="index-out-of-range"),
        pytest.param([{"op": "frobnicate", "path": "/x"}], id="unknown-op"),
        pytest.param([{"op": "replace", "path": "x", "value": 1}], id="bad-pointer"),
        pytest.param([{"op": "test", "path": "/secret", "value": "other"}], id="failed-test"),
    ],
)
def test_a_patch_that_cannot_apply_fails_plainly(fix: list) -> None:
    """A fix that cannot be applied raises PatchFailed naming the issue, without the document's values."""
    bad = issue("V2", fix=fix, code="V2.SEGMENT_SHARES_SUM")
    with pytest.raises(PatchFailed) as caught:
        apply_fixes({"segments": [], "secret": "Jane Doe", "x": 0}, plan(bad))
    assert bad.issue_id in str(caught.value)
    assert "V2.SEGMENT_SHARES_SUM" in str(caught.value)
    assert "Jane Doe" not in str(caught.value)


def test_fingerprint_ignores_key_order() -> None:
    """The fingerprint is of canonical JSON: key order and whitespace do not matter."""
    assert fingerprint({"a": 1, "b": [1, {"c": "é", "d": None}]}) == fingerprint(
        {"b": [1, {"d": None, "c": "é"}], "a": 1}
    )


def test_fingerprint_changes_with_any_value() -> None:
    """A change of one value changes the fingerprint."""
    assert fingerprint({"a": 1}) != fingerprint({"a": 1.5})
    assert len(fingerprint({"a": 1})) == 64


def test_fingerprint_of_non_json_falls_back_to_text() -> None:
    """Something json cannot serialise still gets a stable fingerprint instead of an error."""
    assert fingerprint({1, 2}) == fingerprint({1, 2})
    assert fingerprint("not json {") == fingerprint("not json {")
