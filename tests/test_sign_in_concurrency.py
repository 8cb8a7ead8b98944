"""Issue 27.4 on both databases: sign-in throttling and lockout hold under a burst of simultaneous attempts,
each on its own connection: no more password checks than the throttle allows, and a locked account refuses
the right password even when it was being checked while the burst locked it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.store import Store
from arbiter.store import users as users_module
from arbiter.store.users import FREE_FAILURES, LOCKED

PASSWORD = "correct-horse-9"
BURST = 30


class CountingHasher:
    """The store's argon2 hasher, counting password checks (and holding one back while told to)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.checks = 0
        self.lock = threading.Lock()
        self.hold: Callable[[str], None] = lambda _password: None

    def verify(self, stored: str, password: str) -> bool:
        with self.lock:
            self.checks += 1
        self.hold(password)
        return bool(self.real.verify(stored, password))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture(name="hasher")
def hasher_fixture(monkeypatch: pytest.MonkeyPatch) -> CountingHasher:
    counting = CountingHasher(users_module._hasher)
    monkeypatch.setattr(users_module, "_hasher", counting)
    return counting


def burst(url: str, attempts: list[str]) -> list[Any]:
    """Every attempt at once, each on a thread with its own Store (its own engine and connections), all at
    one instant on the throttle's clock: on a loaded machine the threads may take longer than the throttle's
    first delay (1 s) to get through, and a later attempt would then rightly be allowed another check."""
    stores = [Store(url) for _ in attempts]
    for s in stores:
        s.users.get("warm-up")  # connect before the start line
    start = threading.Barrier(len(attempts))
    instant = datetime.now(UTC)
    results: list[Any] = [None] * len(attempts)

    def attempt(i: int) -> None:
        start.wait()
        results[i] = stores[i].users.attempt_sign_in("alice", attempts[i], client=f"10.0.0.{i}", now=instant)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(len(attempts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    for s in stores:
        s.dispose()
    return results


def test_a_burst_of_30_attempts_checks_three_passwords_and_locks(
    store: Store, hasher: CountingHasher
) -> None:
    """30 simultaneous wrong sign-ins check at most the three free passwords, lock the account, and the
    right password is refused afterwards."""
    store.users.add("alice", "reviewer", PASSWORD)
    hasher.checks = 0
    results = burst(store.url, ["wrong-password"] * BURST)
    assert all(r is not None and r.user is None for r in results)
    assert hasher.checks <= FREE_FAILURES
    assert store.users.get("alice").locked  # type: ignore[union-attr]
    refused = store.users.attempt_sign_in("alice", PASSWORD)
    assert (refused.user, refused.refusal) == (None, LOCKED)
    assert len(store.audit.events(action="user.sign_in_failed", target="alice", limit=100)) == BURST + 1
    assert len(store.audit.events(action="user.locked", target="alice")) == 1


def test_the_right_password_checked_while_a_burst_locks_the_account_is_refused(
    store: Store, hasher: CountingHasher
) -> None:
    """The right password whose check is still running when a burst of wrong ones locks the account does
    not sign in."""
    store.users.add("alice", "reviewer", PASSWORD)
    checking, go_on = threading.Event(), threading.Event()

    def hold(password: str) -> None:
        if password == PASSWORD:
            checking.set()
            go_on.wait(timeout=120)

    hasher.hold = hold
    outcome: list[Any] = []
    right = threading.Thread(target=lambda: outcome.append(store.users.attempt_sign_in("alice", PASSWORD)))
    right.start()
    assert checking.wait(timeout=60)
    burst(store.url, ["wrong-password"] * (BURST - 1))
    assert store.users.get("alice").locked  # type: ignore[union-attr]
    go_on.set()
    right.join(timeout=120)
    assert (outcome[0].user, outcome[0].refusal) == (None, LOCKED)
    assert hasher.checks <= FREE_FAILURES
