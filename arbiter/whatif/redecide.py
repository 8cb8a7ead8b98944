"""The re-decided path: a recorded document's stored attempts decided again under a candidate profile by
the real policy code (arbiter.decide.policy) and the governor's stop rules, with no verifier run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from arbiter.contracts import Counts, Decision, Issue, StopReason, VerifierResult
from arbiter.contracts.profile import Profile
from arbiter.decide.autofix import apply_fixes, plan_fixes
from arbiter.decide.policy import GUARD_RULE, _unsafe_because, decide
from arbiter.whatif.history import Recorded
from arbiter.whatif.paths import ACCEPT, ESCALATE, NOT_VERIFIED, REDECIDED, REFOCUSED, RETRY, Simulated

# Stops the governor reaches from the planned fixes alone: the same issues plan the same fixes.
_PLANNED_STOPS = {
    StopReason.CONFLICTING_PATCHES.value,
    StopReason.NO_FIX_AVAILABLE.value,
    StopReason.PATCH_FAILED.value,
    StopReason.REPEATED_FINGERPRINT.value,
}


# Light stand-ins for the stored results: policy.decide reads only these attributes, and StrEnum members
# compare and hash like their string values, so the recorded JSON is decided by the real policy code.
@dataclass(slots=True)
class _Location:
    segment_index: int | None
    document_type: str | None


@dataclass(slots=True)
class _Issue:
    severity: str
    auto_fixable: bool
    code: str
    location: _Location


@dataclass(slots=True)
class _Result:
    verifier: str
    status: str
    llm_phase: str
    issues: list[_Issue]


def _results(stored: Sequence[dict[str, Any]]) -> list[VerifierResult]:
    out = [
        _Result(
            r.get("verifier", ""),
            r.get("status", ""),
            r.get("llm_phase", "NOT_APPLICABLE"),
            [
                _Issue(
                    i.get("severity", ""),
                    bool(i.get("auto_fixable")),
                    i.get("code", ""),
                    _Location(
                        (i.get("location") or {}).get("segment_index"),
                        (i.get("location") or {}).get("document_type"),
                    ),
                )
                for i in r.get("issues") or ()
            ],
        )
        for r in stored
    ]
    return cast(list[VerifierResult], out)


def _serious(counts: Any) -> int:
    return int(counts.major + counts.blocker)


Recheck = Callable[[int, list[dict[str, Any]]], list[dict[str, Any]] | None]
Adjust = Callable[[int, dict[str, Any]], dict[str, Any] | None]
COUNT_NAMES = tuple(Counts.model_fields)


@dataclass(slots=True, frozen=True)
class _Decided:
    decision: str
    rule: str
    serious: int


def decide_counts(counts: dict[str, Any], profile: Profile) -> _Decided:
    """policy.decide on the counts it recorded: the first rule whose bounds hold, then the same fail-closed
    guard. Valid while the candidate counts as the recording policy did (same required_verifiers,
    require_llm_phases and require_primary_evidence); the caller reads every issue otherwise. Each distinct
    count vector is decided once per profile: a history holds few of them (most documents are clean, or
    fail alike)."""
    key = tuple(int(counts.get(name) or 0) for name in COUNT_NAMES)
    entry = _DECIDED.get(id(profile))
    if entry is None or entry[0] is not profile:
        if len(_DECIDED) > 8:
            _DECIDED.clear()
        entry = _DECIDED[id(profile)] = (profile, {})
    seen = entry[1]
    decided = seen.get(key)
    if decided is None:
        decided = seen[key] = _decide_values(dict(zip(COUNT_NAMES, key, strict=True)), profile)
    return decided


_DECIDED: dict[int, tuple[Profile, dict[tuple[int, ...], _Decided]]] = {}


def _decide_values(values: dict[str, int], profile: Profile) -> _Decided:
    rule = next(r for r in profile.arbiter.rules if all(b.holds(values[n]) for n, b in r.when.items()))
    serious = values["major"] + values["blocker"]
    if _unsafe_because(Decision(rule.decision), Counts(**values)):
        return _Decided(ESCALATE, GUARD_RULE, serious)
    return _Decided(rule.decision, rule.name, serious)


def _decide_attempt(
    j: int, attempt: dict[str, Any], profile: Profile, recheck: Recheck | None, adjust: Adjust | None
) -> _Decided | None:
    if "verifier_results" not in attempt:  # slim: the recorded counts
        counts = (attempt.get("decision") or {}).get("counts")
        if not isinstance(counts, dict):
            return None
        if adjust is not None:
            counts = adjust(j, counts)
            if counts is None:
                return None
        return decide_counts(counts, profile)
    results = attempt.get("verifier_results") or []
    if recheck is not None:
        rechecked = recheck(j, results)
        if rechecked is None:
            return None
        results = rechecked
    decided = decide(_results(results), profile)
    return _Decided(decided.decision.value, decided.rule, _serious(decided.counts))


def redecide(
    doc: Recorded,
    profile: Profile,
    recheck: Recheck | None = None,
    *,
    outcome: dict[str, Any] | None = None,
    adjust: Adjust | None = None,
) -> Simulated | None:
    """The candidate's decision from the stored attempts alone (`outcome`: slim or whole, default the
    document's), or None when it needs a version the run never verified, or an attempt cannot be decided
    from what was read (the caller reads more, or re-verifies). `recheck` (whole results) or `adjust`
    (slim counts) apply a focused re-check to each attempt."""
    outcome = doc.outcome if outcome is None else outcome
    attempts = outcome.get("attempts") or []
    if doc.error or not attempts or doc.reason == "internal_error":
        return Simulated(doc.decision, doc.reason or doc.decision, doc.reason, 0, NOT_VERIFIED)
    previous: _Decided | None = None
    path = REDECIDED if recheck is None and adjust is None else REFOCUSED
    for j, attempt in enumerate(attempts):
        decided = _decide_attempt(j, attempt, profile, recheck, adjust)
        if decided is None:
            return None
        if decided.decision == ACCEPT:
            return Simulated(ACCEPT, decided.rule, None, j, path)
        if decided.decision == ESCALATE:
            return Simulated(ESCALATE, decided.rule, decided.rule, j, path)
        if previous is not None and decided.serious >= previous.serious:
            stop = StopReason.NO_PROGRESS.value
            return Simulated(ESCALATE, stop, stop, j, path)
        if j + 1 >= profile.retry.max_retries + 1:
            stop = StopReason.MAX_RETRIES.value
            return Simulated(ESCALATE, stop, stop, j, path)
        if j + 1 < len(attempts):
            previous = decided
            continue
        if outcome.get("overflow"):
            return None  # more attempts were recorded than the slim reading holds
        stored_stop = outcome.get("stop_reason")
        recorded = (attempt.get("decision") or {}).get("decision")
        if recorded == RETRY and stored_stop in _PLANNED_STOPS:
            return Simulated(ESCALATE, stored_stop, stored_stop, j, path)
        return None
    return None  # pragma: no cover - the loop always returns


def classification_at(
    primary: dict[str, Any] | None, outcome: dict[str, Any], attempt: int
) -> dict[str, Any] | None:
    """The version of the classification an attempt verified: the primary's with the fixes planned from
    each earlier attempt applied (the last attempt's is the stored final classification)."""
    attempts = outcome.get("attempts") or []
    if attempts and attempt == len(attempts) - 1 and isinstance(outcome.get("final_classification"), dict):
        return cast(dict[str, Any], outcome["final_classification"])
    data: Any = primary
    for j in range(attempt):
        if not isinstance(data, dict):
            return None
        issues = [
            Issue.model_validate(i)
            for r in attempts[j].get("verifier_results") or ()
            for i in r.get("issues") or ()
            if i.get("auto_fixable")
        ]
        plan = plan_fixes(issues)
        if not hasattr(plan, "patch"):
            return None
        try:
            data, _ = apply_fixes(data, plan)  # type: ignore[arg-type]
        except Exception:
            return None
    return data if isinstance(data, dict) else None
