"""Benchmark (ray): docs/s of `arbiter run` on the local engine against `--engine ray` on this machine.

The same byte-distinct text PDFs (bench/corpus.py, baseline classifier, no model) go through the real CLI
twice, each as a subprocess with its own output folder and SQLite database: once on the local engine (the
named baseline) and once on a local Ray instance the CLI starts and stops itself. docs/s is from each run's
summary (documents processed ÷ the run's own duration); the wall time adds start-up (Ray's included). On one
machine Ray can only add overhead (same cores, plus its scheduler, object store and one ingestion process
per worker); the ratio says how much, which is what a node of a cluster loses against a local run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

COUNTED = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")


def run_cli(
    pdf_dir: Path, out_dir: Path, *, workers: int, engine: str, timeout_s: float = 3600
) -> dict[str, Any]:
    """One `arbiter run` as a subprocess: its summary and wall time."""
    cli = [
        sys.executable, "-m", "arbiter.cli.main", "run", str(pdf_dir), "--out", str(out_dir),
        "--workers", str(workers), "--quiet", "--engine", engine,
    ]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
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


def run(
    *, docs: int = 200, pages: int = 5, workers: int = 2, repeats: int = 1, data_dir: Path | None = None
) -> dict[str, Any]:
    directory = (data_dir or corpus.DATA_DIR) / f"ray-{pages}p"
    corpus.write_pdfs(directory, docs, pages=pages, segments=2, prefix="ray", seed=7)
    inputs = Path(tempfile.mkdtemp(prefix="arbiter-bench-ray-in-"))
    try:
        for pdf in sorted(directory.glob("ray-*.pdf"))[:docs]:
            shutil.copy(pdf, inputs / pdf.name)
        best: dict[str, dict[str, Any]] = {}
        for _ in range(repeats):
            for engine in ("local", "ray"):
                out = Path(tempfile.mkdtemp(prefix=f"arbiter-bench-{engine}-"))
                try:
                    result = run_cli(inputs, out, workers=workers, engine=engine)
                finally:
                    shutil.rmtree(out, ignore_errors=True)
                if engine not in best or result["docs_per_s"] > best[engine]["docs_per_s"]:
                    best[engine] = result
    finally:
        shutil.rmtree(inputs, ignore_errors=True)
    local, ray = best["local"], best["ray"]
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
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(
        json.dumps(
            run(docs=args.docs, pages=args.pages, workers=args.workers, repeats=args.repeats), indent=2
        )
    )
