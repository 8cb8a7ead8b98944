"""Writes: a batch run's documents (one transaction each, idempotent per run) and SME reviews (claim
checked, review + ground-truth version + COMPLETED + audit in one transaction); ground-truth reads."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from arbiter.contracts import (
    FinalDecision,
    GroundTruthRecord,
    GroundTruthSource,
    PacketKind,
    SMEPacket,
    SMEReview,
    StopReason,
    VerificationOutcome,
)
from arbiter.record.ground_truth import next_version
from arbiter.store.audit import write_audit
from arbiter.store.db import insert_ignore
from arbiter.store.errors import ClaimLost
from arbiter.store.models import (
    UTCDateTime,
    documents,
    ground_truth,
    outcomes,
    packet_codes,
    packets,
    reviews,
    runs,
)
from arbiter.store.queue import (
    COMPLETED,
    IN_REVIEW,
    PENDING,
    SUPERSEDED,
    QueueMixin,
    load_packet,
    packet_from_row,
)

if TYPE_CHECKING:
    from arbiter.record.mirrors import DocumentRecord

SME_SOURCES = (GroundTruthSource.SME_VALIDATED.value, GroundTruthSource.SME_CORRECTED.value)
# Results an internal or infrastructure fault caused (a crash in Arbiter, the extraction service failing, the
# database away): recorded so the document has a result, never a reason for a later run to skip it.
REDO_ERRORS = frozenset({"internal_error", "pdf_extractor_failed", "database_unavailable"})
_RETRIES = 5


@dataclass(frozen=True)
class RecordResult:
    """What record_document wrote: recorded False means this (doc_id, run_id) was already there."""

    recorded: bool
    packet_id: str | None
    ground_truth: GroundTruthRecord | None


def _doc_type(*classifications: dict[str, Any] | None) -> str | None:
    for c in classifications:
        if isinstance(c, dict) and isinstance(c.get("dominant_type"), str):
            return str(c["dominant_type"])
    return None


def _codes(packet: SMEPacket) -> list[str]:
    """Distinct issue codes, worst first (issues_summary is already BLOCKER→MAJOR→MINOR)."""
    return list(dict.fromkeys(i.code for i in packet.issues_summary))


def latest_gt(conn: Connection, doc_id: str) -> GroundTruthRecord | None:
    row = conn.execute(
        sa.select(ground_truth.c.payload)
        .where(ground_truth.c.doc_id == doc_id)
        .order_by(ground_truth.c.version.desc())
        .limit(1)
    ).first()
    return GroundTruthRecord.model_validate(row[0]) if row else None


# Built once (see queue.py): the submit path runs these for every review.
_INSERT_GT = sa.insert(ground_truth)
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


def insert_gt(conn: Connection, record: GroundTruthRecord) -> None:
    row = {
        "gt_id": record.gt_id,
        "doc_id": record.doc_id,
        "version": record.version,
        "supersedes": record.supersedes,
        "source": record.ground_truth_source.value,
        "created_at": record.created_at,
        "payload": record.model_dump(mode="json"),
    }
    conn.execute(_INSERT_GT, row)


def _retrying(fn: Any) -> Any:
    """Run a transaction again when a concurrent writer took the same unique key (ground-truth version)."""
    for attempt in range(_RETRIES):
        try:
            return fn()
        except IntegrityError:
            if attempt == _RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
    return None  # pragma: no cover


class RecordsMixin(QueueMixin):
    # Batch writes -------------------------------------------------------------------------------------
    def record_document(self, record: DocumentRecord, *, now: datetime | None = None) -> RecordResult:
        """Store one document's run in one transaction: document, outcome, packet (escalations) or
        automatic ground truth (accepts), audit event. A second call for the same (doc_id, run_id)
        writes nothing; a packet already claimed or completed is never reset by a later run."""
        stamp = now or datetime.now(UTC)
        result: RecordResult = _retrying(lambda: self._record(record, stamp))
        return result

    def _record(self, record: DocumentRecord, now: datetime) -> RecordResult:
        outcome = record.outcome
        packet = record.packet
        with self.write() as conn:
            insert_ignore(conn, runs, {"run_id": record.run_id, "created_at": now})
            fresh = insert_ignore(
                conn,
                documents,
                {
                    "doc_id": record.doc_id,
                    "run_id": record.run_id,
                    "skip_key": record.skip_key,
                    "pdf_path": record.pdf_path,
                    "pdf_sha256": packet.pdf_sha256
                    if packet
                    else (record.ground_truth.pdf_sha256 if record.ground_truth else ""),
                    "final_decision": str(outcome.final_decision),
                    "escalation_reason": outcome.escalation_reason,
                    "doc_type": _doc_type(outcome.final_classification),
                    "error": record.error,
                    "created_at": now,
                },
            )
            if not fresh:
                existing = conn.execute(
                    sa.select(packets.c.packet_id).where(
                        packets.c.doc_id == record.doc_id, packets.c.run_id == record.run_id
                    )
                ).scalar()
                return RecordResult(False, existing, None)
            insert_ignore(
                conn,
                outcomes,
                {
                    "doc_id": record.doc_id,
                    "run_id": record.run_id,
                    "outcome": outcome.model_dump(mode="json"),
                },
            )
            packet_id = self._insert_packet(conn, packet, now) if packet is not None else None
            for sample in record.samples:
                self._insert_packet(conn, sample, now)
            gt = self._auto_ground_truth(conn, record) if record.ground_truth is not None else None
            details = {
                "run_id": record.run_id,
                "decision": str(outcome.final_decision),
                "reason": outcome.escalation_reason,
                "packet_id": packet_id,
                "gt_version": gt.version if gt else None,
                "samples": [p.packet_id for p in record.samples],
            }
            write_audit(conn, "arbiter", "document.record", record.doc_id, details, at=now)
            return RecordResult(True, packet_id, gt)

    def _insert_packet(self, conn: Connection, packet: SMEPacket, now: datetime) -> str:
        # A newer packet replaces an older one of the same kind nobody has started (a new escalation also
        # retires the old escalation's pending second review); claimed or completed ones stay.
        p = packets.c
        kind = packet.packet_kind.value
        replaces = [kind, PacketKind.SECOND_REVIEW.value] if kind == PacketKind.ESCALATION else [kind]
        conn.execute(
            sa.update(packets)
            .where(
                p.doc_id == packet.doc_id,
                p.status == PENDING,
                p.kind.in_(replaces),
                p.packet_id != packet.packet_id,
            )
            .values(status=SUPERSEDED, superseded_by=packet.packet_id, updated_at=now)
        )
        codes = _codes(packet)
        inserted = insert_ignore(
            conn,
            packets,
            {
                "packet_id": packet.packet_id,
                "doc_id": packet.doc_id,
                "run_id": packet.run_id,
                "priority": packet.priority,
                "escalation_reason": packet.escalation_reason,
                "doc_type": _doc_type(packet.final_classification, packet.primary_agent_classification),
                "top_codes": ",".join(codes[:3])[:255],
                "status": PENDING,
                "kind": kind,
                "pair_of": packet.pair_of,
                "created_at": packet.created_at,
                "updated_at": packet.updated_at,
                "payload": packet.model_dump(
                    mode="json",
                    exclude={"review_status", "claimed_by", "claim_expires_at", "packet_kind", "pair_of"},
                ),
            },
        )
        if inserted and codes:
            conn.execute(sa.insert(packet_codes), [{"packet_id": packet.packet_id, "code": c} for c in codes])
        return packet.packet_id

    def _auto_ground_truth(self, conn: Connection, record: DocumentRecord) -> GroundTruthRecord | None:
        """Re-base the run's PRIMARY_AGENT_AUTO_ACCEPT version on the newest stored one (another writer may
        have added a version since the pipeline read it). An SME's answer for the same PDF outranks it."""
        wanted = record.ground_truth
        assert wanted is not None
        previous = latest_gt(conn, record.doc_id)
        if (
            previous is not None
            and previous.ground_truth_source.value in SME_SOURCES
            and previous.pdf_sha256 == wanted.pdf_sha256
        ):
            return None
        new = next_version(
            previous,
            doc_id=record.doc_id,
            source=wanted.ground_truth_source,
            classification=wanted.ground_truth_classification,
            primary=wanted.primary_agent_classification,
            production=wanted.production_classification,
            outcome=record.outcome,
            pdf_sha256=wanted.pdf_sha256,
            review=wanted.sme_review,
            run_id=wanted.run_id,
            now=wanted.created_at,
        )
        if new is not None:
            insert_gt(conn, new)
        return new

    def completed_key(self, doc_id: str) -> str | None:
        """The skip key of the document's newest recorded run (what a resumed batch compares); None when that
        result came from an internal or infrastructure error (REDO_ERRORS): such a result is never a reason
        to skip, the next run decides the document again."""
        with self.read() as conn:
            row = conn.execute(
                sa.select(documents.c.skip_key, documents.c.error)
                .where(documents.c.doc_id == doc_id)
                .order_by(documents.c.id.desc())
                .limit(1)
            ).first()
        if row is None or row.error in REDO_ERRORS:
            return None
        return str(row.skip_key)

    def document_record(self, doc_id: str) -> DocumentRecord | None:
        """The document's newest recorded run rebuilt from the database (outcome, its escalation packet,
        the newest ground truth): what the JSON mirrors are written from. No bundle, no raw primary answer
        (neither is stored in the database)."""
        from arbiter.record.mirrors import DocumentRecord

        with self.read() as conn:
            doc = conn.execute(
                sa.select(documents)
                .where(documents.c.doc_id == doc_id)
                .order_by(documents.c.id.desc())
                .limit(1)
            ).first()
            if doc is None:
                return None
            d = doc._mapping
            data = conn.execute(
                sa.select(outcomes.c.outcome).where(
                    outcomes.c.doc_id == doc_id, outcomes.c.run_id == d["run_id"]
                )
            ).scalar()
            packet_row = conn.execute(
                sa.select(packets)
                .where(
                    packets.c.doc_id == doc_id,
                    packets.c.run_id == d["run_id"],
                    packets.c.kind == PacketKind.ESCALATION.value,
                )
                .limit(1)
            ).first()
            gt = latest_gt(conn, doc_id)
        if data is None:
            return None
        outcome = VerificationOutcome.model_validate(data)
        return DocumentRecord(
            doc_id=doc_id,
            run_id=d["run_id"],
            skip_key=d["skip_key"],
            pdf_path=d["pdf_path"],
            outcome=outcome,
            primary_raw=None,
            bundle=None,
            packet=packet_from_row(packet_row) if packet_row is not None else None,
            ground_truth=gt if outcome.final_decision != FinalDecision.ESCALATE_TO_SME else None,
            error=d["error"],
        )

    def recorded_doc_ids(self) -> list[str]:
        """Every document the database holds a run of."""
        with self.read() as conn:
            return list(
                conn.execute(sa.select(documents.c.doc_id).distinct().order_by(documents.c.doc_id)).scalars()
            )

    def get_outcome(self, doc_id: str, run_id: str) -> VerificationOutcome | None:
        with self.read() as conn:
            data = conn.execute(
                sa.select(outcomes.c.outcome).where(outcomes.c.doc_id == doc_id, outcomes.c.run_id == run_id)
            ).scalar()
        return VerificationOutcome.model_validate(data) if data is not None else None

    # Reviews ------------------------------------------------------------------------------------------
    def submit_review(
        self,
        packet_id: str,
        reviewer: str,
        review: SMEReview,
        ground_truth_classification: dict[str, Any],
        *,
        idempotency_key: str,
        now: datetime | None = None,
    ) -> GroundTruthRecord:
        """Save a review: the claim must still be this reviewer's and unexpired, else ClaimLost (nothing
        is written; the caller keeps the draft). Review, ground-truth version, COMPLETED and audit event
        commit together. The same idempotency_key again returns the first result."""
        if review.reviewer != reviewer:
            raise ValueError("The review is signed by a different reviewer than the one submitting it.")
        stamp = now or datetime.now(UTC)
        for attempt in range(_RETRIES):
            try:
                return self._submit(
                    packet_id, reviewer, review, ground_truth_classification, idempotency_key, stamp
                )
            except IntegrityError:
                # A concurrent review of the same document took the version number, or the key was reused.
                # A key used for another packet raises ValueError here; anything else is retried.
                with self.read() as conn:
                    self._by_idempotency_key(conn, idempotency_key, packet_id)
                if attempt == _RETRIES - 1:
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
            previous, outcome = self._context_for(conn, packet)
            source = (
                GroundTruthSource.SME_VALIDATED
                if review.agrees_with_primary
                else GroundTruthSource.SME_CORRECTED
            )
            record = next_version(
                previous,
                doc_id=packet.doc_id,
                source=source,
                classification=classification,
                primary=packet.primary_agent_classification,
                production=packet.production_classification,
                outcome=outcome,
                pdf_sha256=packet.pdf_sha256,
                review=review,
                run_id=packet.run_id,
                now=now,
            )
            if record is None:  # says exactly what the newest version says (same review twice)
                assert previous is not None
                record = previous
            else:
                insert_gt(conn, record)
            review_row = {
                "packet_id": packet_id,
                "doc_id": packet.doc_id,
                "reviewer": reviewer,
                "idempotency_key": key,
                "gt_id": record.gt_id,
                "payload": review.model_dump(mode="json"),
                "created_at": now,
            }
            conn.execute(_INSERT_REVIEW, review_row)
            details = {"gt_id": record.gt_id, "version": record.version, "source": source.value}
            write_audit(conn, reviewer, "packet.submit", packet_id, details, at=now)
            return record

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

    def get_review(self, packet_id: str) -> SMEReview | None:
        with self.read() as conn:
            data = conn.execute(
                sa.select(reviews.c.payload)
                .where(reviews.c.packet_id == packet_id)
                .order_by(reviews.c.id)
                .limit(1)
            ).scalar()
        return SMEReview.model_validate(data) if data is not None else None

    # Ground truth -------------------------------------------------------------------------------------
    def ground_truth_history(self, doc_id: str) -> list[GroundTruthRecord]:
        """Every version of the document's ground truth, oldest first."""
        with self.read() as conn:
            rows = conn.execute(
                sa.select(ground_truth.c.payload)
                .where(ground_truth.c.doc_id == doc_id)
                .order_by(ground_truth.c.version)
            ).scalars()
            return [GroundTruthRecord.model_validate(r) for r in rows]

    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None:
        with self.read() as conn:
            return latest_gt(conn, doc_id)

    def list_ground_truth(
        self, *, search: str | None = None, offset: int = 0, limit: int = 50
    ) -> list[dict[str, Any]]:
        """The newest version per document (doc_id, version, source, created_at), paged in SQL."""
        g = ground_truth.c
        newest = sa.select(g.doc_id, sa.func.max(g.version).label("v")).group_by(g.doc_id).subquery()
        query = sa.select(g.doc_id, g.version, g.source, g.created_at, g.gt_id).join(
            newest, sa.and_(newest.c.doc_id == g.doc_id, newest.c.v == g.version)
        )
        if search:
            query = query.where(g.doc_id.contains(search, autoescape=True))
        query = query.order_by(g.doc_id).offset(offset).limit(limit)
        with self.read() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]
