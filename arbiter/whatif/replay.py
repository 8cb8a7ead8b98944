"""Re-deciding one recorded document under a candidate profile, with no language model.

Two paths (each document's is reported):

- re-decided: the candidate changes only the policy ([arbiter], [retry], [sampling]) and every attempt it
  needs was recorded. The stored issues of each attempt are decided again by arbiter.decide.policy.decide and the
  governor's stop rules (no progress, max retries, and the recorded stop when the same fixes were planned).
- re-verified: the candidate changes what a verifier checks (taxonomy, tolerances, traps, vendors,
  content), or it asks for a fixed version the run never verified. The real retry governor runs again
  from the stored bundle and the primary's stored classification; each verifier returns its recorded
  result when its settings did not change and it saw this exact version (same fingerprint); otherwise its
  rules run again, and the recorded findings of its language-model phase (issues with source=llm) are
  added back. A version the model never saw has no model findings: the document is named as needing them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from arbiter.contracts import (
    Counts,
    Decision,
    DocumentBundle,
    Issue,
    IssueSource,
    StopReason,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import Profile
from arbiter.contracts.verification import MODEL_JUDGED
from arbiter.decide.autofix import apply_fixes, fingerprint, plan_fixes, raw_fingerprint
from arbiter.decide.policy import GUARD_RULE, _unsafe_because, decide
from arbiter.whatif.history import Recorded
from verifiers.base import Subject, Verifier, VerifyContext

ACCEPT, RETRY, ESCALATE = (
    Decision.AUTO_ACCEPT.value,
    Decision.AUTO_RETRY.value,
    Decision.ESCALATE_TO_SME.value,
)
REDECIDED = "re-decided from stored issues"
REVERIFIED = "re-verified (rules only) from the stored bundle"
NOT_VERIFIED = "kept: the document was never verified (input failure)"
KEPT = (
    "kept: the candidate needs a version that was never verified, and no bundle or classification is stored"
)
STORED_ONLY = "re-decided from stored issues (no bundle or classification stored to re-verify)"

# The profile sections each verifier's rules (and prompts) read; [baseline] is the classifier's only.
VERIFIER_SECTIONS: dict[str, tuple[str, ...]] = {
    "V1": ("taxonomy",),
    "V2": ("taxonomy", "tolerances", "content", "traps"),
    "V3": ("taxonomy", "tolerances", "traps", "vendors", "content"),
    "V4": ("taxonomy", "tolerances", "content", "traps"),
}
# Stops the governor reaches from the planned fixes alone: the same issues plan the same fixes.
_PLANNED_STOPS = {
    StopReason.CONFLICTING_PATCHES.value,
    StopReason.NO_FIX_AVAILABLE.value,
    StopReason.PATCH_FAILED.value,
    StopReason.REPEATED_FINGERPRINT.value,
}
_LLM = IssueSource.LLM.value


def changed_sections(current: Profile, candidate: Profile) -> list[str]:
    """The profile sections whose settings differ (name and version left out)."""
    names = [name for name in Profile.model_fields if name not in ("name", "version")]
    return [name for name in names if getattr(current, name) != getattr(candidate, name)]


# [tolerances] is read field by field: a change to one of these re-runs only the verifiers that read it.
TOLERANCE_READERS: dict[str, tuple[str, ...]] = {
    "share_sum": ("V2",),
    "mixture_match": ("V2",),
    "dominant_tie": ("V2",),
    "min_dominant_confidence": ("V2",),
    "dominant_margin": ("V2",),
    "min_snippet_chars": ("V4",),
    "fuzzy_match_threshold": ("V3", "V4"),
}


def verifiers_to_rerun(current: Profile, candidate: Profile) -> set[str]:
    """The verifiers whose settings differ between the profiles (their rules must run again)."""
    out: set[str] = set()
    for section in changed_sections(current, candidate):
        if section == "tolerances":
            for name in type(current.tolerances).model_fields:
                if getattr(current.tolerances, name) != getattr(candidate.tolerances, name):
                    out.update(TOLERANCE_READERS.get(name, VERIFIER_SECTIONS))
            continue
        out.update(name for name, sections in VERIFIER_SECTIONS.items() if section in sections)
    return out


@dataclass(slots=True)
class Simulated:
    """A document's decision under one profile."""

    decision: str  # AUTO_ACCEPT or ESCALATE_TO_SME
    rule: str  # the accepting rule, or the escalation reason (a rule or a stop)
    reason: str | None  # escalation_reason as the run would record it (None when accepted)
    attempt: int  # index of the deciding attempt (0: the primary's own answer)
    path: str
    classification: dict[str, Any] | None = None  # the decided version, when re-verified
    needs_llm: bool = False
    llm_reused: bool = False


# Light stand-ins for the stored results: policy.decide reads only these attributes, and StrEnum members
# compare and hash like their string values, so the recorded JSON is decided by the real policy code.
@dataclass(slots=True)
class _Issue:
    severity: str
    auto_fixable: bool


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
            [_Issue(i.get("severity", ""), bool(i.get("auto_fixable"))) for i in r.get("issues") or ()],
        )
        for r in stored
    ]
    return cast(list[VerifierResult], out)


def _serious(counts: Any) -> int:
    return int(counts.major + counts.blocker)


Recheck = Callable[[int, list[dict[str, Any]]], list[dict[str, Any]] | None]
Adjust = Callable[[int, dict[str, Any]], dict[str, Any] | None]
COUNT_NAMES = tuple(Counts.model_fields)


@dataclass(slots=True)
class _Decided:
    decision: str
    rule: str
    serious: int


def decide_counts(counts: dict[str, Any], profile: Profile) -> _Decided:
    """policy.decide on the counts it recorded: the first rule whose bounds hold, then the same fail-closed
    guard. Valid while the candidate counts as the recording policy did (same required_verifiers and
    require_llm_phases); the caller reads every issue otherwise."""
    values = {name: int(counts.get(name) or 0) for name in COUNT_NAMES}
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


@dataclass
class _Tracker:
    had_llm: bool
    fresh: int = 0
    needs_llm: bool = False
    llm_reused: bool = False


class ReplayVerifier:
    """A verifier that answers from the record when it may, and runs its rules (no model) when it must."""

    def __init__(
        self,
        real: Verifier,
        stored: dict[str, dict[str, dict[str, Any]]],
        rerun: bool,
        tracker: _Tracker,
    ) -> None:
        self.real = real
        self.name = real.name
        self.version = real.version
        self.output_file = real.output_file
        self.stored = stored
        self.rerun = rerun
        self.tracker = tracker

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        key = raw_fingerprint(subject.raw) if subject.parse_error is not None else fingerprint(subject.data)
        stored = self.stored.get(key, {}).get(self.name)
        if stored is not None and not self.rerun:
            return VerifierResult.model_validate(stored)
        self.tracker.fresh += 1
        fresh = self.real.verify(subject, bundle, profile, VerifyContext())
        if stored is None:
            self.tracker.needs_llm |= self.tracker.had_llm and self.name in _PHASED
            return fresh
        llm_issues = [Issue.model_validate(i) for i in stored.get("issues") or () if i.get("source") == _LLM]
        phase = stored.get("llm_phase", fresh.llm_phase)
        if phase in MODEL_JUDGED or llm_issues:
            self.tracker.llm_reused = True
        if fresh.status not in (VerifierStatus.PASSED, VerifierStatus.FAILED):
            return fresh
        issues = [*fresh.issues, *llm_issues]
        status = VerifierStatus.FAILED if issues else VerifierStatus.PASSED
        return fresh.model_copy(update={"issues": issues, "status": status, "llm_phase": phase})


_PHASED = {"V2", "V3", "V4"}
# What the language-model phases' prompts read: a change there makes the recorded model findings stale.
LLM_SECTIONS = ("taxonomy", "content")


def had_llm(outcome: dict[str, Any]) -> bool:
    """The run's model judged at least one phase (its findings exist for the versions it saw)."""
    return any(
        r.get("llm_phase") in MODEL_JUDGED
        for a in outcome.get("attempts") or ()
        for r in a.get("verifier_results") or ()
    )


def load_bundle(path: str | None) -> DocumentBundle | None:
    if not path:
        return None
    try:
        return DocumentBundle.model_validate_json(Path(path).read_bytes())
    except (OSError, ValueError):
        return None


def reverify(
    doc: Recorded,
    profile: Profile,
    bundle: DocumentBundle,
    primary: dict[str, Any],
    rerun: set[str],
    verifiers: Sequence[Verifier],
    *,
    outcome: dict[str, Any],
    stale_llm: bool = False,
) -> Simulated:
    """The real governor, rules only, over replaying verifiers (see the module's docstring); `outcome` is
    the whole stored outcome (history.full_outcome)."""
    from arbiter.decide.governor import verify_with_retries

    stored: dict[str, dict[str, dict[str, Any]]] = {}
    for attempt in outcome.get("attempts") or ():
        mine = stored.setdefault(attempt.get("fingerprint", ""), {})
        for result in attempt.get("verifier_results") or ():
            mine.setdefault(result.get("verifier", ""), result)
    tracker = _Tracker(had_llm=had_llm(outcome))
    replaying = [ReplayVerifier(v, stored, v.name in rerun, tracker) for v in verifiers]
    result = verify_with_retries(
        json.dumps(primary, ensure_ascii=False), bundle, profile, verifiers=replaying, context=VerifyContext()
    )
    last = result.attempts[-1] if result.attempts else None
    accepted = result.final_decision.value == ACCEPT
    rule = last.decision.rule if accepted and last else (result.escalation_reason or ESCALATE)
    needs = tracker.needs_llm or (tracker.had_llm and stale_llm)
    return Simulated(
        ACCEPT if accepted else ESCALATE,
        rule,
        None if accepted else result.escalation_reason,
        len(result.attempts) - 1,
        REVERIFIED if tracker.fresh else REDECIDED,
        classification=result.final_classification,
        needs_llm=needs,
        llm_reused=tracker.llm_reused,
    )


# Focused re-checks -----------------------------------------------------------------------------------
# A threshold whose rule reads only the classification is checked again on each stored attempt's version,
# in place of that rule's stored findings: no bundle, no other rule. V2's primary-doubt rule
# (verifiers.v2_content.check_primary_doubt) reads only the segments' types, confidences and shares.
FOCUSED_FIELDS = frozenset({"min_dominant_confidence", "dominant_margin"})
FOCUSED_CODES = frozenset({"V2.PRIMARY_LOW_CONFIDENCE", "V2.PRIMARY_TYPE_TIE"})
REFOCUSED = "re-decided from stored issues, the changed V2 primary-doubt rule re-run on each stored version"


def focused_only(current: Profile, candidate: Profile) -> bool:
    """The candidate's verifier changes are all thresholds of a focused rule."""
    verifying = {s for sections in VERIFIER_SECTIONS.values() for s in sections}
    changed = [s for s in changed_sections(current, candidate) if s in verifying]
    if changed != ["tolerances"]:
        return False
    fields = {
        name
        for name in type(current.tolerances).model_fields
        if getattr(current.tolerances, name) != getattr(candidate.tolerances, name)
    }
    return bool(fields) and fields <= FOCUSED_FIELDS


@dataclass(slots=True)
class _Type:
    document_type: str
    share: float
    confidence: float


@dataclass(slots=True)
class _Segment:
    segment_index: int
    dominant_type: str
    types: list[_Type]


@dataclass(slots=True)
class _Model:
    segments: list[_Segment]


def _light(data: dict[str, Any]) -> _Model | None:
    try:
        return _Model(
            [
                _Segment(
                    int(s["segment_index"]),
                    str(s["dominant_type"]),
                    [
                        _Type(str(t["document_type"]), float(t["share"]), float(t["confidence"]))
                        for t in s["types"]
                    ],
                )
                for s in data["segments"]
            ]
        )
    except (KeyError, TypeError, ValueError):
        return None


def recheck_doubt(
    results: Sequence[dict[str, Any]], classification: dict[str, Any] | None, profile: Profile
) -> list[dict[str, Any]] | None:
    """The stored results with V2's primary-doubt findings replaced by the candidate's (None: the version
    cannot be read, so the caller re-verifies)."""
    from verifiers.base import IssueList
    from verifiers.v2_content import check_primary_doubt

    out = list(results)
    for index, v2 in enumerate(results):
        if v2.get("verifier") != "V2" or v2.get("status") not in (
            VerifierStatus.PASSED,
            VerifierStatus.FAILED,
        ):
            continue
        if classification is None:
            return None
        model = _light(classification)
        if model is None:
            return None
        kept = [i for i in v2.get("issues") or () if i.get("code") not in FOCUSED_CODES]
        found = IssueList("V2")
        found.items = [cast(Issue, None)] * len(kept)  # numbering continues after the stored issues
        check_primary_doubt(found, cast(Any, model), profile)
        new = [i.model_dump(mode="json") for i in found.items[len(kept) :]]
        issues = kept + new
        status = VerifierStatus.FAILED.value if issues else VerifierStatus.PASSED.value
        out[index] = {**v2, "issues": issues, "status": status}
    return out


def doubt_findings(segments: Any, profile: Profile) -> int | None:
    """How many primary-doubt findings check_primary_doubt makes of these segments (None: unreadable)."""
    from verifiers.base import IssueList
    from verifiers.v2_content import check_primary_doubt

    model = _light({"segments": segments}) if isinstance(segments, list) else None
    if model is None:
        return None
    found = _Tally()
    check_primary_doubt(cast(IssueList, found), cast(Any, model), profile)
    return found.count


class _Tally:
    """Stands in for an IssueList where only the number of findings matters."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, code: str, message: str, **_: Any) -> None:
        self.count += 1


def doubt_adjust(doc: Recorded, current: Profile, candidate: Profile) -> Adjust:
    """For slim attempts: the recorded counts with the primary-doubt findings of the recording profile
    replaced by the candidate's, on the last attempt's version (the stored final classification). Those
    findings are MAJOR and never fixable; an earlier attempt, or a second verifier that is not V2, gives
    None (the caller reads the whole outcome)."""
    attempts = doc.outcome.get("attempts") or []
    segments = doc.outcome.get("final_segments")

    def adjust(j: int, counts: dict[str, Any]) -> dict[str, Any] | None:
        second, status = (attempts[j].get("second") or [None, None])[:2]
        if second != "V2":
            return None
        if status not in (VerifierStatus.PASSED, VerifierStatus.FAILED):
            return counts  # V2's rules did not run on this version: nothing to re-check
        if j != len(attempts) - 1:
            return None
        before, after = doubt_findings(segments, current), doubt_findings(segments, candidate)
        if before is None or after is None:
            return None
        delta = after - before
        out = dict(counts)
        for name in ("major", "major_non_fixable", "total"):
            out[name] = max(0, int(out.get(name) or 0) + delta)
        return out

    return adjust
