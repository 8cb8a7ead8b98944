"""`arbiter run --kind grounded-answer`: a batch of items through the same BatchRunner as PDFs (bounded
concurrency, the results journal, the same summary.json, skip-unchanged, a clean stop on Ctrl+C), each item
verified by the kind's verifiers, the arbiter's rules and the retry governor.

What is shared with PDF runs: discovery-to-summary flow (BatchRunner, Tally, summary), the governor, the
arbiter, the fixes, the verifier runner, the per-verifier files under OUT/agent_outputs/{id}/. What is not
yet: the database (packets, the review queue, ground truth), the Ray engine and the language-model phases;
this path writes files only and says so in the summary (`recorded_to_database: false`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter import __version__, atomic
from arbiter.contracts import VerificationOutcome
from arbiter.kinds import KindSpec
from arbiter.run.batch import BatchRunner, InputDoc, ProgressFn, new_run_id
from arbiter.run.items import RawItem, read_items, verify_item
from arbiter.run.result import DocResult

DECISION_FILE = "arbiter_decision.json"
ANSWER_FILE = "answer.json"


@dataclass(frozen=True)
class _Named:
    name: str


@dataclass
class ItemStore:
    """Files under OUT: each item's answer, its verifiers' results (the kind's file names) and its decision."""

    root: Path
    kind: KindSpec

    def folder(self, item_id: str) -> Path:
        return self.root / "agent_outputs" / item_id

    def decided(self, doc_id: str) -> dict[str, Any] | None:
        """The decision an earlier run recorded for this item (None: none, or one of another kind)."""
        path = self.folder(doc_id) / DECISION_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("kind") == self.kind.name else None

    def completed_key(self, item_id: str) -> str | None:
        previous = self.decided(item_id)
        return str(previous.get("skip_key")) if previous else None

    def save(self, item: RawItem, outcome: VerificationOutcome, key: str) -> None:
        folder = self.folder(item.item_id)
        atomic.write_text(folder / ANSWER_FILE, item.raw.rstrip("\n") + "\n")
        last = outcome.attempts[-1].verifier_results if outcome.attempts else []
        files = {spec.name: spec.output_file for spec in self.kind.verifiers}
        for result in last:
            if result.verifier in files:
                atomic.write_json(folder / files[result.verifier], result)
        decision = json.loads(outcome.model_dump_json())
        decision |= {
            "kind": self.kind.name,
            "skip_key": key,
            "accepted_after_fixes": outcome.accepted_after_fixes,
            "error": None,
            "semantic_checks": outcome.semantic_checks.value,
            "origin": item.origin,
        }
        atomic.write_json(folder / DECISION_FILE, decision)


@dataclass
class ItemPipeline:
    """What BatchRunner asks of a pipeline, for items that carry their own context."""

    kind: KindSpec
    profile: Any
    store: ItemStore
    items: dict[str, RawItem]
    run_id: str = field(default_factory=new_run_id)
    llm: Any = None  # no language-model phase for items yet

    @property
    def classifier(self) -> _Named:
        return _Named(f"{self.kind.name} answers (from the input)")

    def skip_key(self, item: RawItem) -> str:
        parts = [
            self.kind.name,
            hashlib.sha256(item.raw.encode()).hexdigest(),
            self.profile.digest,
            __version__,
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def process(self, path: Path, doc_id: str, *, force: bool = False) -> DocResult:
        started = time.perf_counter()
        item = self.items[doc_id]
        key = self.skip_key(item)
        if not force and self.store.completed_key(doc_id) == key:
            return DocResult.skipped_unchanged(doc_id, path, _ms(started))
        outcome = verify_item(self.kind, item.raw, self.profile, item_id=doc_id)
        self.store.save(item, outcome, key)
        return DocResult.decided(outcome, path, _ms(started), ())


def run_items(
    kind: KindSpec,
    inputs: list[Path],
    out_dir: Path,
    *,
    profile: Path | None = None,
    workers: int = 1,
    force: bool = False,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Verify every item of the inputs; write OUT/agent_outputs/{id}/ and OUT/runs/{run_id}/summary.json."""
    items = read_items(inputs)
    store = ItemStore(out_dir, kind)
    pipeline = ItemPipeline(kind, kind.load_profile(profile), store, {i.item_id: i for i in items})
    runner = BatchRunner(pipeline, store, workers=workers, force=force)
    docs = [InputDoc(i.item_id, Path(i.origin)) for i in items]
    summary = runner.run(docs, progress)
    summary |= {"kind": kind.name, "recorded_to_database": False}
    atomic.write_json(out_dir / "runs" / pipeline.run_id / "summary.json", summary)
    return summary


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
