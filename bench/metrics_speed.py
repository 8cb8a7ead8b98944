"""Metrics benchmark: `arbiter metrics` over 100k ground-truth records (target < 10 s) against a naive
reading of the same store in the same run. Prints one JSON object.

    .venv/bin/python bench/metrics_speed.py [--records 100000] [--repeats 3] [--db sqlite,postgresql]

The data (testing.seeding_metrics.seed_metrics, over seed_ground_truth; on the contracts): ground truth for N
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
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from arbiter.contracts.profile import load_profile
from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.result import MetricsReport
from arbiter.store import Store
from bench.claim_next import database
from testing.metrics_reference import comparable, naive_report
from testing.seeding_metrics import seed_metrics

TARGET_S = 10.0


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
