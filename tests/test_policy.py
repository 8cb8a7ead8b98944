"""V5: issue counting, the default rule table of the medical profile, and the fail-closed guard."""

from __future__ import annotations

import json

import pytest

from arbiter.contracts import (
    Decision,
    FinalDecision,
    Location,
    PhaseStatus,
    Severity,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.decide.policy import GUARD_RULE, count_issues, decide
from tests.governor_helpers import NAMES, issue, replace, result, rules_profile
from tests.v34_helpers import PROFILE, classification, make_bundle, make_page, segment

B, M, m = Severity.BLOCKER, Severity.MAJOR, Severity.MINOR
ACCEPT, RETRY, ESCALATE = Decision.AUTO_ACCEPT, Decision.AUTO_RETRY, Decision.ESCALATE_TO_SME


def results_for(
    *,
    blocker: int = 0,
    fixable: int = 0,
    non_fixable: int = 0,
    minor: int = 0,
    errored: tuple[str, ...] = (),
    skipped: tuple[str, ...] = (),
    missing: tuple[str, ...] = (),
) -> list[VerifierResult]:
    """Results of V1..V4 carrying these issues (spread over the verifiers) and statuses."""
    made = (
        [issue("V1", B) for _ in range(blocker)]
        + [replace("V2", f"/x{n}", n) for n in range(fixable)]
        + [issue("V4", M) for _ in range(non_fixable)]
        + [issue("V3", m) for _ in range(minor)]
    )
    out = []
    for name in NAMES:
        if name in missing:
            continue
        mine = [i for i in made if i.verifier == name]
        if name in errored:
            out.append(result(name, [*mine, issue(name, B)], VerifierStatus.ERRORED))
        elif name in skipped:
            out.append(result(name, mine, VerifierStatus.SKIPPED))
        else:
            out.append(result(name, mine))
    return out


# Every rule of the default medical profile, including the edges of each bound.
DEFAULT_TABLE = [
    pytest.param({}, ACCEPT, "clean", id="none"),
    pytest.param({"minor": 1}, ACCEPT, "minor_only", id="one-minor"),
    pytest.param({"minor": 7}, ACCEPT, "minor_only", id="many-minor"),
    pytest.param({"fixable": 1}, RETRY, "fixable_major", id="fixable-1"),
    pytest.param({"fixable": 2}, RETRY, "fixable_major", id="fixable-2"),
    pytest.param({"fixable": 3}, ESCALATE, "too_many_major", id="fixable-3"),
    pytest.param({"fixable": 2, "minor": 3}, RETRY, "fixable_major", id="fixable-2-with-minor"),
    pytest.param({"non_fixable": 1}, ESCALATE, "non_fixable_major", id="non-fixable-1"),
    pytest.param({"non_fixable": 2}, ESCALATE, "several_non_fixable_major", id="non-fixable-2"),
    pytest.param({"fixable": 1, "non_fixable": 1}, ESCALATE, "non_fixable_major", id="mixed-majors"),
    pytest.param({"fixable": 2, "non_fixable": 1}, ESCALATE, "too_many_major", id="three-majors"),
    pytest.param({"blocker": 1}, ESCALATE, "blocker_present", id="blocker"),
    pytest.param({"blocker": 1, "minor": 2}, ESCALATE, "blocker_present", id="blocker-with-minor"),
    pytest.param({"errored": ("V2",)}, ESCALATE, "verifier_errored", id="errored"),
    pytest.param({"errored": ("V1",), "fixable": 1}, ESCALATE, "verifier_errored", id="errored-beats-retry"),
    pytest.param({"skipped": ("V4",)}, ESCALATE, "check_not_run", id="skipped"),
    pytest.param({"missing": ("V3",)}, ESCALATE, "check_not_run", id="missing"),
    pytest.param(
        {"skipped": ("V2",), "blocker": 1}, ESCALATE, "blocker_present", id="blocker-before-not-run"
    ),
    pytest.param({"skipped": ("V2",), "minor": 1}, ESCALATE, "check_not_run", id="not-run-beats-minor"),
]


@pytest.mark.parametrize(("counts", "expected", "rule"), DEFAULT_TABLE)
def test_default_rules(counts: dict, expected: Decision, rule: str) -> None:
    """The medical profile's rules decide as docs/design.md §6.1 says, naming the rule that fired."""
    profile = load_profile()
    decision = decide(results_for(**counts), profile)
    assert (decision.decision, decision.rule) == (expected, rule)
    assert decision.policy_version == profile.arbiter.policy_version
    named = next(r for r in profile.arbiter.rules if r.name == rule)
    assert decision.reason == named.reason


def test_counts_by_severity_and_fixability() -> None:
    """Counts cover every severity, split majors by fixability and total all issues."""
    counts = count_issues(results_for(blocker=1, fixable=2, non_fixable=1, minor=3), NAMES)
    assert counts.model_dump() == {
        "blocker": 1,
        "major": 3,
        "major_fixable": 2,
        "major_non_fixable": 1,
        "minor": 3,
        "total": 7,
        "errored": 0,
        "not_run": 0,
        "budget_exhausted": 0,
    }


def test_budget_exhausted_escalates_with_its_own_rule() -> None:
    """A verifier whose LLM phase ran out of budget escalates with rule budget_exhausted, even with no issues."""
    results = results_for()
    results[1] = results[1].model_copy(update={"llm_phase": PhaseStatus.BUDGET_EXHAUSTED})
    decision = decide(results, load_profile())
    assert decision.decision == Decision.ESCALATE_TO_SME
    assert decision.rule == "budget_exhausted"
    assert decision.counts.budget_exhausted == 1


def test_not_run_counts_errored_skipped_and_missing() -> None:
    """A required verifier that crashed, was skipped or is absent has not run; an unrequired one is ignored."""
    results = [*results_for(errored=("V1",), skipped=("V2",), missing=("V3",)), result("EXTRA", [])]
    counts = count_issues(results, [*NAMES, "V1"])
    assert (counts.errored, counts.not_run) == (1, 3)


def test_safety_fallback_is_reached_when_no_rule_fits() -> None:
    """A profile whose rules fit nothing ends in the unconditional escalating fallback."""
    profile = rules_profile(
        [{"name": "clean", "when": {"total": {"max": 0}}, "decision": "AUTO_ACCEPT", "reason": "ok"}]
    )
    decision = decide(results_for(minor=1), profile)
    assert (decision.decision, decision.rule) == (ESCALATE, "safety_fallback")


ACCEPT_ALL = {
    "name": "accept_all",
    "when": {"total": {"min": 0}},
    "decision": "AUTO_ACCEPT",
    "reason": "Anything goes.",
}
RETRY_ALL = {
    "name": "retry_all",
    "when": {"total": {"min": 0}},
    "decision": "AUTO_RETRY",
    "reason": "Always fix.",
}


@pytest.mark.parametrize(
    ("rule", "counts"),
    [
        pytest.param(ACCEPT_ALL, {"errored": ("V2",)}, id="accept-errored"),
        pytest.param(ACCEPT_ALL, {"skipped": ("V4",)}, id="accept-not-run"),
        pytest.param(ACCEPT_ALL, {"missing": ("V1",)}, id="accept-missing"),
        pytest.param(ACCEPT_ALL, {"blocker": 1}, id="accept-blocker"),
        pytest.param(ACCEPT_ALL, {"fixable": 1}, id="accept-major"),
        pytest.param(ACCEPT_ALL, {"non_fixable": 1}, id="accept-non-fixable-major"),
        pytest.param(RETRY_ALL, {"errored": ("V3",)}, id="retry-errored"),
        pytest.param(RETRY_ALL, {"skipped": ("V1",)}, id="retry-not-run"),
        pytest.param(RETRY_ALL, {"blocker": 2}, id="retry-blocker"),
    ],
)
def test_fail_closed_guard_overrides_a_bad_profile(rule: dict, counts: dict) -> None:
    """Whatever the profile says, a crash, a check not run, a blocker (or a major, for accept) escalates."""
    decision = decide(results_for(**counts), rules_profile([rule]))
    assert (decision.decision, decision.rule) == (ESCALATE, GUARD_RULE)
    assert rule["name"] in decision.reason


@pytest.mark.parametrize(
    ("rule", "counts", "expected"),
    [
        pytest.param(ACCEPT_ALL, {"minor": 2}, ACCEPT, id="accept-minor"),
        pytest.param(RETRY_ALL, {"non_fixable": 1}, RETRY, id="retry-major"),
    ],
)
def test_fail_closed_guard_lets_safe_decisions_stand(rule: dict, counts: dict, expected: Decision) -> None:
    """The guard does not interfere where the profile's decision is safe."""
    decision = decide(results_for(**counts), rules_profile([rule]))
    assert (decision.decision, decision.rule) == (expected, rule["name"])


def unproven_primary(segment: int = 2, doc_type: str = "CLINICAL_NOTE") -> VerifierResult:
    """V1's finding that a segment's primary type has no evidence."""
    found = issue("V1", m, code="V1.PRIMARY_EVIDENCE_MISSING").model_copy(
        update={"location": Location(segment_index=segment, document_type=doc_type)}
    )
    return result("V1", [found])


@pytest.mark.parametrize(
    ("required", "others", "expected", "rule"),
    [
        pytest.param(True, {}, ESCALATE, "non_fixable_major", id="required-alone"),
        pytest.param(True, {"minor": 2}, ESCALATE, "non_fixable_major", id="required-with-minor"),
        pytest.param(
            True, {"non_fixable": 1}, ESCALATE, "several_non_fixable_major", id="required-with-major"
        ),
        pytest.param(False, {}, ACCEPT, "minor_only", id="not-required"),
    ],
)
def test_primary_type_without_evidence(required: bool, others: dict, expected: Decision, rule: str) -> None:
    """With require_primary_evidence a primary type with no evidence escalates, saying which and why."""
    profile = load_profile()
    profile = profile.model_copy(
        update={"arbiter": profile.arbiter.model_copy(update={"require_primary_evidence": required})}
    )
    results = [unproven_primary(), *results_for(**others)[1:]]
    decision = decide(results, profile)
    assert (decision.decision, decision.rule) == (expected, rule)
    if required:
        assert "Segment 2's primary type, CLINICAL_NOTE, has no evidence" in decision.reason
        assert "this profile requires evidence" in decision.reason
    else:
        assert "CLINICAL_NOTE" not in decision.reason


def test_require_primary_evidence_is_on_by_default() -> None:
    """The medical profile requires evidence for every primary type."""
    assert load_profile().arbiter.require_primary_evidence is True


def test_primary_without_evidence_escalates_through_the_verify_chain() -> None:
    """A correct type quoted with no evidence is escalated by the real verifiers and governor, not accepted."""
    data = classification(segment(1, 1, "CLINICAL_NOTE", {}))
    pages = [
        ("Office Visit - Progress Note", "heading"),
        ("Chief Complaint: cough for two weeks.", "paragraph"),
        ("Assessment and Plan", "heading"),
        ("Rest and fluids; follow up in one week.", "paragraph"),
    ]
    outcome = verify_with_retries(
        json.dumps(data).encode(), make_bundle(make_page(1, paragraphs=pages)), PROFILE
    )
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    codes = {i.code for r in outcome.attempts[0].verifier_results for i in r.issues}
    assert codes == {"V1.PRIMARY_EVIDENCE_MISSING"}
    assert outcome.escalation_reason == "non_fixable_major"
    assert "Segment 1's primary type, CLINICAL_NOTE, has no evidence" in (outcome.escalation_message or "")
