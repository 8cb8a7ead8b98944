"""Reading the review queue: counts, filtered pages and their filter options in SQL, one packet, and the newest
escalation per document — for a viewer, without the packets hidden from them. `Queue` (queue.py) adds the
claims on top of these reads.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from arbiter.contracts import PacketKind, SMEPacket
from arbiter.store.blind import HIDDEN_MESSAGE, Hidden, hidden_from, record_seen
from arbiter.store.errors import UnknownPacket
from arbiter.store.models import OPEN_PREDICATE, packet_codes, packets
from arbiter.store.packet_rows import (
    COMPLETED,
    IN_REVIEW,
    PENDING,
    QUEUE_ORDER,
    SUPERSEDED,
    PacketSummary,
    as_list,
    kind_allowed,
    load_packet,
    packet_from_row,
    summary_from_row,
)
from arbiter.store.repository import Repository

_BATCH = 500
_NOTHING = Hidden()


class QueueReads(Repository):
    """The packets waiting for review, read in priority order (the claims are Queue's, in queue.py)."""

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
