"""The append-only audit log: who did what to which packet, document or account, and when."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.store.models import audit_log
from arbiter.store.repository import Repository

_INSERT = sa.insert(audit_log)  # built once: statement construction is most of a write's CPU


@dataclass(frozen=True)
class AuditEvent:
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    details: dict[str, Any]


def write_audit(
    conn: Connection,
    actor: str,
    action: str,
    target: str = "",
    details: dict[str, Any] | None = None,
    *,
    at: datetime | None = None,
) -> None:
    """Add one event inside the caller's transaction (so it commits or rolls back with the change it records)."""
    row = {
        "at": at or datetime.now(UTC),
        "actor": actor,
        "action": action,
        "target": target,
        "details": details or {},
    }
    conn.execute(_INSERT, row)


class AuditLog(Repository):
    """The audit log: events written on their own, and read back filtered and paged."""

    def record(
        self, actor: str, action: str, target: str = "", details: dict[str, Any] | None = None
    ) -> None:
        """Record an event on its own (for actions outside the store, e.g. sign-in). Never document text."""
        with self.write() as conn:
            write_audit(conn, actor, action, target, details)

    def events(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        target: str | None = None,
        since: datetime | None = None,
        offset: int = 0,
        limit: int = 100,
        newest_first: bool = True,
    ) -> list[AuditEvent]:
        """Events matching every filter given, paged in SQL."""
        query = sa.select(audit_log)
        if actor is not None:
            query = query.where(audit_log.c.actor == actor)
        if action is not None:
            query = query.where(audit_log.c.action == action)
        if target is not None:
            query = query.where(audit_log.c.target == target)
        if since is not None:
            query = query.where(audit_log.c.at >= since)
        order = audit_log.c.id.desc() if newest_first else audit_log.c.id.asc()
        query = query.order_by(order).offset(offset).limit(limit)
        with self.read() as conn:
            return [AuditEvent(**row._mapping) for row in conn.execute(query)]
