"""The retry governor: verify, decide, auto-fix and verify again until accepted or escalated (docs/design.md §6.3).

Every stop names its reason. attempts[0] is always the primary's own answer; fixed versions follow it.
It never raises for a document: the worst outcome is an escalation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from time import perf_counter

from arbiter.contracts import (
    SEVERITY_ORDER,
    ArbiterDecision,
    Attempt,
    Decision,
    DocumentBundle,
    FinalDecision,
    Issue,
    StopReason,
    TokenUsage,
    VerificationOutcome,
    VerifierResult,
    semantic_checks_of,
)
from arbiter.contracts.profile import PolicyProfile
from arbiter.contracts.verification import SEMANTIC_VERIFIERS
from arbiter.decide.autofix import (
    Conflict,
    PatchFailed,
    apply_fixes,
    fingerprint,
    plan_fixes,
    raw_fingerprint,
)
from arbiter.decide.policy import decide
from arbiter.diagnostics import where
from arbiter.verifiers.base import Subject, Verifier, VerifyContext
from arbiter.verifiers.llm_phase import PhaseDeferred
from arbiter.verify.runner import INLINE, run_verifiers

log = logging.getLogger(__name__)

Loader = Callable[[str | bytes], Subject]

TOP_ISSUES = 3
INTERNAL_ERROR = "internal_error"


@dataclass
class _Stop:
    reason: StopReason
    message: str
    name: str | None = None  # escalation_reason; defaults to the stop reason's value


@dataclass
class _Run:
    """The loop's state, kept so that even an unexpected failure can report what was verified."""

    attempts: list[Attempt] = field(default_factory=list)
    subjects: list[Subject] = field(default_factory=list)
    verify_ms: float = 0.0


def verify_with_retries(
    raw: str | bytes,
    bundle: DocumentBundle,
    profile: PolicyProfile,
    *,
    verifiers: Sequence[Verifier] | None = None,
    context: VerifyContext | None = None,
    executor: Executor | None = None,
    loader: Loader | None = None,
) -> VerificationOutcome:
    """Verify one classification (raw JSON text) against its document, fixing and re-verifying on AUTO_RETRY.

    `loader` turns raw text into a Subject; the default is arbiter.contracts.schemas.load_subject.
    """
    started = perf_counter()
    run = _Run()
    checks: list[Verifier] = []
    try:
        checks = list(verifiers) if verifiers is not None else _default_verifiers()
        if executor is None and (context is None or context.llm is None):
            executor = INLINE  # nothing waits on a model: threads would only slow CPU-bound rules down
        with _pool(executor, len(checks)) as pool:
            stop = _loop(
                raw,
                bundle,
                profile,
                checks,
                context or VerifyContext(),
                pool,
                loader or _default_loader(),
                run,
            )
    except PhaseDeferred:
        raise  # batch mode: the document waits for its LLM answers; it is neither decided nor failed
    except Exception as exc:  # the last line of defence: a bug must not lose the document
        # Type and place only: the exception's text may quote the document.
        log.error("verifying %s failed unexpectedly: %s %s", bundle.doc_id, type(exc).__name__, where(exc))
        stop = _Stop(
            StopReason.ESCALATED_BY_POLICY,
            f"Arbiter could not finish checking this document ({type(exc).__name__}); "
            "a person must review it.",
            INTERNAL_ERROR,
        )
    return _outcome(bundle, profile, run, stop, started, phased_of(checks))


def phased_of(checks: Sequence[Verifier]) -> tuple[str, ...]:
    """The verifiers that have a language-model phase: each says so (`model_phase`), else by name (the
    medical kind's V2, V3 and V4). A grounded answer's V2 and V3 have none, so its accepts count as checked by
    rules and a model when its V4's phase judged."""
    if not checks:
        return SEMANTIC_VERIFIERS
    return tuple(c.name for c in checks if getattr(c, "model_phase", c.name in SEMANTIC_VERIFIERS))


def _loop(
    raw: str | bytes,
    bundle: DocumentBundle,
    profile: PolicyProfile,
    checks: list[Verifier],
    context: VerifyContext,
    pool: Executor | None,
    loader: Loader,
    run: _Run,
) -> _Stop:
    subject = _load(loader, raw)
    current = _fingerprint(subject)
    seen = {current}
    while True:
        began = perf_counter()
        results = run_verifiers(subject, bundle, profile, checks, context, executor=pool)
        run.verify_ms += (perf_counter() - began) * 1000.0
        decision = decide(results, profile)
        attempt = Attempt(
            attempt=len(run.attempts), fingerprint=current, verifier_results=results, decision=decision
        )
        run.attempts.append(attempt)
        run.subjects.append(subject)

        if decision.decision == Decision.AUTO_ACCEPT:
            return _Stop(StopReason.ACCEPTED, decision.reason)
        if decision.decision == Decision.ESCALATE_TO_SME:
            return _Stop(StopReason.ESCALATED_BY_POLICY, decision.reason, decision.rule)
        if len(run.attempts) >= 2:  # the previous attempt was an AUTO_RETRY, or the loop would have ended
            was, now = _serious(run.attempts[-2].decision), _serious(decision)
            if now >= was:
                return _Stop(
                    StopReason.NO_PROGRESS,
                    f"The automatic fixes did not reduce the serious problems (before: {was}, after: {now}).",
                )
        if len(run.attempts) >= profile.retry.max_retries + 1:
            return _Stop(
                StopReason.MAX_RETRIES,
                f"Automatic fixes were tried {profile.retry.max_retries} time(s) and problems remain.",
            )

        fixable = [issue for result in results for issue in result.issues if issue.auto_fixable]
        plan = plan_fixes(fixable)
        if isinstance(plan, Conflict):
            return _Stop(StopReason.CONFLICTING_PATCHES, plan.message)
        if not plan:
            return _Stop(
                StopReason.NO_FIX_AVAILABLE,
                "The policy asked for an automatic fix, but no problem came with one.",
            )
        if subject.parse_error is not None or subject.data is None:
            return _Stop(
                StopReason.PATCH_FAILED, "The classification could not be read, so it cannot be fixed."
            )
        try:
            fixed, records = apply_fixes(subject.data, plan)
        except PatchFailed as exc:
            return _Stop(StopReason.PATCH_FAILED, str(exc))
        attempt.fixes_applied = records

        current = fingerprint(fixed)
        if current in seen:
            return _Stop(
                StopReason.REPEATED_FINGERPRINT,
                "The automatic fixes led back to a version of the classification that was already checked, "
                "so fixing again would go round in circles.",
            )
        seen.add(current)
        subject = _load(loader, json.dumps(fixed, ensure_ascii=False))


def _outcome(
    bundle: DocumentBundle,
    profile: PolicyProfile,
    run: _Run,
    stop: _Stop,
    started: float,
    phased: tuple[str, ...] = SEMANTIC_VERIFIERS,
) -> VerificationOutcome:
    last = run.attempts[-1] if run.attempts else None
    results = [r for attempt in run.attempts for r in attempt.verifier_results]
    issues = _sorted_issues(last.verifier_results) if last else []
    accepted = stop.reason == StopReason.ACCEPTED
    escalation_reason = None if accepted else (stop.name or stop.reason.value)
    message = None if accepted else _with_findings(stop.message, issues)
    data = run.subjects[-1].data if run.subjects else None
    return VerificationOutcome(
        doc_id=bundle.doc_id,
        final_decision=FinalDecision.AUTO_ACCEPT if accepted else FinalDecision.ESCALATE_TO_SME,
        escalation_reason=escalation_reason,
        escalation_message=message,
        stop_reason=stop.reason,
        policy_version=profile.arbiter.policy_version,
        attempts=run.attempts,
        final_classification=data if isinstance(data, dict) else None,
        final_issues=issues,
        llm_usage=_usage(results),
        llm_calls=sum(r.llm_calls for r in results),
        timings={"verify_ms": run.verify_ms, "total_ms": (perf_counter() - started) * 1000.0},
        semantic_checks=semantic_checks_of(last.verifier_results if last else [], phased),
    )


def _serious(decision: ArbiterDecision) -> int:
    return decision.counts.major + decision.counts.blocker


def _sorted_issues(results: Sequence[VerifierResult]) -> list[Issue]:
    return sorted((i for r in results for i in r.issues), key=lambda i: SEVERITY_ORDER[i.severity])


def _with_findings(message: str, issues: Sequence[Issue]) -> str:
    """The stop reason plus the first few findings, most severe first, so the SME sees why at a glance."""
    if not issues:
        return message
    shown = " ".join(f"[{i.severity}] {i.message.rstrip('.')}." for i in issues[:TOP_ISSUES])
    more = f" And {len(issues) - TOP_ISSUES} more." if len(issues) > TOP_ISSUES else ""
    return f"{message} Main findings: {shown}{more}"


def _usage(results: Sequence[VerifierResult]) -> TokenUsage:
    return TokenUsage(
        input_tokens=sum(r.tokens.input_tokens for r in results),
        output_tokens=sum(r.tokens.output_tokens for r in results),
    )


def _load(loader: Loader, raw: str | bytes) -> Subject:
    """The loader's Subject; if the loader fails, an unread one, which V1 reports and the policy escalates."""
    try:
        return loader(raw)
    except Exception as exc:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        return Subject(raw=text, parse_error=f"The classification could not be read ({type(exc).__name__}).")


def _fingerprint(subject: Subject) -> str:
    if subject.parse_error is not None:
        return raw_fingerprint(subject.raw)
    return fingerprint(subject.data)


def _default_loader() -> Loader:
    from arbiter.contracts.schemas import load_subject

    return load_subject


def _default_verifiers() -> list[Verifier]:
    from arbiter.verifiers import default_verifiers

    return default_verifiers()


@contextmanager
def _pool(executor: Executor | None, size: int) -> Iterator[Executor | None]:
    """The caller's executor, or one pool for all attempts of this document (none for a single check)."""
    if executor is not None or size <= 1:
        yield executor
        return
    with ThreadPoolExecutor(max_workers=size, thread_name_prefix="verifier") as pool:
        yield pool
