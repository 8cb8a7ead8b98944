"""Review-store benchmark: claim-next latency with 100k pending packets (target p95 < 50 ms), also for a
reviewer who skipped 100 packets in a row and for one restricted to a kind of answer a tenth of the packets
hold (migration 0014), and a
queue page with 100k packets (target < 1 s), on SQLite and PostgreSQL. Prints one JSON object.

    .venv/bin/python bench/claim_next.py [--packets 100000] [--claims 300] [--db sqlite,postgresql]

PostgreSQL: a throwaway database is created on ARBITER_BENCH_PG_URL (default: the local test server)
and dropped afterwards. SQLite: a file under a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from arbiter.kinds import GROUNDED
from arbiter.store import Store
from arbiter.store.models import packets as packet_table
from testing.seeding import CODES, DOC_TYPES, seed_packets

PG_URL = os.environ.get("ARBITER_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SKIPS = 100  # claim-and-skip rounds of one reviewer (claim_next_after_skips)
TARGETS = {"claim_next_p95_ms": 50.0, "queue_page_ms": 1000.0}


@contextmanager
def database(kind: str) -> Iterator[str]:
    """A fresh, empty database URL of the given kind, removed afterwards."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="arbiter-bench-") as tmp:
            yield f"sqlite:///{Path(tmp) / 'bench.db'}"
        return
    name = f"arbiter_bench_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(sa.make_url(PG_URL).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * p95, 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "n": len(ordered),
    }


def _time(fn: Callable[[], Any], repeats: int) -> dict[str, float]:
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return _ms(samples)


def bench_one(kind: str, packets: int, claims: int, repeats: int = 20) -> dict[str, Any]:
    with database(kind) as url:
        store = Store(url)
        store.migrate()
        t = time.perf_counter()
        seed_packets(store, packets, prefix="bench")
        seed_s = time.perf_counter() - t
        store.users.get("warm-up")
        claim_samples = []
        for i in range(claims):
            t = time.perf_counter()
            packet = store.queue.claim_next(f"reviewer{i % 4}")
            claim_samples.append(time.perf_counter() - t)
            assert packet is not None
        # A reviewer who skips one packet after another: each claim walks past everything they skipped at
        # the head of the queue before it finds fresh work (the skip costs are theirs alone).
        skip_samples = []
        for _ in range(min(claims, SKIPS)):
            t = time.perf_counter()
            skipped = store.queue.claim_next("skipper")
            skip_samples.append(time.perf_counter() - t)
            assert skipped is not None
            store.queue.release(skipped.packet_id, "skipper")
        # A reviewer restricted to the kind a tenth of the packets hold: each claim walks past the other kind
        # at the head of the queue; an admin gives the packet back after each claim, so every claim walks.
        with store.write() as conn:
            conn.execute(
                sa.update(packet_table)
                .where(packet_table.c.status == "PENDING", packet_table.c.packet_id.like("%7"))  # one in ten
                .values(answer_kind=GROUNDED)
            )
        store.users.add("bench-admin", "admin", None)
        store.users.add("analyst", "reviewer", None)
        store.users.set_kinds("analyst", [GROUNDED], actor="bench-admin")
        restricted_samples = []
        for _ in range(min(claims, SKIPS)):
            t = time.perf_counter()
            got = store.queue.claim_next("analyst")
            restricted_samples.append(time.perf_counter() - t)
            assert got is not None
            assert got.packet_id.endswith("7")  # the column was changed, not the stored body
            store.queue.admin_release(got.packet_id, "bench-admin")
        pages = {
            "first_page": lambda: store.queue.page(limit=50),
            "first_page_with_count": lambda: (store.queue.page(limit=50), store.queue.count()),
            "page_at_offset_50k": lambda: store.queue.page(offset=min(50_000, packets // 2), limit=50),
            "filter_code": lambda: store.queue.page(code=CODES[3], limit=50),
            "filter_type_status": lambda: store.queue.page(doc_type=DOC_TYPES[1], status="PENDING", limit=50),
            "queue_counts": store.queue.counts,
            "get_packet": lambda: store.queue.get("bench-0000001"),
        }
        page_ms = {name: _time(fn, repeats) for name, fn in pages.items()}
        store.dispose()
    claim = _ms(claim_samples)
    after_skips = _ms(skip_samples)
    restricted = _ms(restricted_samples)
    # The queue page as the app draws it: counts, one filtered page and its total.
    page_worst = max(
        page_ms["first_page_with_count"]["p95_ms"] + page_ms["queue_counts"]["p95_ms"],
        page_ms["filter_code"]["p95_ms"],
        page_ms["page_at_offset_50k"]["p95_ms"],
    )
    return {
        "packets": packets,
        "seed_s": round(seed_s, 1),
        "claim_next": claim,
        "claim_next_after_skips": after_skips,
        "claim_next_restricted": restricted,
        "queries": page_ms,
        "queue_page_ms": round(page_worst, 2),
        "met": {
            "claim_next_p95": claim["p95_ms"] < TARGETS["claim_next_p95_ms"],
            "claim_next_after_skips_p95": after_skips["p95_ms"] < TARGETS["claim_next_p95_ms"],
            "claim_next_restricted_p95": restricted["p95_ms"] < TARGETS["claim_next_p95_ms"],
            "queue_page": page_worst < TARGETS["queue_page_ms"],
        },
    }


def run(
    packets: int = 100_000, claims: int = 300, dbs: tuple[str, ...] = ("sqlite", "postgresql")
) -> dict[str, Any]:
    results = {kind: bench_one(kind, packets, claims) for kind in dbs}
    return {
        "targets": TARGETS,
        "results": results,
        "all_met": all(all(r["met"].values()) for r in results.values()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packets", type=int, default=100_000)
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--db", default="sqlite,postgresql")
    args = parser.parse_args(argv)
    result = run(args.packets, args.claims, tuple(d.strip() for d in args.db.split(",") if d.strip()))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
