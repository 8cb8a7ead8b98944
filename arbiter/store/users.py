"""Local accounts: reviewers and admins, passwords hashed with argon2 (never stored or logged in clear).

Sign-in is throttled per account: every failed sign-in is audited (`user.sign_in_failed`, with the client and
the reason, never the password); after FREE_FAILURES failures in a row each further attempt must wait
(1 s, 2 s, 4 s … up to MAX_DELAY_S) or is refused unchecked (`throttled`); after `lock_after` failures in a
row (the app's ARBITER_REVIEW_LOCK_AFTER, default 10) the account is locked until an admin unlocks it
(`user.locked`, `user.unlock`). A success resets the count.

An admin may restrict an account to kinds of answer (`set_kinds`, table user_kinds, migration 0014; audited as
`user.kinds`): claims and the queue then hand it packets of those kinds only (packet_rows.kind_allowed). No
kind recorded means every kind."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Literal

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.engine import Connection

from arbiter.store.audit import write_audit
from arbiter.store.errors import DuplicateUser, PermissionDenied, UnknownUser
from arbiter.store.models import packets, sessions, user_kinds, users
from arbiter.store.packet_rows import IN_REVIEW, PENDING
from arbiter.store.repository import Repository
from arbiter.store.reviewer_kinds import check_kinds, in_registry_order, reviewer_kinds

Role = Literal["reviewer", "admin"]
ROLES: tuple[str, ...] = ("reviewer", "admin")
FREE_FAILURES = 3
MAX_DELAY_S = 60
DEFAULT_LOCK_AFTER = 10
WRONG = "The user name or password is not right."
LOCKED = "This account is locked after too many failed sign-ins. Ask an admin to unlock it."
_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verified against when the name is unknown, so a wrong name costs the same time as a wrong password.
    Made on the first sign-in, not at import: every process that imports the store (a run's ingestion
    workers too) would otherwise spend an Argon2 hash, its time and its memory, on it."""
    return _hasher.hash("arbiter-no-such-user")


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool
    created_at: datetime
    has_password: bool = False
    locked: bool = False
    kinds: tuple[str, ...] = ()  # the kinds of answer the account reviews; () = every kind

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def reviews_kind(self, answer_kind: str) -> bool:
        return not self.kinds or answer_kind in self.kinds


@dataclass(frozen=True)
class SignInCheck:
    """The account when the sign-in succeeded; otherwise a plain message for the person signing in."""

    user: User | None
    refusal: str | None = None
    retry_after_s: float = 0.0


def throttle_delay(failures: int) -> float:
    """Seconds an account with `failures` failures in a row must wait before the next attempt."""
    if failures < FREE_FAILURES:
        return 0.0
    return float(min(2 ** (failures - FREE_FAILURES), MAX_DELAY_S))


def user_from_row(row: sa.Row[tuple[object, ...]], kinds: tuple[str, ...] = ()) -> User:
    m = row._mapping
    return User(
        name=m["name"],
        role=m["role"],
        active=m["active"],
        created_at=m["created_at"],
        has_password=m["password_hash"] is not None,
        locked=m["locked_at"] is not None,
        kinds=kinds,
    )


class Users(Repository):
    """Accounts, passwords and sign-in throttling."""

    def add(self, name: str, role: Role | str, password: str | None, *, actor: str = "system") -> User:
        """Create an account; password None makes a proxy-header-only account that cannot sign in locally."""
        name = name.strip()
        if not name:
            raise ValueError("A user name cannot be empty.")
        if role not in ROLES:
            raise ValueError(f"Role must be one of {', '.join(ROLES)}, not {role!r}.")
        if password is not None and len(password) < 8:
            raise ValueError("A password needs at least 8 characters.")
        now = datetime.now(UTC)
        hashed = _hasher.hash(password) if password is not None else None
        with self.write() as conn:
            if conn.execute(sa.select(users.c.name).where(users.c.name == name)).first():
                raise DuplicateUser(f"A user named {name!r} already exists.")
            conn.execute(
                sa.insert(users).values(
                    name=name, role=role, password_hash=hashed, active=True, created_at=now
                )
            )
            write_audit(conn, actor, "user.add", name, {"role": role}, at=now)
        return User(name=name, role=role, active=True, created_at=now)

    def set_password(self, name: str, password: str, *, actor: str = "system") -> None:
        if len(password) < 8:
            raise ValueError("A password needs at least 8 characters.")
        with self.write() as conn:
            done = conn.execute(
                sa.update(users).where(users.c.name == name).values(password_hash=_hasher.hash(password))
            ).rowcount
            if not done:
                raise UnknownUser(f"No user named {name!r}.")
            revoke_user_sessions(conn, name, datetime.now(UTC))  # a reset password signs every browser out
            write_audit(conn, actor, "user.password", name)

    def set_active(self, name: str, active: bool, *, actor: str) -> None:
        with self.write() as conn:
            if not conn.execute(sa.update(users).where(users.c.name == name).values(active=active)).rowcount:
                raise UnknownUser(f"No user named {name!r}.")
            if not active:
                revoke_user_sessions(conn, name, datetime.now(UTC))
            write_audit(conn, actor, "user.activate" if active else "user.deactivate", name)

    def get(self, name: str) -> User | None:
        with self.read() as conn:
            row = conn.execute(sa.select(users).where(users.c.name == name)).first()
            return user_from_row(row, reviewer_kinds(conn, name)) if row else None

    def list_all(self) -> list[User]:
        with self.read() as conn:
            kinds: dict[str, list[str]] = {}
            for who, answer_kind in conn.execute(sa.select(user_kinds.c.user_name, user_kinds.c.answer_kind)):
                kinds.setdefault(who, []).append(answer_kind)
            return [
                user_from_row(r, in_registry_order(kinds.get(r._mapping["name"], ())))
                for r in conn.execute(sa.select(users).order_by(users.c.name))
            ]

    def kinds(self, name: str) -> tuple[str, ...]:
        """The kinds of answer the account reviews; () when it reviews every kind."""
        with self.read() as conn:
            return reviewer_kinds(conn, name)

    def set_kinds(self, name: str, kinds: Iterable[str], *, actor: str) -> tuple[str, ...]:
        """An admin restricts the account to these kinds of answer (none: every kind); audited as `user.kinds`
        with the kinds before and after. The account's open claims of other kinds go back to the queue in the
        same transaction (listed in the audit event), so nothing of another kind stays in its hands. Returns the
        kinds now in force; a ValueError names an unknown kind."""
        self.require_admin(actor)
        wanted = check_kinds(kinds)
        now = datetime.now(UTC)
        with self.write() as conn:
            if conn.execute(sa.select(users.c.name).where(users.c.name == name)).first() is None:
                raise UnknownUser(f"No user named {name!r}.")
            before = reviewer_kinds(conn, name)
            if set(before) == set(wanted):
                return wanted
            conn.execute(sa.delete(user_kinds).where(user_kinds.c.user_name == name))
            if wanted:
                conn.execute(sa.insert(user_kinds), [{"user_name": name, "answer_kind": k} for k in wanted])
            released: list[str] = []
            if wanted:
                p = packets.c
                released = list(
                    conn.execute(
                        sa.update(packets)
                        .where(p.status == IN_REVIEW, p.claimed_by == name, p.answer_kind.not_in(wanted))
                        .values(
                            status=PENDING,
                            claimed_by=None,
                            claimed_at=None,
                            claim_expires_at=None,
                            updated_at=now,
                        )
                        .returning(p.packet_id)
                    ).scalars()
                )
            details = {"from": list(before), "to": list(wanted), "released": sorted(released)}
            write_audit(conn, actor, "user.kinds", name, details, at=now)
        return wanted

    def verify_password(self, name: str, password: str) -> User | None:
        """The active user when the password matches, else None (same answer for unknown names)."""
        with self.read() as conn:
            row = conn.execute(sa.select(users).where(users.c.name == name)).first()
        stored = row._mapping["password_hash"] if row else None
        try:
            _hasher.verify(stored or _dummy_hash(), password)
        except (VerificationError, InvalidHashError):
            return None
        if row is None or stored is None or not row._mapping["active"]:
            return None
        if _hasher.check_needs_rehash(stored):
            with self.write() as conn:
                conn.execute(
                    sa.update(users).where(users.c.name == name).values(password_hash=_hasher.hash(password))
                )
        return user_from_row(row)

    def attempt_sign_in(
        self,
        name: str,
        password: str,
        *,
        client: str = "",
        lock_after: int = DEFAULT_LOCK_AFTER,
        now: datetime | None = None,
    ) -> SignInCheck:
        """A throttled, audited sign-in: the account, or a refusal that says what to do (wrong name or
        password, wait N s, or locked).

        Atomic under concurrency: an attempt first reserves its password check with one conditional UPDATE
        (counted as a failure until it succeeds; refused when another attempt changed the count first), so
        a burst of simultaneous attempts checks no more passwords than the throttle allows; a success is
        kept only if the account is still unlocked when it is recorded."""
        now = now or datetime.now(UTC)
        name = name.strip()
        reserved = self._reserve_check(name, client, lock_after, now)
        if isinstance(reserved, SignInCheck):
            return reserved
        user = self.verify_password(name, password) if password else None
        if user is not None:
            with self.write() as conn:
                kept = conn.execute(
                    sa.update(users)
                    .where(users.c.name == name, users.c.locked_at.is_(None))
                    .values(failed_sign_ins=0, last_failed_at=None)
                ).rowcount
                if not kept:  # the account was locked while its password was being checked
                    details = {"client": client, "reason": "locked"}
                    write_audit(conn, name, "user.sign_in_failed", name, details, at=now)
                    return SignInCheck(None, LOCKED)
            return SignInCheck(user)
        if not reserved:
            self.record_failed_sign_in(name, client, "unknown_user", lock_after=lock_after, now=now)
            return SignInCheck(None, WRONG)
        locked = self._settle_failure(name, client, lock_after, now)
        return SignInCheck(None, LOCKED if locked else WRONG)

    def _reserve_check(self, name: str, client: str, lock_after: int, now: datetime) -> SignInCheck | bool:
        """Reserve one password check: True when reserved (the failure is counted and the throttle's clock
        restarted), False for an unknown name, or the refusal (locked, or wait N s)."""
        while True:
            with self.write() as conn:
                row = conn.execute(
                    sa.select(users.c.failed_sign_ins, users.c.last_failed_at, users.c.locked_at).where(
                        users.c.name == name
                    )
                ).first()
                if row is None:
                    return False
                failures, last_failed, locked_at = row
                if locked_at is not None:
                    details = {"client": client, "reason": "locked"}
                    write_audit(conn, name, "user.sign_in_failed", name, details, at=now)
                    return SignInCheck(None, LOCKED)
                delay = throttle_delay(failures)
                wait = delay - (now - last_failed).total_seconds() if last_failed is not None else 0.0
                if wait > 0:
                    locked = _count_failure(conn, name, client, "throttled", lock_after, now)
                    return SignInCheck(None, LOCKED if locked else _wait_message(wait), retry_after_s=wait)
                # Compare and set: only if no other attempt counted a failure since the read above.
                taken = conn.execute(
                    sa.update(users)
                    .where(
                        users.c.name == name,
                        users.c.locked_at.is_(None),
                        users.c.failed_sign_ins == failures,
                        sa.or_(
                            users.c.last_failed_at.is_(None),
                            users.c.last_failed_at <= now - timedelta(seconds=delay),
                        ),
                    )
                    .values(failed_sign_ins=failures + 1, last_failed_at=now)
                ).rowcount
                if taken == 1:
                    return True
            # Another attempt got in first: read again (it is now throttled, locked, or free again).

    def _settle_failure(self, name: str, client: str, lock_after: int, now: datetime) -> bool:
        """Audit a wrong password whose failure the reservation already counted; lock at lock_after."""
        with self.write() as conn:
            failures = conn.execute(
                sa.select(users.c.failed_sign_ins).where(users.c.name == name)
            ).scalar_one_or_none()
            details: dict[str, object] = {"client": client, "reason": "wrong_password"}
            if failures is not None:
                details["failures"] = int(failures)
            write_audit(conn, name, "user.sign_in_failed", name, details, at=now)
            return failures is not None and _lock_if_due(conn, name, int(failures), lock_after, now)

    def record_failed_sign_in(
        self,
        name: str,
        client: str,
        reason: str,
        *,
        lock_after: int = DEFAULT_LOCK_AFTER,
        now: datetime | None = None,
    ) -> bool:
        """Audit one failed sign-in and count it against the account (when the name is one); a wrong
        password also restarts the throttle's clock. True when this failure locked the account."""
        now = now or datetime.now(UTC)
        with self.write() as conn:
            return _count_failure(conn, name, client, reason, lock_after, now)

    def unlock(self, name: str, *, actor: str) -> None:
        """An admin lifts a lockout (and the throttle); audited."""
        self.require_admin(actor)
        with self.write() as conn:
            done = conn.execute(
                sa.update(users)
                .where(users.c.name == name)
                .values(failed_sign_ins=0, last_failed_at=None, locked_at=None)
            ).rowcount
            if not done:
                raise UnknownUser(f"No user named {name!r}.")
            write_audit(conn, actor, "user.unlock", name)

    def require_admin(self, name: str) -> User:
        """The admin user, or PermissionDenied (admin actions are refused for anyone else)."""
        user = self.get(name)
        if user is None or not user.active or not user.is_admin:
            raise PermissionDenied(f"{name} is not an admin; only admins can do this.")
        return user


def _count_failure(
    conn: Connection, name: str, client: str, reason: str, lock_after: int, now: datetime
) -> bool:
    """Count and audit one failure in the caller's transaction (one atomic increment); True when it locked
    the account."""
    values: dict[str, object] = {"failed_sign_ins": users.c.failed_sign_ins + 1}
    if reason == "wrong_password":
        values["last_failed_at"] = now
    failures = conn.execute(
        sa.update(users)
        .where(users.c.name == name, users.c.locked_at.is_(None))
        .values(**values)
        .returning(users.c.failed_sign_ins)
    ).scalar()
    details: dict[str, object] = {"client": client, "reason": reason}
    if failures is not None:
        details["failures"] = int(failures)
    write_audit(conn, name or "-", "user.sign_in_failed", name, details, at=now)
    return failures is not None and _lock_if_due(conn, name, int(failures), lock_after, now)


def _lock_if_due(conn: Connection, name: str, failures: int, lock_after: int, now: datetime) -> bool:
    """Lock the account when `failures` reached lock_after; True when it is locked (audited once, by the
    attempt that locked it)."""
    if failures < lock_after:
        return False
    locked = conn.execute(
        sa.update(users).where(users.c.name == name, users.c.locked_at.is_(None)).values(locked_at=now)
    ).rowcount
    if locked:
        write_audit(conn, "arbiter", "user.locked", name, {"failures": failures}, at=now)
    return True


def revoke_user_sessions(conn: Connection, name: str, now: datetime) -> int:
    """Revoke every open session of the account inside the caller's transaction (arbiter.store.sessions)."""
    return int(
        conn.execute(
            sa.update(sessions)
            .where(sessions.c.user_name == name, sessions.c.revoked_at.is_(None))
            .values(revoked_at=now)
        ).rowcount
    )


def _wait_message(seconds: float) -> str:
    whole = max(1, int(seconds + 0.999))
    return (
        f"Too many failed sign-ins for this account. Wait {whole} second{'s' if whole != 1 else ''} "
        "and try again."
    )
