"""Ground-truth versions: the rule that makes the next one (append-only; a new version supersedes, nothing
is overwritten), the writes inside a caller's transaction, and the reads."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import (
    DEFAULT_KIND,
    GroundTruthRecord,
    GroundTruthSource,
    ProductionClassification,
    SMEReview,
    VerificationOutcome,
    VerificationSummary,
)
from arbiter.contracts.answers import StatementVerdict
from arbiter.store.adjudication import unsettled
from arbiter.store.blind import hidden_from, record_seen
from arbiter.store.models import ground_truth
from arbiter.store.repository import Repository

SME_SOURCES = tuple(s.value for s in GroundTruthSource if s != GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT)
_BATCH = 500
_INSERT_GT = sa.insert(ground_truth)  # built once: the submit path runs it for every review


def verification_summary(outcome: VerificationOutcome) -> VerificationSummary:
    last = outcome.attempts[-1].decision.rule if outcome.attempts else "none"
    return VerificationSummary(
        final_decision=str(outcome.final_decision),
        rule=last,
        attempts=len(outcome.attempts),
        issue_codes=sorted({i.code for i in outcome.final_issues}),
        stop_reason=str(outcome.stop_reason),
    )


def next_version(
    previous: GroundTruthRecord | None,
    *,
    doc_id: str,
    source: GroundTruthSource,
    classification: dict[str, Any],
    primary: dict[str, Any] | None,
    production: ProductionClassification | None,
    outcome: VerificationOutcome,
    pdf_sha256: str,
    review: SMEReview | None = None,
    run_id: str | None = None,
    now: datetime | None = None,
    answer_kind: str | None = None,
    statement_verdicts: list[StatementVerdict] | None = None,
) -> GroundTruthRecord | None:
    """The record that supersedes `previous`, or None when it would say exactly what `previous` says.
    `answer_kind` None: the previous version's kind (the default kind for a first version)."""
    kind = answer_kind or (previous.answer_kind if previous is not None else DEFAULT_KIND)
    if (
        previous is not None
        and previous.ground_truth_source == source
        and previous.ground_truth_classification == classification
        and previous.pdf_sha256 == pdf_sha256
        and previous.sme_review == review
        and previous.statement_verdicts == statement_verdicts
    ):
        return None
    version = 1 if previous is None else previous.version + 1
    gt_id = "gt-" + hashlib.sha256(f"{doc_id}|{version}|{pdf_sha256}".encode()).hexdigest()[:16]
    return GroundTruthRecord(
        gt_id=gt_id,
        doc_id=doc_id,
        version=version,
        supersedes=previous.gt_id if previous else None,
        ground_truth_source=source,
        ground_truth_classification=classification,
        primary_agent_classification=primary,
        production_classification=production,
        verification_summary=verification_summary(outcome),
        sme_review=review,
        policy_version=outcome.policy_version,
        pdf_sha256=pdf_sha256,
        created_at=now or datetime.now(UTC),
        run_id=run_id,
        semantic_checks=outcome.semantic_checks,
        answer_kind=kind,
        statement_verdicts=statement_verdicts,
    )


_LATEST_GT = (
    sa.select(ground_truth.c.payload)
    .where(ground_truth.c.doc_id == sa.bindparam("doc_id"))
    .order_by(ground_truth.c.version.desc())
    .limit(1)
)


def latest_gt(conn: Connection, doc_id: str) -> GroundTruthRecord | None:
    row = conn.execute(_LATEST_GT, {"doc_id": doc_id}).first()
    return GroundTruthRecord.model_validate(row[0]) if row else None


def insert_gt(conn: Connection, record: GroundTruthRecord) -> None:
    row = {
        "gt_id": record.gt_id,
        "doc_id": record.doc_id,
        "version": record.version,
        "supersedes": record.supersedes,
        "source": record.ground_truth_source.value,
        "answer_kind": record.answer_kind,
        "created_at": record.created_at,
        "payload": record.model_dump(mode="json"),
    }
    conn.execute(_INSERT_GT, row)


class GroundTruth(Repository):
    """Reads of the ground-truth versions (written by Records for accepts and Reviews for SME answers)."""

    def history(self, doc_id: str, *, viewer: str | None = None) -> list[GroundTruthRecord]:
        """Every version of the document's ground truth, oldest first; none for a `viewer` it is hidden from
        (its blind review is open and theirs to give, store/blind.py). A reviewer's version shown to a `viewer`
        is recorded as seen, so they are never handed a blind review of the document."""
        with self.read() as conn:
            if hidden_from(conn, viewer).hides(conn, doc_id):
                return []
            rows = conn.execute(
                sa.select(ground_truth.c.payload)
                .where(ground_truth.c.doc_id == doc_id)
                .order_by(ground_truth.c.version)
            ).scalars()
            history = [GroundTruthRecord.model_validate(r) for r in rows]
        if viewer is not None and any(r.sme_review is not None for r in history):
            with self.write() as conn:
                record_seen(conn, viewer, [doc_id])
        return history

    def latest(self, doc_id: str) -> GroundTruthRecord | None:
        with self.read() as conn:
            return latest_gt(conn, doc_id)

    def page(
        self, *, search: str | None = None, offset: int = 0, limit: int = 50, viewer: str | None = None
    ) -> list[dict[str, Any]]:
        """The newest version per document (doc_id, version, source, created_at, and whether the document
        awaits adjudication), paged in SQL; documents a `viewer` holds blind are left out."""
        g = ground_truth.c
        newest = sa.select(g.doc_id, sa.func.max(g.version).label("v")).group_by(g.doc_id).subquery()
        query = sa.select(
            g.doc_id, g.version, g.source, g.created_at, g.gt_id, unsettled(g.doc_id).label("unsettled")
        ).join(newest, sa.and_(newest.c.doc_id == g.doc_id, newest.c.v == g.version))
        if search:
            query = query.where(g.doc_id.contains(search, autoescape=True))
        query = query.order_by(g.doc_id).offset(offset).limit(limit)
        with self.read() as conn:
            query = query.where(hidden_from(conn, viewer).visible(g.doc_id))
            return [dict(r._mapping) for r in conn.execute(query)]

    def every_version(self) -> Iterator[GroundTruthRecord]:
        """Every version of every document, by doc_id then version, streamed in batches (one read
        transaction held while the caller iterates; not retried: a fault mid-stream raises)."""
        query = sa.select(ground_truth.c.payload).order_by(ground_truth.c.doc_id, ground_truth.c.version)
        with self.read() as conn:
            for payload in conn.execute(query.execution_options(yield_per=_BATCH)).scalars():
                yield GroundTruthRecord.model_validate(payload)
