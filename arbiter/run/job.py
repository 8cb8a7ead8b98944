"""One `arbiter run` from options to summary, including batch mode's submit-then-resume cycle.

In batch mode (`--llm-mode batch`) the LLM layer answers from the cache and queues every other request
instead of sending it. Documents that wait are left undecided (nothing written); the queued requests go
out as one Gemini Batch API job, and `arbiter run --resume-batch JOB` later stores the job's answers in
the cache and runs again — deciding the documents whose answers are all in, and queueing the next
stage's requests (a classification's verification) as a new job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import closing
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

from arbiter import atomic
from arbiter.classify.production import load_production
from arbiter.errors import ConfigError
from arbiter.ingest.cache import BundleCache
from arbiter.llm.config import LLMSettings
from arbiter.outputs import is_url, location, work_dir
from arbiter.record.mirrors import check_mirrors
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, default_workers, discover, new_run_id
from arbiter.run.compose import (
    PipelineParts,
    build_engine,
    classifier_name,
    database_url,
    ingest_fn,
    open_extraction,
    open_store,
    pipeline,
    preflight,
    worker_job,
)
from arbiter.run.document import Pipeline
from arbiter.run.lock import run_lock
from arbiter.run.worker import ingest_and_check
from arbiter.store import Store

ProgressFactory = Callable[[int], Callable[[Any], None] | None]


@dataclass
class RunOptions:
    """What `arbiter run` was asked to do; saved beside a batch job so `--resume-batch` can repeat it."""

    inputs: list[str] = field(default_factory=list)
    classifications: str | None = None
    classifier: str | None = None
    production: str | None = None
    out_dir: str = "output"
    workers: int | None = None
    profile: str | None = None
    force: bool = False
    timeout: float = 120.0
    db: str | None = None  # database URL; None: $DATABASE_URL, else OUT/arbiter.db
    llm: dict[str, Any] = field(default_factory=dict)  # LLMSettings overrides given on the command line
    extractor: str | None = None  # local | documentai (None: $ARBITER_EXTRACTOR, else local)
    documentai: dict[str, Any] = field(default_factory=dict)  # DocumentAISettings overrides (CLI options)
    sampling: dict[str, float] = field(default_factory=dict)  # audit_share / second_review_share overrides
    engine: str = "local"  # local (this machine's workers) | ray (arbiter/run/ray_engine.py)
    # --engine ray: auto | HOST:PORT | ray://HOST:PORT; None starts a local Ray instance
    ray_address: str | None = None
    mirrors: str = "all"  # all: every file of docs/design.md §4 | bundles: bundles and index entries only

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_file(cls, path: Path) -> RunOptions:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"The run options saved at {path} cannot be read: {exc}.") from exc
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def settings(self) -> LLMSettings:
        # the run's cache lives under its output folder unless ARBITER_LLM_CACHE_DIR names another
        default_cache = work_dir(self.out_dir) / "cache" / "llm"
        return LLMSettings.from_env(defaults={"cache_dir": default_cache}, **self.llm)


def records_dir(out_dir: Path) -> Path:
    return out_dir / "llm_batches"


def options_path(out_dir: Path, job_id: str) -> Path:
    return records_dir(out_dir) / f"{job_id}.run.json"


def execute(
    options: RunOptions,
    *,
    password: str | None = None,
    progress: ProgressFactory | None = None,
    genai_client: Any = None,
) -> dict[str, Any]:
    """Run the batch the options describe; in batch mode, submit what is still unanswered as a job."""
    if options.engine not in ("local", "ray"):
        raise ConfigError(f"Unknown engine {options.engine!r}; choose local or ray.")
    if options.ray_address and options.engine != "ray":
        raise ConfigError("--ray-address needs --engine ray.")
    check_mirrors(options.mirrors)
    out = location(options.out_dir)  # a folder, or an fsspec URL every node reaches (arbiter/outputs.py)
    local = work_dir(options.out_dir)  # the run's lock, caches and batch-job records
    classifications = Path(options.classifications) if options.classifications else None
    classifier_name(options.classifier, classifications)  # a usage mistake is named before the LLM settings
    settings = options.settings()
    engine = build_engine(
        settings,
        profile=options.profile,
        sampling=options.sampling,
        classifier=options.classifier,
        classifications=classifications,
        check_llm=True,  # a live backend that cannot answer stops the run here (exit 2)
        genai_client=genai_client,
    )
    production = load_production(Path(options.production)) if options.production else {}
    docs = discover([Path(p) for p in options.inputs])
    n = options.workers or default_workers()
    url = run_database(options.db, options.out_dir)
    if options.engine == "ray":
        from arbiter.run.ray_engine import execute_on_ray

        return execute_on_ray(options, engine, docs, url, password=password, progress=progress)
    # One run at a time per output folder and per database (RunLocked names the holder otherwise).
    with run_lock(local, url):
        cache = BundleCache(local / "cache" / "bundles")
        job = worker_job(engine, options.extractor, out, cache.root)
        ingestor, extractor = open_extraction(
            options.extractor,
            workers=n,
            timeout_s=options.timeout,
            documentai=options.documentai,
            target=partial(ingest_and_check, job=job) if job is not None else None,
        )
        with closing(ingestor):  # also when the database cannot be opened: no worker or fork server stays
            database = open_store(url)
            store = DatabaseResultStore(database, out, mirrors=options.mirrors)
            parts = PipelineParts(
                store=store,
                ingest=ingest_fn(ingestor, password),
                run_id=new_run_id(),
                cache=cache,
                production=production,
                extractor=extractor,
                password=password,
            )
            chain = pipeline(engine, parts)
            seed_drift(chain, database)
            runner = BatchRunner(chain, store, workers=n, force=options.force)
            try:
                summary = runner.run(docs, progress=progress(len(docs)) if progress else None)
            finally:
                database.dispose()
        summary["classifier"] = engine.classifier_name
        collector = engine.collector
        if collector is not None and len(collector):
            from arbiter.llm.batch import submit

            record = submit(collector, settings, records_dir=records_dir(local), genai_client=genai_client)
            job_id = record.name.rsplit("/", 1)[-1]
            atomic.write_text(options_path(local, job_id), options.to_json() + "\n")
            summary["llm_batch_job"] = {"name": record.name, "id": job_id, "requests": len(collector)}
            atomic.write_json(out / "runs" / summary["run_id"] / "summary.json", summary)
    return summary


def seed_drift(chain: Pipeline, database: Store) -> None:
    """The run's drift monitor starts from every earlier run the database holds: a producer with a track
    record is judged against its own rate, a new one against the others' (record/drift.py)."""
    if chain.drift is not None and chain.profile.drift.enabled:
        chain.drift.seed(database.records.drift_history(chain.profile.drift.high_risk))


def run_database(db: str | None, out: str) -> str:
    """The run's database URL; an `--out` URL needs a database server every node reaches (the default SQLite
    file lives in the output folder, which object storage cannot hold)."""
    if is_url(out) and not (db or os.environ.get("DATABASE_URL")):
        raise ConfigError(
            f"--out {out} is object storage, which cannot hold the run's SQLite database: pass --db "
            "postgresql://… (or set DATABASE_URL) naming a database every node reaches."
        )
    return database_url(db, work_dir(out) if is_url(out) else Path(out))


def resume(job: str, out: str | Path, *, genai_client: Any = None) -> tuple[RunOptions, Any]:
    """Store a finished batch job's answers in the cache; returns the saved options and the collect result."""
    from arbiter.llm.batch import collect, resolve_job_name
    from arbiter.llm.cache import DiskCache

    job_id = job.rsplit("/", 1)[-1]
    out_dir = work_dir(out)  # the batch-job records stay on the machine that submitted them
    path = options_path(out_dir, job_id)
    if not path.is_file():
        raise ConfigError(
            f"No batch job {job} recorded under {records_dir(out_dir)} (look for *.run.json there)."
        )
    options = RunOptions.from_file(path)
    settings = options.settings()
    preflight(settings, genai_client)  # a missing or refused key stops here, not inside collect()
    name = resolve_job_name(job, records_dir(out_dir))
    result = collect(
        name,
        settings,
        DiskCache(settings.cache_dir),
        records_dir=records_dir(out_dir),
        genai_client=genai_client,
    )
    return options, result
