"""Blind stays blind (docs/design.md §9.1): a document's earlier answers are hidden from every reviewer who may
still review it blind, before, during and after a claim, until its blind review is done.

A document is *hidden from* a viewer while it has an open blind packet (an AUDIT or SECOND_REVIEW, pending or
claimed) that the viewer holds or could still be handed (packet_rows.not_paired_with: they did no other
review of it, opened and skipped no escalation of it, and never saw an answer of it). Every read made for
that viewer (queue pages, counts and totals, a packet, ground-truth pages and history, the metrics' rows:
the `viewer` argument) leaves out the document's other packets and versions in SQL; its open blind packets
stay listed (they show nothing to keep). A skip changes nothing: the reviewer may still be handed the packet.

A view that shows an answer of a document (a ground-truth history with a reviewer's version, an
adjudication packet, a disagreement on the Metrics page) records that the viewer has seen it (`answer.seen`
in the append-only audit log, once per viewer and document); claims never hand a blind packet of that
document to them, so a reviewer who has seen an answer can never give the blind one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.store.models import audit_log, packets
from arbiter.store.packet_rows import not_paired_with
from arbiter.store.repository import Repository
from arbiter.store.seen import BLIND as BLIND
from arbiter.store.seen import SEEN_ACTION as SEEN_ACTION
from arbiter.store.seen import seen_by as seen_by

HIDDEN_MESSAGE = (
    "This document is hidden from you while its blind review is open and you may still be the one to give "
    "it; it shows again once that review is done."
)
_OPEN = ("PENDING", "IN_REVIEW")


def _hiding_docs(viewer: str, doc_id: str | None = None) -> sa.Select[Any]:
    """The documents with an open blind packet `viewer` holds or may still be handed."""
    b = packets.alias("blind_open")
    query = sa.select(b.c.doc_id).where(
        b.c.kind.in_(BLIND),
        b.c.status.in_(_OPEN),
        sa.or_(b.c.claimed_by == viewer, not_paired_with(sa.literal(viewer), b)),
    )
    return query if doc_id is None else query.where(b.c.doc_id == doc_id).limit(1)


@dataclass(frozen=True)
class Hidden:
    """What a viewer may not see (None: an internal read, nothing hidden)."""

    viewer: str | None = None

    def visible(self, doc_id: sa.ColumnElement[Any], packet: Any | None = None) -> sa.ColumnElement[bool]:
        """The SQL filter: rows of hidden documents are left out (their open blind packets excepted, when
        `packet` is the packets table being filtered)."""
        if self.viewer is None:
            return sa.true()
        hidden: sa.ColumnElement[bool] = doc_id.in_(_hiding_docs(self.viewer))
        if packet is not None:
            hidden = sa.and_(hidden, ~sa.and_(packet.c.kind.in_(BLIND), packet.c.status.in_(_OPEN)))
        return ~hidden

    def hides(
        self, conn: Connection, doc_id: str, *, kind: str | None = None, status: str | None = None
    ) -> bool:
        """Whether this document (or this packet of it, given its kind and status) is hidden."""
        if self.viewer is None:
            return False
        if kind in BLIND and status in _OPEN:
            return False
        return conn.execute(_hiding_docs(self.viewer, doc_id)).first() is not None

    def docs(self, conn: Connection) -> set[str]:
        """Every document hidden from the viewer (for filtering computed figures)."""
        if self.viewer is None:
            return set()
        return set(conn.execute(_hiding_docs(self.viewer)).scalars())


def hidden_from(conn: Connection, viewer: str | None) -> Hidden:
    """What `viewer` may not see right now (None: an internal read, nothing hidden)."""
    del conn  # the rule is evaluated inside each statement, so it is as fresh as the read
    return Hidden(viewer)


def record_seen(conn: Connection, viewer: str, doc_ids: Iterable[str], *, at: datetime | None = None) -> None:
    """Remember that `viewer` saw an answer of each document (once each), inside the caller's transaction."""
    at = at or datetime.now(UTC)
    for doc_id in sorted(set(doc_ids)):
        already = conn.execute(
            sa.select(audit_log.c.id)
            .where(
                audit_log.c.target == doc_id, audit_log.c.actor == viewer, audit_log.c.action == SEEN_ACTION
            )
            .limit(1)
        ).first()
        if already is None:
            conn.execute(
                sa.insert(audit_log).values(
                    at=at, actor=viewer, action=SEEN_ACTION, target=doc_id, details={}
                )
            )


class Blind(Repository):
    """The rule for pages that list computed figures (the Metrics page) rather than rows read for a viewer."""

    def hidden_docs(self, viewer: str) -> set[str]:
        """The documents hidden from `viewer` now."""
        with self.read() as conn:
            return hidden_from(conn, viewer).docs(conn)

    def mark_seen(self, viewer: str, doc_ids: Iterable[str]) -> None:
        """Record that a page showed `viewer` an answer of these documents (never a blind review of them)."""
        doc_ids = list(doc_ids)
        if doc_ids:
            with self.write() as conn:
                record_seen(conn, viewer, doc_ids)
