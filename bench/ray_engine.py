"""Benchmark (ray): docs/s of `arbiter run` on the local engine against `--engine ray` on this machine.

The same byte-distinct text PDFs (bench/corpus.py, baseline classifier, no model) go through the real CLI
twice, each as a subprocess with its own output folder and SQLite database: once on the local engine (the
named baseline) and once on a local Ray instance the CLI starts and stops itself. docs/s is from each run's
summary (documents processed ÷ the run's own duration); the wall time adds start-up (Ray's included). On one
machine Ray can only add overhead (same cores, plus its scheduler, object store and one ingestion process
per worker); the ratio says how much, which is what a node of a cluster loses against a local run.

With --nodes, the same PDFs also run on a cluster made with `ray start` as the README documents (each node one
CPU on its own loopback address, token authentication): a head alone (`ray_1node`), then a head and a worker
node (`ray_2nodes`), and the two nodes again with one task per document as before batching
(`ARBITER_RAY_TASK_PAGES=1`); `scaling` is 2 nodes ÷ 1 node, `vs_local` 2 nodes ÷ the local engine with as many
workers, `batching_gain` batched ÷ one task per document. All variants run in the same invocation, one after the other, on the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

# A fixed-size batch cluster's node, as docs/operations/cluster.md recommends: no process tailing the workers'
# logs to the driver, no autoscaler (the cluster does not grow by itself), no metrics collection. On these
# two cores they took about a sixth of the CPU the workers had (2026-11-28: two nodes 42–44 → 46–50 docs/s).
BATCH_NODE_OPTIONS = ("--include-log-monitor=false",)
BATCH_HEAD_OPTIONS = ("--no-monitor",)
BATCH_NODE_ENV = {"RAY_enable_metrics_collection": "0"}

COUNTED = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


@contextmanager
def cluster(nodes: int, left: list[Path] | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """A Ray cluster of `nodes` one-CPU nodes from `ray start` (head on 127.0.0.2, workers on 127.0.0.3, …):
    its address and the environment to reach it; every node stopped (by its own process) on exit. Its folder is
    deleted then, or added to `left` for the caller to delete after its last measurement (LEFT_NOTE)."""
    root = Path(tempfile.mkdtemp(prefix="arb-bc-", dir="/tmp"))
    token = root / "token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {
        k: v for k, v in os.environ.items() if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_ADDRESS")
    }
    env |= {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    env |= BATCH_NODE_ENV
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(corpus.REPO), env.get("PYTHONPATH")) if p)
    address = f"127.0.0.2:{_port()}"
    ray = str(Path(sys.executable).with_name("ray"))
    common = ["--block", "--num-cpus=1", "--object-store-memory=100000000", *BATCH_NODE_OPTIONS]
    head = ["--head", *BATCH_HEAD_OPTIONS, "--node-ip-address=127.0.0.2", f"--port={address.split(':')[1]}", "--include-dashboard=false",
            f"--ray-client-server-port={_port()}", f"--temp-dir={root / 'ray'}"]  # fmt: skip
    started: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(nodes):
            args = head if i == 0 else [f"--address={address}", f"--node-ip-address=127.0.0.{2 + i}"]
            log = root / f"node{i}.log"
            with log.open("wb") as out:
                started.append(
                    subprocess.Popen(
                        [ray, "start", *args, *common], stdout=out, stderr=subprocess.STDOUT, env=env
                    )
                )
            deadline = time.monotonic() + 120
            while "Ray runtime started" not in log.read_text(errors="replace"):
                if started[-1].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"ray start failed: {log.read_text(errors='replace')[-800:]}")
                time.sleep(0.3)
        yield address, env
    finally:
        for process in reversed(started):
            process.send_signal(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=60)
            if process.poll() is None:
                process.kill()
        if left is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            left.append(root)


def run_cli(
    pdf_dir: Path,
    out_dir: Path,
    *,
    workers: int,
    engine: str,
    timeout_s: float = 3600,
    address: str | None = None,
    env: dict[str, str] | None = None,
    db: str | None = None,
    mirrors: str = "all",
) -> dict[str, Any]:
    """One `arbiter run` as a subprocess: its summary and wall time. A `db` URL is emptied first."""
    cli = [
        sys.executable, "-m", "arbiter.cli.main", "run", str(pdf_dir), "--out", str(out_dir),
        "--workers", str(workers), "--quiet", "--engine", engine, "--mirrors", mirrors,
    ]  # fmt: skip
    if address is not None:
        cli += ["--ray-address", address]
    if db:
        from bench.doc_cpu import drop_tables

        drop_tables(db)
        cli += ["--db", db]
    env = {**(env or os.environ), "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(corpus.REPO), env.get("PYTHONPATH")) if p)
    t0 = time.perf_counter()
    done = subprocess.run(
        cli, cwd=corpus.REPO, capture_output=True, text=True, env=env, timeout=timeout_s, check=False
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"arbiter run --engine {engine} exited {done.returncode}: {done.stderr[-1500:]}")
    summary = json.loads(next((out_dir / "runs").glob("*/summary.json")).read_text(encoding="utf-8"))
    return {
        "wall_s": round(wall, 2),
        "run_s": summary["duration_s"],
        "docs_per_s": summary["docs_per_second"],
        "startup_s": round(wall - summary["duration_s"], 2),
        "counts": {k: summary[k] for k in COUNTED},
    }


def _once(
    inputs: Path,
    engine: str,
    workers: int,
    nodes: int = 0,
    task_pages: str | None = None,
    *,
    db: str | None = None,
    mirrors: str = "all",
    left: list[Path],
) -> dict[str, Any]:
    """One run into a fresh output folder, added to `left` with its cluster's folder (LEFT_NOTE)."""
    out = Path(tempfile.mkdtemp(prefix=f"arbiter-bench-{engine}-"))
    left.append(out)
    if not nodes:
        return run_cli(inputs, out, workers=workers, engine=engine, db=db, mirrors=mirrors)
    with cluster(nodes, left) as (address, env):
        if task_pages is not None:
            env["ARBITER_RAY_TASK_PAGES"] = task_pages
        return run_cli(
            inputs, out, workers=nodes, engine="ray", address=address, env=env, db=db, mirrors=mirrors
        )


# LEFT_NOTE: every run's folders are deleted after the last run, not between runs: thousands of files deleted
# just before a run cost its new files up to 30 times their kernel CPU on this VM's disk (bench/doc_cpu.py,
# `new_file_kernel_us`), which would favour whichever variant ran first.


def run(
    *,
    docs: int = 200,
    pages: int = 5,
    workers: int = 2,
    repeats: int = 1,
    data_dir: Path | None = None,
    nodes: bool = False,
    db: str | None = None,
    mirrors: str = "all",
) -> dict[str, Any]:
    """The figures; `db` "postgres" picks the local PostgreSQL (bench/doc_cpu.py's database), else a URL."""
    if db == "postgres":
        from bench.doc_cpu import pick_db

        db = pick_db(None) or None
    directory = (data_dir or corpus.DATA_DIR) / f"ray-{pages}p"
    corpus.write_pdfs(directory, docs, pages=pages, segments=2, prefix="ray", seed=7)
    inputs = Path(tempfile.mkdtemp(prefix="arbiter-bench-ray-in-"))
    left: list[Path] = [inputs]
    try:
        for pdf in sorted(directory.glob("ray-*.pdf"))[:docs]:
            shutil.copy(pdf, inputs / pdf.name)
        best: dict[str, dict[str, Any]] = {}
        variants: list[tuple[str, int, str | None]] = [("local", 0, None), ("ray", 0, None)]
        if nodes:  # the last: one task per document, as before batching (ARBITER_RAY_TASK_PAGES=1)
            variants += [("ray_1node", 1, None), ("ray_2nodes", 2, None), ("ray_2nodes_task_per_doc", 2, "1")]
        for _ in range(repeats):
            for name, count, pages_per_task in variants:
                engine = name if not count else "ray"
                result = _once(
                    inputs, engine, workers, count, pages_per_task, db=db, mirrors=mirrors, left=left
                )
                if name not in best or result["docs_per_s"] > best[name]["docs_per_s"]:
                    best[name] = result
    finally:
        for folder in left:
            shutil.rmtree(folder, ignore_errors=True)
    local, ray = best["local"], best["ray"]
    cluster_figures: dict[str, Any] = {}
    if nodes:
        one, two = best["ray_1node"], best["ray_2nodes"]
        cluster_figures = {
            "cluster_docs_per_s": {
                "ray_1node": one["docs_per_s"],
                "ray_2nodes": two["docs_per_s"],
                "ray_2nodes_task_per_doc": best["ray_2nodes_task_per_doc"]["docs_per_s"],
            },
            "batching_gain": round(two["docs_per_s"] / best["ray_2nodes_task_per_doc"]["docs_per_s"], 3),
            "scaling": round(two["docs_per_s"] / one["docs_per_s"], 3),
            "vs_local": round(two["docs_per_s"] / local["docs_per_s"], 3),
            "cluster_same_decisions": one["counts"] == two["counts"] == local["counts"],
            "cluster_startup_s": {"ray_1node": one["startup_s"], "ray_2nodes": two["startup_s"]},
        }
    return {
        "docs": docs,
        "pages_per_doc": pages,
        "workers": workers,
        "baseline": "local",
        "docs_per_s": {"local": local["docs_per_s"], "ray": ray["docs_per_s"]},
        "ratio": round(ray["docs_per_s"] / local["docs_per_s"], 3),
        "startup_s": {"local": local["startup_s"], "ray": ray["startup_s"]},
        "wall_s": {"local": local["wall_s"], "ray": ray["wall_s"]},
        "same_decisions": local["counts"] == ray["counts"],
        "counts": ray["counts"],
        "task_pages": os.environ.get("ARBITER_RAY_TASK_PAGES") or "default",
        "database": "postgresql" if db else "sqlite",
        "mirrors": mirrors,
        **cluster_figures,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--nodes", action="store_true", help="also one and two `ray start` nodes of one CPU")
    parser.add_argument(
        "--db", help="postgres (the local server) or a database URL (default: SQLite per run)"
    )
    parser.add_argument("--mirrors", default="all", choices=("all", "bundles"), help="arbiter run --mirrors")
    args = parser.parse_args()
    got = run(
        docs=args.docs,
        pages=args.pages,
        workers=args.workers,
        repeats=args.repeats,
        nodes=args.nodes,
        db=args.db,
        mirrors=args.mirrors,
    )
    print(json.dumps(got, indent=2))
