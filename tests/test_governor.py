"""The retry governor: every stop reason, crash handling, re-verification with all verifiers, no raising."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import Decision, FinalDecision, Severity, StopReason, VerifierStatus
from arbiter.contracts.profile import Profile, load_profile
from arbiter.decide.autofix import fingerprint, raw_fingerprint
from arbiter.decide.governor import verify_with_retries
from tests.governor_helpers import (
    CrashingVerifier,
    FakeVerifier,
    bundle,
    fakes,
    issue,
    profile_with,
    replace,
    rules_profile,
    tiny_loader,
)

PRIMARY = {"x": 0, "y": 0}
PROFILE = load_profile()  # read once (~25 ms a read); verify_with_retries never changes it


def verify(verifiers: list, raw: Any = None, profile: Profile | None = None, **kwargs: Any):
    text = json.dumps(PRIMARY) if raw is None else raw
    kwargs.setdefault("loader", tiny_loader)
    return verify_with_retries(text, bundle(), profile or PROFILE, verifiers=verifiers, **kwargs)


def x_must_be_one(data: Any) -> list:
    """V2's view: a fixable MAJOR while x is not 1."""
    return [] if data.get("x") == 1 else [replace("V2", "/x", 1, message="x should be 1.")]


def test_accepted_first_time() -> None:
    """A clean answer is accepted on attempt 0 with no escalation reason."""
    outcome = verify(fakes())
    assert outcome.final_decision == FinalDecision.AUTO_ACCEPT
    assert outcome.stop_reason == StopReason.ACCEPTED
    assert (outcome.escalation_reason, outcome.escalation_message) == (None, None)
    assert len(outcome.attempts) == 1
    assert outcome.final_classification == PRIMARY
    assert outcome.doc_id == "doc-1"
    assert outcome.policy_version == load_profile().arbiter.policy_version


def test_accepted_after_fixes() -> None:
    """A fixable MAJOR is fixed, re-verified and accepted; the fix and its before/after are recorded."""
    outcome = verify(fakes(V2=x_must_be_one))
    assert outcome.final_decision == FinalDecision.AUTO_ACCEPT
    assert outcome.accepted_after_fixes
    first, second = outcome.attempts
    assert first.decision.decision == Decision.AUTO_RETRY
    (record,) = first.fixes_applied
    assert (record.before, record.after) == ({"/x": 0}, {"/x": 1})
    assert second.fixes_applied == []
    assert outcome.final_classification == {"x": 1, "y": 0}


def test_attempt_zero_is_always_the_primary() -> None:
    """attempts[0] carries the primary's own fingerprint; later attempts the fixed versions'."""
    outcome = verify(fakes(V2=x_must_be_one))
    assert outcome.attempts[0].fingerprint == fingerprint(PRIMARY)
    assert outcome.attempts[1].fingerprint == fingerprint({"x": 1, "y": 0})
    assert [a.attempt for a in outcome.attempts] == [0, 1]


def test_every_attempt_reruns_all_verifiers() -> None:
    """After a fix, every verifier checks the fixed version, not only the one that reported."""
    checks = fakes(V2=x_must_be_one)
    outcome = verify(checks)
    assert [check.calls for check in checks] == [[PRIMARY, {"x": 1, "y": 0}]] * 4
    assert all(len(a.verifier_results) == 4 for a in outcome.attempts)


def test_escalated_by_policy_names_the_rule_and_findings() -> None:
    """A non-fixable MAJOR escalates by its rule; the message gives the rule's reason and the finding."""
    outcome = verify(fakes(V3=[[issue("V3", message="The page addresses an AI model.")]]))
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.stop_reason == StopReason.ESCALATED_BY_POLICY
    assert outcome.escalation_reason == "non_fixable_major"
    assert outcome.escalation_message is not None
    assert outcome.escalation_message.startswith("A major problem needs human judgement.")
    assert "The page addresses an AI model." in outcome.escalation_message


def test_max_retries() -> None:
    """Fixes that keep helping but never finish stop at the retry limit."""
    script = [[replace("V2", "/x", 1), replace("V2", "/y", 1)], [replace("V2", "/x", 2)]]
    outcome = verify(fakes(V2=script), profile=profile_with(retry={"max_retries": 1}))
    assert outcome.stop_reason == StopReason.MAX_RETRIES
    assert outcome.escalation_reason == "max_retries"
    assert len(outcome.attempts) == 2
    assert outcome.attempts[-1].fixes_applied == []


def test_max_retries_with_the_default_limit() -> None:
    """With the default limit of 2 and a policy that retries up to 3 fixable majors, attempt 2 is the last."""
    retry_three = {
        "name": "retry",
        "when": {"major_fixable": {"min": 1, "max": 3}},
        "decision": "AUTO_RETRY",
        "reason": "r",
    }

    def add(path: str, value: int):
        return issue("V2", fix=[{"op": "add", "path": path, "value": value}])

    script = [[add("/a", 1), add("/b", 1), add("/c", 1)], [add("/a", 2), add("/b", 2)], [add("/a", 3)]]
    outcome = verify(fakes(V2=script), profile=rules_profile([retry_three]))
    assert outcome.stop_reason == StopReason.MAX_RETRIES
    assert len(outcome.attempts) == load_profile().retry.max_retries + 1


def test_repeated_fingerprint() -> None:
    """A fix that leads back to an already-checked version stops the loop as a cycle."""

    def flip(data: Any) -> list:
        if data["x"] == 0:  # two reports of one fault (identical fixes merge)
            return [replace("V2", "/x", 1), replace("V2", "/x", 1)]
        return [replace("V2", "/x", 0)]

    outcome = verify(fakes(V2=flip))
    assert outcome.stop_reason == StopReason.REPEATED_FINGERPRINT
    assert outcome.escalation_reason == "repeated_fingerprint"
    assert len(outcome.attempts) == 2
    assert outcome.attempts[1].fixes_applied  # the fix was recorded even though it went nowhere


def test_a_fix_that_changes_nothing_is_a_repeat() -> None:
    """A fix that leaves the classification unchanged is caught before verifying it again."""
    outcome = verify(fakes(V2=[[replace("V2", "/x", 0)]]))
    assert outcome.stop_reason == StopReason.REPEATED_FINGERPRINT
    assert len(outcome.attempts) == 1


def test_no_progress() -> None:
    """A fix after which the count of MAJOR+BLOCKER issues did not fall stops the loop."""
    outcome = verify(fakes(V2=lambda d: [replace("V2", "/x", d["x"] + 1)]))
    assert outcome.stop_reason == StopReason.NO_PROGRESS
    assert outcome.escalation_reason == "no_progress"
    assert len(outcome.attempts) == 2
    assert outcome.final_classification == {"x": 1, "y": 0}


def test_conflicting_patches() -> None:
    """Two fixes setting one path to different values stop the loop before anything is applied."""
    outcome = verify(fakes(V2=[[replace("V2", "/x", 1)]], V4=[[replace("V4", "/x", 2)]]))
    assert outcome.stop_reason == StopReason.CONFLICTING_PATCHES
    assert outcome.escalation_reason == "conflicting_patches"
    assert "/x" in (outcome.escalation_message or "")
    assert outcome.attempts[0].fixes_applied == []
    assert outcome.final_classification == PRIMARY


def test_patch_failed() -> None:
    """A fix that cannot be applied stops the loop with patch_failed."""
    outcome = verify(fakes(V2=[[replace("V2", "/nowhere/deep", 1)]]))
    assert outcome.stop_reason == StopReason.PATCH_FAILED
    assert outcome.escalation_reason == "patch_failed"
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME


def test_no_fix_available() -> None:
    """A policy that asks for a retry when no issue carries a fix stops with no_fix_available."""
    retry_majors = {
        "name": "retry_majors",
        "when": {"major": {"min": 1}},
        "decision": "AUTO_RETRY",
        "reason": "r",
    }
    outcome = verify(fakes(V4=[[issue("V4")]]), profile=rules_profile([retry_majors]))
    assert outcome.stop_reason == StopReason.NO_FIX_AVAILABLE
    assert outcome.escalation_reason == "no_fix_available"


def test_a_crashing_verifier_escalates() -> None:
    """A verifier crash is recorded as ERRORED and escalates by the verifier_errored rule."""
    checks = [*fakes()[:2], CrashingVerifier("V3"), FakeVerifier("V4")]
    outcome = verify(checks)
    statuses = {r.verifier: r.status for r in outcome.attempts[0].verifier_results}
    assert statuses["V3"] == VerifierStatus.ERRORED
    assert outcome.escalation_reason == "verifier_errored"
    assert "Jane" not in (outcome.escalation_message or "")
    assert outcome.final_issues[0].code == "V3.VERIFIER_ERROR"


def test_final_issues_are_sorted_by_severity() -> None:
    """Final issues are listed BLOCKER, then MAJOR, then MINOR."""
    outcome = verify(
        fakes(V1=[[issue("V1", Severity.MINOR)]], V2=[[issue("V2")]], V4=[[issue("V4", Severity.BLOCKER)]])
    )
    assert [i.severity for i in outcome.final_issues] == [Severity.BLOCKER, Severity.MAJOR, Severity.MINOR]


def test_timings_and_usage_are_reported() -> None:
    """The outcome reports verify and total time, and LLM usage summed over all results."""
    outcome = verify(fakes(V2=x_must_be_one))
    assert set(outcome.timings) >= {"verify_ms", "total_ms"}
    assert outcome.timings["total_ms"] >= outcome.timings["verify_ms"] >= 0
    assert outcome.llm_calls == 0


def test_a_failing_loader_still_escalates() -> None:
    """A loader that raises leaves an unread Subject, which a V1 blocker escalates."""

    def broken(raw: str | bytes) -> Any:
        raise RuntimeError("Patient Jane Doe")

    v1 = FakeVerifier("V1", lambda data: [] if data is not None else [issue("V1", Severity.BLOCKER)])
    outcome = verify([v1, *fakes()[1:]], loader=broken)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.final_classification is None


def test_an_internal_failure_is_an_escalation_not_an_exception() -> None:
    """A loader returning nonsense breaks the loop; the outcome still escalates, naming an internal error."""
    outcome = verify(fakes(), loader=lambda raw: 42)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.escalation_reason == "internal_error"


def test_the_real_loader_is_the_default() -> None:
    """Without a loader, arbiter.contracts.schemas.load_subject reads the raw text."""
    outcome = verify_with_retries("not json", bundle(), load_profile(), verifiers=fakes())
    assert outcome.final_classification is None
    assert outcome.attempts[0].fingerprint == raw_fingerprint("not json")


ALWAYS_BLOCKED = [FakeVerifier("V1", lambda data: [issue("V1", Severity.BLOCKER)]), *fakes()[1:]]


@given(raw=st.one_of(st.text(), st.binary()))
def test_any_text_never_raises_and_a_blocker_never_accepts(raw: str | bytes) -> None:
    """Arbitrary raw input never raises, and with V1 reporting a blocker it never auto-accepts."""
    outcome = verify_with_retries(raw, bundle(), PROFILE, verifiers=ALWAYS_BLOCKED)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.attempts[0].decision.decision == Decision.ESCALATE_TO_SME


@given(data=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4))
def test_arbitrary_json_with_fixes_never_raises(data: dict) -> None:
    """Whatever JSON object arrives, a fix-happy verifier leads to an outcome, never an exception."""
    checks = fakes(V2=lambda d: [replace("V2", "/x", 1)] if isinstance(d, dict) and d.get("x") != 1 else [])
    outcome = verify(checks, raw=json.dumps(data))
    assert outcome.final_decision in (FinalDecision.AUTO_ACCEPT, FinalDecision.ESCALATE_TO_SME)


@pytest.mark.parametrize("raw", [b"\xff\xfe", "", "[]", "null", '{"x": 0'])
def test_odd_raw_inputs_escalate_with_a_blocking_v1(raw: str | bytes) -> None:
    """Bytes that are not UTF-8, empty text, non-objects and broken JSON all end in escalation."""
    outcome = verify_with_retries(raw, bundle(), load_profile(), verifiers=ALWAYS_BLOCKED)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.escalation_reason == "blocker_present"


@given(raw=st.text(max_size=200))
def test_any_text_with_the_real_verifiers_never_raises_or_accepts(raw: str) -> None:
    """With the real V1–V4 and loader, arbitrary text ends in an escalation, never an exception."""
    outcome = verify_with_retries(raw, bundle(), PROFILE)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
