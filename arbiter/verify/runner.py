"""Runs the verifiers V1–V4 concurrently and turns a crash into an ERRORED result (docs/design.md §5.1).

A crash message never repeats the exception's text: it may quote the document, i.e. patient data.
PhaseDeferred (batch mode queued an LLM request) is not a crash: it propagates once every verifier ended.
Anything else a check raises — SystemExit, GeneratorExit, a KeyboardInterrupt raised by code — is a crash
too; only the operator's interrupt (a KeyboardInterrupt on the main thread of a process that takes Ctrl+C)
goes through. An ingestion worker ignores SIGINT (its parent stops the run), so there every
KeyboardInterrupt is code misbehaving: ERRORED like any other crash, never an internal error.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from time import perf_counter
from typing import Any

from arbiter.contracts import DocumentBundle, Issue, Location, Severity, VerifierResult, VerifierStatus
from arbiter.contracts.profile import PolicyProfile
from arbiter.diagnostics import where
from arbiter.verifiers.base import Subject, Verifier, VerifyContext
from arbiter.verifiers.llm_phase import PhaseDeferred

log = logging.getLogger(__name__)


def is_operator_interrupt(exc: BaseException) -> bool:
    """Ctrl+C (and SIGTERM turned into it) arrives as a KeyboardInterrupt on the main thread of a process
    that takes SIGINT; on any other thread, in a process that ignores SIGINT (an ingestion worker), and for
    any other BaseException, it is code misbehaving."""
    if not isinstance(exc, KeyboardInterrupt) or threading.current_thread() is not threading.main_thread():
        return False
    return signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


class InlineExecutor(Executor):
    """Runs each submitted call at once on the caller's thread (the seed's V1→V2→V3→V4 in sequence).

    Used when no verifier can wait on a language model: rules-only checks are CPU-bound, so threads
    would only add start-up and GIL hand-over costs.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


INLINE = InlineExecutor()


class _Done:
    """A call already made on this thread: its value, or the exception that result() raises again."""

    __slots__ = ("_error", "_value")

    def __init__(self, value: Any, error: BaseException | None) -> None:
        self._value = value
        self._error = error

    @classmethod
    def of(cls, fn: Callable[..., Any], /, *args: Any) -> _Done:
        try:
            return cls(fn(*args), None)
        except BaseException as exc:  # as Future.set_exception: kept until result() is asked for
            return cls(None, exc)

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


def run_verifiers(
    subject: Subject,
    bundle: DocumentBundle,
    profile: PolicyProfile,
    verifiers: Sequence[Verifier],
    context: VerifyContext,
    *,
    executor: Executor | None = None,
) -> list[VerifierResult]:
    """Every verifier's result, in the verifiers' order; never raises for a verifier's fault."""
    if not verifiers:
        return []
    if executor is None and len(verifiers) == 1:
        return [_run_one(verifiers[0], subject, bundle, profile, context)]
    if executor is not None:
        return _run_on(executor, subject, bundle, profile, verifiers, context)
    with ThreadPoolExecutor(max_workers=len(verifiers), thread_name_prefix="verifier") as pool:
        return _run_on(pool, subject, bundle, profile, verifiers, context)


def _run_on(
    executor: Executor,
    subject: Subject,
    bundle: DocumentBundle,
    profile: PolicyProfile,
    verifiers: Sequence[Verifier],
    context: VerifyContext,
) -> list[VerifierResult]:
    futures: list[Future[VerifierResult] | _Done | None] = []
    inline = type(executor) is InlineExecutor
    for verifier in verifiers:
        if inline:
            # What InlineExecutor.submit does, without a Future (and its lock) per verifier.
            futures.append(_Done.of(_run_one, verifier, subject, bundle, profile, context))
            continue
        try:
            futures.append(executor.submit(_run_one, verifier, subject, bundle, profile, context))
        except RuntimeError:
            # A pool that was shut down under us: still check the document, just not in parallel.
            futures.append(None)
    results = []
    deferred: PhaseDeferred | None = None
    for verifier, future in zip(verifiers, futures, strict=True):
        try:
            if future is None:
                results.append(_run_one(verifier, subject, bundle, profile, context))
            else:
                results.append(future.result())
        except PhaseDeferred as exc:
            # Wait for the others first, so every deferred request of this document is queued at once.
            deferred = deferred or exc
        except BaseException as exc:  # _run_one catches everything; this is a cancelled or broken pool
            if is_operator_interrupt(exc):
                raise
            results.append(errored_result(verifier, exc, 0.0))
    if deferred is not None:
        raise deferred
    return results


def _run_one(
    verifier: Verifier,
    subject: Subject,
    bundle: DocumentBundle,
    profile: PolicyProfile,
    context: VerifyContext,
) -> VerifierResult:
    started = perf_counter()
    try:
        outcome = verifier.verify(subject, bundle, profile, context)
    except PhaseDeferred:
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, … from a check are crashes like any other
        if is_operator_interrupt(exc):
            raise
        return errored_result(verifier, exc, _ms_since(started))
    elapsed = _ms_since(started)
    name = verifier_name(verifier)
    if not isinstance(outcome, VerifierResult):
        return errored_result(
            verifier, None, elapsed, note=f"returned {type(outcome).__name__}, not a result"
        )
    if outcome.verifier != name:
        # A result filed under another name would make this check look as if it ran.
        return errored_result(verifier, None, elapsed, note="returned a result under another verifier's name")
    return outcome.model_copy(update={"duration_ms": elapsed})


def errored_result(
    verifier: Verifier, exc: BaseException | None, duration_ms: float, *, note: str | None = None
) -> VerifierResult:
    """ERRORED plus a `<name>.VERIFIER_ERROR` BLOCKER: the check could not run, which is never a pass."""
    name = verifier_name(verifier)
    kind = type(exc).__name__ if exc is not None else "bad result"
    notes = [f"{name} raised {kind}" + (f" {where(exc)}" if exc is not None else "")]
    if note:
        notes.append(f"{name} {note}")
    log.warning("verifier %s failed: %s", name, "; ".join(notes))
    issue = Issue(
        issue_id=f"{name}-0001",
        code=f"{name}.VERIFIER_ERROR",
        verifier=name,
        severity=Severity.BLOCKER,
        message=f"The {name} check crashed ({kind}) and could not check this document; "
        "a person must review it.",
        location=Location(path=""),
    )
    return VerifierResult(
        verifier=name,
        version=str(getattr(verifier, "version", "unknown")),
        status=VerifierStatus.ERRORED,
        issues=[issue],
        score=0.0,
        duration_ms=duration_ms,
        notes=notes,
    )


def verifier_name(verifier: object) -> str:
    return str(getattr(verifier, "name", None) or type(verifier).__name__)


def _ms_since(started: float) -> float:
    return (perf_counter() - started) * 1000.0
