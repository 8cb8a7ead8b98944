"""Signed, expiring session tokens, so a browser reload keeps its reviewer signed in (docs/design.md §8.3).

A token is `v1.<session id>.<expiry, epoch seconds>.<user name, base64url>.<HMAC-SHA256, base64url>`, the
HMAC keyed by a random server secret made on first use and kept in the database (`app_secrets`), so every
app process on the database accepts it. It never holds the password. It is accepted while its signature
matches, it has not expired, its session row is not revoked and the account is active; signing out revokes
that session, deactivating an account or resetting its password revokes all of the account's sessions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from arbiter.store.audit import write_audit
from arbiter.store.models import app_secrets, sessions, users
from arbiter.store.repository import Repository
from arbiter.store.users import User, user_from_row

DEFAULT_TTL = timedelta(hours=12)
# A session's row is deleted this long after it expired or was signed out (at the next sign-in): the table
# holds what can still be checked, the audit log keeps the history.
PURGE_AFTER = timedelta(days=1)
_VERSION = "v1"
_SECRET_NAME = "session_hmac"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sessions(Repository):
    """Session tokens: issued at sign-in, checked on every page run, revoked at sign-out."""

    _secret_cache: bytes | None = None

    def issue(self, name: str, *, ttl: timedelta = DEFAULT_TTL, now: datetime | None = None) -> str:
        """A new token for an active account (ValueError for any other name); audited by session id."""
        now = now or datetime.now(UTC)
        expires = now + ttl
        session_id = secrets.token_urlsafe(18)
        key = self._secret()
        with self.write() as conn:
            active = conn.execute(sa.select(users.c.active).where(users.c.name == name)).scalar_one_or_none()
            if not active:
                raise ValueError(f"{name!r} has no active account; no session was started.")
            s = sessions.c
            conn.execute(
                sa.delete(sessions).where(
                    sa.or_(s.expires_at < now - PURGE_AFTER, s.revoked_at < now - PURGE_AFTER)
                )
            )
            conn.execute(
                sa.insert(sessions).values(
                    session_id=session_id, user_name=name, created_at=now, expires_at=expires
                )
            )
            write_audit(conn, name, "session.issue", name, {"session": session_id}, at=now)
        body = f"{_VERSION}.{session_id}.{int(expires.timestamp())}.{_b64(name.encode())}"
        return f"{body}.{_sign(key, body)}"

    def check(self, token: str, *, now: datetime | None = None) -> User | None:
        """The active account the token signs in, or None (malformed, tampered, expired or revoked)."""
        now = now or datetime.now(UTC)
        parsed = _parse(token)
        if parsed is None:
            return None
        body, session_id, expires, name, signature = parsed
        if not hmac.compare_digest(signature, _sign(self._secret(), body)):
            return None
        if expires <= now.timestamp():
            return None
        with self.read() as conn:
            row = conn.execute(
                sa.select(users)
                .join(sessions, sessions.c.user_name == users.c.name)
                .where(
                    sessions.c.session_id == session_id,
                    sessions.c.user_name == name,
                    sessions.c.revoked_at.is_(None),
                    sessions.c.expires_at > now,
                    users.c.active.is_(True),
                )
            ).first()
        return user_from_row(row) if row is not None else None

    def revoke(self, token: str, *, now: datetime | None = None) -> bool:
        """Sign this session out (a tampered token revokes nothing); True when it was open."""
        now = now or datetime.now(UTC)
        parsed = _parse(token)
        if parsed is None or not hmac.compare_digest(parsed[4], _sign(self._secret(), parsed[0])):
            return False
        session_id, name = parsed[1], parsed[3]
        with self.write() as conn:
            done = conn.execute(
                sa.update(sessions)
                .where(sessions.c.session_id == session_id, sessions.c.revoked_at.is_(None))
                .values(revoked_at=now)
            ).rowcount
            if done:
                write_audit(conn, name, "session.revoke", name, {"session": session_id}, at=now)
        return bool(done)

    def _secret(self) -> bytes:
        """The HMAC key: read once per Store, made (race-free: the first insert wins) when absent."""
        if self._secret_cache is None:
            with self.read() as conn:
                value = _read_secret(conn)
            if value is None:
                try:
                    with self.write() as conn:
                        conn.execute(
                            sa.insert(app_secrets).values(
                                name=_SECRET_NAME,
                                value=secrets.token_urlsafe(48),
                                created_at=datetime.now(UTC),
                            )
                        )
                except IntegrityError:
                    pass  # another process made it first
                with self.read() as conn:
                    value = _read_secret(conn)
            assert value is not None
            self._secret_cache = value.encode("ascii")
        return self._secret_cache


def _read_secret(conn: Connection) -> str | None:
    value = conn.execute(sa.select(app_secrets.c.value).where(app_secrets.c.name == _SECRET_NAME)).scalar()
    return None if value is None else str(value)


def _sign(key: bytes, body: str) -> str:
    return _b64(hmac.new(key, body.encode("ascii"), hashlib.sha256).digest())


def _parse(token: str) -> tuple[str, str, int, str, str] | None:
    """(signed body, session id, expiry, user name, signature), or None when it is not a v1 token."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 5 or parts[0] != _VERSION or not parts[2].isdigit():
        return None
    try:
        name = _unb64(parts[3]).decode("utf-8")
        body = ".".join(parts[:4])
        body.encode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        return None
    return body, parts[1], int(parts[2]), name, parts[4]
