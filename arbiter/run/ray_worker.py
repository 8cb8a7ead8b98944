"""The Ray side of `arbiter run --engine ray`: one document per task, on whichever node Ray picks.

Each worker process builds the run's Pipeline once, from the same options and composition root as the local
engine (arbiter/run/compose.py), and runs the same `Pipeline.process` on each document it is handed, so a
document is decided exactly as the local engine decides it. The task writes its result itself, through the
same database sink (arbiter/record/sink.py): the database is shared by every node (PostgreSQL; SQLite only
when every node is this machine), and the mirror files go to the output folder, a path every node sees.

A task Ray runs again after its node died finds the document already recorded by this run when the first
attempt got as far as the commit, and reports that record instead of deciding it a second time; the
(doc_id, run_id) uniqueness of the store backs this up.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from arbiter import __version__
from arbiter.classify.production import load_production
from arbiter.errors import ConfigError
from arbiter.ingest.cache import BundleCache
from arbiter.llm.client import LLMClient, Usage
from arbiter.llm.config import LLMSettings
from arbiter.outputs import location, work_dir
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.compose import (
    PipelineParts,
    build_engine,
    ingest_fn,
    open_extraction,
    pipeline,
    worker_job,
)
from arbiter.run.document import Pipeline
from arbiter.run.ray_limits import share_limits
from arbiter.run.result import DocResult
from arbiter.run.worker import ingest_and_check
from arbiter.store import Store
from arbiter.store.db import make_engine, resolve_url

KEY_VARIABLES = {
    "openai_api_key": ("ARBITER_OPENAI_API_KEY", "OPENAI_API_KEY"),
    "gemini_api_key": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}


@dataclass(frozen=True)
class WorkerSpec:
    """What every task needs to build the run's pipeline: plain values, every path absolute (a worker's
    working folder is not the driver's), no secret (API keys are read from each node's environment)."""

    run_id: str
    db_url: str
    out_dir: str
    settings: LLMSettings
    classifier: str | None = None
    classifications: str | None = None
    production: str | None = None
    profile: str | None = None
    sampling: tuple[tuple[str, float], ...] = ()
    extractor: str | None = None
    documentai: tuple[tuple[str, Any], ...] = ()
    timeout_s: float = 120.0
    password: str | None = None
    limits: Any = None  # the run's RunLimits actor handle (None: no LLM)
    db_pool_size: int = 1  # this worker's share of the run's connection budget (store/pooling.py)
    db_pooling: str = "session"  # the driver's ARBITER_DB_POOLING: every node reaches the same PgBouncer
    mirrors: str = "all"  # the run's --mirrors (record/mirrors.py MIRROR_MODES)
    code_version: str = (
        __version__  # the driver's: every node must run the same Arbiter (skip keys include it)
    )


def without_keys(settings: LLMSettings) -> LLMSettings:
    """The settings to ship to the cluster: no API key travels with them."""
    return dataclasses.replace(settings, openai_api_key=None, gemini_api_key=None)


def with_local_keys(settings: LLMSettings) -> LLMSettings:
    """The shipped settings with this node's API keys (from its environment)."""

    def key(field: str) -> str | None:
        return next((os.environ[v] for v in KEY_VARIABLES[field] if os.environ.get(v)), None)

    return dataclasses.replace(
        settings, openai_api_key=key("openai_api_key"), gemini_api_key=key("gemini_api_key")
    )


@dataclass
class _Built:
    pipeline: Pipeline
    sink: DatabaseResultStore
    database: Store
    closers: tuple[Any, ...]


_BUILT: dict[str, _Built] = {}  # run_id -> this worker process's pipeline (one run at a time)


def _build(spec: WorkerSpec) -> _Built:
    if spec.code_version != __version__:
        raise ConfigError(
            f"This Ray node runs Arbiter {__version__} and the driver {spec.code_version}; "
            "install the same version on every node."
        )
    settings = with_local_keys(spec.settings)
    engine = build_engine(
        settings,
        profile=spec.profile,
        sampling=dict(spec.sampling),
        classifier=spec.classifier,
        classifications=Path(spec.classifications) if spec.classifications else None,
    )
    if engine.llm is not None and spec.limits is not None:
        share_limits(engine.llm, spec.limits)
    out_dir = location(spec.out_dir)  # the shared folder or object storage URL the driver was given
    cache = BundleCache(work_dir(spec.out_dir) / "cache" / "bundles")  # this node's own disk
    # As the local engine: without a model the ingestion process also classifies and verifies (and files the
    # bundle), handing this process the outcome and a bundle without its text, not the whole bundle.
    job = worker_job(engine, spec.extractor, out_dir, cache.root)
    ingestor, extractor = open_extraction(
        spec.extractor,
        workers=1,
        timeout_s=spec.timeout_s,
        documentai=dict(spec.documentai),
        target=partial(ingest_and_check, job=job) if job is not None else None,
    )
    with ExitStack() as undo:  # what fails below leaves no worker, fork server or connection pool behind
        undo.callback(ingestor.close)
        database = Store(spec.db_url, engine=_engine(spec) if not spec.db_url.startswith("sqlite") else None)
        undo.callback(database.dispose)
        sink = DatabaseResultStore(database, out_dir, mirrors=spec.mirrors)
        password = spec.password
        parts = PipelineParts(
            store=sink,
            ingest=ingest_fn(ingestor, password),
            run_id=spec.run_id,
            cache=cache,
            production=load_production(Path(spec.production)) if spec.production else {},
            extractor=extractor,
            password=password,
        )
        built = _Built(pipeline(engine, parts), sink, database, (ingestor,))
        undo.pop_all()
    return built


def _engine(spec: WorkerSpec) -> Any:
    """This worker's PostgreSQL engine: its share of the run's connections, the driver's pooling mode."""
    return make_engine(resolve_url(spec.db_url), pooling=spec.db_pooling, pool_size=spec.db_pool_size)


def _close(built: _Built) -> None:
    for closer in built.closers:
        with suppress(Exception):
            closer.close()
    built.database.dispose()


def built_for(spec: WorkerSpec) -> _Built:
    """This process's pipeline for the spec's run, built on its first document; an earlier run's is closed."""
    built = _BUILT.get(spec.run_id)
    if built is None:
        for old in list(_BUILT):
            _close(_BUILT.pop(old))
        built = _BUILT[spec.run_id] = _build(spec)
    return built


@atexit.register
def _close_all() -> None:
    for run_id in list(_BUILT):
        _close(_BUILT.pop(run_id))


def usage_snapshot(client: LLMClient | None) -> dict[str, Any]:
    """The client's running LLM counters (what a document's task adds is the difference of two of these)."""
    if client is None:
        return {}
    totals = client.totals()
    return totals | {"cost_unknown": totals["cost_usd"] is None}


def usage_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What one task spent: counters after minus before (errors by kind likewise)."""
    if not after:
        return {}
    delta = {
        k: (after[k] or 0) - (before.get(k) or 0)
        for k in ("calls", "cache_hits", "input_tokens", "output_tokens", "cost_usd", "rate_limit_retries")
    }
    errors = {k: n - before.get("errors", {}).get(k, 0) for k, n in after["errors"].items()}
    delta["errors"] = {k: n for k, n in errors.items() if n}
    delta["cost_unknown"] = bool(after.get("cost_unknown"))
    return delta


def add_usage(total: Usage, delta: dict[str, Any]) -> None:
    """Fold one task's LLM spend into the run's (on the driver)."""
    if not delta:
        return
    total.calls += delta["calls"]
    total.cache_hits += delta["cache_hits"]
    total.input_tokens += delta["input_tokens"]
    total.output_tokens += delta["output_tokens"]
    total.cost_usd += delta["cost_usd"] or 0.0
    total.cost_unknown = total.cost_unknown or delta["cost_unknown"]
    total.rate_limit_retries += delta["rate_limit_retries"]
    total.errors.update(delta["errors"])


def recorded_by_this_run(built: _Built, doc_id: str, pdf: str) -> DocResult | None:
    """The document's result when this run already recorded it (a retried task whose first attempt
    committed before its node died), rebuilt from the database; None otherwise."""
    return recorded_in_run(built.database, built.sink, built.pipeline.run_id, doc_id, pdf)


def recorded_in_run(
    database: Store, sink: DatabaseResultStore, run_id: str, doc_id: str, source: str
) -> DocResult | None:
    """What run `run_id` recorded for the document (or item), from the database; None when its newest
    record is another run's (or there is none)."""
    run = database.records.latest_run(doc_id)
    if run is None or run.run_id != run_id:
        return None
    entry = sink.decided(doc_id) or {}
    error = entry.get("error")
    return DocResult(
        doc_id=doc_id,
        pdf_path=source,
        final_decision=str(entry.get("final_decision", "ESCALATE_TO_SME")),
        escalation_reason=entry.get("escalation_reason"),
        accepted_after_fixes=bool(entry.get("accepted_after_fixes")),
        error=error,
        duration_ms=0.0,
        semantic_checks=str(entry.get("semantic_checks") or "rules_only"),
    )


def process_document(
    spec: WorkerSpec, pdf: str, doc_id: str, force: bool
) -> tuple[DocResult, dict[str, Any]]:
    """One document through the run's pipeline on this node: its DocResult and the LLM use it cost."""
    built = built_for(spec)
    again = recorded_by_this_run(built, doc_id, pdf)
    # A retried task whose first attempt committed before its node died: the files that node never wrote are
    # rebuilt here; if one cannot be, the document goes through the pipeline (which decides it again).
    if again is not None and built.pipeline.repair(Path(pdf), doc_id):
        return again, {}
    client = built.pipeline.llm
    before = usage_snapshot(client)
    result = built.pipeline.process(Path(pdf), doc_id, force=force)
    return result, usage_delta(before, usage_snapshot(client))
