"""SME reviews: the claim checked, then review, ground-truth version, COMPLETED and audit event in one
transaction; idempotent per submission key."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from arbiter.contracts import (
    FinalDecision,
    GroundTruthRecord,
    GroundTruthSource,
    PacketKind,
    ProductionClassification,
    SMEPacket,
    SMEReview,
    StopReason,
    VerificationOutcome,
)
from arbiter.contracts.answers import StatementVerdict
from arbiter.contracts.limits import Limits, answer_problem, notes_problem
from arbiter.store.adjudication import adjudication_packet, answered, disagreement, partner_answer
from arbiter.store.audit import write_audit
from arbiter.store.drafts import delete_drafts
from arbiter.store.errors import ClaimLost, TooLarge
from arbiter.store.models import UTCDateTime, ground_truth, known_answers, outcomes, packets, reviews
from arbiter.store.packet_rows import COMPLETED, IN_REVIEW, SUPERSEDED, load_packet, packet_from_row
from arbiter.store.records import RETRIES, insert_packet
from arbiter.store.repository import Repository
from arbiter.store.versions import insert_gt, next_version

# Built once (see packet_rows.py): the submit path runs these for every review.
_INSERT_REVIEW = sa.insert(reviews)
_COMPLETE = (
    sa.update(packets)
    .where(
        packets.c.packet_id == sa.bindparam("p_packet_id"),
        packets.c.status == IN_REVIEW,
        packets.c.claimed_by == sa.bindparam("p_reviewer"),
        packets.c.claim_expires_at >= sa.bindparam("p_now_at", type_=UTCDateTime()),
    )
    .values(status=COMPLETED, updated_at=sa.bindparam("p_now_at", type_=UTCDateTime()))
    .returning(*packets.c)
)
_KNOWN = sa.select(known_answers.c.gt_id).where(known_answers.c.packet_id == sa.bindparam("p_packet_id"))
_GT = sa.select(ground_truth.c.payload).where(ground_truth.c.gt_id == sa.bindparam("p_gt_id"))
_CONTEXT = sa.select(
    sa.select(ground_truth.c.payload)
    .where(ground_truth.c.doc_id == sa.bindparam("p_doc_id"))
    .order_by(ground_truth.c.version.desc())
    .limit(1)
    .scalar_subquery(),
    sa.select(outcomes.c.outcome)
    .where(outcomes.c.doc_id == sa.bindparam("p_doc_id"), outcomes.c.run_id == sa.bindparam("p_run_id"))
    .scalar_subquery(),
)


def _source_of(packet: SMEPacket, review: SMEReview) -> GroundTruthSource:
    if packet.packet_kind == PacketKind.ADJUDICATION:
        return GroundTruthSource.SME_ADJUDICATED
    return GroundTruthSource.SME_VALIDATED if review.agrees_with_primary else GroundTruthSource.SME_CORRECTED


def production_of(
    conn: Connection, packet: SMEPacket, previous: GroundTruthRecord | None
) -> ProductionClassification | None:
    """The production classifier's answer for the packet's document: blind packets do not carry it (it would
    hint at a verdict), so it comes from the run's escalation packet, else the version in force for the PDF."""
    if packet.production_classification is not None:
        return packet.production_classification
    p = packets.c
    body = conn.execute(
        sa.select(p.payload)
        .where(p.doc_id == packet.doc_id, p.run_id == packet.run_id, p.kind == PacketKind.ESCALATION.value)
        .limit(1)
    ).scalar()
    found = body.get("production_classification") if isinstance(body, dict) else None
    if found is not None:
        return ProductionClassification.model_validate(found)
    if previous is not None and previous.pdf_sha256 == packet.pdf_sha256:
        return previous.production_classification
    return None


class Reviews(Repository):
    """What SMEs submit for the packets they claimed."""

    limits: Limits = Limits()  # the profile's [limits]; the Store sets them

    def submit(
        self,
        packet_id: str,
        reviewer: str,
        review: SMEReview,
        ground_truth_classification: dict[str, Any],
        *,
        idempotency_key: str,
        now: datetime | None = None,
        statement_verdicts: list[StatementVerdict] | None = None,
    ) -> GroundTruthRecord:
        """Save a review: the claim must still be this reviewer's and unexpired, else ClaimLost (nothing
        is written; the caller keeps the draft). Review, ground-truth version, COMPLETED and audit event
        commit together. The same idempotency_key again returns the first result. `statement_verdicts`:
        a grounded answer's verdict per statement, written into the version (None for a classification)."""
        if review.reviewer != reviewer:
            raise ValueError("The review is signed by a different reviewer than the one submitting it.")
        problem = notes_problem(review.review_notes, self.limits) or answer_problem(
            ground_truth_classification, self.limits
        )
        if problem is not None:
            raise TooLarge(problem)
        stamp = now or datetime.now(UTC)
        for attempt in range(RETRIES):
            try:
                return self._submit(
                    packet_id,
                    reviewer,
                    review,
                    ground_truth_classification,
                    idempotency_key,
                    stamp,
                    statement_verdicts,
                )
            except IntegrityError:
                # A concurrent review of the same document took the version number, or the key was reused.
                # A key used for another packet raises ValueError here; anything else is retried.
                with self.read() as conn:
                    self._by_idempotency_key(conn, idempotency_key, packet_id)
                if attempt == RETRIES - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _submit(
        self,
        packet_id: str,
        reviewer: str,
        review: SMEReview,
        classification: dict[str, Any],
        key: str,
        now: datetime,
        verdicts: list[StatementVerdict] | None = None,
    ) -> GroundTruthRecord:
        with self.write() as conn:
            # The conditional UPDATE is the claim check and the lock in one; only when it fails is it worth
            # asking whether this is a repeat of a submit that already went through.
            claim = {"p_packet_id": packet_id, "p_reviewer": reviewer, "p_now_at": now}
            row = conn.execute(_COMPLETE, claim).first()
            if row is None:
                # A repeat (PostgreSQL: also a concurrent double submit that waited on the row lock).
                done = self._by_idempotency_key(conn, key, packet_id)
                if done is not None:
                    return done
                raise ClaimLost(self._lost_message(conn, packet_id, reviewer, now))
            packet = packet_from_row(row)
            # Time per packet on the server's clock: from the start of the claim being submitted (renewals
            # keep it; a release or a reassign starts a new one) to now. The client's times are replaced.
            claimed_at = row._mapping["claimed_at"]
            if claimed_at is not None:
                review = review.model_copy(update={"started_at": claimed_at, "submitted_at": now})
            previous, outcome = self._context_for(conn, packet)
            # A known-answer packet (store/known.py) measures the reviewer: its answer never becomes ground truth,
            # opens no adjudication and changes no decision; the review names the version in force.
            known = conn.execute(_KNOWN, {"p_packet_id": packet_id}).scalar()
            if known is not None and previous is None:
                previous = GroundTruthRecord.model_validate(
                    conn.execute(_GT, {"p_gt_id": known}).scalar_one()
                )
            opened = (
                None
                if known
                else self._adjudicate_if_split(conn, packet, review, classification, previous, now, verdicts)
            )
            source = None if opened is not None or known else _source_of(packet, review)
            record: GroundTruthRecord | None = previous
            if source is not None:
                record = next_version(
                    previous,
                    doc_id=packet.doc_id,
                    source=source,
                    classification=classification,
                    primary=packet.primary_agent_classification,
                    production=production_of(conn, packet, previous),
                    outcome=outcome,
                    pdf_sha256=packet.pdf_sha256,
                    review=review,
                    run_id=packet.run_id,
                    now=now,
                    answer_kind=packet.answer_kind,
                    statement_verdicts=verdicts,
                )
                if record is None:  # says exactly what the newest version says (same review twice)
                    record = previous
                else:
                    insert_gt(conn, record)
            assert record is not None  # an adjudication opens only over a version in force
            review_row = {
                "packet_id": packet_id,
                "doc_id": packet.doc_id,
                "reviewer": reviewer,
                "idempotency_key": key,
                "gt_id": record.gt_id,
                "payload": review.model_dump(mode="json"),
                "answer": classification,
                "created_at": now,
                "claimed_at": claimed_at,
                "duration_s": (now - claimed_at).total_seconds() if claimed_at is not None else None,
            }
            conn.execute(_INSERT_REVIEW, review_row)
            delete_drafts(conn, packet_id)
            details: dict[str, Any] = {"gt_id": record.gt_id, "version": record.version}
            if known:
                details["known_answer"] = True
            else:
                details.update(
                    {"source": source.value} if source else {"adjudication": opened and opened.packet_id}
                )
            write_audit(conn, reviewer, "packet.submit", packet_id, details, at=now)
            return record

    def _adjudicate_if_split(
        self,
        conn: Connection,
        packet: SMEPacket,
        review: SMEReview,
        classification: dict[str, Any],
        previous: GroundTruthRecord | None,
        now: datetime,
        verdicts: list[StatementVerdict] | None = None,
    ) -> SMEPacket | None:
        """When this is the later review of a double review and it disagrees with the earlier one, queue the
        ADJUDICATION packet (audited) and return it: nothing becomes the truth until it is decided."""
        other = partner_answer(conn, packet)
        if other is None or previous is None:
            return None
        case = disagreement(packet, answered(packet.packet_id, review, classification, verdicts), other)
        if case is None:
            return None
        opened = adjudication_packet(conn, packet, case, now)
        insert_packet(conn, opened, now)
        details = {
            "first": case.first.packet_id,
            "second": case.second.packet_id,
            "differences": case.differences,
        }
        write_audit(conn, "arbiter", "adjudication.open", opened.packet_id, details, at=now)
        return opened

    def _by_idempotency_key(self, conn: Connection, key: str, packet_id: str) -> GroundTruthRecord | None:
        row = conn.execute(
            sa.select(reviews.c.packet_id, ground_truth.c.payload)
            .join(ground_truth, ground_truth.c.gt_id == reviews.c.gt_id)
            .where(reviews.c.idempotency_key == key)
        ).first()
        if row is None:
            return None
        if row[0] != packet_id:
            raise ValueError("This submission key was already used for a different packet.")
        return GroundTruthRecord.model_validate(row[1])

    def _lost_message(self, conn: Connection, packet_id: str, reviewer: str, now: datetime) -> str:
        m = load_packet(conn, packet_id)._mapping
        kept = "Nothing was saved; your draft is kept."
        if m["status"] == COMPLETED:
            return f"This packet was already completed. {kept}"
        if m["status"] == SUPERSEDED:
            return f"A newer run replaced this packet; open the document's new packet. {kept}"
        if m["status"] == IN_REVIEW and m["claimed_by"] != reviewer:
            return f"Your claim on this packet ended and {m['claimed_by']} holds it now. {kept}"
        if m["status"] == IN_REVIEW:
            expired = m["claim_expires_at"].strftime("%H:%M UTC")
            return f"Your claim on this packet expired at {expired}. Claim it again to submit. {kept}"
        return f"This packet was released back to the queue. Claim it again to submit. {kept}"

    def _context_for(
        self, conn: Connection, packet: SMEPacket
    ) -> tuple[GroundTruthRecord | None, VerificationOutcome]:
        """The document's newest ground truth and the packet's outcome, in one round trip."""
        params = {"p_doc_id": packet.doc_id, "p_run_id": packet.run_id}
        gt_data, outcome_data = conn.execute(_CONTEXT, params).one()
        previous = GroundTruthRecord.model_validate(gt_data) if gt_data is not None else None
        if outcome_data is not None:
            return previous, VerificationOutcome.model_validate(outcome_data)
        # A packet loaded without its run (imported mirror): summarise what the packet itself says.
        return previous, VerificationOutcome(
            doc_id=packet.doc_id,
            final_decision=FinalDecision.ESCALATE_TO_SME,
            escalation_reason=packet.escalation_reason,
            stop_reason=StopReason.ESCALATED_BY_POLICY,
            policy_version=packet.policy_version,
            final_issues=packet.issues_summary,
            **({"semantic_checks": packet.semantic_checks} if packet.semantic_checks else {}),
        )

    def get(self, packet_id: str) -> SMEReview | None:
        with self.read() as conn:
            data = conn.execute(
                sa.select(reviews.c.payload)
                .where(reviews.c.packet_id == packet_id)
                .order_by(reviews.c.id)
                .limit(1)
            ).scalar()
        return SMEReview.model_validate(data) if data is not None else None
