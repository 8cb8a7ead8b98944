"""Transport retries for every remote service: one policy (attempts, exponential backoff with full jitter,
the server's own delay when it gives one) and one loop.

An attempt that may succeed if tried again raises Retryable carrying the error to raise if none does;
any other exception ends the call at once. The loop sleeps through an injected `sleep`, so tests count
the pauses without waiting.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from arbiter.errors import ServiceError

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Transport retries: exponential backoff with full jitter; the server's retry delay wins when given."""

    attempts: int = 4  # the first try plus three retries (5xx, timeouts, connection errors)
    # 429s get fewer when the caller shares a rate limiter: it then pauses every caller for the server's
    # delay, which beats each thread sleeping on its own (only failures marked rate_limited count here).
    rate_limit_attempts: int = 2
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 60.0  # a server asking for a longer pause ends the call

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay before retry number `attempt` (1-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return float(ceiling / 2 + rng.uniform(0, ceiling / 2))

    def limit(self, failure: Retryable) -> int:
        """How many attempts a call failing this way gets in all."""
        return self.rate_limit_attempts if failure.rate_limited else self.attempts


class Retryable(ServiceError):
    """One failed attempt that may succeed if tried again; carries the error to raise if it never does."""

    def __init__(
        self, error: Exception, retry_after_s: float | None = None, *, rate_limited: bool = False
    ) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after_s = retry_after_s
        self.rate_limited = rate_limited


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    before_attempt: Callable[[], None] | None = None,
    label: str = "",
) -> T:
    """`attempt()`'s answer, retried on Retryable by `policy`; the last Retryable's error otherwise.

    `before_attempt` runs before every attempt (a rate limiter's acquire); `label` names the call in the
    log (never its content).
    """
    rng = rng or random.Random()
    number = 0
    while True:
        number += 1
        if before_attempt is not None:
            before_attempt()
        try:
            return attempt()
        except Retryable as failure:
            wait = failure.retry_after_s
            if number >= policy.limit(failure) or (wait is not None and wait > policy.max_retry_after_s):
                log.warning(
                    "%s: giving up after %d attempt(s) (%s)", label, number, type(failure.error).__name__
                )
                raise failure.error from None
            delay = wait if wait is not None else policy.backoff(number, rng)
            log.info("%s: retry attempt=%d delay_s=%.2f", label, number, delay)
            sleep(delay)


def retry_after_s(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a Retry-After header asks to wait (seconds or an HTTP date), or None."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())
