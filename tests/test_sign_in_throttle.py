"""Issue 14.6 on both databases: failed sign-ins are audited and slowed per account and per client with a
clear message; an account locks after a configurable number of failures until an admin unlocks it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from store_fixtures import T0, pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.review.auth import ClientThrottle, sign_in_checked
from arbiter.store import PermissionDenied, Store
from arbiter.store.users import LOCKED, WRONG

PASSWORD = "correct-horse-9"


def failures(store: Store, name: str) -> list[str]:
    return [
        e.details.get("reason", "") for e in store.audit.events(action="user.sign_in_failed", target=name)
    ]


def test_failed_sign_ins_are_audited_and_slowed_per_account(store: Store) -> None:
    store.users.add("alice", "reviewer", PASSWORD)
    for i in range(3):
        assert (
            store.users.attempt_sign_in(
                "alice", "wrong-one", client="c1", now=T0 + timedelta(seconds=i)
            ).refusal
            == WRONG
        )
    throttled = store.users.attempt_sign_in("alice", PASSWORD, client="c1", now=T0 + timedelta(seconds=2.5))
    assert throttled.user is None  # the right password, too soon: not even checked
    assert throttled.refusal is not None
    assert "Wait 1 second" in throttled.refusal
    assert sorted(failures(store, "alice")) == [
        "throttled",
        "wrong_password",
        "wrong_password",
        "wrong_password",
    ]
    later = store.users.attempt_sign_in("alice", PASSWORD, client="c1", now=T0 + timedelta(seconds=10))
    assert later.user is not None
    assert later.user.name == "alice"
    # A success resets the count: three more misses are free again.
    for i in range(3):
        check = store.users.attempt_sign_in("alice", "x-wrong-x", now=T0 + timedelta(seconds=11 + i))
        assert check.refusal == WRONG


def test_unknown_names_are_audited(store: Store) -> None:
    assert store.users.attempt_sign_in("nobody", "whatever-1", client="10.0.0.9").refusal == WRONG
    (event,) = store.audit.events(action="user.sign_in_failed")
    assert (event.target, event.details["reason"], event.details["client"]) == (
        "nobody",
        "unknown_user",
        "10.0.0.9",
    )
    assert "whatever-1" not in str(event.details)


def test_an_account_locks_until_an_admin_unlocks_it(store: Store) -> None:
    store.users.add("alice", "reviewer", PASSWORD)
    store.users.add("bob", "reviewer", PASSWORD)
    store.users.add("root", "admin", PASSWORD)
    at = T0
    for _ in range(4):
        at += timedelta(minutes=2)  # past every throttle delay
        store.users.attempt_sign_in("alice", "wrong-one", lock_after=4, now=at)
    assert store.users.get("alice").locked  # type: ignore[union-attr]
    refused = store.users.attempt_sign_in("alice", PASSWORD, lock_after=4, now=at + timedelta(hours=5))
    assert (refused.user, refused.refusal) == (None, LOCKED)
    assert [e.target for e in store.audit.events(action="user.locked")] == ["alice"]
    with pytest.raises(PermissionDenied):
        store.users.unlock("alice", actor="bob")
    store.users.unlock("alice", actor="root")
    assert [e.actor for e in store.audit.events(action="user.unlock")] == ["root"]
    assert store.users.attempt_sign_in("alice", PASSWORD, lock_after=4).user is not None


def test_a_client_is_slowed_whatever_names_it_tries(store: Store) -> None:
    store.users.add("alice", "reviewer", PASSWORD)
    throttle = ClientThrottle()
    for i in range(5):
        user, message = sign_in_checked(
            store.users, f"guess{i}", "wrong-one", client="10.0.0.7", throttle=throttle
        )
        assert user is None
        assert message == WRONG
    user, message = sign_in_checked(store.users, "alice", PASSWORD, client="10.0.0.7", throttle=throttle)
    assert user is None
    assert message is not None
    assert "from here" in message
    assert "client_throttled" in failures(store, "alice")
    user, _ = sign_in_checked(
        store.users, "alice", PASSWORD, client="10.0.0.8", throttle=throttle
    )  # another client
    assert user is not None


def test_25_wrong_passwords_then_the_right_one_in_the_app(tmp_path: Path, monkeypatch: Any) -> None:
    """The attack of the issue, through the sign-in page: every failure audited, the account locked after
    10, the right password then refused with a plain message; an admin unlocks it on the Claims page."""
    from review_helpers import PASSWORD as APP_PASSWORD
    from review_helpers import app_on, app_test, sign_in

    with app_on(tmp_path, monkeypatch) as data:
        at = app_test()
        for _ in range(25):
            sign_in(at, "bob", "not-the-password")
        sign_in(at, "bob", APP_PASSWORD)
        assert "arbiter_signed_in" not in at.session_state or at.session_state["arbiter_signed_in"] is None
        shown = " ".join(str(e.value) for e in at.error)
        assert "locked" in shown or "Wait" in shown
        assert len(data.store.audit.events(action="user.sign_in_failed", target="bob")) == 26
        assert data.store.users.get("bob").locked  # type: ignore[union-attr]

        admin = app_test()
        sign_in(admin, "root", APP_PASSWORD)
        admin.switch_page("views/admin.py").run()
        admin.selectbox(key="admin_locked").set_value("bob").run()
        admin.button(key="admin_unlock").click().run()
        assert not admin.exception
        assert not data.store.users.get("bob").locked  # type: ignore[union-attr]
