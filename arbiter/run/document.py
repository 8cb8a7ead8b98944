"""One document through the whole chain: ingest → classify → verify (+ fixes) → packet or ground truth.

Whatever happens, the document gets a VerificationOutcome: an unreadable PDF, a classifier that
produced nothing or an internal failure all end as an escalation with a plain-English reason.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter import __version__, atomic
from arbiter.classify.base import Classifier
from arbiter.classify.gemini import ClassificationDeferred
from arbiter.contracts import (
    DocumentBundle,
    DocumentRecord,
    Extractor,
    FinalDecision,
    ProductionClassification,
)
from arbiter.contracts.profile import Profile
from arbiter.diagnostics import describe
from arbiter.ingest import EXTRACTOR_NAME, EXTRACTOR_VERSION, IngestFailure, IngestResult, file_sha256
from arbiter.ingest.cache import BundleCache
from arbiter.ingest.isolated import Handed
from arbiter.llm.client import LLMClient
from arbiter.outputs import location
from arbiter.record.drift import DriftMonitor, stratum_of
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.mirrors import ResultStore, bundle_json
from arbiter.record.packets import build_packet
from arbiter.record.samples import blind_samples
from arbiter.run.result import PENDING, DocResult  # noqa: F401  (PENDING re-exported)
from arbiter.run.worker import (  # noqa: F401  (re-exported)
    Prepared,
    WorkerFault,
    classify_and_verify,
    failure_outcome,
    for_document,
    llm_usage,
)
from arbiter.store.errors import DatabaseUnavailable
from arbiter.verifiers.base import Verifier, VerifyContext
from arbiter.verifiers.content import carry_reading
from arbiter.verifiers.llm_phase import PhaseDeferred

log = logging.getLogger(__name__)

IngestFn = Callable[[Path, str], IngestResult | Handed]  # Handed: a worker checked it too (run/worker.py)


@dataclass
class Pipeline:
    profile: Profile
    classifier: Classifier
    store: ResultStore
    run_id: str
    ingest: IngestFn
    cache: BundleCache | None = None
    production: dict[str, ProductionClassification] = field(default_factory=dict)
    context: VerifyContext = field(default_factory=VerifyContext)
    verifiers: Sequence[Verifier] | None = None
    llm: LLMClient | None = None  # None: the LLM phases are SKIPPED and say so
    extractor: Extractor | None = None  # what `ingest` produces; None: local ingestion (arbiter.ingest)
    password: str | None = None  # what `ingest` opens encrypted PDFs with; keys the bundle cache
    drift: DriftMonitor | None = None  # the run's drift alarms (record/drift.py); made from the profile

    def __post_init__(self) -> None:
        if self.drift is None:
            self.drift = DriftMonitor(self.profile.drift, self.run_id)

    def llm_key(self) -> str:
        if self.llm is None:
            return "llm:none"
        return f"llm:{self.llm.settings.backend}:{self.llm.settings.model}"

    def classifier_key(self, doc_id: str) -> str:
        digest = getattr(self.classifier, "input_digest", None)
        if callable(digest):
            return f"{self.classifier.name}:{digest(doc_id)}"
        return f"{self.classifier.name}:{getattr(self.classifier, 'version', '?')}"

    def extractor_id(self) -> Extractor:
        """The extractor's name and version: the bundle cache and the skip key are keyed on both."""
        return self.extractor or Extractor(name=EXTRACTOR_NAME, version=EXTRACTOR_VERSION)

    def skip_key(self, doc_id: str, pdf_sha256: str) -> str:
        """Changes when the PDF, the classifier's input, the production answer, the profile or the code change."""
        production = self.production.get(doc_id)
        parts = [
            pdf_sha256,
            self.classifier_key(doc_id),
            production.model_dump_json() if production else "-",
            self.profile.digest,
            __version__,
            f"{self.extractor_id().name}/{self.extractor_id().version}",
            self.llm_key(),
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def process(self, pdf: Path, doc_id: str, *, force: bool = False) -> DocResult:
        started = time.perf_counter()
        try:
            pdf_sha = file_sha256(pdf)
        except OSError as exc:
            return self._failed(
                pdf, doc_id, "", "pdf_unreadable", f"The file could not be read ({exc.strerror}).", started
            )
        key = self.skip_key(doc_id, pdf_sha)
        # Done only when its rows and its files are there: missing files are rebuilt (repair), and a document
        # whose files cannot be is decided again.
        if not force and self.store.completed_key(doc_id) == key and self.repair(pdf, doc_id, pdf_sha):
            return DocResult.skipped_unchanged(doc_id, pdf, _ms(started))
        try:
            return self._run(pdf, doc_id, pdf_sha, key, started, force=force)
        except (PhaseDeferred, ClassificationDeferred):
            # Batch mode: the document waits for its LLM answers; nothing is written, the next run decides it.
            return DocResult.pending(doc_id, pdf, _ms(started))
        except (KeyboardInterrupt, DatabaseUnavailable):
            raise  # the run is being interrupted, or its database is away: the batch stops with its summary
        except BaseException as exc:  # one document must never stop the batch (SystemExit included)
            log.error("internal error on document %s: %s", doc_id, describe(exc))
            name = exc.type_name if isinstance(exc, WorkerFault) else type(exc).__name__
            return self._failed(
                pdf,
                doc_id,
                pdf_sha,
                "internal_error",
                f"Arbiter failed on this document ({name}); it needs a person to review it.",
                started,
                key=key,
            )

    def _bundle(self, pdf: Path, doc_id: str, pdf_sha: str, *, force: bool = False) -> IngestResult | Handed:
        """The cached bundle of these bytes (sealed to the PDF's hash, and for an encrypted PDF to the password
        this run opens it with), else a fresh extraction; --force always extracts again. Handed: a worker
        extracted, filed (mirror and cache) and checked it itself."""
        if self.cache is not None and not force:
            extractor = self.extractor_id()
            cached = self.cache.get(pdf_sha, extractor.version, password=self.password)
            if cached is not None and cached.extractor.name == extractor.name:
                return cached.model_copy(update={"doc_id": doc_id, "file_path": str(pdf)})
        result = self.ingest(pdf, doc_id)
        if isinstance(result, Handed):
            return result
        if isinstance(result, DocumentBundle):
            carry_reading(result, self.profile)  # filed with the bundle: verifying it again reads no page
        # Never file a bundle under another PDF's hash.
        if isinstance(result, DocumentBundle) and self.cache is not None and result.file_sha256 == pdf_sha:
            self.cache.put(result, password=self.password)
        return result

    def repair(self, pdf: Path, doc_id: str, pdf_sha: str | None = None) -> bool:
        """Rebuild whatever files of a recorded document are missing (the store rewrites its own; the bundle
        comes from the cache or the PDF again); False when one cannot be rebuilt."""

        def restore_bundle() -> bool:
            sha = pdf_sha or file_sha256(pdf)
            got = self._bundle(pdf, doc_id, sha)
            target = location(self.store.bundle_path(doc_id))
            if isinstance(got, DocumentBundle) and got.file_sha256 == sha:
                atomic.write_text(target, bundle_json(got))
            # A worker (Handed) files the mirror itself; either way the file is what counts.
            return target.is_file()

        return self.store.repair(doc_id, restore_bundle)

    def _run(
        self, pdf: Path, doc_id: str, pdf_sha: str, key: str, started: float, *, force: bool = False
    ) -> DocResult:
        t0 = time.perf_counter()
        got = self._bundle(pdf, doc_id, pdf_sha, force=force)
        ingest_ms = _ms(t0)
        bundle, prepared = (got.result, got.extra) if isinstance(got, Handed) else (got, None)
        if isinstance(prepared, Prepared):  # a worker filed and checked it (its bundle mirror is written)
            ingest_ms = prepared.ingest_ms
            if prepared.fault is not None:
                raise WorkerFault(prepared.fault)
        if isinstance(bundle, IngestFailure):
            return self._failed(pdf, doc_id, pdf_sha, f"pdf_{bundle.kind}", bundle.message, started, key=key)
        mirror = None if isinstance(prepared, Prepared) else bundle  # a bundle mirror this process writes
        doc_llm = self.llm.for_document(doc_id) if self.llm is not None else None
        checked = prepared.checked if isinstance(prepared, Prepared) else None
        if checked is None:
            context = (
                self.context
                if doc_llm is None
                else VerifyContext(llm=doc_llm, notes=dict(self.context.notes))
            )
            checked = classify_and_verify(
                bundle,
                self.profile,
                self.classifier,
                verifiers=self.verifiers,
                context=context,
                doc_llm=doc_llm,
            )
        if checked.outcome is None or checked.raw is None:
            return self._failed(
                pdf,
                doc_id,
                pdf_sha,
                checked.failure,
                checked.classification_error or "",
                started,
                key=key,
                bundle=bundle,
                mirror=mirror,
            )
        update: dict[str, Any] = {
            "timings": {**checked.outcome.timings, "ingest_ms": ingest_ms, "classify_ms": checked.classify_ms}
        }
        update |= llm_usage(doc_llm)
        outcome = checked.outcome.model_copy(update=update)
        primary = _primary_data(checked.raw)
        production = self.production.get(doc_id)
        packet = gt = None
        if outcome.final_decision == FinalDecision.ESCALATE_TO_SME:
            packet = build_packet(
                outcome,
                pdf_path=str(pdf),
                pdf_sha256=pdf_sha,
                bundle_path=self.store.bundle_path(doc_id),
                total_pages=bundle.total_pages,
                primary=primary,
                production=production,
                run_id=self.run_id,
            )
        else:
            gt = auto_accept_record(
                outcome,
                self.store.latest_ground_truth(doc_id),
                primary=primary,
                production=production,
                pdf_sha256=pdf_sha,
                run_id=self.run_id,
            )
        producer = stratum_of(primary)
        assert self.drift is not None
        samples, draw = blind_samples(
            outcome,
            packet,
            self.profile.sampling,
            boost=self.drift.boost(producer),
            pdf_path=str(pdf),
            pdf_sha256=pdf_sha,
            bundle_path=self.store.bundle_path(doc_id),
            total_pages=bundle.total_pages,
            primary=primary,
            production=production,
            run_id=self.run_id,
        )
        self.store.save(
            DocumentRecord(
                doc_id=doc_id,
                run_id=self.run_id,
                skip_key=key,
                pdf_path=str(pdf),
                outcome=outcome,
                primary_raw=checked.raw,
                bundle=mirror,
                packet=packet,
                ground_truth=gt,
                samples=samples,
                risk=draw.risk if draw else None,
                audit_probability=draw.probability if draw else None,
                producer=producer,
                read_type=checked.read_type,
            )
        )
        self.drift.observe(
            producer,
            escalated=packet is not None,
            risk=draw.risk if draw else None,
            read_type=checked.read_type,
        )
        return DocResult.decided(outcome, pdf, _ms(started), samples)

    def _failed(
        self,
        pdf: Path,
        doc_id: str,
        pdf_sha: str,
        reason: str,
        message: str,
        started: float,
        *,
        key: str = "",
        bundle: DocumentBundle | None = None,
        mirror: DocumentBundle | None = None,
    ) -> DocResult:
        """Escalate a document that could not be verified at all; the reason says why in plain English.
        `mirror`: the bundle whose mirror file this process writes (None: none, or a worker wrote it)."""
        outcome = failure_outcome(doc_id, reason, message, self.profile)
        packet = build_packet(
            outcome,
            pdf_path=str(pdf),
            pdf_sha256=pdf_sha,
            bundle_path=self.store.bundle_path(doc_id) if bundle else None,
            total_pages=bundle.total_pages if bundle else 0,
            primary=None,
            production=self.production.get(doc_id),
            run_id=self.run_id,
        )
        try:
            self.store.save(
                DocumentRecord(
                    doc_id=doc_id,
                    run_id=self.run_id,
                    skip_key=key,
                    pdf_path=str(pdf),
                    outcome=outcome,
                    primary_raw=None,
                    bundle=mirror,
                    packet=packet,
                    ground_truth=None,
                    error=reason,
                )
            )
        except OSError as exc:
            log.error("could not write results for document %s: %s", doc_id, describe(exc))
        return DocResult.failed(outcome, pdf, reason, _ms(started))


def _primary_data(raw: str) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
