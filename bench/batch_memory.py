"""Benchmark (c): peak memory of a large batch through the real CLI (`arbiter run`), as a subprocess.

The process tree (the CLI and its ingestion workers) is sampled every 100 ms from /proc: the peak of
the summed VmRSS is the tree's peak; VmHWM gives each process's own peak. wait4's ru_maxrss (the largest
single process of the tree, kernel-measured) cross-checks the sampling.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

MB = 1024 * 1024


def _status_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process in kB; empty when it has gone."""
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":", 1)
                    found[key] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
        return {}
    return found


def _descendants(root: int) -> list[int]:
    """root's children, grandchildren, ... from /proc/<pid>/task/<tid>/children."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except (FileNotFoundError, PermissionError):
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except (FileNotFoundError, PermissionError, ValueError):
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


@dataclass
class TreeSampler:
    """Samples a process tree's memory on a background thread until stopped."""

    root: int
    interval_s: float = 0.1
    tree_peak_kb: int = 0
    parent_hwm_kb: int = 0
    child_hwm_kb: dict[int, int] = field(default_factory=dict)
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="bench-rss-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def sample(self) -> None:
        total = 0
        root = _status_kb(self.root)
        if root:
            total += root.get("VmRSS", 0)
            self.parent_hwm_kb = max(self.parent_hwm_kb, root.get("VmHWM", 0))
        for pid in _descendants(self.root):
            status = _status_kb(pid)
            if status:
                total += status.get("VmRSS", 0)
                self.child_hwm_kb[pid] = max(self.child_hwm_kb.get(pid, 0), status.get("VmHWM", 0))
        self.tree_peak_kb = max(self.tree_peak_kb, total)
        self.samples += 1


def run_cli(pdf_dir: Path, out_dir: Path, *, workers: int = 2, timeout_s: float = 3600) -> dict[str, Any]:
    """`arbiter run PDF_DIR --out OUT_DIR --workers N --quiet --force`, with its memory sampled."""
    command = [
        sys.executable, "-m", "arbiter.cli", "run", str(pdf_dir),
        "--out", str(out_dir), "--workers", str(workers), "--quiet", "--force",
    ]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=corpus.REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    sampler = TreeSampler(proc.pid)
    sampler.start()
    deadline = started + timeout_s
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
    finally:
        sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)  # we reaped it; tell Popen so
    reader.join(5)
    if proc.stdout is not None:
        proc.stdout.close()
    seconds = time.perf_counter() - started
    return {
        "command": " ".join(["arbiter", *command[3:]]),
        "exit_code": proc.returncode,
        "wall_s": round(seconds, 2),
        "peak_parent_rss_mb": round(sampler.parent_hwm_kb / 1024, 1),
        "peak_child_rss_mb": round(max(sampler.child_hwm_kb.values(), default=0) / 1024, 1),
        "child_processes": len(sampler.child_hwm_kb),
        "peak_tree_rss_mb": round(sampler.tree_peak_kb / 1024, 1),
        # ru_maxrss is in kB on Linux: the largest single process among the CLI and its reaped children.
        "ru_maxrss_mb": round(usage.ru_maxrss / 1024, 1),
        "rss_samples": sampler.samples,
        "output_tail": "".join(output)[-2000:] if proc.returncode else "",
    }


def run(
    *,
    docs: int = 5000,
    workers: int = 2,
    pages: tuple[int, int] = (1, 3),
    data_dir: Path | None = None,
    seed: int = 0,
    keep_output: bool = False,
) -> dict[str, Any]:
    directory = (data_dir or corpus.DATA_DIR) / f"batch-{docs}"
    t0 = time.perf_counter()
    corpus.write_pdfs(directory, docs, pages=pages, segments=2, prefix="batch", seed=seed)
    generate_s = time.perf_counter() - t0
    out_dir = Path(tempfile.mkdtemp(prefix="arbiter-bench-"))
    try:
        measured = run_cli(directory, out_dir, workers=workers)
        summaries = sorted((out_dir / "runs").glob("*/summary.json"))
        summary = json.loads(summaries[-1].read_text()) if summaries else {}
    finally:
        if not keep_output:
            shutil.rmtree(out_dir, ignore_errors=True)
    processed = summary.get("processed", 0)
    return {
        "docs": docs,
        "pages_per_doc": list(pages),
        "workers": workers,
        "generate_s": round(generate_s, 2),
        **measured,
        "docs_per_s": summary.get("docs_per_second"),
        "docs_per_s_wall": round(processed / measured["wall_s"], 2) if measured["wall_s"] else None,
        "target_peak_tree_rss_mb_max": 500,
        "decisions": {
            "accepted_first_time": summary.get("accepted_first_time"),
            "accepted_after_fixes": summary.get("accepted_after_fixes"),
            "escalated": summary.get("escalated"),
            "escalated_by_reason": summary.get("escalated_by_reason"),
            "errors": summary.get("errors"),
            "errors_by_reason": summary.get("errors_by_reason"),
        },
        "processed": processed,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    print(json.dumps(run(docs=args.docs, workers=args.workers), indent=2))


if __name__ == "__main__":
    main()
