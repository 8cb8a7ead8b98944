"""Metrics benchmark: `arbiter metrics` over 100k ground-truth records (target < 10 s) against a naive
reading of the same store in the same run. Prints one JSON object.

    .venv/bin/python bench/metrics_speed.py [--records 100000] [--repeats 3] [--db sqlite,postgresql]

The data (arbiter.store.synthetic_metrics.seed_metrics, over seed_ground_truth): ground truth for N
documents in 4 runs, with their documents and outcomes, escalation packets reviewed by SMEs, blind audits
and second reviews, and audit packets still waiting. Measured in one process, after a warm-up run:

- arbiter: arbiter.metrics.collect.compute_metrics, what `arbiter metrics` runs (median of `repeats`);
- naive (baseline): every row read with SQLAlchemy, every ground-truth version, outcome, review and
  packet validated into its pydantic contract model, then the same pure functions (build_report); run
  once, after the first arbiter repeat (it is about ten times slower).

`figures_match` says the two readings produced the same report. PostgreSQL: a throwaway database on
ARBITER_BENCH_PG_URL (as bench/claim_next.py); a server that cannot be reached is listed under `errors`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from arbiter.contracts import GroundTruthRecord, SMEPacket, SMEReview, VerificationOutcome
from arbiter.contracts.profile import load_profile
from arbiter.metrics import loader
from arbiter.metrics.collect import compute_metrics, database_label, reading
from arbiter.metrics.compute import build_report, mark_latest
from arbiter.metrics.model import NO_LABEL, Labelled, Prediction, dominant_label, prediction
from arbiter.metrics.result import MetricsReport
from arbiter.metrics.rows import DocRun, Reviewed
from arbiter.store import Store
from arbiter.store.models import documents, ground_truth, outcomes, packet_codes, packets, reviews
from arbiter.store.versions import SME_SOURCES
from arbiter.store.synthetic_metrics import seed_metrics
from bench.claim_next import database

TARGET_S = 10.0


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
            sa.select(r.packet_id, r.doc_id, r.reviewer, r.gt_id, r.payload)
            .where(_cut(r.created_at, as_of))
            .order_by(r.id)
        ).all()
        packet_rows = {row.packet_id: row for row in conn.execute(sa.select(packets))}
        codes: dict[str, list[str]] = {}
        for packet_id, code in conn.execute(sa.select(packet_codes.c.packet_id, packet_codes.c.code)):
            codes.setdefault(packet_id, []).append(code)
        first: dict[str, Reviewed] = {}
        for packet_id, doc_id, reviewer, gt_id, payload in review_rows:
            if packet_id in first:
                continue
            review = SMEReview.model_validate(payload)
            row = packet_rows[packet_id]
            packet = SMEPacket.model_validate(row.payload | {"packet_kind": row.kind, "pair_of": row.pair_of})
            label = labels.get(gt_id)
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
    return report.model_dump(mode="json", exclude={"generated_at", "seconds", "database"})


def bench_one(kind: str, records: int, repeats: int, naive_repeats: int = 1) -> dict[str, Any]:
    order = load_profile().taxonomy.document_types
    with database(kind) as url:
        store = Store(url)
        store.migrate()
        started = time.perf_counter()
        seeded = seed_metrics(store, records)
        seed_s = time.perf_counter() - started
        timings: dict[str, list[float]] = {"arbiter": [], "naive": []}
        reports: dict[str, MetricsReport] = {"arbiter": compute_metrics(store, None, order)}  # warm-up
        for i in range(repeats):
            started = time.perf_counter()
            reports["arbiter"] = compute_metrics(store, None, order)
            timings["arbiter"].append(time.perf_counter() - started)
            if i < naive_repeats:  # the baseline is ~10x slower: fewer repeats, interleaved
                started = time.perf_counter()
                reports["naive"] = naive_report(store, None, order)
                timings["naive"].append(time.perf_counter() - started)
        store.dispose()
    arbiter_s, naive_s = statistics.median(timings["arbiter"]), statistics.median(timings["naive"])
    return {
        "records": records,
        "seed_s": round(seed_s, 1),
        "ground_truth_docs": reports["arbiter"].totals.ground_truth_docs,
        "documents": seeded.documents,
        "reviews": seeded.reviews,
        "packets": seeded.packets,
        "arbiter_s": round(arbiter_s, 3),
        "naive_s": round(naive_s, 3),
        "arbiter_runs_s": [round(x, 3) for x in timings["arbiter"]],
        "naive_runs_s": [round(x, 3) for x in timings["naive"]],
        "speedup": round(naive_s / arbiter_s, 2) if arbiter_s else None,
        "figures_match": comparable(reports["arbiter"]) == comparable(reports["naive"]),
        "false_accept": reports["arbiter"].audit.false_accept.model_dump(),
        "met": arbiter_s < TARGET_S,
    }


def run(
    records: int = 100_000, repeats: int = 3, dbs: tuple[str, ...] = ("sqlite", "postgresql")
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    errors: list[str] = []
    for kind in dbs:
        try:
            results[kind] = bench_one(kind, records, repeats)
        except sa.exc.OperationalError as exc:
            errors.append(f"{kind}: {str(exc).splitlines()[0]}")
    met = {kind: bool(r["met"] and r["figures_match"]) for kind, r in results.items()}
    return {
        "benchmark": "metrics_speed",
        "target_s": TARGET_S,
        "results": results,
        "errors": errors,
        "met": met,
        "all_met": bool(met) and all(met.values()) and not errors,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--quick", action="store_true", help="10,000 records, 1 repeat.")
    args = parser.parse_args(argv)
    records, repeats = (10_000, 1) if args.quick else (args.records, args.repeats)
    result = run(records, repeats, tuple(d.strip() for d in args.db.split(",") if d.strip()))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
