"""The re-verified path: the real retry governor run again, rules only, from the stored bundle and the
primary's stored classification. Each verifier returns its recorded result when its settings did not
change and it saw this exact version (same fingerprint); otherwise its rules run again, and the recorded
findings of its language-model phase (issues with source=llm) are added back. A version the model never
saw has no model findings: the document is named as needing them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import DocumentBundle, Issue, IssueSource, VerifierResult, VerifierStatus
from arbiter.contracts.profile import Profile
from arbiter.contracts.verification import MODEL_JUDGED
from arbiter.decide.autofix import fingerprint, raw_fingerprint
from arbiter.errors import ConfigError
from arbiter.outputs import location
from arbiter.verifiers.base import Subject, Verifier, VerifyContext
from arbiter.whatif.history import Recorded
from arbiter.whatif.paths import ACCEPT, ESCALATE, REDECIDED, REVERIFIED, Simulated

_LLM = IssueSource.LLM.value
_PHASED = {"V2", "V3", "V4"}


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
    try:  # a file, or object storage when the run's --out was a URL (arbiter/outputs.py)
        return DocumentBundle.model_validate_json(location(path).read_bytes())
    except (OSError, ValueError, ConfigError):
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
