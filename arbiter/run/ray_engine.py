"""`arbiter run --engine ray`: the same batch, its documents fanned out as Ray tasks across a cluster.

The driver (this process) discovers the PDFs, holds the run lock, starts one RunLimits actor for the run's
LLM rate limit and token budget (arbiter/run/ray_limits.py), submits the documents in tasks of about
ARBITER_RAY_TASK_PAGES pages each (arbiter/run/ray_batches.py) with a bounded number in flight, and tallies what comes back into the same progress bar, journal and summary as the local
engine (it is a BatchRunner whose documents come from Ray). The tasks (arbiter/run/ray_worker.py) run the
local engine's Pipeline and write to the shared database themselves. A task whose node dies is run again
elsewhere by Ray (`max_retries`); a batch that fails on every try is run again one document per task, and a
document that fails on every try is recorded as an internal error, so no document is lost and none is recorded
twice.

Without --ray-address a local Ray instance is started (every process on 127.0.0.1) and stopped at the end.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa

from arbiter.errors import ConfigError, UserError
from arbiter.llm.client import Usage
from arbiter.metrics.drift import alarms as drift_alarms
from arbiter.outputs import Location, is_url, location, work_dir
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, InputDoc, RunPipeline, default_workers, new_run_id
from arbiter.run.compose import Engine, PipelineParts, open_store, pipeline
from arbiter.run.document import Pipeline
from arbiter.run.lock import run_lock
from arbiter.run.ray_batches import batches, run_batch, task_pages
from arbiter.run.ray_worker import WorkerSpec, add_usage, process_document, without_keys
from arbiter.run.result import DocResult
from arbiter.store import pooling
from arbiter.store.errors import DatabaseUnavailable
from arbiter.store.models import documents

TASK_RETRIES = 3  # Ray runs a task again this many times when its worker or node dies
LOCAL_OBJECT_STORE = 128 * 2**20  # a local instance's object store: tasks pass small results only
CLIENT_RETRIES = 3  # Ray Client: tries when its head is slow to start the per-client server
CLIENT_RETRY_WAIT_S = 2.0
_ADDRESS = re.compile(r"^(?P<scheme>ray://)?(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")
TaskFn = Callable[[Any, Any, str, bool], tuple[DocResult, dict[str, Any]]]  # (spec, source, doc_id, force)
INSTALL_HINT = "--engine ray needs Ray: pip install 'arbiter[ray]'."


def check_address(address: str) -> None:
    """Refuse a malformed --ray-address, and a HOST:PORT nothing listens on, in one line (Ray itself would
    retry for minutes, then exit the process)."""
    if address == "auto":
        return
    match = _ADDRESS.match(address)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise ConfigError(
            f"--ray-address {address!r} is not auto, HOST:PORT or ray://HOST:PORT (e.g. ray://head:10001)."
        )
    host = match["host"].strip("[]")
    try:
        socket.create_connection((host, int(match["port"])), timeout=5).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"Cannot reach the Ray cluster at {address} ({reason}).") from None


@contextmanager
def ray_session(address: str | None, *, cpus: int | None) -> Iterator[Any]:
    """Connected to the cluster at `address` (auto: the one this machine belongs to), or to a local instance
    started here on 127.0.0.1 and stopped on exit; yields the ray module."""
    if address is not None:
        check_address(address)
    else:
        # Before Ray is imported: a local instance and its processes then use 127.0.0.1 only.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    try:
        import ray
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    import logging

    owned = not ray.is_initialized()
    if owned:
        try:
            if address is None:
                ray.init(
                    address="local",  # a new instance, even when RAY_ADDRESS names a cluster
                    num_cpus=cpus or default_workers(),
                    object_store_memory=LOCAL_OBJECT_STORE,
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                )
            else:
                _connect(ray, address, logging.WARNING)
        except ConnectionError as exc:
            where = "on this machine (start one with `ray start --head`)" if address == "auto" else address
            raise ConfigError(f"No Ray cluster found {where}: {str(exc).splitlines()[0]}") from None
    try:
        yield ray
    finally:
        if owned:
            ray.shutdown()


def _connect(ray: Any, address: str, level: int) -> None:
    """ray.init on an existing cluster. Ray Client's head starts a server process per client and answers
    "Initialization failure from server" when that is slow (a busy head): a transient failure, retried."""
    for attempt in range(CLIENT_RETRIES):
        try:
            ray.init(address=address, logging_level=level)
            return
        except ConnectionError as exc:
            if "Initialization failure" not in str(exc) or attempt == CLIENT_RETRIES - 1:
                raise
            time.sleep(CLIENT_RETRY_WAIT_S * (attempt + 1))


def check_database(url: str, ray: Any) -> None:
    """SQLite is a file on one machine: refuse it when the cluster has a node elsewhere."""
    if not url.startswith("sqlite"):
        return
    addresses = {_machine(n["NodeManagerAddress"]) for n in ray.nodes() if n.get("Alive")}
    if len(addresses) > 1:
        raise ConfigError(
            "A Ray cluster of several machines needs a shared database: give --db postgresql://… "
            "(SQLite works only when every node is this machine)."
        )


def _machine(address: str) -> str:
    """The machine a node address names: every loopback address (127.0.0.2, 127.0.0.3: nodes started on one
    machine as the README shows) is this one."""
    try:
        return "this machine" if ipaddress.ip_address(address).is_loopback else address
    except ValueError:
        return address


class RayBatchRunner(BatchRunner):
    """A BatchRunner whose documents are decided by Ray tasks; the tally, journal and summary are its own.
    PDFs by default; the items of an items kind through its subclass (arbiter/run/ray_items.py), which plans
    its batches, sends its tasks the items' text and records a lost item its own way."""

    def __init__(
        self,
        pipeline: RunPipeline,
        store: DatabaseResultStore,
        spec: Any,  # WorkerSpec (PDFs), ItemSpec (items)
        *,
        workers: int,
        force: bool,
        task: TaskFn = process_document,
    ) -> None:
        super().__init__(pipeline, store, workers=workers, force=force)
        self.sink = store  # its database: the run's drift alarms are replayed from it (_drift_summary)
        self.spec = spec
        self.task = task  # what a Ray task runs per document (a test wraps it to stop a node mid-document)
        self.usage = Usage()
        self.lost = 0  # documents no try finished (recorded as internal errors)

    def _drift_summary(self) -> dict[str, Any] | None:
        """On Ray each task decides in a process of its own, so the driver's monitor observes nothing: the run's
        alarms are those of the recorded history replayed run by run (metrics/drift.py, as `arbiter metrics`
        gives them), this run's, with the documents and producers it followed."""
        monitor = getattr(self.pipeline, "drift", None)
        if monitor is None:
            return None
        run_id = monitor.run_id
        with self.sink.store.read() as conn:
            alarms = [a.model_dump() for a in drift_alarms(conn, policy=monitor.policy) if a.run_id == run_id]
            followed = conn.execute(
                sa.select(documents.c.producer, sa.func.count())
                .where(
                    documents.c.run_id == run_id,
                    documents.c.error.is_(None),
                    documents.c.producer.is_not(None),
                )
                .group_by(documents.c.producer)
            ).all()
        return {
            "enabled": monitor.policy.enabled,
            "documents": sum(int(n) for _, n in followed) if monitor.policy.enabled else 0,
            "strata": sorted(str(p) for p, _ in followed) if monitor.policy.enabled else [],
            "alarms": alarms,
            "standing": sorted({a["stratum"] for a in alarms if a["standing"]}),
        }

    def _results(self, docs: list[InputDoc]) -> Iterator[DocResult]:
        """Documents in batches by pages (run/ray_batches.py), at most twice the workers' batches in flight (the
        driver's memory stays flat), each batch's results yielded as soon as it finishes."""
        import ray

        remote = ray.remote(run_batch).options(
            num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD"
        )
        spec, task = ray.put(self.spec), ray.put(self.task)
        plan = self._plan(docs)
        singles: deque[list[InputDoc]] = deque()  # documents of batches lost on every try, one per task now
        in_flight: dict[Any, list[InputDoc]] = {}
        try:
            while True:
                while len(in_flight) < self.workers * 2 and not self.draining.is_set():
                    batch = singles.popleft() if singles else next(plan, None)
                    if batch is None:
                        break
                    items = [(self._source(d), d.doc_id) for d in batch]
                    in_flight[remote.remote(task, spec, items, self.force)] = batch
                if not in_flight:
                    return
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    yield from self._collect(ray, ref, in_flight.pop(ref), singles)
        except BaseException:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            raise

    def _plan(self, docs: list[InputDoc]) -> Iterator[list[InputDoc]]:
        """The run's tasks: documents by pages (run/ray_batches.py)."""
        return batches(docs, pages=task_pages(), workers=self.workers)

    def _source(self, doc: InputDoc) -> Any:
        """What a task is handed to read the document: the PDF's absolute path (every node sees it)."""
        return str(doc.path.resolve())

    def _collect(
        self, ray: Any, ref: Any, batch: list[InputDoc], singles: deque[list[InputDoc]]
    ) -> Iterator[DocResult]:
        from ray.exceptions import RayError, RayTaskError

        try:
            outcomes = ray.get(ref)
        except RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, DatabaseUnavailable):
                raise DatabaseUnavailable(str(cause)) from None
            if isinstance(cause, UserError):  # a node that cannot build the run (a path it does not see...)
                raise ConfigError(f"A Ray worker could not run {batch[0].doc_id}: {cause}") from None
            if isinstance(cause, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            outcomes = [(None, type(cause).__name__)] * len(batch)
        except RayError as exc:  # the worker or its node died on every try
            if len(batch) > 1:  # again one document per task: only a document that kills its worker is lost
                singles.extend([doc] for doc in batch)
                return
            outcomes = [(None, type(exc).__name__)]
        for doc, (result, usage) in zip(batch, outcomes, strict=True):
            if result is None:
                yield self._lost(doc, f"{usage} on a Ray worker")
            else:
                add_usage(self.usage, usage)
                yield result

    def _lost(self, doc: InputDoc, what: str) -> DocResult:
        """A document no try could finish: recorded as an internal error (a re-run redoes it)."""
        self.lost += 1
        failed: DocResult = cast(Pipeline, self.pipeline)._failed(
            doc.path.resolve(),
            doc.doc_id,
            "",
            "internal_error",
            f"Arbiter failed on this document ({what}); it needs a person to review it.",
            time.perf_counter(),
        )
        return failed

    def _llm_summary(self, tally: Any) -> dict[str, Any]:
        totals = super()._llm_summary(tally)
        if self.pipeline.llm is not None:
            totals |= self.usage.as_dict()
        return totals


def execute_on_ray(
    options: Any,
    engine: Engine,
    docs: list[InputDoc],
    url: str,
    *,
    password: str | None,
    progress: Callable[[int], Callable[[Any], None] | None] | None,
    task: TaskFn = process_document,
) -> dict[str, Any]:
    """`arbiter run --engine ray` (run/job.py's execute hands over here): the summary, as the local engine's."""
    if engine.collector is not None:
        raise ConfigError("--llm-mode batch runs on the local engine only; drop --engine ray.")
    # A shared folder (resolved: every node reads the same absolute path) or an fsspec URL (arbiter/outputs.py).
    out_dir = location(options.out_dir if is_url(options.out_dir) else str(Path(options.out_dir).resolve()))
    with run_lock(work_dir(out_dir), url), ray_session(options.ray_address, cpus=options.workers) as ray:
        check_database(url, ray)
        workers = options.workers or int(ray.cluster_resources().get("CPU", 1))
        # The driver's pool and its run lock's session count against the run's connection budget.
        pool = 1 if url.startswith("sqlite") else pooling.worker_pool_size(workers, pooling.pool_size() + 1)
        database = open_store(url)
        limits = None
        try:
            sink = DatabaseResultStore(database, out_dir, mirrors=options.mirrors)
            run_id = new_run_id()
            parts = PipelineParts(store=sink, ingest=_never, run_id=run_id, password=password)
            driver = pipeline(engine, parts)
            if engine.llm is not None:
                from arbiter.run.ray_limits import start_limits

                limits = start_limits(engine.llm)
            spec = _spec(options, engine, run_id, url, password, limits, out_dir)
            mode = "transaction" if pooling.transaction_pooling() else "session"
            spec = replace(spec, db_pool_size=pool, db_pooling=mode)
            runner = RayBatchRunner(driver, sink, spec, workers=workers, force=options.force, task=task)
            summary = runner.run(docs, progress=progress(len(docs)) if progress else None)
        finally:
            if limits is not None:
                ray.kill(limits)
            database.dispose()
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    summary["classifier"] = engine.classifier_name
    summary["engine"] = {"name": "ray", "address": options.ray_address or "local", "nodes": nodes}
    summary["failed_on_every_try"] = runner.lost
    from arbiter import atomic

    atomic.write_json(out_dir / "runs" / summary["run_id"] / "summary.json", summary)
    return summary


def _spec(
    options: Any,
    engine: Engine,
    run_id: str,
    url: str,
    password: str | None,
    limits: Any,
    out_dir: Location,
) -> WorkerSpec:
    def absolute(path: str | None) -> str | None:
        return str(Path(path).resolve()) if path else None

    settings = replace(engine.settings, cache_dir=Path(engine.settings.cache_dir).resolve())
    return WorkerSpec(
        run_id=run_id,
        db_url=url,
        out_dir=str(out_dir),
        settings=without_keys(settings),
        classifier=options.classifier,
        classifications=absolute(options.classifications),
        production=absolute(options.production),
        profile=absolute(options.profile),
        sampling=tuple(sorted(options.sampling.items())),
        extractor=options.extractor,
        documentai=tuple(sorted(options.documentai.items())),
        timeout_s=options.timeout,
        password=password,
        limits=limits,
        mirrors=options.mirrors,
    )


def _never(path: Path, doc_id: str) -> Any:
    raise AssertionError("the driver of a Ray run never reads a PDF; its tasks do")
