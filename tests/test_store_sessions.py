"""Signed, expiring session tokens (SQLite and PostgreSQL): a token names the user, its expiry and a random
id, is signed with a server secret kept in the database, and is refused once expired, tampered with or
revoked (sign-out, deactivation, password reset). It never carries the password."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import timedelta

import pytest
from store_fixtures import T0, pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.store import Store

NOW = T0 + timedelta(days=30)
HOUR = timedelta(hours=1)
PASSWORD = "correct-horse-9"


def _store_with_alice(store: Store) -> Store:
    store.users.add("alice", "reviewer", PASSWORD)
    store.users.add("bob", "reviewer", PASSWORD)
    store.users.add("root", "admin", PASSWORD)
    return store


def test_a_fresh_token_signs_the_user_in(store: Store) -> None:
    """A token just issued gives back the active account it was issued for."""
    token = _store_with_alice(store).sessions.issue("alice", ttl=HOUR, now=NOW)
    user = store.sessions.check(token, now=NOW + timedelta(minutes=59))
    assert user is not None
    assert (user.name, user.role) == ("alice", "reviewer")


def test_the_token_holds_no_password_and_differs_each_time(store: Store) -> None:
    """Two sign-ins get two different tokens (a random id each), neither containing the password."""
    _store_with_alice(store)
    first, second = (store.sessions.issue("alice", ttl=HOUR, now=NOW) for _ in range(2))
    assert first != second
    for token in (first, second):
        decoded = b"".join(
            base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in token.split(".")
        )
        assert PASSWORD.encode() not in decoded
        assert PASSWORD not in token


def _tamper_user(token: str) -> str:
    version, sid, expiry, _user, sig = token.split(".")
    bob = base64.urlsafe_b64encode(b"bob").decode().rstrip("=")
    return ".".join((version, sid, expiry, bob, sig))


def _tamper_expiry(token: str) -> str:
    version, sid, expiry, user, sig = token.split(".")
    return ".".join((version, sid, str(int(expiry) + 86_400), user, sig))


def _tamper_signature(token: str) -> str:
    return token[:-2] + ("AA" if not token.endswith("AA") else "BB")


REFUSED: list[tuple[str, Callable[[Store, str], str | None], timedelta]] = [
    ("expired", lambda s, t: t, HOUR + timedelta(seconds=1)),
    ("another user's name", lambda s, t: _tamper_user(t), timedelta(0)),
    ("a later expiry", lambda s, t: _tamper_expiry(t), HOUR + timedelta(seconds=1)),
    ("a forged signature", lambda s, t: _tamper_signature(t), timedelta(0)),
    ("garbage", lambda s, t: "not-a-token", timedelta(0)),
    ("empty", lambda s, t: "", timedelta(0)),
    ("signed out", lambda s, t: t if s.sessions.revoke(t, now=NOW) else None, timedelta(0)),
    (
        "deactivated by an admin",
        lambda s, t: (s.users.set_active("alice", False, actor="root"), t)[1],
        timedelta(0),
    ),
    (
        "password reset",
        lambda s, t: (s.users.set_password("alice", "another-pass-9", actor="root"), t)[1],
        timedelta(0),
    ),
]


@pytest.mark.parametrize(("why", "change", "later"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_tokens(
    store: Store, why: str, change: Callable[[Store, str], str | None], later: timedelta
) -> None:
    """Expired, tampered or revoked tokens sign nobody in."""
    token = _store_with_alice(store).sessions.issue("alice", ttl=HOUR, now=NOW)
    changed = change(store, token)
    assert changed is not None
    assert store.sessions.check(changed, now=NOW + later) is None


def test_reactivating_does_not_revive_old_tokens(store: Store) -> None:
    """A token revoked by deactivation stays refused after the account is active again."""
    token = _store_with_alice(store).sessions.issue("alice", ttl=HOUR, now=NOW)
    store.users.set_active("alice", False, actor="root")
    store.users.set_active("alice", True, actor="root")
    assert store.sessions.check(token, now=NOW) is None
    assert store.sessions.check(store.sessions.issue("alice", ttl=HOUR, now=NOW), now=NOW) is not None


def test_revoking_one_session_keeps_the_others(store: Store) -> None:
    """Signing out in one browser leaves the same user's other sessions and other users signed in."""
    _store_with_alice(store)
    here, there = (store.sessions.issue("alice", ttl=HOUR, now=NOW) for _ in range(2))
    bobs = store.sessions.issue("bob", ttl=HOUR, now=NOW)
    assert store.sessions.revoke(here, now=NOW)
    assert store.sessions.check(here, now=NOW) is None
    assert store.sessions.check(there, now=NOW) is not None
    assert store.sessions.check(bobs, now=NOW) is not None


def test_the_secret_is_shared_by_every_store_on_the_database(store: Store) -> None:
    """A token issued by one app process is accepted by another on the same database (one server secret)."""
    token = _store_with_alice(store).sessions.issue("alice", ttl=HOUR, now=NOW)
    other = Store(store.url)
    try:
        user = other.sessions.check(token, now=NOW)
    finally:
        other.dispose()
    assert user is not None
    assert user.name == "alice"


def test_sessions_are_audited_without_the_token(store: Store) -> None:
    """Issuing and revoking are audit events naming the session id, never the token or its signature."""
    token = _store_with_alice(store).sessions.issue("alice", ttl=HOUR, now=NOW)
    store.sessions.revoke(token, now=NOW)
    events = store.audit.events(target="alice", newest_first=False)
    actions = [e.action for e in events]
    assert actions[-2:] == ["session.issue", "session.revoke"]
    signature = token.rsplit(".", 1)[1]
    assert all(token not in str(e.details) and signature not in str(e.details) for e in events)


def test_an_unknown_user_gets_no_token(store: Store) -> None:
    """Issuing a token for a name with no active account is refused."""
    _store_with_alice(store)
    store.users.set_active("bob", False, actor="root")
    for name in ("nobody", "bob"):
        with pytest.raises(ValueError, match="active account"):
            store.sessions.issue(name, ttl=HOUR, now=NOW)


def _session_rows(store: Store) -> set[str]:
    import sqlalchemy as sa

    from arbiter.store.models import sessions

    with store.engine.connect() as conn:
        return set(conn.execute(sa.select(sessions.c.user_name)).scalars())


def test_sessions_long_over_are_purged_at_the_next_sign_in(store: Store) -> None:
    """Rows of sessions expired or signed out more than a day ago are deleted when anyone signs in; open
    sessions and ones that ended within the day stay (the audit log keeps the history)."""
    _store_with_alice(store)
    recent = store.sessions.issue("root", ttl=HOUR, now=NOW - timedelta(hours=2))  # ended an hour ago
    store.sessions.issue("alice", ttl=HOUR, now=NOW - timedelta(days=3))  # expired two days before NOW
    gone = store.sessions.issue("bob", ttl=timedelta(days=5), now=NOW - timedelta(days=3))
    store.sessions.revoke(gone, now=NOW - timedelta(days=2))  # signed out two days before NOW
    assert _session_rows(store) == {"alice", "bob", "root"}
    fresh = store.sessions.issue("alice", ttl=HOUR, now=NOW)
    assert sorted(_session_rows(store)) == ["alice", "root"]
    assert store.sessions.check(fresh, now=NOW) is not None
    assert store.sessions.check(recent, now=NOW) is None  # still refused: expired
