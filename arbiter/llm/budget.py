"""Token budgets per document and per run: a request must fit in what is left before it is sent.

Exhaustion raises BudgetExhausted, which the verifiers record as BUDGET_EXHAUSTED (an escalation, not an error).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from arbiter.llm.port import BudgetExhausted

Scope = Literal["document", "run"]


@dataclass(frozen=True)
class Reservation:
    """Tokens held for one request in flight; settle() swaps them for what the request really used."""

    tokens: int


class TokenBudget:
    """A thread-safe token allowance. A limit of None or 0 means unlimited (usage is still counted)."""

    def __init__(self, limit: int | None, *, scope: Scope = "document") -> None:
        self.limit = limit or None
        self.scope = scope
        self._used = 0
        self._reserved = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    @property
    def remaining(self) -> int | None:
        with self._lock:
            return None if self.limit is None else max(0, self.limit - self._used - self._reserved)

    def reserve(self, estimate: int) -> Reservation:
        """Hold `estimate` tokens, or raise BudgetExhausted when they do not fit in what is left."""
        estimate = max(0, estimate)
        with self._lock:
            if self.limit is not None and self._used + self._reserved + estimate > self.limit:
                left = max(0, self.limit - self._used - self._reserved)
                raise BudgetExhausted(
                    f"{self._owner()} token budget ({self.limit:,}) is used up."
                    f" The next request needs about {estimate:,} tokens and {left:,} are left."
                )
            self._reserved += estimate
        return Reservation(estimate)

    def settle(self, reservation: Reservation, actual_tokens: int) -> None:
        """Release the reservation and charge what the request really used (0 when it failed unbilled)."""
        with self._lock:
            self._reserved -= reservation.tokens
            self._used += max(0, actual_tokens)

    def release(self, reservation: Reservation) -> None:
        self.settle(reservation, 0)

    def _owner(self) -> str:
        return "This document's" if self.scope == "document" else "The run's"
