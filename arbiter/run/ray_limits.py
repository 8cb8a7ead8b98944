"""One LLM rate limit and one run token budget for a whole Ray cluster, not one per node.

`RunLimits` runs as a single Ray actor for the run (arbiter/run/ray_engine.py starts it); each worker's LLM
client gets a `RemoteLimiter` and a `RemoteBudget` in place of its own, which ask that actor. The actor wraps
the same RateLimiter and TokenBudget the local engine uses, so the rules are the same ones.
"""

from __future__ import annotations

from typing import Any

from arbiter.llm.budget import Reservation, TokenBudget
from arbiter.llm.client import LLMClient
from arbiter.llm.port import BudgetExhausted
from arbiter.net.limiter import RateLimiter

HEAD_RESOURCE = "node:__internal_head__"  # a custom resource only the head node has


class RunLimits:
    """The run's limiter and token budget (a threaded Ray actor: a caller waiting for its slot sleeps in its
    own thread, so others can book theirs or report a 429 meanwhile)."""

    def __init__(self, rpm: int, burst: int, run_token_budget: int | None) -> None:
        self.limiter = RateLimiter(rpm, burst=burst)
        self.budget = TokenBudget(run_token_budget, scope="run")

    def acquire(self) -> float:
        """Block until the caller may send one request; returns the seconds all callers have waited so far."""
        self.limiter.acquire()
        return self.limiter.waited_s

    def penalise(self, retry_after_s: float) -> None:
        self.limiter.penalise(retry_after_s)

    def reserve(self, estimate: int) -> int | str:
        """The tokens held, or the budget's refusal message (an exception would arrive wrapped by Ray)."""
        try:
            return self.budget.reserve(estimate).tokens
        except BudgetExhausted as exhausted:
            return exhausted.message

    def settle(self, tokens: int, actual: int) -> None:
        self.budget.settle(Reservation(tokens), actual)

    def used(self) -> int:
        return self.budget.used

    def remaining(self) -> int | None:
        return self.budget.remaining


class RemoteLimiter(RateLimiter):
    """A RateLimiter whose slots are booked in the run's RunLimits actor."""

    def __init__(self, actor: Any) -> None:
        super().__init__(0)
        self._actor = actor

    def acquire(self) -> None:
        import ray

        self.waited_s = float(ray.get(self._actor.acquire.remote()))

    def penalise(self, retry_after_s: float) -> None:
        import ray

        ray.get(self._actor.penalise.remote(retry_after_s))


class RemoteBudget(TokenBudget):
    """The run's TokenBudget, kept in the RunLimits actor so every node spends from the same one."""

    def __init__(self, actor: Any, limit: int | None) -> None:
        super().__init__(limit, scope="run")
        self._actor = actor

    @property
    def used(self) -> int:
        import ray

        return int(ray.get(self._actor.used.remote()))

    @property
    def remaining(self) -> int | None:
        import ray

        left = ray.get(self._actor.remaining.remote())
        return None if left is None else int(left)

    def reserve(self, estimate: int) -> Reservation:
        import ray

        held = ray.get(self._actor.reserve.remote(estimate))
        if isinstance(held, str):
            raise BudgetExhausted(held)
        return Reservation(int(held))

    def settle(self, reservation: Reservation, actual_tokens: int) -> None:
        import ray

        ray.get(self._actor.settle.remote(reservation.tokens, actual_tokens))


def share_limits(client: LLMClient, actor: Any) -> None:
    """Make a worker's LLM client draw its rate limit and run budget from the run's RunLimits actor."""
    client.limiter = RemoteLimiter(actor)
    client.run_budget = RemoteBudget(actor, client.settings.run_token_budget)


def start_limits(client: LLMClient) -> Any:
    """The run's RunLimits actor: on the head node (a worker node may leave mid-run), restarted if lost, with
    no CPU of its own."""
    import ray

    settings = client.settings
    actor_class = ray.remote(RunLimits)
    return actor_class.options(
        num_cpus=0,
        resources={HEAD_RESOURCE: 0.001},
        max_concurrency=1000,
        max_restarts=-1,
    ).remote(settings.rpm, settings.concurrency, settings.run_token_budget)
