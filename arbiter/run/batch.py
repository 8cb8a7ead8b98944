"""Batch runs: many PDFs, concurrently, resumable, with a summary an engineer reads at a glance."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from arbiter import __version__, atomic
from arbiter.contracts import SemanticChecks
from arbiter.errors import InputError
from arbiter.outputs import Location
from arbiter.run import heap
from arbiter.run.lock import RunLocked, check_run_locks
from arbiter.run.result import PENDING, DocResult
from arbiter.store.errors import DatabaseUnavailable

PDF_SUFFIXES = {".pdf"}


@dataclass(frozen=True)
class InputDoc:
    doc_id: str
    path: Path


def doc_id_for(path: Path) -> str:
    """The file stem, made safe to use as a file name under the output root (no leading dots, no separators)."""
    stem = path.stem.replace("/", "_").replace("\\", "_").strip()
    if not stem or stem.startswith("."):
        stem = "doc_" + stem.lstrip(".")
    return stem


def discover(inputs: Iterable[Path]) -> list[InputDoc]:
    """PDFs named directly (any file) or found recursively in directories; doc_id is the file stem."""
    found: list[Path] = []
    for item in inputs:
        if item.is_dir():
            found.extend(
                sorted(p for p in item.rglob("*") if p.is_file() and p.suffix.lower() in PDF_SUFFIXES)
            )
        elif item.is_file():
            found.append(item)
        else:
            raise InputError(f"Input {item} does not exist.")
    docs: dict[str, InputDoc] = {}
    clashes: list[str] = []
    for path in found:
        doc = InputDoc(doc_id=doc_id_for(path), path=path)
        if doc.doc_id in docs and docs[doc.doc_id].path.resolve() != path.resolve():
            clashes.append(f"{docs[doc.doc_id].path} and {path}")
        docs.setdefault(doc.doc_id, doc)
    if clashes:
        raise InputError(
            "Two inputs share a document id (the file name without .pdf): "
            + "; ".join(clashes[:5])
            + ". Rename one."
        )
    if not docs:
        raise InputError("No PDF files found in the inputs given.")
    return list(docs.values())


def new_run_id(now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


@dataclass
class Tally:
    """Aggregates of a run, updated as documents finish; never holds per-document outcomes."""

    total: int = 0
    processed: int = 0
    skipped: int = 0
    accepted_first_time: int = 0
    accepted_after_fixes: int = 0
    escalated: int = 0
    errors: int = 0
    pending_llm_batch: int = 0
    llm_calls: int = 0
    llm_cost_usd: float = 0.0
    escalated_by_reason: Counter[str] = field(default_factory=Counter)
    errors_by_reason: Counter[str] = field(default_factory=Counter)
    blind_samples: Counter[str] = field(default_factory=Counter)
    accepted_by_semantic_checks: Counter[str] = field(default_factory=Counter)

    def add(
        self,
        decision: str,
        reason: str | None,
        after_fixes: bool,
        error: str | None,
        semantic_checks: str = SemanticChecks.RULES_ONLY.value,
    ) -> None:
        if error:
            self.errors += 1
            self.errors_by_reason[error] += 1
        elif decision == "AUTO_ACCEPT":
            self.accepted_by_semantic_checks[semantic_checks] += 1
            if after_fixes:
                self.accepted_after_fixes += 1
            else:
                self.accepted_first_time += 1
        else:
            self.escalated += 1
            self.escalated_by_reason[reason or "unspecified"] += 1


ProgressFn = Callable[[DocResult], None]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl+C, SIGTERM (or a SystemExit no document caught) ended the run: a KeyboardInterrupt still, so
    `except Exception` never swallows it, carrying the summary of what was done (already written to
    summary.json) for the CLI to print before it exits 130 or 143."""

    def __init__(self, summary: dict[str, Any]) -> None:
        super().__init__("the run was interrupted")
        self.summary = summary


class RunStore(Protocol):
    """What a batch needs of its store: where run summaries go, and what the newest recorded run decided
    for a document it skips (from the database, the one source of truth; never from a mirror file)."""

    @property
    def root(self) -> Location: ...

    def decided(self, doc_id: str) -> dict[str, Any] | None: ...


class RunPipeline(Protocol):
    """What a batch needs of its pipeline: the PDF pipeline (run/document.py) or an items pipeline of another
    kind (run/item_batch.py)."""

    @property
    def run_id(self) -> str: ...

    @property
    def profile(self) -> Any: ...

    @property
    def classifier(self) -> Any: ...

    @property
    def llm(self) -> Any: ...

    def process(self, pdf: Path, doc_id: str, *, force: bool = False) -> DocResult: ...


class BatchRunner:
    def __init__(self, pipeline: RunPipeline, store: RunStore, *, workers: int, force: bool = False) -> None:
        self.pipeline = pipeline
        self.store = store
        self.workers = max(1, workers)
        self.force = force
        self.lock = threading.Lock()
        self.draining = threading.Event()  # set: no new document starts; those under way are recorded

    def run(self, docs: list[InputDoc], progress: ProgressFn | None = None) -> dict[str, Any]:
        run_id = self.pipeline.run_id
        run_dir = self.store.root / "runs" / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        # The results journal is appended to as documents finish; object storage cannot append, so for an
        # `--out` URL it is kept in a local temporary folder and put beside the summary at the end.
        journal_dir = run_dir if isinstance(run_dir, Path) else Path(tempfile.mkdtemp(prefix="arbiter-run-"))
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        tally = Tally(total=len(docs))
        interrupted: BaseException | None = None
        database_away: DatabaseUnavailable | None = None
        lock_lost: RunLocked | None = None
        with (journal_dir / "results.jsonl").open("a", encoding="utf-8") as journal, heap.batch_heap():
            try:
                check_run_locks()
                for result in self._results(docs):
                    self._record(result, tally, journal)
                    if progress:
                        progress(result)
                    if lock_lost is None:
                        try:
                            check_run_locks()  # a database restart ends the run lock: retaken, or we stop
                        except RunLocked as exc:
                            lock_lost = exc  # record the documents under way, start no other
                            self.draining.set()
            except RunLocked as exc:
                lock_lost = exc
            except DatabaseUnavailable as exc:
                # Retried with backoff and still away: stop cleanly; a re-run finishes the rest.
                database_away = exc
            except (KeyboardInterrupt, SystemExit, GeneratorExit) as exc:
                # Ctrl+C, SIGTERM, or a SystemExit no document caught: the run ends as interrupted, with its
                # summary, and the caller exits non-zero (a KeyboardInterrupt, whatever stopped it).
                interrupted = exc
        seconds = time.perf_counter() - t0
        summary = self._summary(run_id, started_at, seconds, tally, interrupted is not None)
        if database_away is not None:
            summary["stopped"] = "database_unavailable"
            summary["stopped_message"] = str(database_away)
        if lock_lost is not None:
            summary["stopped"] = "run_lock_lost"
            summary["stopped_message"] = str(lock_lost)
        if journal_dir != run_dir:
            (run_dir / "results.jsonl").write_bytes((journal_dir / "results.jsonl").read_bytes())
            shutil.rmtree(journal_dir, ignore_errors=True)
        atomic.write_json(run_dir / "summary.json", summary)
        if database_away is not None:
            raise DatabaseUnavailable(
                f"{database_away} The run stopped after {tally.processed + tally.skipped} of {tally.total} "
                f"documents; its summary is {run_dir / 'summary.json'}."
            ) from None
        if lock_lost is not None:
            raise RunLocked(
                f"{lock_lost} It stopped after {tally.processed + tally.skipped} of {tally.total} documents; "
                f"its summary is {run_dir / 'summary.json'}."
            ) from None
        if interrupted is not None:
            raise RunInterrupted(summary) from interrupted
        return summary

    def _results(self, docs: list[InputDoc]) -> Iterator[DocResult]:
        """Process with a bounded number in flight, so memory stays flat however many documents there are."""
        pending = iter(docs)
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="arbiter-doc") as pool:
            in_flight: set[Future[DocResult]] = set()
            try:
                for doc in pending:
                    if self.draining.is_set():
                        break
                    in_flight.add(pool.submit(self.pipeline.process, doc.path, doc.doc_id, force=self.force))
                    if len(in_flight) >= self.workers * 2:
                        done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                        yield from (f.result() for f in done)
                while in_flight:
                    if self.draining.is_set():
                        for future in in_flight:
                            future.cancel()  # not started yet: left for the next run
                    done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                    yield from (f.result() for f in done if not f.cancelled())
            except BaseException:
                for future in in_flight:
                    future.cancel()
                raise

    def _record(self, result: DocResult, tally: Tally, journal: Any) -> None:
        with self.lock:
            if result.skipped:
                tally.skipped += 1
                previous = self.store.decided(result.doc_id) or {}
                tally.add(
                    str(previous.get("final_decision", "ESCALATE_TO_SME")),
                    previous.get("escalation_reason"),
                    bool(previous.get("accepted_after_fixes")),
                    previous.get("error"),
                    # An entry written before semantic checks were recorded: the decision claims no model.
                    str(previous.get("semantic_checks") or SemanticChecks.RULES_ONLY.value),
                )
            elif result.final_decision == PENDING:
                tally.pending_llm_batch += 1
            else:
                tally.processed += 1
                tally.llm_calls += result.llm_calls
                tally.llm_cost_usd += result.llm_cost_usd or 0.0
                tally.blind_samples.update(result.samples)
                tally.add(
                    result.final_decision,
                    result.escalation_reason,
                    result.accepted_after_fixes,
                    result.error,
                    result.semantic_checks,
                )
            journal.write(json.dumps(asdict(result)) + "\n")
            journal.flush()

    def _llm_summary(self, tally: Tally) -> dict[str, Any]:
        """Calls, cache hits, tokens and estimated cost of this run (all zero without an LLM backend)."""
        client = self.pipeline.llm
        if client is None:
            return {"backend": "none", "calls": 0, "cost_usd": 0.0}
        totals: dict[str, Any] = client.totals()
        if totals.get("cost_usd") is not None:  # None: the model's price is unknown, never reported as $0
            totals["cost_usd"] = round(float(totals["cost_usd"]), 6)
        totals["calls_per_document"] = round(tally.llm_calls / tally.processed, 3) if tally.processed else 0.0
        return totals

    def _drift_summary(self) -> dict[str, Any] | None:
        """The run's drift alarms per producer (record/drift.py); None for a pipeline that follows none."""
        monitor = getattr(self.pipeline, "drift", None)
        return monitor.summary() if monitor is not None else None

    def _summary(
        self, run_id: str, started_at: datetime, seconds: float, tally: Tally, interrupted: bool
    ) -> dict[str, Any]:
        profile = self.pipeline.profile
        return {
            "run_id": run_id,
            "started_at": started_at.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
            "duration_s": round(seconds, 3),
            "interrupted": interrupted,
            "code_version": __version__,
            "classifier": self.pipeline.classifier.name,
            "profile": {
                "name": profile.name,
                "version": profile.version,
                "policy": profile.arbiter.policy_version,
            },
            "workers": self.workers,
            "documents": tally.total,
            "processed": tally.processed,
            "skipped_unchanged": tally.skipped,
            "accepted_first_time": tally.accepted_first_time,
            "accepted_after_fixes": tally.accepted_after_fixes,
            "accepted_by_semantic_checks": {
                k.value: tally.accepted_by_semantic_checks[k.value] for k in SemanticChecks
            },
            "escalated": tally.escalated,
            "escalated_by_reason": dict(tally.escalated_by_reason.most_common()),
            "errors": tally.errors,
            "errors_by_reason": dict(tally.errors_by_reason.most_common()),
            "pending_llm_batch": tally.pending_llm_batch,
            "blind_samples": {k: tally.blind_samples[k] for k in ("AUDIT", "SECOND_REVIEW")},
            "drift": self._drift_summary(),
            "llm": self._llm_summary(tally),
            "docs_per_second": round(tally.processed / seconds, 2) if seconds > 0 else None,
            "output_dir": str(self.store.root),
            "results": str(self.store.root / "runs" / run_id / "results.jsonl"),
        }


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)
