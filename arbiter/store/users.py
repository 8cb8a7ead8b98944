"""Local accounts: reviewers and admins, passwords hashed with argon2 (never stored or logged in clear)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arbiter.store.audit import write_audit
from arbiter.store.db import Database
from arbiter.store.errors import DuplicateUser, PermissionDenied, UnknownUser
from arbiter.store.models import users

Role = Literal["reviewer", "admin"]
ROLES: tuple[str, ...] = ("reviewer", "admin")
_hasher = PasswordHasher()
# Verified against when the name is unknown, so a wrong name costs the same time as a wrong password.
_DUMMY_HASH = _hasher.hash("arbiter-no-such-user")


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool
    created_at: datetime

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def _user(row: sa.Row[tuple[object, ...]]) -> User:
    m = row._mapping
    return User(name=m["name"], role=m["role"], active=m["active"], created_at=m["created_at"])


class UsersMixin(Database):
    def add_user(self, name: str, role: Role | str, password: str | None, *, actor: str = "system") -> User:
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
            write_audit(conn, actor, "user.password", name)

    def set_active(self, name: str, active: bool, *, actor: str) -> None:
        with self.write() as conn:
            if not conn.execute(sa.update(users).where(users.c.name == name).values(active=active)).rowcount:
                raise UnknownUser(f"No user named {name!r}.")
            write_audit(conn, actor, "user.activate" if active else "user.deactivate", name)

    def get_user(self, name: str) -> User | None:
        with self.read() as conn:
            row = conn.execute(sa.select(users).where(users.c.name == name)).first()
        return _user(row) if row else None

    def list_users(self) -> list[User]:
        with self.read() as conn:
            return [_user(r) for r in conn.execute(sa.select(users).order_by(users.c.name))]

    def verify_password(self, name: str, password: str) -> User | None:
        """The active user when the password matches, else None (same answer for unknown names)."""
        with self.read() as conn:
            row = conn.execute(sa.select(users).where(users.c.name == name)).first()
        stored = row._mapping["password_hash"] if row else None
        try:
            _hasher.verify(stored or _DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            return None
        if row is None or stored is None or not row._mapping["active"]:
            return None
        if _hasher.check_needs_rehash(stored):
            with self.write() as conn:
                conn.execute(
                    sa.update(users).where(users.c.name == name).values(password_hash=_hasher.hash(password))
                )
        return _user(row)

    def require_admin(self, name: str) -> User:
        """The admin user, or PermissionDenied (admin actions are refused for anyone else)."""
        user = self.get_user(name)
        if user is None or not user.active or not user.is_admin:
            raise PermissionDenied(f"{name} is not an admin; only admins can do this.")
        return user
