"""Known-answer packets (docs/design.md §9.7): AUDIT packets an admin seeds from adjudicated ground truth to
measure reviewers. The packet row is an ordinary audit packet; only `known_answers` says otherwise, and only
admins' pages and the metrics read it. Its review writes no ground-truth version (`store/reviews.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import GroundTruthSource, SMEPacket
from arbiter.store.audit import write_audit
from arbiter.store.models import ground_truth, known_answers, packets
from arbiter.store.packet_rows import IN_REVIEW, OPERATIONS, PENDING
from arbiter.store.records import insert_packet
from arbiter.store.repository import Repository
from arbiter.store.users import Users


@dataclass(frozen=True)
class Adjudicated:
    """A document whose ground truth in force is an adjudicator's decision, with its newest packet's body."""

    doc_id: str
    gt_id: str
    body: dict[str, Any]
    run_id: str


class KnownAnswers(Repository):
    """Seeding known-answer packets and telling them apart (admins and the metrics only)."""

    def __init__(self, db: Any, users: Users) -> None:
        super().__init__(db)
        self.users = users

    def candidates(self) -> list[Adjudicated]:
        """Documents whose version in force is SME_ADJUDICATED and which have no open packet (a new packet
        of the same kind would retire a pending one), oldest document first."""
        g = ground_truth.c
        newest = (
            sa.select(g.doc_id, sa.func.max(g.version).label("version")).group_by(g.doc_id).subquery("newest")
        )
        p = packets.c
        o = packets.alias("open_packet").c
        open_packet = sa.exists().where(o.doc_id == g.doc_id, o.status.in_([PENDING, IN_REVIEW, OPERATIONS]))
        q = packets.alias("newest_packet").c
        latest_id = (
            sa.select(q.packet_id)
            .where(q.doc_id == g.doc_id, q.kind != "ADJUDICATION")
            .order_by(q.created_at.desc(), q.packet_id.desc())
            .limit(1)
            .scalar_subquery()
        )
        query = (
            sa.select(g.doc_id, g.gt_id, p.payload, p.run_id)
            .join(newest, sa.and_(newest.c.doc_id == g.doc_id, newest.c.version == g.version))
            .join(packets, p.packet_id == latest_id)
            .where(g.source == GroundTruthSource.SME_ADJUDICATED.value, ~open_packet)
            .order_by(g.doc_id)
        )
        with self.read() as conn:
            return [Adjudicated(*row) for row in conn.execute(query)]

    def seed(self, seeded: list[tuple[SMEPacket, str]], admin: str, now: datetime) -> list[str]:
        """Queue each (packet, gt_id) as a known-answer packet, audited; only an active admin may."""
        self.users.require_admin(admin)
        with self.write() as conn:
            for packet, gt_id in seeded:
                insert_packet(conn, packet, now)
                conn.execute(
                    sa.insert(known_answers).values(
                        packet_id=packet.packet_id,
                        doc_id=packet.doc_id,
                        gt_id=gt_id,
                        seeded_by=admin,
                        created_at=now,
                    )
                )
            write_audit(conn, admin, "known.seed", "", {"packets": [p.packet_id for p, _ in seeded]}, at=now)
        return [p.packet_id for p, _ in seeded]

    def packet_ids(self) -> set[str]:
        """Every known-answer packet (for admins' views)."""
        with self.read() as conn:
            return set(conn.execute(sa.select(known_answers.c.packet_id)).scalars())
