"""Benchmark (c): peak memory of a large batch through the real CLI (`arbiter run`), as a subprocess.

The process tree (the CLI and its ingestion workers) is sampled every 100 ms from /proc: the peak of
the summed VmRSS is the tree's peak (a child vfork'ed to run Tesseract, seen in its parent's memory before it
runs the program, is counted once, with its parent); VmHWM gives each process's own peak. ru_maxrss of the CLI's
process tree (the largest single process, kernel-measured) cross-checks the sampling.

    python bench/batch_memory.py [--docs 5000] [--workers 2] [--fixture-mix]

`--fixture-mix`: instead of generated 1–3 page PDFs, byte-distinct copies of the fixture PDFs (1–4 pages and one
of 30, a scanned one OCRed, a third of the answers wrong, as in the demo) decided from their answers
(`--classifications`), as bench/doc_cpu.py makes them: the short-document memory figure of issue 32.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
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


def _pss_kb(pid: int) -> int:
    """A process's proportional set size in kB (each shared page split among its sharers); 0 when it has gone.
    The processes a fork server makes share its pages: summed RSS counts those pages once per process."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
        pass
    return 0


def _descendants(root: int) -> list[int]:
    """root's children, grandchildren, ... from /proc/<pid>/task/<tid>/children."""
    return [pid for pid, _ in _family(root)]


def _family(root: int) -> list[tuple[int, int]]:
    """(pid, its parent's pid) for root's children, grandchildren, ..."""
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
            out.extend((kid, pid) for kid in kids)
            todo.extend(kids)
    return out


_KCMP = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)
_KCMP_VM = 1


def _same_memory(a: int, b: int) -> bool:
    """Whether two processes share one address space: a child started with vfork (as Python's subprocess
    starts Tesseract) runs in its parent's memory until it executes the program, and /proc shows it with its
    parent's whole VmRSS. Summed per process, that memory would count twice for a few milliseconds; the
    kernel's kcmp says whether it is the same. False where kcmp cannot tell (another system, no permission)."""
    return _KCMP is not None and int(_libc().syscall(_KCMP, a, b, _KCMP_VM, 0, 0)) == 0


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


@dataclass
class TreeSampler:
    """Samples the memory of a process's descendants on a background thread until stopped."""

    root: int
    interval_s: float = 0.1
    tree_peak_kb: int = 0
    tree_pss_peak_kb: int = 0  # sampled only within a tenth of the RSS peak (reading it walks page tables)
    hwm_kb: dict[int, int] = field(default_factory=dict)
    first_child: int | None = None
    samples: int = 0
    shared_address_spaces: int = 0  # processes seen in their parent's memory (not counted again)
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
        pids = []
        for pid, parent in _family(self.root):
            if _same_memory(pid, parent):
                self.shared_address_spaces += 1  # a vfork'ed child before its exec: its parent's memory
                continue
            pids.append(pid)
            status = _status_kb(pid)
            if status:
                self.first_child = self.first_child or pid
                total += status.get("VmRSS", 0)
                self.hwm_kb[pid] = max(self.hwm_kb.get(pid, 0), status.get("VmHWM", 0))
        self.tree_peak_kb = max(self.tree_peak_kb, total)
        if total >= 0.9 * self.tree_peak_kb:  # near the peak: what the tree takes, shared pages counted once
            self.tree_pss_peak_kb = max(self.tree_pss_peak_kb, sum(_pss_kb(pid) for pid in pids))
        self.samples += 1


# Runs the CLI and reports its ru_maxrss. The wrapper is small when it starts the CLI; measured from
# this (large) process instead, ru_maxrss would include our own pages, which a vfork'ed child inherits.
WRAPPER = """
import json, resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as fh:
    json.dump({"exit_code": code, "ru_maxrss_kb": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}, fh)
sys.exit(code)
"""


def run_cli(
    pdf_dir: Path,
    out_dir: Path,
    *,
    workers: int = 2,
    timeout_s: float = 3600,
    extra: list[str] | None = None,
) -> dict[str, Any]:
    """`arbiter run PDF_DIR --out OUT_DIR --workers N --quiet --force [EXTRA...]`, with its memory sampled."""
    cli = [
        sys.executable, "-m", "arbiter.cli.main", "run", str(pdf_dir),
        "--out", str(out_dir), "--workers", str(workers), "--quiet", "--force", *(extra or []),
    ]  # fmt: skip
    report = out_dir / "bench-wrapper.json"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, str(report), *cli],
        cwd=corpus.REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, so a timeout can stop the CLI and its workers
    )
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    finally:
        sampler.stop()
    seconds = time.perf_counter() - started
    wrapped = json.loads(report.read_text()) if report.exists() else {}
    cli_pid = sampler.first_child
    workers_hwm = [kb for pid, kb in sampler.hwm_kb.items() if pid != cli_pid]
    return {
        "command": " ".join(["arbiter", *cli[3:]]),
        "exit_code": proc.returncode,
        "wall_s": round(seconds, 2),
        "peak_parent_rss_mb": round(sampler.hwm_kb.get(cli_pid or -1, 0) / 1024, 1),
        "peak_child_rss_mb": round(max(workers_hwm, default=0) / 1024, 1),
        "child_processes": len(workers_hwm),
        "peak_tree_rss_mb": round(sampler.tree_peak_kb / 1024, 1),
        # Shared pages counted once (the fork server's modules, shared by every worker it forks).
        "peak_tree_pss_mb": round(sampler.tree_pss_peak_kb / 1024, 1),
        # ru_maxrss is in kB on Linux: the largest single process among the CLI and its children.
        "ru_maxrss_mb": round(wrapped.get("ru_maxrss_kb", 0) / 1024, 1),
        "rss_samples": sampler.samples,
        # Processes seen sharing their parent's address space (vfork'ed, not yet running their program):
        # counted once, with the parent.
        "vfork_children_seen": sampler.shared_address_spaces,
        # CPU seconds of the CLI and every process it waited for (its workers): user + system.
        "cpu_s": round(wrapped.get("cpu_s", 0.0), 2),
        "output_tail": (output or "")[-2000:] if proc.returncode else "",
    }


def run(
    *,
    docs: int = 5000,
    workers: int = 2,
    pages: tuple[int, int] = (1, 3),
    data_dir: Path | None = None,
    seed: int = 0,
    keep_output: bool = False,
    fixture_mix: bool = False,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    extra: list[str] = []
    if fixture_mix:
        directory, labels = mix_inputs((data_dir or corpus.DATA_DIR) / f"mix-{docs}", docs)
        extra = ["--classifications", str(labels)]
    else:
        directory = (data_dir or corpus.DATA_DIR) / f"batch-{docs}"
        corpus.write_pdfs(directory, docs, pages=pages, segments=2, prefix="batch", seed=seed)
    generate_s = time.perf_counter() - t0
    out_dir = Path(tempfile.mkdtemp(prefix="arbiter-bench-"))
    try:
        measured = run_cli(directory, out_dir, workers=workers, extra=extra)
        summaries = sorted((out_dir / "runs").glob("*/summary.json"))
        summary = json.loads(summaries[-1].read_text()) if summaries else {}
    finally:
        if not keep_output:
            shutil.rmtree(out_dir, ignore_errors=True)
    processed = summary.get("processed", 0)
    return {
        "docs": docs,
        "corpus": "fixture mix" if fixture_mix else "generated",
        "pages_per_doc": "1-4 and 30" if fixture_mix else list(pages),
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


def mix_inputs(root: Path, docs: int) -> tuple[Path, Path]:
    """`docs` byte-distinct copies of the fixture PDFs, each fixture copied in turn, with their answers (made
    once per `root`; a folder holding another count is made again)."""
    from bench.doc_cpu import make_inputs

    pdfs, labels = root / "pdfs", root / "labels"
    if pdfs.is_dir() and len(list(pdfs.glob("*.pdf"))) == docs:
        return pdfs, labels
    shutil.rmtree(root, ignore_errors=True)
    fixtures = len(list((corpus.REPO / "fixtures" / "pdfs").glob("*.pdf")))
    make_inputs(root, -(-docs // fixtures))
    for extra in sorted(pdfs.glob("*.pdf"), key=lambda p: (int(p.stem.rsplit("-c", 1)[1]), p.stem))[docs:]:
        extra.unlink()
        (labels / f"{extra.stem}.json").unlink(missing_ok=True)
    return pdfs, labels


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--fixture-mix", action="store_true", help="copies of the fixture PDFs and answers")
    args = parser.parse_args(argv)
    print(json.dumps(run(docs=args.docs, workers=args.workers, fixture_mix=args.fixture_mix), indent=2))


if __name__ == "__main__":
    main()
