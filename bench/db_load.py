"""The 50-node question, measured: a load generator that plays N nodes' worth of document writes against
PostgreSQL through PgBouncer (transaction pooling) on this machine, and reports the sustained documents/s
before latency climbs. Prints one JSON object.

    .venv/bin/python bench/db_load.py [--nodes 1,2,4,8,16,32] [--threads 2] [--seconds 8] [--cap 10] [--quick]

Each simulated node is a process with its own connection pool (`ARBITER_DB_POOL_SIZE` = --threads), as an
`arbiter run` worker is; each of its threads writes one document after another through the real write path,
`Store.records.record` (one transaction per document: documents, outcomes, an escalation's packet and issue
codes or an accept's ground-truth version, the audit event), with no pause: the offered load of a node
whose verifiers never wait. The documents are the demo run's own records (its 31 PDFs decided by the
pipeline, read back from its database) under fresh ids, so rows have the sizes and shapes of real ones.

Every step runs two ways side by side: **through PgBouncer** (transaction pooling, at most --cap server
connections, the way docs/operations/database.md says to run many nodes) and the **baseline**, each node
straight to PostgreSQL (skipped for a step whose connections would pass the server's max_connections less
ten). Per step: documents/s, commit latency p50/p95, errors, and what the server's sessions were waiting on
(pg_stat_activity sampled every 50 ms: `IO:WalSync` is the disk's flush per commit, `Lock:*` row or
transaction locks, `Client:ClientRead` idle-in-transaction time between statements, none: running on CPU).
`sustained_docs_per_s` is the best step whose p95 stays within 3x the one-node p95; `first_bottleneck`
names the wait that dominates the step after it.

PostgreSQL: a throwaway database is created on ARBITER_BENCH_PG_URL (default: the local test server) and
dropped afterwards; PgBouncer is Debian's (`.ci/system-deps.sh` installs it).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from arbiter.contracts import DocumentRecord
from arbiter.store import Store
from bench.claim_next import database
from testing.pgbouncer import binary, pgbouncer

P95_CLIMB = 3.0  # "before latency climbs": p95 within this factor of the one-node p95


def templates(limit: int | None = None) -> list[DocumentRecord]:
    """The demo run's records (31 PDFs, a third answered wrongly; or the first `limit`), from its database."""
    from arbiter.demo.corpus import write_demo_inputs
    from arbiter.run.job import RunOptions, execute

    with tempfile.TemporaryDirectory(prefix="arbiter-load-") as tmp:
        inputs = write_demo_inputs(Path(tmp) / "demo")
        pdfs = sorted(inputs.pdfs.glob("*.pdf"))[:limit]
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for pdf in pdfs:
            (folder / pdf.name).write_bytes(pdf.read_bytes())
        out = Path(tmp) / "out"
        execute(
            RunOptions(
                inputs=[str(folder)], classifications=str(inputs.classifications), out_dir=str(out), workers=2
            )
        )
        store = Store(f"sqlite:///{out / 'arbiter.db'}")
        try:
            found = [store.records.document(p.stem) for p in pdfs]
        finally:
            store.dispose()
    return [r for r in found if r is not None]


def clone(record: DocumentRecord, doc_id: str, run_id: str) -> DocumentRecord:
    """The record under a fresh document id and run (its packet and ground truth with it)."""
    packet = record.packet
    if packet is not None:
        pid = "pkt-" + hashlib.sha256(f"{doc_id}|{run_id}".encode()).hexdigest()[:16]
        packet = packet.model_copy(update={"packet_id": pid, "doc_id": doc_id, "run_id": run_id})
    truth = record.ground_truth
    if truth is not None:
        gid = "gt-" + hashlib.sha256(f"{doc_id}|{run_id}".encode()).hexdigest()[:16]
        truth = truth.model_copy(
            update={"gt_id": gid, "doc_id": doc_id, "run_id": run_id, "supersedes": None}
        )
    outcome = record.outcome.model_copy(update={"doc_id": doc_id})
    return dataclasses.replace(
        record, doc_id=doc_id, run_id=run_id, outcome=outcome, packet=packet, ground_truth=truth, samples=()
    )


def _node(
    url: str,
    node: int,
    threads: int,
    seconds: float,
    pooling: str,
    session_url: str,
    go: Any,
    inbox: Any,
    out: Any,
) -> None:
    """One simulated node: a process, its pool, `threads` writers recording documents for `seconds`."""
    os.environ["ARBITER_DB_POOL_SIZE"] = str(threads)
    os.environ["ARBITER_DB_POOLING"] = pooling
    os.environ["ARBITER_DB_SESSION_URL"] = session_url
    records: list[DocumentRecord] = inbox.get()  # the templates, handed over once
    store = Store(url)
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def writer(t: int) -> None:
        run_id = f"load-{node}-{t}-{os.getpid()}"
        mine: list[float] = []
        go.wait()
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            record = clone(records[i % len(records)], f"load-{node}-{t}-{i}", run_id)
            started = time.perf_counter()
            try:
                store.records.record(record)
                mine.append((time.perf_counter() - started) * 1000)
            except Exception as exc:  # a failed write is counted and named, the node goes on
                with lock:
                    errors.append(type(exc).__name__)
            i += 1
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    store.dispose()
    out.put({"latencies": latencies, "errors": errors})


class Waits:
    """Samples what the database's other sessions wait on while a step runs."""

    def __init__(self, direct_url: str) -> None:
        self.engine = sa.create_engine(direct_url, poolclass=sa.pool.NullPool)
        self.counts: Counter[str] = Counter()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        query = sa.text(
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        with self.engine.connect() as conn:
            while not self._stop.is_set():
                rows = conn.execute(query).all()
                self.peak = max(self.peak, len(rows))
                for state, kind, event in rows:
                    if state == "active" or kind in ("IO", "Lock", "LWLock"):
                        self.counts[f"{kind}:{event}" if kind else "CPU"] += 1
                time.sleep(0.05)

    def __enter__(self) -> Waits:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.engine.dispose()

    def shares(self) -> dict[str, float]:
        total = sum(self.counts.values())
        return {k: round(v / total, 3) for k, v in self.counts.most_common(6)} if total else {}


def step(
    url: str,
    direct_url: str,
    records: list[DocumentRecord],
    nodes: int,
    threads: int,
    seconds: float,
    pooling: str,
) -> dict[str, Any]:
    """`nodes` processes of `threads` writers each for `seconds`; their documents/s and latencies."""
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    inboxes = [ctx.Queue() for _ in range(nodes)]
    queues = [ctx.Queue() for _ in range(nodes)]
    procs = [
        ctx.Process(
            target=_node, args=(url, n, threads, seconds, pooling, direct_url, go, inboxes[n], queues[n])
        )
        for n in range(nodes)
    ]
    for proc, inbox in zip(procs, inboxes, strict=True):
        inbox.put(records)
        proc.start()
    time.sleep(0.5 + 0.3 * nodes)  # the nodes import Arbiter and connect before the clock starts
    with Waits(direct_url) as waits:
        go.set()
        results = [q.get(timeout=seconds + 300) for q in queues]
    for proc in procs:
        proc.join(timeout=30)
    latencies = sorted(x for r in results for x in r["latencies"])
    errors = Counter(e for r in results for e in r["errors"])

    def pct(q: float) -> float | None:
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 2) if latencies else None

    return {
        "nodes": nodes,
        "writers": nodes * threads,
        "documents": len(latencies),
        "docs_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "mean_ms": round(statistics.fmean(latencies), 2) if latencies else None,
        "errors": dict(errors),
        "server_sessions_peak": waits.peak,
        "waits": waits.shares(),
    }


def sustained(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The best documents/s whose p95 stays within P95_CLIMB of the first step's, and the step after it."""
    ok = [s for s in steps if s["p95_ms"] is not None and not s["errors"]]
    if not ok:
        return {"sustained_docs_per_s": None, "at_writers": None, "first_bottleneck": None}
    limit = P95_CLIMB * ok[0]["p95_ms"]
    within = [s for s in ok if s["p95_ms"] <= limit]
    best = max(within, key=lambda s: s["docs_per_s"])
    later = [s for s in steps if s["writers"] > best["writers"]]
    past = later[0] if later else best
    waits = past.get("waits") or {}
    return {
        "sustained_docs_per_s": best["docs_per_s"],
        "at_writers": best["writers"],
        "p95_limit_ms": round(limit, 2),
        "first_bottleneck": next(iter(waits), None),
        "bottleneck_step_writers": past["writers"],
    }


def max_connections(direct_url: str) -> int:
    engine = sa.create_engine(direct_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
    finally:
        engine.dispose()


def async_commit(direct_url: str) -> None:
    """The knob for the first bottleneck: the database stops waiting for each commit's WAL flush
    (`synchronous_commit = off`; a crash loses at most the last few hundred milliseconds of commits)."""
    name = sa.make_url(direct_url).database
    engine = sa.create_engine(direct_url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    finally:
        engine.dispose()


def run(
    nodes: list[int], threads: int, seconds: float, cap: int, limit: int | None, asynchronous: bool = False
) -> dict[str, Any]:
    started = time.perf_counter()
    if binary() is None:
        raise SystemExit("PgBouncer is not installed: run .ci/system-deps.sh (Debian's pgbouncer package).")
    records = templates(limit)
    with database("postgresql") as direct_url:
        store = Store(direct_url)
        store.migrate()
        store.dispose()
        if asynchronous:
            async_commit(direct_url)
        room = max_connections(direct_url) - 10
        bounced: list[dict[str, Any]] = []
        direct: list[dict[str, Any]] = []
        with pgbouncer(direct_url, server_connections=cap) as url:
            for n in nodes:
                bounced.append(step(url, direct_url, records, n, threads, seconds, "transaction"))
                if n * threads <= room:
                    direct.append(step(direct_url, direct_url, records, n, threads, seconds, "session"))
    return {
        "bench": "db_load",
        "what": "documents recorded per second by N simulated nodes (processes) of --threads writers each",
        "templates": len(records),
        "threads_per_node": threads,
        "seconds_per_step": seconds,
        "synchronous_commit": "off" if asynchronous else "on",
        "cpus": os.cpu_count(),
        "pgbouncer": {"server_connections": cap, "steps": bounced, **sustained(bounced)},
        "baseline": {"name": "direct to PostgreSQL, no PgBouncer", "steps": direct, **sustained(direct)},
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1,2,4,8,16,32", help="simulated node counts, one step each")
    parser.add_argument("--threads", type=int, default=2, help="writer threads (and pool size) per node")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each step")
    parser.add_argument("--cap", type=int, default=10, help="PgBouncer's server connections")
    parser.add_argument("--quick", action="store_true", help="two short steps on six templates (a smoke run)")
    parser.add_argument(
        "--async-commit",
        action="store_true",
        help="with synchronous_commit = off on the throwaway database (the knob for a WAL-flush bottleneck)",
    )
    args = parser.parse_args(argv)
    nodes = [int(n) for n in args.nodes.split(",") if n.strip()]
    if args.quick:
        nodes, args.seconds = [1, 2], 1.5
    limit = 6 if args.quick else None
    print(json.dumps(run(nodes, args.threads, args.seconds, args.cap, limit, args.async_commit), indent=2))


if __name__ == "__main__":
    main()
