"""The composition root: the parts of a run built from settings, in one place.

Every entry point builds what it needs here and nowhere else: `arbiter run` (run/job.py), `arbiter verify`
and `arbiter demo` (through run), the review app, the fixture recorders (fixtures/llm_samples.py) and the
benchmarks (bench/). The pieces, each usable on its own:

    settings ──► llm_client() ──► Engine(profile, classifier, LLM client) ──► pipeline() ──► Pipeline
    --db URL ──► database_url() ──► open_store()              extractor ──► open_extraction()

A test or a benchmark swaps one piece (a fake backend, a FileStore, a plain `ingest_pdf`) and keeps the rest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbiter.classify import get_classifier
from arbiter.classify.base import Classifier
from arbiter.contracts import Extractor, ProductionClassification
from arbiter.contracts.limits import Limits
from arbiter.contracts.profile import Profile, load_profile
from arbiter.errors import ConfigError
from arbiter.ingest.cache import BundleCache
from arbiter.ingest.extraction import Ingestor, extractor_name, open_ingestor
from arbiter.ingest.isolated import IsolatedIngestor
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.factory import build_backend
from arbiter.llm.port import LLMBackend
from arbiter.outputs import Location, is_url
from arbiter.record.mirrors import ResultStore
from arbiter.run.document import IngestFn, Pipeline
from arbiter.run.worker import WorkerJob

if TYPE_CHECKING:
    from arbiter.llm.batch import BatchCollector
    from arbiter.store import Store


def database_url(db: str | None, out_dir: str | Path) -> str:
    """--db, else DATABASE_URL, else the SQLite file beside the run's other outputs. An `--out` in object
    storage (arbiter/outputs.py) cannot hold that file: a ConfigError asks for a database server."""
    chosen = db or os.environ.get("DATABASE_URL")
    if chosen:
        return chosen
    if is_url(out_dir):
        raise ConfigError(
            f"--out {out_dir} is object storage, which cannot hold the SQLite database: pass --db "
            "postgresql://… (or set DATABASE_URL) naming the database the run wrote."
        )
    return f"sqlite:///{(Path(str(out_dir).removeprefix('file://')) / 'arbiter.db').resolve()}"


def open_store(url: str | None, *, retry_s: float | None = None, limits: Limits | None = None) -> Store:
    """The store at `url` on the current schema: migrated when behind and this role owns the schema; an
    application role (arbiter.store.roles) is refused in one line instead (disposed again when it fails)."""
    from arbiter.store import Store

    store = Store(url, retry_s=retry_s, limits=limits)
    try:
        store.ensure_schema()
    except BaseException:
        store.dispose()
        raise
    return store


def run_profile(path: str | Path | None = None, sampling: Mapping[str, float] | None = None) -> Profile:
    """The profile at `path` (None: the medical default), with sampling shares overridden when given."""
    profile = load_profile(Path(path) if path else None)
    if sampling:
        profile = profile.model_copy(update={"sampling": profile.sampling.model_copy(update=dict(sampling))})
    return profile


def classifier_name(name: str | None, classifications: Path | None) -> str:
    """The classifier a run uses: --classifications implies `file`; baseline by default."""
    if classifications is not None:
        if name not in (None, "file"):
            raise ConfigError("--classifications implies --classifier file; drop one of them.")
        if not classifications.is_dir():
            raise ConfigError(f"--classifications {classifications} is not a directory.")
        name = "file"
    name = name or "baseline"
    if name == "file" and classifications is None:
        raise ConfigError("--classifier file needs --classifications DIR.")
    return name


def preflight(settings: LLMSettings, genai_client: Any = None) -> None:
    """The LLM preflight (arbiter/llm/preflight.py) for --llm gemini|openai; PreflightFailed is a ConfigError."""
    from arbiter.llm.preflight import require_ready

    backend = None
    if settings.backend == "gemini" and genai_client is not None:
        from arbiter.llm.gemini import GeminiBackend

        backend = GeminiBackend(settings, genai_client=genai_client)
    require_ready(settings, backend)


def llm_client(
    settings: LLMSettings, *, backend: LLMBackend | None = None, disk_cache: bool = True, batch: bool = True
) -> tuple[LLMClient | None, BatchCollector | None]:
    """The run's LLM client (None: backend "none", the LLM phases are SKIPPED) and, in batch mode, the
    collector its unanswered requests are queued in. `backend` replaces the configured one (a sample
    model, a fake); without `disk_cache` no answer is read from or written to settings.cache_dir; without
    `batch` the client answers online whatever settings.mode says (one document has no batch job)."""
    from arbiter.llm.cache import DiskCache

    if batch and settings.mode == "batch":
        from arbiter.llm.batch import BatchCollector, DeferringBackend

        if settings.backend != "gemini":
            raise ConfigError("--llm-mode batch needs --llm gemini (the Gemini Batch API).")
        collector = BatchCollector()
        return LLMClient(DeferringBackend(collector), settings, DiskCache(settings.cache_dir)), collector
    chosen = backend if backend is not None else build_backend(settings)
    if chosen is None:
        return None, None
    return LLMClient(chosen, settings, DiskCache(settings.cache_dir) if disk_cache else None), None


@dataclass(frozen=True)
class Engine:
    """What decides documents: the profile, the classifier and the LLM client (None: no model)."""

    profile: Profile
    settings: LLMSettings
    llm: LLMClient | None = None
    classifier: Classifier | None = None  # None: the caller brings the classification (`arbiter verify`)
    classifier_name: str | None = None
    collector: BatchCollector | None = None  # batch mode: the requests waiting for a batch job


def build_engine(
    settings: LLMSettings | None = None,
    *,
    profile: str | Path | None = None,
    sampling: Mapping[str, float] | None = None,
    classifier: str | None = None,
    classifications: Path | None = None,
    backend: LLMBackend | None = None,
    disk_cache: bool = True,
    check_llm: bool = False,
    genai_client: Any = None,
    with_classifier: bool = True,
) -> Engine:
    """The engine the settings describe. `check_llm` runs the preflight first (a live backend that cannot
    answer stops here); without `with_classifier` the engine only verifies given classifications, one
    document at a time, never in batch mode (`arbiter verify`)."""
    settings = settings if settings is not None else LLMSettings()  # default: no model, phases SKIPPED
    name = classifier_name(classifier, classifications) if with_classifier else None
    if check_llm:
        preflight(settings, genai_client)
    client, collector = llm_client(settings, backend=backend, disk_cache=disk_cache, batch=with_classifier)
    if name == "gemini" and client is None:
        raise ConfigError("--classifier gemini needs an LLM backend: --llm gemini (or replay, or openai).")
    prof = run_profile(profile, sampling)
    clf = get_classifier(name, classifications_dir=classifications, llm=client) if name else None
    return Engine(prof, settings, client, clf, name, collector)


def open_extraction(
    name: str | None,
    *,
    documentai: Mapping[str, Any] | None = None,
    workers: int = 1,
    timeout_s: float = 120.0,
    isolated: bool = True,
    target: Any = None,
) -> tuple[Ingestor, Extractor]:
    """The ingestor (close it when done) and the Extractor its bundles carry: local (in worker processes
    unless `isolated` is False; `target` is what they run per file) or Document AI, as --extractor /
    $ARBITER_EXTRACTOR say."""
    return open_ingestor(
        name, workers=workers, timeout_s=timeout_s, documentai=documentai, isolated=isolated, target=target
    )


@dataclass
class PipelineParts:
    """What a pipeline needs beyond the engine: where results go and how a PDF becomes a bundle."""

    store: ResultStore
    ingest: IngestFn
    run_id: str
    cache: BundleCache | None = None
    production: dict[str, ProductionClassification] = field(default_factory=dict)
    extractor: Extractor | None = None
    password: str | None = None


def pipeline(engine: Engine, parts: PipelineParts) -> Pipeline:
    """One document's chain (ingest → classify → verify → record) over the engine's parts."""
    if engine.classifier is None:
        raise ConfigError("A pipeline needs a classifier; build the engine with one.")
    return Pipeline(
        profile=engine.profile,
        classifier=engine.classifier,
        store=parts.store,
        run_id=parts.run_id,
        ingest=parts.ingest,
        cache=parts.cache,
        production=parts.production,
        llm=engine.llm,
        extractor=parts.extractor,
        password=parts.password,
    )


def worker_job(engine: Engine, extractor: str | None, out: Location, cache_root: Path) -> WorkerJob | None:
    """What the ingestion workers need to classify and verify each document themselves (run/worker.py):
    for local extraction without a language model (the run's one LLM client stays in the parent); None
    otherwise, and the parent checks each document."""
    if engine.llm is not None or engine.classifier is None or extractor_name(extractor) != "local":
        return None
    return WorkerJob(engine.profile, engine.classifier, mirror_root=out, cache_root=cache_root)


def ingest_fn(ingestor: Ingestor, password: str | None) -> IngestFn:
    """A pipeline's ingest over the ingestor: with what its workers checked, when they do."""
    if isinstance(ingestor, IsolatedIngestor):
        return lambda path, doc_id: ingestor.handed(path, doc_id=doc_id, password=password)
    return lambda path, doc_id: ingestor.ingest(path, doc_id=doc_id, password=password)
