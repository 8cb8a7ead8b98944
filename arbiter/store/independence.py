"""Reviews that must be independent: two packets of one document, either of them blind (an audit, a second
review, an adjudication), never go to the same reviewer (the two answers of a double review, an audit of a
document the reviewer saw before, also when they only opened an escalation of it and skipped it; an
adjudication needs a third person). Claim next filters with packet_rows.not_paired_with; a direct claim and
an admin reassign ask here, so they can say why they refuse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import PacketKind
from arbiter.store.models import packet_skips, packets
from arbiter.store.seen import BLIND, seen_by

_KIND_WORDS = {
    PacketKind.ESCALATION.value: "the escalation review",
    PacketKind.SECOND_REVIEW.value: "the blind second review",
    PacketKind.AUDIT.value: "a blind audit",
    PacketKind.ADJUDICATION.value: "the adjudication",
}


def kind_words(kind: str) -> str:
    return _KIND_WORDS.get(kind, "a review")


def other_review(conn: Connection, packet: Mapping[str, Any], reviewer: str) -> str | None:
    """Why `reviewer` may not hold this packet (a plain sentence), or None when nothing stands in the way."""
    p = packets.c
    skipped = sa.and_(
        p.kind
        == PacketKind.ESCALATION.value,  # its page showed the verdict; a blind page shows nothing to hide
        sa.exists().where(packet_skips.c.reviewer == reviewer, packet_skips.c.packet_id == p.packet_id),
    )
    query = sa.select(p.packet_id, p.kind, p.status, p.claimed_by).where(
        p.doc_id == packet["doc_id"],
        p.packet_id != packet["packet_id"],
        sa.or_(p.claimed_by == reviewer, skipped),
    )
    if packet["kind"] == PacketKind.ESCALATION.value:
        query = query.where(p.kind != PacketKind.ESCALATION.value)
    row = conn.execute(query.order_by(p.created_at, p.packet_id).limit(1)).first()
    if row is None:
        if (
            packet["kind"] in BLIND
            and conn.execute(sa.select(seen_by(sa.literal(reviewer), sa.literal(packet["doc_id"])))).scalar()
        ):
            return (
                f"{reviewer} has seen an earlier answer of {packet['doc_id']}; {kind_words(packet['kind'])} of "
                "it needs a reviewer who has not, so it stays blind."
            )
        return None
    if row.claimed_by != reviewer:
        done = "opened (and skipped)"
    else:
        done = "already did" if row.status == "COMPLETED" else "holds"
    return (
        f"{reviewer} {done} {kind_words(row.kind)} of {packet['doc_id']}; {kind_words(packet['kind'])} of it "
        "needs a different reviewer, so the two answers stay independent."
    )
