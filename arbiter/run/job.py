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
from pathlib import Path
from typing import Any

from arbiter import atomic
from arbiter.errors import ConfigError
from arbiter.llm.config import LLMSettings

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
        default_cache = Path(self.out_dir) / "cache" / "llm"
        return LLMSettings.from_env(defaults={"cache_dir": default_cache}, **self.llm)


def database_url(db: str | None, out_dir: Path) -> str:
    """--db, else DATABASE_URL, else the SQLite file beside the run's other outputs."""
    return db or os.environ.get("DATABASE_URL") or f"sqlite:///{(out_dir / 'arbiter.db').resolve()}"


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
    from arbiter.classify import get_classifier
    from arbiter.classify.production import load_production
    from arbiter.contracts.profile import load_profile
    from arbiter.ingest.cache import BundleCache
    from arbiter.ingest.extraction import open_ingestor
    from arbiter.llm.cache import DiskCache
    from arbiter.llm.client import LLMClient
    from arbiter.llm.factory import build_client
    from arbiter.record.sink import DatabaseResultStore
    from arbiter.run.batch import BatchRunner, default_workers, discover, new_run_id
    from arbiter.run.document import Pipeline
    from arbiter.run.lock import run_lock
    from arbiter.store import Store

    classifications = Path(options.classifications) if options.classifications else None
    classifier_name = options.classifier
    if classifications is not None:
        if classifier_name not in (None, "file"):
            raise ConfigError("--classifications implies --classifier file; drop one of them.")
        if not classifications.is_dir():
            raise ConfigError(f"--classifications {classifications} is not a directory.")
        classifier_name = "file"
    classifier_name = classifier_name or "baseline"
    if classifier_name == "file" and classifications is None:
        raise ConfigError("--classifier file needs --classifications DIR.")
    out_dir = Path(options.out_dir)
    settings = options.settings()
    _preflight(settings, genai_client)  # a live backend that cannot answer stops the run here (exit 2)
    collector = None
    if settings.mode == "batch":
        from arbiter.llm.batch import BatchCollector, DeferringBackend

        if settings.backend != "gemini":
            raise ConfigError("--llm-mode batch needs --llm gemini (the Gemini Batch API).")
        collector = BatchCollector()
        client: LLMClient | None = LLMClient(
            DeferringBackend(collector), settings, DiskCache(settings.cache_dir)
        )
    else:
        client = build_client(settings)
    if classifier_name == "gemini" and client is None:
        raise ConfigError("--classifier gemini needs an LLM backend: --llm gemini (or replay, or openai).")
    prof = load_profile(Path(options.profile) if options.profile else None)
    if options.sampling:
        prof = prof.model_copy(update={"sampling": prof.sampling.model_copy(update=options.sampling)})
    clf = get_classifier(classifier_name, classifications_dir=classifications, llm=client)
    production = load_production(Path(options.production)) if options.production else {}
    docs = discover([Path(p) for p in options.inputs])
    n = options.workers or default_workers()
    url = database_url(options.db, out_dir)
    # One run at a time per output folder and per database (RunLocked names the holder otherwise).
    with run_lock(out_dir, url):
        ingestor, extractor = open_ingestor(
            options.extractor, workers=n, timeout_s=options.timeout, documentai=options.documentai
        )
        database = Store(url)
        database.migrate()
        store = DatabaseResultStore(database, out_dir)
        with closing(ingestor):
            pipeline = Pipeline(
                profile=prof,
                classifier=clf,
                store=store,
                run_id=new_run_id(),
                ingest=lambda path, doc_id: ingestor.ingest(path, doc_id=doc_id, password=password),
                cache=BundleCache(out_dir / "cache" / "bundles"),
                production=production,
                llm=client,
                extractor=extractor,
                password=password,
            )
            runner = BatchRunner(pipeline, store, workers=n, force=options.force)
            try:
                summary = runner.run(docs, progress=progress(len(docs)) if progress else None)
            finally:
                database.dispose()
        summary["classifier"] = classifier_name
        if collector is not None and len(collector):
            from arbiter.llm.batch import submit

            record = submit(collector, settings, records_dir=records_dir(out_dir), genai_client=genai_client)
            job_id = record.name.rsplit("/", 1)[-1]
            atomic.write_text(options_path(out_dir, job_id), options.to_json() + "\n")
            summary["llm_batch_job"] = {"name": record.name, "id": job_id, "requests": len(collector)}
            atomic.write_json(out_dir / "runs" / summary["run_id"] / "summary.json", summary)
    return summary


def _preflight(settings: LLMSettings, genai_client: Any = None) -> None:
    """The LLM preflight (arbiter/llm/preflight.py) for --llm gemini|openai; PreflightFailed is a ConfigError."""
    from arbiter.llm.preflight import require_ready

    backend = None
    if settings.backend == "gemini" and genai_client is not None:
        from arbiter.llm.gemini import GeminiBackend

        backend = GeminiBackend(settings, genai_client=genai_client)
    require_ready(settings, backend)


def resume(job: str, out_dir: Path, *, genai_client: Any = None) -> tuple[RunOptions, Any]:
    """Store a finished batch job's answers in the cache; returns the saved options and the collect result."""
    from arbiter.llm.batch import collect, resolve_job_name
    from arbiter.llm.cache import DiskCache

    job_id = job.rsplit("/", 1)[-1]
    path = options_path(out_dir, job_id)
    if not path.is_file():
        raise ConfigError(
            f"No batch job {job} recorded under {records_dir(out_dir)} (look for *.run.json there)."
        )
    options = RunOptions.from_file(path)
    settings = options.settings()
    _preflight(settings, genai_client)  # a missing or refused key stops here, not inside collect()
    name = resolve_job_name(job, records_dir(out_dir))
    result = collect(
        name,
        settings,
        DiskCache(settings.cache_dir),
        records_dir=records_dir(out_dir),
        genai_client=genai_client,
    )
    return options, result
