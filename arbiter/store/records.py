"""Batch writes and their reads: a run's documents (one transaction each, idempotent per run: document,
outcome, packet or automatic ground truth, audit event), what a resumed run compares, and each document's
newest recorded run rebuilt for the mirrors."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from arbiter.contracts import (
    DocumentRecord,
    FinalDecision,
    GroundTruthRecord,
    PacketKind,
    ReviewStatus,
    SMEPacket,
    VerificationOutcome,
)
from arbiter.store.audit import write_audit
from arbiter.store.db import Database
from arbiter.store.models import documents, outcomes, packet_codes, packets, runs
from arbiter.store.packet_rows import OPERATIONS, PENDING, SUPERSEDED, packet_from_row
from arbiter.store.repository import Repository
from arbiter.store.versions import SME_SOURCES, insert_gt, latest_gt, next_version
from arbiter.store.writes import insert_ignore

# Results an internal or infrastructure fault caused (a crash in Arbiter, the extraction service failing, the
# database away): recorded so the document has a result, never a reason for a later run to skip it.
REDO_ERRORS = frozenset({"internal_error", "pdf_extractor_failed", "database_unavailable"})
RETRIES = 5


@dataclass(frozen=True)
class RecordedRun:
    """The newest run the database holds for a document."""

    doc_id: str
    run_id: str
    skip_key: str
    error: str | None

    @property
    def completed_key(self) -> str | None:
        """The skip key, or None when the result came from an internal or infrastructure error (redo it)."""
        return None if self.error in REDO_ERRORS else self.skip_key


@dataclass(frozen=True)
class RecordResult:
    """What Records.record wrote: recorded False means this (doc_id, run_id) was already there."""

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


def _retrying(fn: Any) -> Any:
    """Run a transaction again when a concurrent writer took the same unique key (ground-truth version)."""
    for attempt in range(RETRIES):
        try:
            return fn()
        except IntegrityError:
            if attempt == RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
    return None  # pragma: no cover


# Built once, executed with each document's values as parameters (building a statement per row cost more
# than half of its CPU).
_REPLACE_PENDING = (
    sa.update(packets)
    .where(
        packets.c.doc_id == sa.bindparam("the_doc"),
        packets.c.status.in_([PENDING, OPERATIONS]),
        packets.c.kind.in_(sa.bindparam("kinds", expanding=True)),
        packets.c.packet_id != sa.bindparam("the_packet"),
    )
    .values(status=SUPERSEDED, superseded_by=sa.bindparam("the_packet"), updated_at=sa.bindparam("now"))
)
_RETIRE_OPERATIONS = (
    sa.update(packets)
    .where(
        packets.c.doc_id == sa.bindparam("the_doc"),
        packets.c.status == OPERATIONS,
        packets.c.packet_id != sa.bindparam("the_packet"),
    )
    .values(status=SUPERSEDED, superseded_by=sa.bindparam("by"), updated_at=sa.bindparam("now"))
)


def insert_packet(conn: Connection, packet: SMEPacket, now: datetime) -> str:
    """Queue a packet (its issue codes beside it), retiring the pending ones it replaces."""
    # A newer packet replaces an older one of the same kind nobody has started (a new escalation also
    # retires the old escalation's pending second review); claimed or completed ones stay. A document
    # that could not be read waits in the operations lane instead of the queue.
    kind = packet.packet_kind.value
    replaces = [kind, PacketKind.SECOND_REVIEW.value] if kind == PacketKind.ESCALATION else [kind]
    status = OPERATIONS if packet.review_status == ReviewStatus.OPERATIONS else PENDING
    conn.execute(
        _REPLACE_PENDING,
        {"the_doc": packet.doc_id, "kinds": replaces, "the_packet": packet.packet_id, "now": now},
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
            "status": status,
            "kind": kind,
            "pair_of": packet.pair_of,
            "answer_kind": packet.answer_kind,
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


class Records(Repository):
    """A batch run's documents: written once per (doc_id, run_id), read back for resume and the mirrors."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        # Runs whose row this object has seen committed: a batch's documents after its first skip that insert
        # (one statement of ten a document). A row gone since (tables emptied under a long-lived store) fails
        # the document's foreign key; the retry forgets the run and inserts it again.
        self._runs_written: set[str] = set()

    # Batch writes -------------------------------------------------------------------------------------
    def record(self, record: DocumentRecord, *, now: datetime | None = None) -> RecordResult:
        """Store one document's run in one transaction: document, outcome, packet (escalations) or
        automatic ground truth (accepts), audit event. A second call for the same (doc_id, run_id)
        writes nothing; a packet already claimed or completed is never reset by a later run."""
        stamp = now or datetime.now(UTC)
        result: RecordResult = _retrying(lambda: self._record(record, stamp))
        return result

    def _record(self, record: DocumentRecord, now: datetime) -> RecordResult:
        try:
            with self.write() as conn:
                result = self._write(conn, record, now)
        except IntegrityError:
            self._runs_written.discard(record.run_id)
            raise
        self._runs_written.add(record.run_id)  # committed
        return result

    def _write(self, conn: Connection, record: DocumentRecord, now: datetime) -> RecordResult:
        outcome = record.outcome
        packet = record.packet
        if record.run_id not in self._runs_written:
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
                "risk": record.risk,
                "audit_p": record.audit_probability,
                "producer": record.producer,
                "read_type": record.read_type,
                "answer_kind": record.answer_kind,
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
                "primary_raw": record.primary_raw,
            },
        )
        packet_id = insert_packet(conn, packet, now) if packet is not None else None
        self._retire_operations(conn, record.doc_id, packet_id, now)
        for sample in record.samples:
            insert_packet(conn, sample, now)
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

    def _retire_operations(self, conn: Connection, doc_id: str, packet_id: str | None, now: datetime) -> None:
        """A newer run's result for the document (an accept, an escalation, or again unreadable) replaces the
        operations-lane packet that said it could not be read (an admin's retry with a password lands here)."""
        conn.execute(
            _RETIRE_OPERATIONS,
            {"the_doc": doc_id, "the_packet": packet_id or "", "by": packet_id, "now": now},
        )

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
            answer_kind=wanted.answer_kind,
            statement_verdicts=wanted.statement_verdicts,
        )
        if new is not None:
            insert_gt(conn, new)
        return new

    def drift_history(self, high_risk: float) -> dict[tuple[str, ...], tuple[int, int]]:
        """Every recorded decision's counts per producer, as the drift monitor's history (record/drift.py:
        (observations, events) per (producer, test), or (producer, "type_mix", type)): escalations among
        decisions, accepts whose risk is at least `high_risk` among scored accepts, and documents read as
        each type among those with a read type (none before migration 0015). Errors and rows without a
        producer say nothing."""
        d = documents.c
        accept = d.final_decision == "AUTO_ACCEPT"
        scored = sa.and_(accept, d.risk.is_not(None))
        query = (
            sa.select(
                d.producer,
                sa.func.count(),
                sa.func.sum(sa.case((accept, 0), else_=1)),
                sa.func.sum(sa.case((scored, 1), else_=0)),
                sa.func.sum(sa.case((sa.and_(scored, d.risk >= high_risk), 1), else_=0)),
            )
            .where(d.error.is_(None), d.producer.is_not(None))
            .group_by(d.producer)
        )
        read = (
            sa.select(d.producer, d.read_type, sa.func.count())
            .where(d.error.is_(None), d.producer.is_not(None), d.read_type.is_not(None))
            .group_by(d.producer, d.read_type)
        )
        with self.read() as conn:
            rows = conn.execute(query).all()
            types = conn.execute(read).all()
        history: dict[tuple[str, ...], tuple[int, int]] = {}
        for producer, n, escalations, accepts, risky in rows:
            history[(producer, "escalation_rate")] = (int(n), int(escalations or 0))
            if accepts:
                history[(producer, "risk_mix")] = (int(accepts), int(risky or 0))
        reads: dict[str, int] = {}
        for producer, _, n in types:
            reads[producer] = reads.get(producer, 0) + int(n)
        for producer, doc_type, n in types:  # of the producer's documents read, those read as the type
            history[(producer, "type_mix", doc_type)] = (reads[producer], int(n))
        return history

    def latest_run(self, doc_id: str) -> RecordedRun | None:
        """Which run recorded the document last, with its skip key and error (None: never recorded)."""
        with self.read() as conn:
            row = conn.execute(
                sa.select(documents.c.run_id, documents.c.skip_key, documents.c.error)
                .where(documents.c.doc_id == doc_id)
                .order_by(documents.c.id.desc())
                .limit(1)
            ).first()
        return None if row is None else RecordedRun(doc_id, row.run_id, row.skip_key, row.error)

    def completed_key(self, doc_id: str) -> str | None:
        """The skip key of the document's newest recorded run (what a resumed batch compares); None when that
        result came from an internal or infrastructure error (REDO_ERRORS): such a result is never a reason
        to skip, the next run decides the document again."""
        run = self.latest_run(doc_id)
        return None if run is None else run.completed_key

    def document(self, doc_id: str) -> DocumentRecord | None:
        """The document's newest recorded run rebuilt from the database (outcome, its escalation packet,
        the newest ground truth, the primary's answer byte for byte): what the JSON mirrors are written from.
        No bundle (the database holds none: it is rebuilt from the PDF)."""
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
            stored = conn.execute(
                sa.select(outcomes.c.outcome, outcomes.c.primary_raw).where(
                    outcomes.c.doc_id == doc_id, outcomes.c.run_id == d["run_id"]
                )
            ).first()
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
        if stored is None:
            return None
        outcome = VerificationOutcome.model_validate(stored.outcome)
        return DocumentRecord(
            doc_id=doc_id,
            run_id=d["run_id"],
            skip_key=d["skip_key"],
            pdf_path=d["pdf_path"],
            outcome=outcome,
            primary_raw=stored.primary_raw,
            bundle=None,
            packet=packet_from_row(packet_row) if packet_row is not None else None,
            ground_truth=gt if outcome.final_decision != FinalDecision.ESCALATE_TO_SME else None,
            error=d["error"],
            producer=d["producer"],
            read_type=d["read_type"],
        )

    def doc_ids(self) -> list[str]:
        """Every document the database holds a run of."""
        with self.read() as conn:
            return list(
                conn.execute(sa.select(documents.c.doc_id).distinct().order_by(documents.c.doc_id)).scalars()
            )

    def outcome(self, doc_id: str, run_id: str) -> VerificationOutcome | None:
        with self.read() as conn:
            data = conn.execute(
                sa.select(outcomes.c.outcome).where(outcomes.c.doc_id == doc_id, outcomes.c.run_id == run_id)
            ).scalar()
        return VerificationOutcome.model_validate(data) if data is not None else None
