"""Blind stays blind (docs/design.md §9.1): while a user holds a blind packet (AUDIT or SECOND_REVIEW) of a
document, no read made for that user shows another packet, review or ground-truth version of it. Every read
that takes a `viewer` first looks up what the viewer holds blind (at most a few claims, one indexed query)
and leaves those documents out in SQL, so each page gets the rule from the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import BLIND_KINDS
from arbiter.store.models import packets
from arbiter.store.packet_rows import IN_REVIEW

BLIND = tuple(sorted(kind.value for kind in BLIND_KINDS))
HIDDEN_MESSAGE = (
    "This document is hidden from you while you hold a blind review of it; it shows again once you have "
    "submitted or skipped that review."
)


@dataclass(frozen=True)
class Hidden:
    """The documents a viewer holds blind, and the blind packets themselves (which stay visible)."""

    doc_ids: frozenset[str] = field(default_factory=frozenset)
    own_packets: frozenset[str] = field(default_factory=frozenset)

    def visible(
        self, doc_id: sa.ColumnElement[Any], packet_id: sa.ColumnElement[Any] | None = None
    ) -> sa.ColumnElement[bool]:
        """The SQL filter: rows of hidden documents are left out (the viewer's own blind packets excepted)."""
        if not self.doc_ids:
            return sa.true()
        hidden: sa.ColumnElement[bool] = doc_id.in_(sorted(self.doc_ids))
        if packet_id is not None:
            hidden = sa.and_(hidden, packet_id.not_in(sorted(self.own_packets)))
        return ~hidden


def hidden_from(conn: Connection, viewer: str | None) -> Hidden:
    """What `viewer` holds blind right now (None: an internal read, nothing hidden)."""
    if viewer is None:
        return Hidden()
    p = packets.c
    rows = conn.execute(
        sa.select(p.doc_id, p.packet_id).where(
            p.claimed_by == viewer, p.status == IN_REVIEW, p.kind.in_(BLIND)
        )
    ).all()
    return Hidden(frozenset(r.doc_id for r in rows), frozenset(r.packet_id for r in rows))
