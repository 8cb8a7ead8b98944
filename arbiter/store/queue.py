"""The review queue: counts, filtered pages in SQL, and claims that are one atomic statement on both
databases (ENGINEERING_NOTES: read-then-update double-claimed nearly everything under 8 processes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import PacketKind, SMEPacket
from arbiter.store.audit import write_audit
from arbiter.store.blind import HIDDEN_MESSAGE, Hidden, hidden_from, record_seen
from arbiter.store.db import Database, upsert
from arbiter.store.drafts import delete_drafts
from arbiter.store.errors import KindNotAllowed, NotIndependent, TooManyClaims, UnknownPacket, UnknownUser
from arbiter.store.independence import other_review
from arbiter.store.models import OPEN_PREDICATE, UTCDateTime, packet_codes, packet_skips, packets
from arbiter.store.packet_rows import (
    CLAIM_NEXT,
    COMPLETED,
    DEFAULT_LEASE,
    DEFAULT_MAX_CLAIMS,
    IN_REVIEW,
    PENDING,
    QUEUE_ORDER,
    RELEASE,
    RESUME_OWN,
    SUPERSEDED,
    PacketSummary,
    as_list,
    kind_allowed,
    load_packet,
    not_paired_with,
    packet_from_row,
    summary_from_row,
)
from arbiter.store.repository import Repository
from arbiter.store.users import Users, kind_words, reviewer_kinds

_BATCH = 500
_NOTHING = Hidden()


class Queue(Repository):
    """The packets waiting for review: read in priority order, claimed atomically, released, reassigned."""

    def __init__(self, db: Database, users: Users, *, max_claims: int = DEFAULT_MAX_CLAIMS) -> None:
        super().__init__(db)
        self.users = users
        self.max_claims = max_claims

    # Reading the queue --------------------------------------------------------------------------------
    def counts(self, *, viewer: str | None = None) -> dict[str, Any]:
        """{'by_status': {status: n}, 'by_reason': {reason: n open}, 'by_kind': {answer kind: {status: n, 'open':
        n}}, 'open': n, 'total': n} (superseded excluded from total); for a `viewer`, without the packets hidden
        from them (a count that differs from the list would say a document they hold blind has another packet)
        and only of the kinds they review."""
        with self.read() as conn:
            shown = hidden_from(conn, viewer).visible(packets.c.doc_id, packets)
            if viewer is not None:
                shown = sa.and_(shown, kind_allowed(sa.literal(viewer)))
            by_status: dict[str, int] = {}
            by_kind: dict[str, dict[str, int]] = {}
            for status, answer_kind, n in conn.execute(
                sa.select(packets.c.status, packets.c.answer_kind, sa.func.count())
                .where(shown)
                .group_by(packets.c.status, packets.c.answer_kind)
            ):
                by_status[status] = by_status.get(status, 0) + n
                by_kind.setdefault(answer_kind, {})[status] = n
            by_reason: dict[str, int] = dict(
                conn.execute(
                    sa.select(packets.c.escalation_reason, sa.func.count())
                    .where(sa.text(OPEN_PREDICATE), shown)
                    .group_by(packets.c.escalation_reason)
                    .order_by(sa.func.count().desc())
                ).all()
            )
        for counted in (by_status, *by_kind.values()):
            for status in (PENDING, IN_REVIEW, COMPLETED):
                counted.setdefault(status, 0)
        for counted in by_kind.values():
            counted["open"] = counted[PENDING] + counted[IN_REVIEW]
        return {
            "by_status": by_status,
            "by_reason": by_reason,
            "by_kind": dict(sorted(by_kind.items())),
            "open": by_status[PENDING] + by_status[IN_REVIEW],
            "total": sum(n for s, n in by_status.items() if s != SUPERSEDED),
        }

    def _filtered(
        self,
        query: sa.Select[Any],
        *,
        status: str | list[str] | None,
        reason: str | list[str] | None,
        code: str | None,
        doc_type: str | list[str] | None,
        claimed_by: str | None,
        answer_kind: str | list[str] | None = None,
        hidden: Hidden = _NOTHING,
    ) -> sa.Select[Any]:
        query = query.where(hidden.visible(packets.c.doc_id, packets))
        if hidden.viewer is not None:  # a viewer sees the kinds they review only
            query = query.where(kind_allowed(sa.literal(hidden.viewer)))
        if answer_kinds := as_list(answer_kind):
            query = query.where(packets.c.answer_kind.in_(answer_kinds))
        statuses = as_list(status)
        if statuses:
            query = query.where(packets.c.status.in_(statuses))
        else:
            query = query.where(packets.c.status != SUPERSEDED)
        if reasons := as_list(reason):
            query = query.where(packets.c.escalation_reason.in_(reasons))
        if types := as_list(doc_type):
            query = query.where(packets.c.doc_type.in_(types))
        if claimed_by is not None:
            query = query.where(packets.c.claimed_by == claimed_by)
        if code:
            query = query.where(
                sa.exists().where(
                    packet_codes.c.packet_id == packets.c.packet_id, packet_codes.c.code == code
                )
            )
        return query

    def page(
        self,
        *,
        status: str | list[str] | None = None,
        reason: str | list[str] | None = None,
        code: str | None = None,
        doc_type: str | list[str] | None = None,
        claimed_by: str | None = None,
        offset: int = 0,
        limit: int = 50,
        total: int | None = None,
        viewer: str | None = None,
        answer_kind: str | list[str] | None = None,
    ) -> list[PacketSummary]:
        """One page of the queue in priority order (severity, then age), filtered and paged in SQL.

        Given `total` (count with the same filters), a page in the back half is read from the end
        in reverse order, so the last page costs what the first does instead of skipping every row before it.
        Given `viewer`, packets of documents the viewer holds blind are left out (store/blind.py), and so are
        packets of kinds they do not review; `answer_kind` filters by kind.
        """
        cols = [c for c in packets.c if c.name != "payload"]
        query = self._filtered(
            sa.select(*cols),
            status=status,
            reason=reason,
            code=code,
            doc_type=doc_type,
            claimed_by=claimed_by,
            answer_kind=answer_kind,
            hidden=self._hidden(viewer),
        )
        offset, limit = max(offset, 0), max(limit, 0)
        if total is not None and offset > total // 2:
            end = min(offset + limit, total)
            if end <= offset:
                return []
            backwards = (
                query.order_by(*(c.desc() for c in QUEUE_ORDER)).offset(total - end).limit(end - offset)
            )
            with self.read() as conn:
                return [summary_from_row(r) for r in reversed(conn.execute(backwards).all())]
        query = query.order_by(*QUEUE_ORDER).offset(offset).limit(limit)
        with self.read() as conn:
            return [summary_from_row(r) for r in conn.execute(query)]

    def count(
        self,
        *,
        status: str | list[str] | None = None,
        reason: str | list[str] | None = None,
        code: str | None = None,
        doc_type: str | list[str] | None = None,
        claimed_by: str | None = None,
        viewer: str | None = None,
        answer_kind: str | list[str] | None = None,
    ) -> int:
        """How many packets page would page through with the same filters."""
        query = self._filtered(
            sa.select(sa.func.count()).select_from(packets),
            status=status,
            reason=reason,
            code=code,
            doc_type=doc_type,
            claimed_by=claimed_by,
            answer_kind=answer_kind,
            hidden=self._hidden(viewer),
        )
        with self.read() as conn:
            return int(conn.execute(query).scalar_one())

    def filter_options(self) -> dict[str, list[str]]:
        """Distinct reasons, document types, issue codes and answer kinds present, for the queue's filter
        widgets."""
        with self.read() as conn:
            reasons = conn.execute(sa.select(packets.c.escalation_reason).distinct()).scalars().all()
            types = conn.execute(sa.select(packets.c.doc_type).distinct()).scalars().all()
            codes = conn.execute(sa.select(packet_codes.c.code).distinct()).scalars().all()
            kinds = conn.execute(sa.select(packets.c.answer_kind).distinct()).scalars().all()
        return {
            "reasons": sorted(reasons),
            "doc_types": sorted(t for t in types if t),
            "codes": sorted(codes),
            "kinds": sorted(kinds),
        }

    def _hidden(self, viewer: str | None) -> Hidden:
        return _NOTHING if viewer is None else Hidden(viewer)

    def get(self, packet_id: str, *, viewer: str | None = None) -> SMEPacket:
        """The packet; UnknownPacket for a `viewer` it is hidden from (its document's blind review is open and
        theirs to give, store/blind.py). An adjudication packet shows both answers: seen (recorded)."""
        with self.read() as conn:
            row = load_packet(conn, packet_id)
            m = row._mapping
            if hidden_from(conn, viewer).hides(conn, m["doc_id"], kind=m["kind"], status=m["status"]):
                raise UnknownPacket(HIDDEN_MESSAGE)
        if viewer is not None and m["kind"] == PacketKind.ADJUDICATION.value:
            with self.write() as conn:
                record_seen(conn, viewer, [m["doc_id"]])
        return packet_from_row(row)

    def status(self, packet_id: str) -> str:
        """The stored status (what get_packet(...).review_status also says)."""
        with self.read() as conn:
            return str(load_packet(conn, packet_id)._mapping["status"])

    def newest_escalations(self) -> list[SMEPacket]:
        """Each document's newest escalation packet that no later run replaced (what the packet mirrors show;
        blind samples stay in the database), in doc_id order."""
        query = (
            sa.select(packets)
            .where(packets.c.status != SUPERSEDED, packets.c.kind == PacketKind.ESCALATION.value)
            .order_by(packets.c.doc_id, packets.c.created_at)
        )
        newest: dict[str, Any] = {}
        with self.read() as conn:
            for row in conn.execute(query.execution_options(yield_per=_BATCH)):
                newest[row._mapping["doc_id"]] = row
            return [packet_from_row(row) for row in newest.values()]

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
