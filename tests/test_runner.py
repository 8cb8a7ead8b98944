"""The verifier runner: concurrency, order, its own duration measurement and the mapping of a crash to ERRORED."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from arbiter.contracts import Severity, VerifierStatus
from arbiter.contracts.profile import load_profile
from arbiter.verifiers.base import VerifyContext
from arbiter.verify import runner
from arbiter.verify.runner import run_verifiers
from tests.governor_helpers import CrashingVerifier, FakeVerifier, GatedVerifier, bundle, issue, subject


def run(verifiers, **kwargs):
    return run_verifiers(subject(), bundle(), load_profile(), verifiers, VerifyContext(), **kwargs)


def test_verifiers_run_concurrently() -> None:
    """Two verifiers that must meet at a barrier both pass: they ran at the same time."""
    barrier = threading.Barrier(2)
    results = run([GatedVerifier("V1", barrier=barrier), GatedVerifier("V2", barrier=barrier)])
    assert [r.status for r in results] == [VerifierStatus.PASSED, VerifierStatus.PASSED]


def test_results_keep_the_verifiers_order() -> None:
    """Results come back in the order of the verifiers, not the order they finish."""
    finished: list[str] = []
    last = GatedVerifier("V3", finished=finished)
    middle = GatedVerifier("V2", after=last, finished=finished)
    first = GatedVerifier("V1", after=middle, finished=finished)
    results = run([first, middle, last])
    assert finished == ["V3", "V2", "V1"]
    assert [(r.verifier, r.status) for r in results] == [
        ("V1", VerifierStatus.PASSED),
        ("V2", VerifierStatus.PASSED),
        ("V3", VerifierStatus.PASSED),
    ]


class FakeClock:
    """Stands in for the runner's perf_counter: time moves only when a test advances it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_duration_is_measured_by_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """duration_ms is the runner's own measurement of each verifier, whatever the verifier reports."""
    clock = FakeClock()
    monkeypatch.setattr(runner, "perf_counter", clock)
    (slow,) = run([GatedVerifier("V1", work=lambda: clock.advance(0.25))])
    (crashed,) = run([CrashingVerifier("V2")])
    assert slow.duration_ms == pytest.approx(250.0)
    assert crashed.duration_ms == 0.0


def test_a_shared_executor_is_used_and_left_open() -> None:
    """A caller's executor runs the verifiers and stays usable afterwards."""
    first, second = GatedVerifier("V1"), GatedVerifier("V2")
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="shared") as pool:
        run([first, second], executor=pool)
        assert pool.submit(lambda: 1).result() == 1
    assert first.threads[0].startswith("shared")


def test_a_single_verifier_runs_inline() -> None:
    """With one verifier and no executor, no thread is started."""
    only = GatedVerifier("V1")
    run([only])
    assert only.threads == [threading.current_thread().name]


def test_no_verifiers_no_results() -> None:
    """An empty list of verifiers gives an empty list of results."""
    assert run([]) == []


def test_a_crash_becomes_errored_with_a_blocker() -> None:
    """A verifier that raises gives ERRORED, score 0 and one <name>.VERIFIER_ERROR BLOCKER."""
    ok, crashed = run([FakeVerifier("V1", [[issue("V1")]]), CrashingVerifier("V3", error=ValueError)])
    assert ok.status == VerifierStatus.FAILED
    assert crashed.status == VerifierStatus.ERRORED
    assert crashed.score == 0.0
    (only,) = crashed.issues
    assert (only.code, only.severity, only.verifier) == ("V3.VERIFIER_ERROR", Severity.BLOCKER, "V3")
    assert only.message == (
        "The V3 check crashed (ValueError) and could not check this document; a person must review it."
    )


def test_a_crash_never_repeats_the_exception_text() -> None:
    """The exception's text (which may quote the patient) appears in neither message nor notes."""
    (crashed,) = run([CrashingVerifier("V2")])
    shown = " ".join([crashed.issues[0].message, *crashed.notes])
    assert "Jane" not in shown
    assert "1950" not in shown
    assert any("KeyError" in note for note in crashed.notes)


@pytest.mark.parametrize(
    "returned",
    [None, {"verifier": "V1"}, "PASSED"],
    ids=["none", "dict", "text"],
)
def test_a_result_of_the_wrong_type_is_errored(returned: object) -> None:
    """A verifier returning something other than a VerifierResult did not check the document."""

    class Odd(FakeVerifier):
        def verify(self, *args, **kwargs):
            return returned

    (odd,) = run([Odd("V1")])
    assert odd.status == VerifierStatus.ERRORED
    assert odd.issues[0].code == "V1.VERIFIER_ERROR"


def test_a_result_under_another_name_is_errored() -> None:
    """A result filed under another verifier's name cannot stand in for this verifier."""
    (res,) = run([_Renamed()])
    assert res.status == VerifierStatus.ERRORED
    assert res.verifier == "V2"


class _Renamed(FakeVerifier):
    """Claims to be V2 but files its result as V4."""

    def __init__(self) -> None:
        super().__init__("V2")

    def verify(self, *args, **kwargs):
        return FakeVerifier("V4").verify(*args, **kwargs)


ESCAPES = [SystemExit, KeyboardInterrupt, GeneratorExit]


@pytest.mark.parametrize("error", ESCAPES, ids=lambda e: e.__name__)
def test_a_check_raising_a_base_exception_is_errored(error: type[BaseException]) -> None:
    """Issue 14.7: SystemExit, KeyboardInterrupt or GeneratorExit raised by a check (on a verifier thread) is
    ERRORED with a blocker, never the end of the run."""
    ok, crashed = run([FakeVerifier("V1", [[]]), CrashingVerifier("V3", error=error)])  # type: ignore[arg-type]
    assert ok.status == VerifierStatus.PASSED
    assert crashed.status == VerifierStatus.ERRORED
    assert crashed.issues[0].code == "V3.VERIFIER_ERROR"
    assert error.__name__ in crashed.issues[0].message


@pytest.mark.parametrize("error", ESCAPES, ids=lambda e: e.__name__)
def test_a_base_exception_on_a_document_thread_is_errored_inline(error: type[BaseException]) -> None:
    """The same on the inline executor, run on a batch's document thread (rules-only checks run there)."""
    from arbiter.verify.runner import INLINE

    out: list[object] = []
    worker = threading.Thread(
        target=lambda: out.extend(run([CrashingVerifier("V2", error=error)], executor=INLINE))  # type: ignore[arg-type]
    )
    worker.start()
    worker.join()
    (crashed,) = out
    assert crashed.status == VerifierStatus.ERRORED  # type: ignore[attr-defined]


@pytest.mark.parametrize("error", [SystemExit, GeneratorExit], ids=lambda e: e.__name__)
def test_system_exit_on_the_main_thread_is_errored(error: type[BaseException]) -> None:
    """A single check runs inline on the caller's thread: SystemExit there is a crash too."""
    (crashed,) = run([CrashingVerifier("V2", error=error)])  # type: ignore[arg-type]
    assert crashed.status == VerifierStatus.ERRORED


def test_the_operators_interrupt_on_the_main_thread_goes_through() -> None:
    """Ctrl+C arrives as a KeyboardInterrupt on the main thread: that one stops the work."""
    with pytest.raises(KeyboardInterrupt):
        run([CrashingVerifier("V2", error=KeyboardInterrupt)])  # type: ignore[arg-type]
