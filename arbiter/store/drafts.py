"""Drafts on the server: what a reviewer has entered for a claimed packet (segment rows, evidence, notes),
saved as they edit so a browser reload restores it. One per (packet, reviewer); only that reviewer reads it;
deleted when the packet is submitted (every reviewer's) or skipped (the reviewer's own)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from arbiter.contracts.limits import Limits, answer_problem
from arbiter.store.errors import TooLarge
from arbiter.store.models import drafts, packets
from arbiter.store.packet_rows import IN_REVIEW
from arbiter.store.repository import Repository


def delete_drafts(conn: Connection, packet_id: str, reviewer: str | None = None) -> None:
    """Drop the packet's drafts (one reviewer's, or all) inside the caller's transaction."""
    query = sa.delete(drafts).where(drafts.c.packet_id == packet_id)
    if reviewer is not None:
        query = query.where(drafts.c.reviewer == reviewer)
    conn.execute(query)


class Drafts(Repository):
    """Per-claim drafts: saved while the reviewer holds the claim, read back by that reviewer only."""

    limits: Limits = Limits()  # the profile's [limits]; the Store sets them

    def save(
        self, packet_id: str, reviewer: str, payload: dict[str, Any], *, now: datetime | None = None
    ) -> bool:
        """Write the reviewer's draft when they hold the packet's claim; False (nothing written) otherwise.
        TooLarge when the draft is over the classification size limit (nothing written)."""
        now = now or datetime.now(UTC)
        problem = answer_problem(payload, self.limits, what="draft")
        if problem is not None:
            raise TooLarge(problem)
        with self.write() as conn:
            claimed_at = conn.execute(
                sa.select(packets.c.claimed_at).where(
                    packets.c.packet_id == packet_id,
                    packets.c.status == IN_REVIEW,
                    packets.c.claimed_by == reviewer,
                )
            ).first()
            if claimed_at is None:
                return False
            values = {"claimed_at": claimed_at[0], "updated_at": now, "payload": payload}
            key = {"packet_id": packet_id, "reviewer": reviewer}
            keys = ["packet_id", "reviewer"]
            if self.dialect == "postgresql":
                pg = postgresql.insert(drafts).values(**key, **values)
                conn.execute(pg.on_conflict_do_update(index_elements=keys, set_=values))
            else:
                lite = sqlite.insert(drafts).values(**key, **values)
                conn.execute(lite.on_conflict_do_update(index_elements=keys, set_=values))
            return True

    def get(self, packet_id: str, reviewer: str) -> dict[str, Any] | None:
        """The reviewer's own draft of the packet, or None."""
        with self.read() as conn:
            payload = conn.execute(
                sa.select(drafts.c.payload).where(
                    drafts.c.packet_id == packet_id, drafts.c.reviewer == reviewer
                )
            ).scalar()
        return dict(payload) if isinstance(payload, dict) else None

    def discard(self, packet_id: str, reviewer: str) -> None:
        """Throw the reviewer's draft away (they chose to start over)."""
        with self.write() as conn:
            delete_drafts(conn, packet_id, reviewer)
