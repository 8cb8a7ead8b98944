"""Packet rows and the queue's statements: statuses, the claim statements built once with bound parameters,
and the conversions from a packets row to the contract packet or a queue summary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND, PacketKind, ReviewStatus, SMEPacket
from arbiter.store.errors import UnknownPacket
from arbiter.store.models import OPEN_PREDICATE, UTCDateTime, packet_skips, packets, user_kinds
from arbiter.store.seen import BLIND, SEEN_ACTION, seen_by

DEFAULT_LEASE = timedelta(minutes=30)
PENDING, IN_REVIEW = ReviewStatus.PENDING.value, ReviewStatus.IN_REVIEW.value
COMPLETED = ReviewStatus.COMPLETED.value
SUPERSEDED = ReviewStatus.SUPERSEDED.value
OPERATIONS, DISMISSED = ReviewStatus.OPERATIONS.value, ReviewStatus.DISMISSED.value
QUEUE_ORDER = (packets.c.priority, packets.c.created_at, packets.c.packet_id)


def _param(name: str) -> sa.BindParameter[Any]:
    return sa.bindparam(name, type_=UTCDateTime()) if name.endswith("_at") else sa.bindparam(name)


# The hot statements are built once with bound parameters: building a statement costs more CPU than
# running it (8 reviewer processes on 2 cores spend their time in SQLAlchemy's construction otherwise).
_CLAIM_SET = {
    "status": IN_REVIEW,
    "claimed_by": _param("p_reviewer"),
    "claimed_at": _param("p_now_at"),
    "claim_expires_at": _param("p_expires_at"),
    "updated_at": _param("p_now_at"),
}
# Independent reviews need distinct reviewers: nobody is handed a packet of a document of which they hold or
# held (claimed, completed) another packet when either one is blind (an audit, a second review): both halves
# of a double review, an audit and any other review of the document. Opening an escalation and skipping it
# counts too (its page showed the machine's verdict); skipping a blind packet showed nothing to keep from
# them. A pair stays barred after the first half is completed (a completed packet keeps its claimed_by).
# Nor is anyone handed a blind packet of a document of which a page showed them an answer (store/blind.py).
_SIB = packets.alias("sib")
_SEEN = packet_skips.alias("seen")
_ESCALATION = PacketKind.ESCALATION.value
_BLIND_SQL = ", ".join(f"'{k}'" for k in BLIND)
_INDEPENDENT_SQL = (
    "NOT EXISTS (SELECT 1 FROM packets AS sib WHERE sib.doc_id = {p}.doc_id AND sib.packet_id <> {p}.packet_id "
    f"AND ({{p}}.kind <> '{_ESCALATION}' OR sib.kind <> '{_ESCALATION}') AND (sib.claimed_by = :p_reviewer OR "
    f"(sib.kind = '{_ESCALATION}' AND EXISTS (SELECT 1 FROM packet_skips AS seen "
    "WHERE seen.reviewer = :p_reviewer AND seen.packet_id = sib.packet_id)))) "
    f"AND ({{p}}.kind NOT IN ({_BLIND_SQL}) OR NOT EXISTS (SELECT 1 FROM audit_log "
    f"AS seen_answer WHERE seen_answer.target = {{p}}.doc_id AND seen_answer.actor = :p_reviewer "
    f"AND seen_answer.action = '{SEEN_ACTION}'))"
)


def not_paired_with(reviewer: sa.ColumnElement[Any], table: Any = packets) -> sa.ColumnElement[bool]:
    seen = sa.exists().where(_SEEN.c.reviewer == reviewer, _SEEN.c.packet_id == _SIB.c.packet_id)
    other_review = sa.exists().where(
        _SIB.c.doc_id == table.c.doc_id,
        _SIB.c.packet_id != table.c.packet_id,
        sa.or_(table.c.kind != _ESCALATION, _SIB.c.kind != _ESCALATION),
        sa.or_(_SIB.c.claimed_by == reviewer, sa.and_(_SIB.c.kind == _ESCALATION, seen)),
    )
    saw_answer = sa.and_(table.c.kind.in_(BLIND), seen_by(reviewer, table.c.doc_id))
    return sa.and_(~other_review, ~saw_answer)


# A reviewer is handed packets of their kinds only (user_kinds, migration 0014; no row: every kind), every
# packet kind alike (escalations, blind second reviews and audits, adjudications). Read inside each statement,
# so it is as fresh as the claim; for an unrestricted reviewer the NOT EXISTS is evaluated once per statement
# (uncorrelated), so their claim costs one primary-key probe more.
_KINDS_SQL = (
    "(NOT EXISTS (SELECT 1 FROM user_kinds AS mine WHERE mine.user_name = :p_reviewer) "
    "OR {p}.answer_kind IN (SELECT mine.answer_kind FROM user_kinds AS mine WHERE mine.user_name = :p_reviewer))"
)


def kind_allowed(reviewer: sa.ColumnElement[Any], table: Any = packets) -> sa.ColumnElement[bool]:
    """The packet's answer kind is one the reviewer reviews (every kind when they have none recorded)."""
    mine = sa.select(user_kinds.c.answer_kind).where(user_kinds.c.user_name == reviewer)
    return sa.or_(~mine.exists(), table.c.answer_kind.in_(mine))


# Claim next in ONE statement: the most urgent claimable packet the reviewer has not skipped, walking the
# open-order index; only when there is none, the one they skipped longest ago (their skips, by time). COALESCE
# evaluates the second pick only when the first found nothing, so skipping costs the others nothing.
_CLAIMABLE = sa.or_(packets.c.status == PENDING, packets.c.claim_expires_at < _param("p_now_at"))
_NOT_SKIPPED = ~sa.exists().where(
    packet_skips.c.reviewer == sa.bindparam("p_reviewer"), packet_skips.c.packet_id == packets.c.packet_id
)
_PICK_FRESH = (
    sa.select(packets.c.packet_id)
    .where(sa.text(OPEN_PREDICATE))
    .where(_CLAIMABLE)
    .where(not_paired_with(sa.bindparam("p_reviewer")))
    .where(kind_allowed(sa.bindparam("p_reviewer")))
    .where(_NOT_SKIPPED)
    .order_by(*QUEUE_ORDER)
    .limit(1)
    .with_for_update(skip_locked=True)
    .scalar_subquery()
)
_PICK_SKIPPED = (
    sa.select(packets.c.packet_id)
    .join(packet_skips, packet_skips.c.packet_id == packets.c.packet_id)
    .where(packet_skips.c.reviewer == sa.bindparam("p_reviewer"))
    .where(sa.text(f"packets.{OPEN_PREDICATE}"))
    .where(_CLAIMABLE)
    .where(not_paired_with(sa.bindparam("p_reviewer")))
    .where(kind_allowed(sa.bindparam("p_reviewer")))
    .order_by(packet_skips.c.skipped_at, packets.c.packet_id)
    .limit(1)
    .with_for_update(of=packets, skip_locked=True)
    .scalar_subquery()
)
_PICK_NEXT = sa.func.coalesce(_PICK_FRESH, _PICK_SKIPPED)
# SQLite without fresh statistics may pick the status index and sort every open packet per claim; the
# partial index walks open packets in claim order, so name it (SQLAlchemy renders no hints for SQLite).
_PICK_NEXT_SQLITE = (
    sa.select(
        sa.text(
            "SELECT coalesce(("
            f"SELECT packet_id FROM packets INDEXED BY ix_packets_open_order WHERE {OPEN_PREDICATE} "
            f"AND (status = '{PENDING}' OR claim_expires_at < :p_now_at) "
            f"AND {_INDEPENDENT_SQL.format(p='packets')} AND {_KINDS_SQL.format(p='packets')} "
            "AND NOT EXISTS (SELECT 1 FROM packet_skips AS k WHERE k.reviewer = :p_reviewer "
            "AND k.packet_id = packets.packet_id) "
            "ORDER BY priority, created_at, packet_id LIMIT 1), ("
            "SELECT p.packet_id FROM packet_skips AS k JOIN packets AS p ON p.packet_id = k.packet_id "
            f"WHERE k.reviewer = :p_reviewer AND p.status IN ('{PENDING}', '{IN_REVIEW}') "
            f"AND (p.status = '{PENDING}' OR p.claim_expires_at < :p_now_at) "
            f"AND {_INDEPENDENT_SQL.format(p='p')} AND {_KINDS_SQL.format(p='p')} "
            "ORDER BY k.skipped_at, p.packet_id LIMIT 1)) AS packet_id"
        )
        .bindparams(_param("p_now_at"))
        .columns(packet_id=sa.String())
        .subquery("next_packet")
        .c.packet_id
    )
).scalar_subquery()
CLAIM_NEXT = {
    name: sa.update(packets).where(packets.c.packet_id == pick).values(_CLAIM_SET).returning(*packets.c)
    for name, pick in (("postgresql", _PICK_NEXT), ("sqlite", _PICK_NEXT_SQLITE))
}
RESUME_OWN = (
    sa.update(packets)
    .where(
        packets.c.packet_id
        == sa.select(packets.c.packet_id)
        .where(packets.c.status == IN_REVIEW, packets.c.claimed_by == sa.bindparam("p_reviewer"))
        .where(kind_allowed(sa.bindparam("p_reviewer")))
        .order_by(packets.c.claimed_at, packets.c.packet_id)
        .limit(1)
        .scalar_subquery()
    )
    .values(claim_expires_at=_param("p_expires_at"), updated_at=_param("p_now_at"))
    .returning(*packets.c)
)
# A reviewer holds at most this many claims at once (claim next hands back their own first; a direct claim
# beyond it is refused); Queue.max_claims overrides it.
DEFAULT_MAX_CLAIMS = 3
RELEASE = (
    sa.update(packets)
    .where(
        packets.c.packet_id == sa.bindparam("p_packet_id"),
        packets.c.status == IN_REVIEW,
        packets.c.claimed_by == sa.bindparam("p_reviewer"),
    )
    .values(
        status=PENDING, claimed_by=None, claimed_at=None, claim_expires_at=None, updated_at=_param("p_now_at")
    )
)


@dataclass(frozen=True)
class PacketSummary:
    """One queue row: enough to list and filter, none of the document's content."""

    packet_id: str
    doc_id: str
    priority: int
    reason: str
    status: str
    claimed_by: str | None
    claim_expires_at: datetime | None
    created_at: datetime
    doc_type: str | None
    top_codes: list[str]
    kind: str = PacketKind.ESCALATION.value
    answer_kind: str = DEFAULT_KIND  # the kind of answer (arbiter/kinds)


def packet_from_row(row: Any) -> SMEPacket:
    """The contract packet: the stored body with the live claim state from the columns."""
    m = row._mapping
    status = m["status"]
    body = dict(m["payload"])
    body.update(
        review_status=status,
        claimed_by=m["claimed_by"],
        claim_expires_at=m["claim_expires_at"],
        updated_at=m["updated_at"],
        packet_kind=m["kind"],
        pair_of=m["pair_of"],
    )
    return SMEPacket.model_validate(body)


def load_packet(conn: Connection, packet_id: str) -> Any:
    row = conn.execute(sa.select(packets).where(packets.c.packet_id == packet_id)).first()
    if row is None:
        raise UnknownPacket(f"There is no packet {packet_id}.")
    return row


def summary_from_row(row: Any) -> PacketSummary:
    m = row._mapping
    return PacketSummary(
        packet_id=m["packet_id"],
        doc_id=m["doc_id"],
        priority=m["priority"],
        reason=m["escalation_reason"],
        status=m["status"],
        claimed_by=m["claimed_by"],
        claim_expires_at=m["claim_expires_at"],
        created_at=m["created_at"],
        doc_type=m["doc_type"],
        top_codes=[c for c in m["top_codes"].split(",") if c],
        kind=m["kind"],
        answer_kind=m["answer_kind"],
    )


def as_list(value: str | list[str] | tuple[str, ...] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)
