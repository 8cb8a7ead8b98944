"""Requests-per-minute limiter shared by every caller of one service, with a pause for the server's 429 delay.

Each acquire() books the next free slot (GCRA, a token bucket in time form), so callers are served in
order without a thundering herd; penalise() moves every slot to after the server's retry delay.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """At most `rpm` requests a minute after an initial burst of `burst`; rpm 0 means unlimited."""

    def __init__(
        self,
        rpm: int,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rpm = rpm
        self.interval = 60.0 / rpm if rpm > 0 else 0.0
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = clock()  # theoretical arrival time of the next request
        self._paused_until = float("-inf")
        self.waited_s = 0.0  # total time callers spent waiting, for the run summary and tests

    def acquire(self) -> None:
        """Block until this caller may send one request."""
        while True:
            with self._lock:
                now = self._clock()
                slack = (self.burst - 1) * self.interval
                start = max(now, self._next - slack, self._paused_until)
                self._next = max(self._next, start) + self.interval
                wait = start - now
                self.waited_s += wait
            if wait > 0:
                self._sleep(wait)
            with self._lock:
                # a 429 may have arrived while this caller slept: then it books a slot after the pause
                if self._clock() >= self._paused_until:
                    return

    def penalise(self, retry_after_s: float) -> None:
        """Pause every caller until `retry_after_s` from now (the server's retry delay on a 429)."""
        with self._lock:
            until = self._clock() + max(0.0, retry_after_s)
            if until > self._paused_until:
                self._paused_until = until
                self._next = max(self._next, until)

    @property
    def paused_until(self) -> float:
        with self._lock:
            return self._paused_until
