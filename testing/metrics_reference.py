"""The metrics computed the slow, obvious way: every row read with SQLAlchemy and validated into its contract
model, then the same pure functions (build_report). The reference the fast reader is compared with, by the
metrics tests and bench/metrics_speed.py."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import GroundTruthRecord, SMEPacket, SMEReview, VerificationOutcome
from arbiter.metrics import loader
from arbiter.metrics.collect import database_label, reading
from arbiter.metrics.compute import build_report, mark_latest
from arbiter.metrics.model import NO_LABEL, Labelled, Prediction, dominant_label, prediction
from arbiter.metrics.result import MetricsReport
from arbiter.metrics.rows import DocRun, Reviewed
from arbiter.store import Store
from arbiter.store.models import documents, ground_truth, outcomes, packet_codes, packets, reviews
from arbiter.store.versions import SME_SOURCES


def _cut(column: Any, as_of: datetime | None) -> Any:
    return sa.true() if as_of is None else column <= as_of


def _labelled(record: GroundTruthRecord) -> Labelled:
    production = record.production_classification
    return Labelled(
        doc_id=record.doc_id,
        sme=record.ground_truth_source.value in SME_SOURCES,
        truth=prediction(record.ground_truth_classification) or Prediction(NO_LABEL),
        primary=prediction(record.primary_agent_classification),
        production=None if production is None else dominant_label(production.dominant_type),
        run_id=record.run_id,
    )


def _unsettled(conn: Any, as_of: datetime | None) -> set[str]:
    """Documents with an ADJUDICATION packet (by the time) that no review decided (by the time)."""
    p, r = packets.c, reviews.c
    decided = set(conn.execute(sa.select(r.packet_id).where(_cut(r.created_at, as_of))).scalars())
    rows = conn.execute(
        sa.select(p.packet_id, p.doc_id).where(
            p.kind == "ADJUDICATION", p.status != "SUPERSEDED", _cut(p.created_at, as_of)
        )
    )
    return {doc_id for packet_id, doc_id in rows if packet_id not in decided}


def naive_report(
    store: Store, as_of: datetime | None = None, label_order: Sequence[str] = ()
) -> MetricsReport:
    """The baseline: read everything through the contract models, then compute with the same functions."""
    started = time.perf_counter()
    with reading(store.engine) as conn:
        g = ground_truth.c
        labelled: list[Labelled] = []
        labels: dict[str, str | None] = {}  # gt_id → dominant type, for the reviews
        last: GroundTruthRecord | None = None
        query = sa.select(g.payload).where(_cut(g.created_at, as_of)).order_by(g.doc_id, g.version)
        for payload in conn.execute(query.execution_options(yield_per=2_000)).scalars():
            record = GroundTruthRecord.model_validate(payload)
            dominant = record.ground_truth_classification.get("dominant_type")
            labels[record.gt_id] = dominant if isinstance(dominant, str) and dominant else None
            if last is not None and last.doc_id != record.doc_id:
                labelled.append(_labelled(last))
            last = record
        if last is not None:
            labelled.append(_labelled(last))
        unsettled = _unsettled(conn, as_of)
        labelled = [x for x in labelled if x.doc_id not in unsettled]
        d, o = documents.c, outcomes.c
        doc_rows = conn.execute(
            sa.select(
                d.doc_id, d.run_id, d.final_decision, d.escalation_reason, d.error, d.doc_type, o.outcome
            )
            .outerjoin(outcomes, sa.and_(o.doc_id == d.doc_id, o.run_id == d.run_id))
            .where(_cut(d.created_at, as_of))
            .order_by(d.created_at, d.id)
            .execution_options(yield_per=2_000)
        )
        doc_type: dict[tuple[str, str], str | None] = {}
        earned: dict[tuple[str, str], str] = {}  # how each decision was earned (semantic checks)
        runs_of_docs: list[DocRun] = []
        for doc_id, run_id, decision, reason, error, dtype, outcome_data in doc_rows:
            doc_type[(doc_id, run_id)] = dtype
            outcome = VerificationOutcome.model_validate(outcome_data) if outcome_data is not None else None
            attempts = outcome.attempts if outcome else []
            if outcome is not None:
                earned[(doc_id, run_id)] = outcome.semantic_checks.value
            runs_of_docs.append(
                DocRun(
                    doc_id=doc_id,
                    run_id=run_id,
                    decision=decision,
                    reason=reason,
                    error=error,
                    reattempted=len(attempts) > 1,
                    first_decision=attempts[0].decision.decision.value if attempts else None,
                    stop_reason=outcome.stop_reason.value if outcome else None,
                )
            )
        r = reviews.c
        review_rows = conn.execute(
            sa.select(r.packet_id, r.doc_id, r.reviewer, r.gt_id, r.payload, r.answer)
            .where(_cut(r.created_at, as_of))
            .order_by(r.id)
        ).all()
        packet_rows = {row.packet_id: row for row in conn.execute(sa.select(packets))}
        codes: dict[str, list[str]] = {}
        for packet_id, code in conn.execute(sa.select(packet_codes.c.packet_id, packet_codes.c.code)):
            codes.setdefault(packet_id, []).append(code)
        first: dict[str, Reviewed] = {}
        for packet_id, doc_id, reviewer, gt_id, payload, answer in review_rows:
            if packet_id in first:
                continue
            review = SMEReview.model_validate(payload)
            row = packet_rows[packet_id]
            packet = SMEPacket.model_validate(row.payload | {"packet_kind": row.kind, "pair_of": row.pair_of})
            given = answer.get("dominant_type") if isinstance(answer, dict) else None
            label = (given if isinstance(given, str) and given else None) if answer else labels.get(gt_id)
            accepted = doc_type.get((doc_id, row.run_id)) or (packet.final_classification or {}).get(
                "dominant_type"
            )
            first[packet_id] = Reviewed(
                packet_id=packet_id,
                doc_id=doc_id,
                run_id=row.run_id,
                kind=row.kind,
                reviewer=reviewer,
                agrees=review.agrees_with_primary,
                label=label,
                accepted_label=accepted
                if row.kind == "AUDIT" and isinstance(accepted, str) and accepted
                else None,
                pair_of=row.pair_of,
                codes=tuple(sorted(codes.get(packet_id, []))) if row.kind == "ESCALATION" else (),
                started_at=review.started_at,
                submitted_at=review.submitted_at,
                semantic_checks=earned.get((doc_id, row.run_id)) if row.kind == "AUDIT" else None,
            )
        reviewed = sorted(first.values(), key=lambda x: (x.submitted_at, x.packet_id))
        side = loader.review_side(conn, as_of)  # runs and open audits: plain counts either way
    report = build_report(
        labelled,
        mark_latest(runs_of_docs),
        reviewed,
        side.runs,
        open_audits=side.open_audits,
        as_of=as_of,
        database=database_label(store.engine),
        label_order=label_order,
    )
    report.seconds = time.perf_counter() - started
    return report


def comparable(report: MetricsReport) -> dict[str, Any]:
    """The report without the fields that differ between two computations of the same data."""
    # The guarantees are read by one statement of their own (metrics/guarantee.py) and tested on their own.
    return report.model_dump(mode="json", exclude={"generated_at", "seconds", "database", "guarantees"})
