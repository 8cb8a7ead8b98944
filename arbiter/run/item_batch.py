"""`arbiter run --kind grounded-answer`: a batch of items through the same BatchRunner as PDFs (bounded
concurrency, the results journal, the same summary.json, skip-unchanged, a clean stop on Ctrl+C), each item
verified by the kind's verifiers, the arbiter's rules and the retry governor, and recorded like a PDF:
the database first (document, outcome, an escalation's packet in the review queue, an accept's automatic
ground truth and its blind audit draw), then the JSON mirrors (arbiter/record/mirrors.py).

An item's packet and ground truth hold its answer where a PDF's hold the classification
(`primary_agent_classification`, `final_classification`, `ground_truth_classification`), name the kind
(`answer_kind`), and the packet carries the question and the retrieved chunks (`context`) the desk shows
beside each statement. The chunks are also the item's bundle (chunk i is page i + 1), mirrored under
bundles/. `--engine ray` runs the same per-item code (ItemPipeline.process_item) as Ray tasks
(arbiter/run/ray_items.py).

With `--llm gemini|openai|replay` the kind's model phases run (grounded-answer: V4's entailment check) through
the same LLM client as PDF runs: the preflight, the disk cache under OUT/cache/llm, per-item and per-run token
budgets, the summary's calls, tokens and cost. They run online on the local engine; batch mode (the Gemini
Batch API) and the Ray engine serve PDF runs only, and are refused in one line when asked for with a model.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter import atomic
from arbiter.errors import ConfigError
from arbiter.kinds import KindSpec
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.outputs import work_dir
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, InputDoc, ProgressFn
from arbiter.run.compose import database_url, llm_client, open_store, preflight
from arbiter.run.item_pipeline import ANSWER_FILE, DECISION_FILE, ItemPipeline, split_item
from arbiter.run.items import read_items
from arbiter.run.lock import run_lock

__all__ = ["ANSWER_FILE", "DECISION_FILE", "ItemPipeline", "item_llm", "run_items", "split_item"]


def item_llm(
    settings: LLMSettings, *, engine: str = "local", disk_cache: bool = True, genai_client: Any = None
) -> LLMClient | None:
    """The LLM client an items run or `arbiter verify --kind` uses (None: backend none, no model phase): the
    same preflight and client as a PDF run; batch mode and the Ray engine are refused with a model."""
    if settings.backend == "none":
        return None
    if settings.mode == "batch":
        raise ConfigError(
            "Items are checked by the language model online: --llm-mode batch (the Gemini Batch API) serves "
            "PDF runs only; use --llm-mode online (or unset ARBITER_LLM_MODE)."
        )
    if engine == "ray":
        raise ConfigError(
            "Items are checked by a language model on the local engine only: leave out --engine ray, or "
            "--llm for a rules-only run on Ray."
        )
    preflight(settings, genai_client)  # a live backend that cannot answer stops the run here (exit 2)
    client, _ = llm_client(settings, disk_cache=disk_cache, batch=False)
    return client


def run_items(
    kind: KindSpec,
    inputs: list[Path],
    out_dir: Path,
    *,
    profile: Path | None = None,
    workers: int | None = None,
    force: bool = False,
    db: str | None = None,
    progress: Callable[[int], ProgressFn | None] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    llm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Verify every item of the inputs into the run's database (an escalation's packet joins the review
    queue) and OUT's mirrors, on this machine (`workers` threads, default 1) or as Ray tasks (engine "ray":
    arbiter/run/ray_items.py; default workers: the cluster's CPUs); OUT/runs/{run_id}/summary.json.
    `progress` makes the per-item callback from the number of items. `llm`: LLMSettings overrides given on
    the command line (backend, model, budgets, use_cache), over the environment's ARBITER_LLM_* settings."""
    if engine not in ("local", "ray"):
        raise ConfigError(f"Unknown engine {engine!r}; choose local or ray.")
    if ray_address and engine != "ray":
        raise ConfigError("--ray-address needs --engine ray.")
    settings = LLMSettings.from_env(
        defaults={"cache_dir": work_dir(out_dir) / "cache" / "llm"},
        **{k: v for k, v in (llm or {}).items() if v is not None},
    )
    client = item_llm(settings, engine=engine)
    items = read_items(inputs)
    if engine == "ray":
        out_dir = out_dir.resolve()  # the tasks write the mirrors: the same absolute path on every node
    url = database_url(db, out_dir)
    with run_lock(out_dir, url):
        database = open_store(url)
        with closing(_Disposing(database)):
            store = DatabaseResultStore(database, out_dir)
            pipeline = ItemPipeline(
                kind, kind.load_profile(profile), store, {i.item_id: i for i in items}, llm=client
            )
            if engine == "ray":
                from arbiter.run.ray_items import run_items_on_ray

                summary = run_items_on_ray(
                    pipeline,
                    items,
                    url,
                    profile=profile,
                    workers=workers,
                    force=force,
                    address=ray_address,
                    progress=progress,
                )
            else:
                runner = BatchRunner(pipeline, store, workers=workers or 1, force=force)
                docs = [InputDoc(i.item_id, Path(i.origin)) for i in items]
                summary = runner.run(docs, progress(len(docs)) if progress else None)
    summary |= {"kind": kind.name}
    atomic.write_json(out_dir / "runs" / pipeline.run_id / "summary.json", summary)
    return summary


@dataclass
class _Disposing:
    store: Any

    def close(self) -> None:
        self.store.dispose()
