"""The review queue: counts, filtered pages in SQL, and claims that are one atomic statement on both
databases (ENGINEERING_NOTES: read-then-update double-claimed nearly everything under 8 processes).

This module holds the claims (claim, renew, release, reassign); the reads are queue_reads.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import SMEPacket
from arbiter.store.audit import write_audit
from arbiter.store.db import Database
from arbiter.store.drafts import delete_drafts
from arbiter.store.errors import KindNotAllowed, NotIndependent, TooManyClaims, UnknownUser
from arbiter.store.independence import other_review
from arbiter.store.models import UTCDateTime, packet_skips, packets
from arbiter.store.packet_rows import (
    CLAIM_NEXT,
    DEFAULT_LEASE,
    DEFAULT_MAX_CLAIMS,
    IN_REVIEW,
    PENDING,
    RELEASE,
    RESUME_OWN,
    kind_allowed,
    load_packet,
    not_paired_with,
    packet_from_row,
)
from arbiter.store.queue_reads import QueueReads
from arbiter.store.reviewer_kinds import kind_words, reviewer_kinds
from arbiter.store.users import Users
from arbiter.store.writes import upsert


class Queue(QueueReads):
    """The packets waiting for review: read in priority order, claimed atomically, released, reassigned."""

    def __init__(self, db: Database, users: Users, *, max_claims: int = DEFAULT_MAX_CLAIMS) -> None:
        super().__init__(db)
        self.users = users
        self.max_claims = max_claims

    # Claims -------------------------------------------------------------------------------------------
    def claim_next(
        self, reviewer: str, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None
    ) -> SMEPacket | None:
        """The reviewer's own open claim if they hold one (its lease renewed); else claim the most urgent
        open packet (pending, or claimed with an expired lease) in ONE statement. Packets the reviewer skipped
        come after every other claimable one (their oldest skip first); the operations lane (documents that
        could not be read) is not open, so it is never claimed; a packet whose review must be independent of
        one the reviewer did or holds is passed over (packet_rows.not_paired_with).

        UPDATE … WHERE packet_id = (SELECT … ORDER BY priority, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING: PostgreSQL skips rows other claimers hold; SQLite drops FOR UPDATE and the write lock
        taken by BEGIN IMMEDIATE makes the statement atomic. None when nothing is claimable.
        """
        now = now or datetime.now(UTC)
        params = {"p_reviewer": reviewer, "p_now_at": now, "p_expires_at": now + lease}
        with self.write() as conn:
            # The reviewer's own open claim first (a submit lost to a crash, a closed tab): claims never pile up.
            own = conn.execute(RESUME_OWN, params).first()
            if own is not None:
                return packet_from_row(own)
            row = conn.execute(CLAIM_NEXT[self.dialect], params).first()
            if row is None:
                return None
            write_audit(conn, reviewer, "packet.claim", row._mapping["packet_id"], {"via": "next"}, at=now)
            return packet_from_row(row)

    def claim(
        self, packet_id: str, reviewer: str, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None
    ) -> SMEPacket | None:
        """Claim this packet if it is pending, its lease expired, or the reviewer already holds it; else None."""
        now = now or datetime.now(UTC)
        p = packets.c
        limit = self.max_claims
        stmt = (
            sa.update(packets)
            .where(p.packet_id == packet_id, p.status.in_([PENDING, IN_REVIEW]))
            .where(sa.or_(p.status == PENDING, p.claim_expires_at < now, p.claimed_by == reviewer))
            .where(not_paired_with(sa.literal(reviewer)))
            .where(kind_allowed(sa.literal(reviewer)))
            .values(
                status=IN_REVIEW,
                claimed_by=reviewer,
                # Claiming a packet one already holds renews it: its span (time per packet) keeps its start.
                claimed_at=sa.case(
                    (sa.and_(p.status == IN_REVIEW, p.claimed_by == reviewer), p.claimed_at),
                    else_=sa.literal(now, UTCDateTime()),
                ),
                claim_expires_at=now + lease,
                updated_at=now,
            )
            .returning(*packets.c)
        )
        with self.write() as conn:
            held = conn.execute(
                sa.select(sa.func.count())
                .select_from(packets)
                .where(p.status == IN_REVIEW, p.claimed_by == reviewer, p.packet_id != packet_id)
            ).scalar_one()
            if held >= limit:
                raise TooManyClaims(
                    f"You already hold {held} packets (at most {limit}). Finish or skip one of them first."
                )
            row = conn.execute(stmt).first()
            if row is None:
                wanted = load_packet(conn, packet_id)._mapping  # UnknownPacket when it does not exist at all
                _require_kind(conn, wanted["answer_kind"], reviewer)
                conflict = other_review(conn, wanted, reviewer)
                if conflict is not None:
                    raise NotIndependent(conflict)
                return None
            write_audit(conn, reviewer, "packet.claim", packet_id, {"via": "direct"}, at=now)
            return packet_from_row(row)

    def renew(
        self, packet_id: str, reviewer: str, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None
    ) -> bool:
        """Extend the reviewer's lease; False when the packet is no longer theirs. A lapsed lease nobody
        else took is renewed too (the reviewer was only slow)."""
        now = now or datetime.now(UTC)
        p = packets.c
        stmt = (
            sa.update(packets)
            .where(p.packet_id == packet_id, p.status == IN_REVIEW, p.claimed_by == reviewer)
            .values(claim_expires_at=now + lease, updated_at=now)
        )
        with self.write() as conn:
            return bool(conn.execute(stmt).rowcount)

    def release(self, packet_id: str, reviewer: str, *, now: datetime | None = None) -> bool:
        """Give the reviewer's own claim back to the queue (skip); False when it was not theirs. The skip is
        remembered: their claim next offers this packet again only when nothing else is claimable for them."""
        now = now or datetime.now(UTC)
        with self.write() as conn:
            done = conn.execute(
                RELEASE, {"p_packet_id": packet_id, "p_reviewer": reviewer, "p_now_at": now}
            ).rowcount
            if done:
                skip = {"reviewer": reviewer, "packet_id": packet_id, "skipped_at": now}
                upsert(conn, packet_skips, skip, update=("skipped_at",))
                delete_drafts(conn, packet_id, reviewer)  # a skip gives the packet back without the draft
                write_audit(conn, reviewer, "packet.release", packet_id, at=now)
            return bool(done)

    def admin_release(self, packet_id: str, admin: str, *, now: datetime | None = None) -> bool:
        """An admin returns anyone's claim to the queue (audited); False when it was not claimed."""
        self.users.require_admin(admin)
        now = now or datetime.now(UTC)
        p = packets.c
        with self.write() as conn:
            row = conn.execute(
                sa.update(packets)
                .where(p.packet_id == packet_id, p.status == IN_REVIEW)
                .values(
                    status=PENDING, claimed_by=None, claimed_at=None, claim_expires_at=None, updated_at=now
                )
                .returning(p.packet_id)
            ).first()
            if row is None:
                load_packet(conn, packet_id)
                return False
            write_audit(conn, admin, "packet.admin_release", packet_id, at=now)
            return True

    def reassign(
        self,
        packet_id: str,
        to_user: str,
        admin: str,
        *,
        lease: timedelta = DEFAULT_LEASE,
        now: datetime | None = None,
    ) -> SMEPacket:
        """An admin hands an open packet to another reviewer with a fresh lease (audited); NotIndependent when
        that reviewer holds or held another review of the document this one must be independent of,
        KindNotAllowed when the packet's kind is not one they review."""
        self.users.require_admin(admin)
        target = self.users.get(to_user)
        if target is None or not target.active:
            raise UnknownUser(f"No active user named {to_user!r}.")
        now = now or datetime.now(UTC)
        p = packets.c
        with self.write() as conn:
            before = load_packet(conn, packet_id)._mapping
            if before["status"] not in (PENDING, IN_REVIEW):
                raise ValueError(
                    f"Packet {packet_id} is {before['status'].lower()}; only open packets can be reassigned."
                )
            _require_kind(conn, before["answer_kind"], to_user)
            conflict = other_review(conn, before, to_user)
            if conflict is not None:
                raise NotIndependent(conflict)
            row = conn.execute(
                sa.update(packets)
                .where(p.packet_id == packet_id, p.status.in_([PENDING, IN_REVIEW]))
                .values(
                    status=IN_REVIEW,
                    claimed_by=to_user,
                    claimed_at=now,
                    claim_expires_at=now + lease,
                    updated_at=now,
                )
                .returning(*packets.c)
            ).first()
            assert (
                row is not None
            )  # the row is locked by this transaction (SQLite: write lock; PG: FOR UPDATE below)
            write_audit(
                conn,
                admin,
                "packet.reassign",
                packet_id,
                {"from": before["claimed_by"], "to": to_user},
                at=now,
            )
            return packet_from_row(row)


def _require_kind(conn: Any, answer_kind: str, reviewer: str) -> None:
    """KindNotAllowed, in plain words, when `reviewer` does not review packets of this kind of answer."""
    kinds = reviewer_kinds(conn, reviewer)
    if kinds and answer_kind not in kinds:
        raise KindNotAllowed(
            f"This packet holds a {kind_words(answer_kind)}; {reviewer} reviews only "
            f"{' and '.join(kind_words(k) + 's' for k in kinds)}. An admin can change the kinds an account "
            "reviews."
        )
