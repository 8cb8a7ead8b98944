"""V5, the arbiter: counts issues and applies the profile's rules; the first match wins (docs/design.md §6.1).

A guard in code, independent of the profile, never lets a document be accepted or retried while a
check crashed, a required check did not run or a critical problem stands.
"""

from __future__ import annotations

from collections.abc import Sequence

from arbiter.contracts import (
    ArbiterDecision,
    Counts,
    Decision,
    PhaseStatus,
    Severity,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import PolicyProfile
from arbiter.contracts.verification import MODEL_JUDGED, has_semantic_phase

GUARD_RULE = "fail_closed_guard"

_NOT_RUN = (VerifierStatus.ERRORED, VerifierStatus.SKIPPED)
# Phase states counted elsewhere: an errored phase makes its verifier ERRORED; an exhausted budget has a count.
_PHASE_COUNTED = (PhaseStatus.ERRORED, PhaseStatus.BUDGET_EXHAUSTED)
# A segment's primary type with no evidence: a minor finding, unless the profile requires that evidence.
PRIMARY_EVIDENCE_MISSING = "V1.PRIMARY_EVIDENCE_MISSING"


def model_phase_not_run(results: Sequence[VerifierResult], required: Sequence[str]) -> list[str]:
    """Required verifiers that ran but whose language-model phase did not (skipped, or none recorded)."""
    names = []
    for name in dict.fromkeys(required):
        mine = [result for result in results if result.verifier == name and has_semantic_phase(result)]
        if any(
            result.status not in _NOT_RUN
            and result.llm_phase not in MODEL_JUDGED
            and result.llm_phase not in _PHASE_COUNTED
            for result in mine
        ):
            names.append(name)
    return names


def count_issues(
    results: Sequence[VerifierResult],
    required: Sequence[str],
    *,
    require_llm_phases: bool = False,
    require_primary_evidence: bool = False,
) -> Counts:
    """Issues by severity and fixability, plus crashed verifiers and required checks that did not run.

    With `require_llm_phases`, a required verifier whose language-model phase did not run counts as not run;
    with `require_primary_evidence`, a primary type with no evidence counts as a major that cannot be fixed.
    """
    blocker = major = major_fixable = minor = total = 0
    for result in results:
        for issue in result.issues:
            total += 1
            if require_primary_evidence and issue.code == PRIMARY_EVIDENCE_MISSING:
                major += 1
            elif issue.severity == Severity.BLOCKER:
                blocker += 1
            elif issue.severity == Severity.MAJOR:
                major += 1
                major_fixable += int(issue.auto_fixable)
            else:
                minor += 1
    errored = sum(result.status == VerifierStatus.ERRORED for result in results)
    budget = sum(result.llm_phase == PhaseStatus.BUDGET_EXHAUSTED for result in results)
    not_run = 0
    for name in dict.fromkeys(required):
        mine = [result for result in results if result.verifier == name]
        if not mine or any(result.status in _NOT_RUN for result in mine):
            not_run += 1
    if require_llm_phases:
        not_run += len(model_phase_not_run(results, required))
    return Counts(
        blocker=blocker,
        major=major,
        major_fixable=major_fixable,
        major_non_fixable=major - major_fixable,
        minor=minor,
        total=total,
        errored=errored,
        not_run=not_run,
        budget_exhausted=budget,
    )


def decide(results: Sequence[VerifierResult], profile: PolicyProfile) -> ArbiterDecision:
    """The first rule whose every bound holds decides; the fail-closed guard may override it to escalate."""
    policy = profile.arbiter
    counts = count_issues(
        results,
        policy.required_verifiers,
        require_llm_phases=policy.require_llm_phases,
        require_primary_evidence=policy.require_primary_evidence,
    )
    no_model = model_phase_not_run(results, policy.required_verifiers) if policy.require_llm_phases else []
    unproven = _primary_evidence_sentence(results) if policy.require_primary_evidence else ""
    values = counts.model_dump()
    # The profile guarantees an unconditional last rule, so a rule always matches.
    rule = next(r for r in policy.rules if all(bound.holds(values[name]) for name, bound in r.when.items()))
    decision = Decision(rule.decision)
    unsafe = _unsafe_because(decision, counts)
    if unsafe:
        verb = "accepted" if decision == Decision.AUTO_ACCEPT else "fixed automatically"
        return ArbiterDecision(
            decision=Decision.ESCALATE_TO_SME,
            rule=GUARD_RULE,
            reason=f"The policy rule '{rule.name}' would have {verb} this document although {unsafe}; "
            "escalated to be safe." + unproven + _no_model_sentence(no_model),
            counts=counts,
            policy_version=policy.policy_version,
        )
    reason = rule.reason
    if decision == Decision.ESCALATE_TO_SME:
        reason += unproven + _no_model_sentence(no_model)
    return ArbiterDecision(
        decision=decision,
        rule=rule.name,
        reason=reason,
        counts=counts,
        policy_version=policy.policy_version,
    )


def _no_model_sentence(names: Sequence[str]) -> str:
    """Why a check counts as not run under require_llm_phases, in plain English ('' when none)."""
    if not names:
        return ""
    which = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    phases, them = ("phase", "it") if len(names) == 1 else ("phases", "them")
    return (
        f" The language-model {phases} of {which} did not run (rules only, no model), and this profile "
        f"requires {them} (require_llm_phases)."
    )


def _primary_evidence_sentence(results: Sequence[VerifierResult]) -> str:
    """Which segments name a primary type with no evidence, in plain English ('' when none)."""
    missing = [
        (issue.location.segment_index, issue.location.document_type)
        for result in results
        for issue in result.issues
        if issue.code == PRIMARY_EVIDENCE_MISSING
    ]
    if not missing:
        return ""
    if len(missing) == 1:
        ((segment, doc_type),) = missing
        which = f"Segment {segment}'s primary type, {doc_type}, has"
    else:
        named = [f"segment {segment} ({doc_type})" for segment, doc_type in missing]
        which = f"The primary types of {', '.join(named[:-1])} and {named[-1]} have"
    return (
        f" {which} no evidence quoted from the document, and this profile requires evidence for every "
        "primary type (require_primary_evidence)."
    )


def _unsafe_because(decision: Decision, counts: Counts) -> str | None:
    """Why this decision must not stand with these counts, or None when it may."""
    if decision == Decision.ESCALATE_TO_SME:
        return None
    if counts.budget_exhausted:
        return "the token budget ran out before every check could run"
    if counts.errored:
        return "a check crashed"
    if counts.not_run:
        return "a required check did not run"
    if counts.blocker:
        return "a critical problem was found"
    if decision == Decision.AUTO_ACCEPT and counts.major:
        return "major problems remain"
    return None
