"""Double reviews that disagree (docs/design.md §8.2): the later of the two reviews of a double-reviewed
document is compared with the earlier one; when they disagree (contracts/agreement.py) neither becomes the
truth again: the document gets an ADJUDICATION packet holding both answers, and only the adjudicator's
decision becomes a ground-truth version (SME_ADJUDICATED). Until then the document is *unsettled*: the
version in force is still the earlier review's, and exports and metrics leave the document out."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import (
    AdjudicationCase,
    PacketKind,
    ReviewedAnswer,
    SMEPacket,
    SMEReview,
)
from arbiter.contracts.agreement import differences
from arbiter.contracts.answers import StatementVerdict, verdict_differences
from arbiter.contracts.grounded import KIND as GROUNDED
from arbiter.store.models import ground_truth, packets, reviews
from arbiter.store.packet_rows import SUPERSEDED, load_packet, packet_from_row

ADJUDICATION = PacketKind.ADJUDICATION.value
REASON = "review_disagreement"
MESSAGE = (
    "Two independent reviews of this document disagree. Compare them and decide: keep the first, keep the "
    "second, or give the corrected answer. Only your decision becomes the ground truth."
)


def partner_answer(conn: Connection, packet: SMEPacket) -> ReviewedAnswer | None:
    """The other review of a double review (the escalation's, or its blind second review's), if saved."""
    p = packets.c
    if packet.packet_kind == PacketKind.ESCALATION:
        partners: Any = sa.select(p.packet_id).where(
            p.pair_of == packet.packet_id, p.kind == PacketKind.SECOND_REVIEW.value
        )
    elif packet.packet_kind == PacketKind.SECOND_REVIEW and packet.pair_of:
        partners = [packet.pair_of]
    else:
        return None
    r = reviews.c
    row = conn.execute(
        sa.select(r.packet_id, r.payload, r.answer, ground_truth.c.payload)
        .select_from(reviews.outerjoin(ground_truth, ground_truth.c.gt_id == r.gt_id))
        .where(r.packet_id.in_(partners))
        .order_by(r.id)
        .limit(1)
    ).first()
    if row is None:
        return None
    packet_id, payload, answer, gt_payload = row
    if answer is None:  # a review saved before answers were kept: it wrote the version it points at
        answer = (gt_payload or {}).get("ground_truth_classification")
    if not isinstance(answer, dict):
        return None
    # A grounded answer's verdicts are in the version the review wrote (or left in force, saying the same).
    verdicts = (gt_payload or {}).get("statement_verdicts")
    return answered(
        packet_id,
        SMEReview.model_validate(payload),
        answer,
        [StatementVerdict.model_validate(v) for v in verdicts] if isinstance(verdicts, list) else None,
    )


def answered(
    packet_id: str,
    review: SMEReview,
    classification: dict[str, Any],
    verdicts: list[StatementVerdict] | None = None,
) -> ReviewedAnswer:
    return ReviewedAnswer(
        packet_id=packet_id,
        reviewer=review.reviewer,
        classification=classification,
        agrees_with_primary=review.agrees_with_primary,
        review_notes=review.review_notes,
        confidence=review.confidence,
        submitted_at=review.submitted_at,
        statement_verdicts=verdicts,
    )


def disagreement(packet: SMEPacket, mine: ReviewedAnswer, other: ReviewedAnswer) -> AdjudicationCase | None:
    """The case to adjudicate when the two answers disagree (first: the escalation's review), else None."""
    first, second = (mine, other) if packet.packet_kind == PacketKind.ESCALATION else (other, mine)
    if packet.answer_kind == GROUNDED:
        found = verdict_differences(
            first.statement_verdicts, second.statement_verdicts, first.classification, second.classification
        )
        if (
            not found and first.classification != second.classification
        ):  # same verdicts, other words or quotes
            found = [
                "The two reviews saved different answers (a statement's text, a quote or the missing evidence)."
            ]
    else:
        found = differences(first.classification, second.classification)
    return AdjudicationCase(first=first, second=second, differences=found) if found else None


def adjudication_packet(
    conn: Connection, packet: SMEPacket, case: AdjudicationCase, now: datetime
) -> SMEPacket:
    """The ADJUDICATION packet of a case: the escalation's document fields, both answers, no verdict."""
    escalation = (
        packet
        if packet.packet_kind == PacketKind.ESCALATION
        else packet_from_row(load_packet(conn, case.first.packet_id))
    )
    key = f"{packet.doc_id}|{case.first.packet_id}|{case.second.packet_id}|{ADJUDICATION}"
    body = escalation.model_dump(
        exclude={"review_status", "claimed_by", "claim_expires_at", "packet_kind", "pair_of"}
    )
    body.update(
        packet_id="pkt-" + hashlib.sha256(key.encode()).hexdigest()[:16],
        v5_decision=None,
        escalation_reason=REASON,
        escalation_message=MESSAGE,
        total_issues=0,
        issues_summary=[],
        retry_log=[],
        priority=1,
        created_at=now,
        updated_at=now,
        packet_kind=PacketKind.ADJUDICATION,
        pair_of=escalation.packet_id,
        adjudication=case,
        semantic_checks=None,
    )
    return SMEPacket.model_validate(body)


def unsettled(doc_id: sa.ColumnElement[Any], as_of: datetime | None = None) -> sa.ColumnElement[bool]:
    """True for a document with an ADJUDICATION packet (created by `as_of`) not yet decided (by `as_of`)."""
    adj = packets.alias("adj")
    decided = reviews.alias("adj_decision")
    open_case = [adj.c.doc_id == doc_id, adj.c.kind == ADJUDICATION, adj.c.status != SUPERSEDED]
    decision = [decided.c.packet_id == adj.c.packet_id]
    if as_of is not None:
        open_case.append(adj.c.created_at <= as_of)
        decision.append(decided.c.created_at <= as_of)
    return sa.exists().where(*open_case, ~sa.exists().where(*decision))


def unsettled_sql(doc_column: str, as_of: bool) -> str:
    """unsettled() as SQL text for the metrics' text statements (their `:as_of` parameter when `as_of`)."""
    adj_cut = " AND adj.created_at <= :as_of" if as_of else ""
    review_cut = " AND r.created_at <= :as_of" if as_of else ""
    return (
        f"EXISTS (SELECT 1 FROM packets adj WHERE adj.doc_id = {doc_column} AND adj.kind = '{ADJUDICATION}' "
        f"AND adj.status <> '{SUPERSEDED}'{adj_cut} AND NOT EXISTS (SELECT 1 FROM reviews r "
        f"WHERE r.packet_id = adj.packet_id{review_cut}))"
    )


def unsettled_count(conn: Connection, as_of: datetime | None = None, kind: str | None = None) -> int:
    """How many documents with ground truth (of the answer kind; None: any) await adjudication (as of the time)."""
    g = ground_truth.c
    query = sa.select(sa.func.count(sa.distinct(g.doc_id))).where(unsettled(g.doc_id, as_of))
    if kind is not None:
        query = query.where(g.answer_kind == kind)
    if as_of is not None:
        query = query.where(g.created_at <= as_of)
    return int(conn.execute(query).scalar_one())
