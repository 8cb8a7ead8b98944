"""The operations lane (docs/design.md §8.2): packets of documents that could not be read (empty, encrypted,
not a PDF, damaged). No clinician can review them, so they are never claimed; an admin sees why, retries
the document (with a password: run/operations.py) or dismisses it with a resolution. Both are audited."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import SMEPacket
from arbiter.store.audit import write_audit
from arbiter.store.db import Database
from arbiter.store.errors import UnknownPacket
from arbiter.store.models import packets
from arbiter.store.packet_rows import (
    DISMISSED,
    OPERATIONS,
    QUEUE_ORDER,
    PacketSummary,
    load_packet,
    packet_from_row,
    summary_from_row,
)
from arbiter.store.repository import Repository
from arbiter.store.users import Users

# How an admin may close an operations item, with the words the app and the CLI show.
RESOLUTIONS = {"not_medical_record": "Not a medical record"}


class NotInOperations(UnknownPacket):
    """No open operations item matches (none for the document, or it was already retried or dismissed)."""


class Operations(Repository):
    """Open operations items in priority order; dismiss one; record a retry."""

    def __init__(self, db: Database, users: Users) -> None:
        super().__init__(db)
        self.users = users

    def page(self, *, offset: int = 0, limit: int = 200) -> list[PacketSummary]:
        """Open operations items, most urgent and oldest first."""
        cols = [c for c in packets.c if c.name != "payload"]
        query = (
            sa.select(*cols)
            .where(packets.c.status == OPERATIONS)
            .order_by(*QUEUE_ORDER)
            .offset(max(offset, 0))
            .limit(max(limit, 0))
        )
        with self.read() as conn:
            return [summary_from_row(r) for r in conn.execute(query)]

    def count(self) -> int:
        with self.read() as conn:
            query = sa.select(sa.func.count()).select_from(packets).where(packets.c.status == OPERATIONS)
            return int(conn.execute(query).scalar_one())

    def find(self, ref: str) -> SMEPacket:
        """The open operations item with this packet id, else the one of this document; NotInOperations."""
        p = packets.c
        with self.read() as conn:
            row = conn.execute(
                sa.select(packets)
                .where(p.status == OPERATIONS, sa.or_(p.packet_id == ref, p.doc_id == ref))
                .order_by(p.created_at.desc(), p.packet_id)
                .limit(1)
            ).first()
        if row is None:
            raise NotInOperations(
                f"No document or packet {ref!r} is waiting in the operations lane "
                "(`arbiter ops list` shows what is)."
            )
        return packet_from_row(row)

    def dismiss(
        self,
        packet_id: str,
        admin: str,
        *,
        resolution: str = "not_medical_record",
        now: datetime | None = None,
    ) -> SMEPacket:
        """Close an operations item with a resolution (audited); no ground truth is written for it."""
        self.users.require_admin(admin)
        if resolution not in RESOLUTIONS:
            raise ValueError(f"Unknown resolution {resolution!r}; one of: {', '.join(RESOLUTIONS)}.")
        now = now or datetime.now(UTC)
        p = packets.c
        with self.write() as conn:
            row = conn.execute(
                sa.update(packets)
                .where(p.packet_id == packet_id, p.status == OPERATIONS)
                .values(status=DISMISSED, resolution=resolution, updated_at=now)
                .returning(*packets.c)
            ).first()
            if row is None:
                status = load_packet(conn, packet_id)._mapping["status"]
                raise NotInOperations(
                    f"Packet {packet_id} is not waiting in the operations lane (it is {status.lower()})."
                )
            details = {"doc_id": row._mapping["doc_id"], "resolution": resolution}
            write_audit(conn, admin, "ops.dismiss", packet_id, details, at=now)
            return packet_from_row(row)

    def record_retry(
        self, packet_id: str, admin: str, details: dict[str, Any], *, now: datetime | None = None
    ) -> None:
        """The audit event of an admin's retry (what it led to; never the password)."""
        self.users.require_admin(admin)
        now = now or datetime.now(UTC)
        with self.write() as conn:
            write_audit(conn, admin, "ops.retry", packet_id, details, at=now)
