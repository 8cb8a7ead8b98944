"""`arbiter run --kind grounded-answer --engine ray`: a batch of items verified by Ray tasks across a cluster.

The driver (arbiter/run/item_batch.py's run_items, holding the run lock) reads the items and sends them, their
text and all, in tasks of at most TASK_ITEMS items and about TASK_BYTES of JSON, with a bounded number in
flight; items are small and carry their own context, so no node needs to read the input files. Each task runs
the local engine's own per-item code (ItemPipeline.process_item: skip-unchanged, verification, the decision
and its recording through the database sink and the mirrors), so an item is decided and recorded exactly as
the local engine does it. The tally, journal, summary, retries and lost-node handling are the PDF engine's
(RayBatchRunner, arbiter/run/ray_engine.py): a task whose node dies is run again by Ray, a batch lost on every
try again one item per task, and an item no try finishes is recorded by the driver as an internal error,
an escalation that says so in plain words.
"""

from __future__ import annotations

import atexit
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter import __version__
from arbiter.errors import ConfigError
from arbiter.kinds import kind
from arbiter.outputs import location
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import InputDoc
from arbiter.run.item_pipeline import ItemPipeline
from arbiter.run.items import RawItem
from arbiter.run.ray_batches import batches
from arbiter.run.ray_engine import RayBatchRunner, TaskFn, check_database, ray_session
from arbiter.run.ray_worker import recorded_in_run
from arbiter.run.result import DocResult
from arbiter.store import Store, pooling
from arbiter.store.db import make_engine, resolve_url

TASK_ITEMS = 64  # items in one task at most (each takes milliseconds: Ray's per-task cost is shared out)
TASK_BYTES = 1 << 20  # and about this much item text (a larger item goes alone)


@dataclass(frozen=True)
class ItemSpec:
    """What every task needs to build the run's item pipeline: plain values, paths absolute."""

    run_id: str
    db_url: str
    out_dir: str
    kind: str
    profile: str | None = None
    db_pool_size: int = 1
    db_pooling: str = "session"
    code_version: str = (
        __version__  # the driver's: every node must run the same Arbiter (skip keys include it)
    )


@dataclass
class _Built:
    pipeline: ItemPipeline
    database: Store


_BUILT: dict[str, _Built] = {}  # run_id -> this worker process's item pipeline (one run at a time)


def _build(spec: ItemSpec) -> _Built:
    if spec.code_version != __version__:
        raise ConfigError(
            f"This Ray node runs Arbiter {__version__} and the driver {spec.code_version}; "
            "install the same version on every node."
        )
    spec_kind = kind(spec.kind)
    profile = spec_kind.load_profile(Path(spec.profile) if spec.profile else None)
    engine = None
    if not spec.db_url.startswith("sqlite"):
        engine = make_engine(resolve_url(spec.db_url), pooling=spec.db_pooling, pool_size=spec.db_pool_size)
    database = Store(spec.db_url, engine=engine)
    sink = DatabaseResultStore(database, location(spec.out_dir))
    return _Built(ItemPipeline(spec_kind, profile, sink, {}, run_id=spec.run_id), database)


def _built_for(spec: ItemSpec) -> _Built:
    built = _BUILT.get(spec.run_id)
    if built is None:
        for old in list(_BUILT):
            with suppress(Exception):
                _BUILT.pop(old).database.dispose()
        built = _BUILT[spec.run_id] = _build(spec)
    return built


@atexit.register
def _close_all() -> None:
    for run_id in list(_BUILT):
        with suppress(Exception):
            _BUILT.pop(run_id).database.dispose()


def process_item(spec: ItemSpec, item: RawItem, doc_id: str, force: bool) -> tuple[DocResult, dict[str, Any]]:
    """One item through the run's item pipeline on this node: its DocResult (and no LLM use: none yet)."""
    built = _built_for(spec)
    # A retried task whose first try committed before its node died: reported from the database (its
    # missing files rebuilt first), not decided again; if a file cannot be rebuilt, the item is decided again.
    again = recorded_in_run(built.database, built.pipeline.store, spec.run_id, doc_id, item.origin)
    if again is not None and built.pipeline.repair(item):
        return again, {}
    return built.pipeline.process_item(item, force=force), {}


class RayItemRunner(RayBatchRunner):
    """The Ray engine's runner for items: batches by item count and size, each task handed its items' text,
    and an item no try finished recorded (by the driver) as an internal-error escalation."""

    def __init__(
        self,
        pipeline: ItemPipeline,
        spec: ItemSpec,
        items: list[RawItem],
        *,
        workers: int,
        force: bool,
        task: TaskFn = process_item,
    ) -> None:
        super().__init__(pipeline, pipeline.store, spec, workers=workers, force=force, task=task)
        self.items = {i.item_id: i for i in items}
        self.item_pipeline = pipeline

    def _plan(self, docs: list[InputDoc]) -> Iterator[list[InputDoc]]:
        least = TASK_BYTES // TASK_ITEMS  # an item counts at least this much: at most TASK_ITEMS a task
        size = {Path(i.origin): max(least, len(i.raw.encode())) for i in self.items.values()}
        return batches(docs, pages=TASK_BYTES, workers=self.workers, count=lambda path: size.get(path, least))

    def _source(self, doc: InputDoc) -> Any:
        return self.items[doc.doc_id]

    def _lost(self, doc: InputDoc, what: str) -> DocResult:
        self.lost += 1
        return self.item_pipeline.failed(self.items[doc.doc_id], what, time.perf_counter())


def run_items_on_ray(
    pipeline: ItemPipeline,
    items: list[RawItem],
    url: str,
    *,
    profile: Path | None,
    workers: int | None,
    force: bool,
    address: str | None,
    progress: Callable[[int], Callable[[Any], None] | None] | None,
    task: TaskFn = process_item,
) -> dict[str, Any]:
    """The items run as Ray tasks (the caller holds the run lock and the driver's store); the summary, as the
    local engine's, with the engine and the items no try finished."""
    root = Path(str(pipeline.store.root)).resolve()  # every node writes the mirrors to the same absolute path
    docs = [InputDoc(i.item_id, Path(i.origin)) for i in items]
    with ray_session(address, cpus=workers) as ray:
        check_database(url, ray)
        n = workers or int(ray.cluster_resources().get("CPU", 1))
        # The driver's pool and its run lock's session count against the run's connection budget.
        pool = 1 if url.startswith("sqlite") else pooling.worker_pool_size(n, pooling.pool_size() + 1)
        spec = ItemSpec(
            run_id=pipeline.run_id,
            db_url=url,
            out_dir=str(root),
            kind=pipeline.kind.name,
            profile=str(profile.resolve()) if profile else None,
            db_pool_size=pool,
            db_pooling="transaction" if pooling.transaction_pooling() else "session",
        )
        runner = RayItemRunner(pipeline, spec, items, workers=n, force=force, task=task)
        summary = runner.run(docs, progress=progress(len(docs)) if progress else None)
        nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
    summary["engine"] = {"name": "ray", "address": address or "local", "nodes": nodes}
    summary["failed_on_every_try"] = runner.lost
    return summary
