"""arbiter/net, the seams every remote service shares: the retry loop and its policy, Retry-After, Google
error bodies. (The limiter and the switch are tested with their callers: test_llm_client, test_network_guard.)"""

from __future__ import annotations

import contextlib
import random

import pytest

from arbiter.net import google
from arbiter.net.retry import Retryable, RetryPolicy, call_with_retries, retry_after_s

POLICY = RetryPolicy(
    attempts=4, rate_limit_attempts=2, base_delay_s=1.0, max_delay_s=4.0, max_retry_after_s=30
)


class Flaky:
    """Fails with the given Retryables in turn, then answers "ok"; counts its calls."""

    def __init__(self, *failures: Retryable) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def _retry(*failures: Retryable) -> tuple[Flaky, list[float]]:
    flaky, sleeps = Flaky(*failures), []
    with contextlib.suppress(RuntimeError):
        call_with_retries(flaky, POLICY, sleep=sleeps.append, rng=random.Random(0), label="test")
    return flaky, sleeps


def test_a_later_success_is_returned_after_backoff_within_the_ceiling() -> None:
    """Two failed attempts are retried after jittered, growing delays; the third answer is returned."""
    sleeps: list[float] = []
    answer = call_with_retries(
        Flaky(Retryable(RuntimeError("a")), Retryable(RuntimeError("b"))),
        POLICY,
        sleep=sleeps.append,
        rng=random.Random(0),
    )
    assert answer == "ok"
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 1.0
    assert 1.0 <= sleeps[1] <= 2.0


def test_the_last_error_is_raised_after_all_attempts() -> None:
    """A call failing every time makes `attempts` attempts, then raises the carried error, not the wrapper."""
    flaky = Flaky(*[Retryable(RuntimeError(f"try {n}")) for n in range(1, 6)])
    with pytest.raises(RuntimeError, match="try 4"):
        call_with_retries(flaky, POLICY, sleep=lambda _: None)
    assert flaky.calls == 4


def test_rate_limited_failures_get_their_own_smaller_limit() -> None:
    """A failure marked rate_limited ends the call after rate_limit_attempts."""
    flaky, sleeps = _retry(*[Retryable(RuntimeError("429"), rate_limited=True) for _ in range(4)])
    assert (flaky.calls, len(sleeps)) == (2, 1)


def test_the_servers_delay_wins_and_a_too_long_one_ends_the_call() -> None:
    """A Retry-After within max_retry_after_s is waited exactly; a longer one ends the call at once."""
    flaky, sleeps = _retry(Retryable(RuntimeError("503"), 7.0))
    assert (flaky.calls, sleeps) == (2, [7.0])
    flaky, sleeps = _retry(Retryable(RuntimeError("503"), 31.0))
    assert (flaky.calls, sleeps) == (1, [])


def test_other_exceptions_end_the_call_at_once_and_before_attempt_runs_every_time() -> None:
    """Only Retryable is retried; before_attempt (a limiter's acquire) runs before each attempt."""
    booked: list[int] = []

    def attempt() -> str:
        if not booked or len(booked) < 2:
            raise Retryable(RuntimeError("again"))
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        call_with_retries(attempt, POLICY, sleep=lambda _: None, before_attempt=lambda: booked.append(1))
    assert len(booked) == 2


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(header: str | None, expected: float | None) -> None:
    """Retry-After in seconds or as an HTTP date (counted from `now`); anything else is None."""
    assert retry_after_s(header, now=lambda: 1445412480.0) == expected


def test_google_error_bodies_are_summarised_without_their_length() -> None:
    """' STATUS: message' with whitespace collapsed and long messages cut; '' for anything else."""
    body = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "Bad\n  input " + "x" * 300}}
    summary = google.body_summary(body)
    assert summary.startswith(" INVALID_ARGUMENT: Bad input x")
    assert len(summary) == len(" INVALID_ARGUMENT: ") + 200
    assert summary.endswith("…")
    assert google.body_summary({"error": "text"}) == ""
    assert google.body_summary(None) == ""
    assert google.summary(None, "only a message") == " only a message"


def test_api_key_invalid_is_read_from_error_info() -> None:
    """A 400 whose ErrorInfo reason is API_KEY_INVALID says the key was refused; other reasons do not."""
    entry = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
    assert google.api_key_invalid({"error": {"details": [entry]}})
    assert google.api_key_invalid([entry])
    assert not google.api_key_invalid({"error": {"details": [{**entry, "reason": "OTHER"}]}})
