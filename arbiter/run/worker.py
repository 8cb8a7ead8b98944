"""Classification and verification of a document, in the parent or next to ingestion in the worker process.

`classify_and_verify` is the one place a document is classified and verified; Pipeline (the parent) and
`ingest_and_check` (an ingestion worker) both call it. A run without a language model gives its ingestion
workers a `WorkerJob` (docs/design.md §10.1): each worker ingests, writes the bundle's mirror file and cache
entry, classifies and verifies, and hands the parent the outcome and a bundle stripped of its text, instead
of the whole bundle for the parent to verify on its one interpreter. Decisions are the same either way:
the same function runs on the same bundle with the same profile, classifier and verifiers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter import atomic
from arbiter.classify.base import ClassificationError, Classifier, UsesDocumentLLM
from arbiter.contracts import DocumentBundle, FinalDecision, StopReason, VerificationOutcome
from arbiter.contracts.limits import TOO_LARGE, classification_problem
from arbiter.contracts.profile import Profile
from arbiter.decide.governor import verify_with_retries
from arbiter.diagnostics import describe
from arbiter.errors import ArbiterError
from arbiter.ingest import IngestFailure, IngestResult, ingest_pdf
from arbiter.ingest.cache import BundleCache
from arbiter.ingest.isolated import Handed
from arbiter.ingest.ocr import announce
from arbiter.llm.client import DocumentLLM, LLMClient
from arbiter.llm.port import LLM
from arbiter.outputs import Location
from arbiter.record.mirrors import bundle_json
from arbiter.verifiers import v1_schema, v2_consistency, v3_traps, v4_evidence
from arbiter.verifiers.base import Verifier, VerifyContext
from arbiter.verifiers.content import carry_reading
from arbiter.verifiers.v2_reader import read_as

log = logging.getLogger(__name__)

# The default verifiers' modules, imported with this one: an ingestion worker's fork server preloads this
# module (arbiter/ingest/isolated.py), so no worker imports them again on its first document.
_VERIFIER_MODULES = (v1_schema, v2_consistency, v3_traps, v4_evidence)


def for_document(classifier: Classifier, doc_llm: LLM | None) -> Classifier:
    """The classifier whose model calls count against this document (itself when it asks no model)."""
    if doc_llm is not None and isinstance(classifier, UsesDocumentLLM):
        return classifier.for_document(doc_llm)
    return classifier


def llm_usage(doc_llm: DocumentLLM | None) -> dict[str, Any]:
    """The outcome fields for one document's LLM use (classifier and verifiers, cache hits excluded);
    empty without a model."""
    if doc_llm is None:
        return {}
    calls, tokens, cost = doc_llm.usage()
    cost_usd = round(cost, 6) if cost is not None else None  # None: the model's price is unknown
    return {"llm_calls": calls, "llm_usage": tokens, "llm_cost_usd": cost_usd}


@dataclass(frozen=True)
class Checked:
    """A document classified and verified: the classifier's answer and the outcome, or why it could not
    be classified (`classification_error`)."""

    raw: str | None
    outcome: VerificationOutcome | None
    classification_error: str | None = None
    classify_ms: float = 0.0
    failure: str = "classification_failed"  # the escalation reason when there is no outcome
    read_type: str | None = None  # the type the content check's page reader reads the document as (drift)


def classify_and_verify(
    bundle: DocumentBundle,
    profile: Profile,
    classifier: Classifier,
    *,
    verifiers: Sequence[Verifier] | None,
    context: VerifyContext,
    doc_llm: LLM | None = None,
) -> Checked:
    """Classify the bundle and verify the answer (with the governor's fixes and retries)."""
    t1 = time.perf_counter()
    try:
        produced = for_document(classifier, doc_llm).classify(bundle, profile)
    except ClassificationError as exc:
        return Checked(None, None, classification_error=str(exc))
    classify_ms = _ms(t1)
    too_large = classification_problem(produced.raw, profile.limits)
    if too_large is not None:  # refused before anything of it is checked or stored
        return Checked(None, None, classification_error=too_large, classify_ms=classify_ms, failure=TOO_LARGE)
    outcome = verify_with_retries(produced.raw, bundle, profile, verifiers=verifiers, context=context)
    return Checked(produced.raw, outcome, classify_ms=classify_ms, read_type=read_type(bundle, profile))


def read_type(bundle: DocumentBundle, profile: Profile) -> str | None:
    """The type the content check's page reader reads the whole bundle as (verifiers/v2_reader.py `read_as`,
    from V2's shared reading), for the drift alarms' type mix; None when no page reads as any type, or when
    the reading fails (it never changes a decision)."""
    try:
        return read_as(bundle, profile)
    except Exception as exc:  # the reading is a drift figure: a fault in it must not lose the document
        log.warning("document %s: no read type for drift (%s)", bundle.doc_id, type(exc).__name__)
        return None


@dataclass(frozen=True)
class WorkerJob:
    """What an ingestion worker needs to check documents itself: sent once, when the worker starts.

    Only for runs without a language model (one client, its limits and its totals, stay in the parent)."""

    profile: Profile
    classifier: Classifier
    mirror_root: Location  # bundles/{doc_id}.json is written here, as FileStore would (a folder or a URL)
    cache_root: Path | None = None  # the bundle cache (None: none)
    verifiers: Sequence[Verifier] | None = None
    context: VerifyContext = field(default_factory=VerifyContext)

    def bundle_path(self, doc_id: str) -> Location:
        return self.mirror_root / "bundles" / f"{doc_id}.json"


@dataclass(frozen=True)
class Prepared:
    """A worker's hand-back beside the (stripped) bundle: its check, or the internal fault that stopped it."""

    ingest_ms: float
    checked: Checked | None = None
    fault: str | None = None  # the exception's type name: the parent records an internal error


def ingest_and_check(path: Path, *, job: WorkerJob, **kwargs: Any) -> Handed:
    """Ingestion worker target: ingest, file the bundle (mirror and cache), classify and verify. The worker's
    hard time bound is stretched by the ingestion timeout before checking: a slow check is not a slow PDF."""
    t0 = time.perf_counter()
    bundle = ingest_pdf(path, **kwargs)
    if not isinstance(bundle, DocumentBundle):
        return Handed(bundle, Prepared(_ms(t0)))
    carry_reading(bundle, job.profile)  # filed with the bundle: verifying it again reads no page
    ingest_ms = _ms(t0)
    try:
        announce(float(kwargs.get("deadline_s") or 60.0) / 0.9)
        text = bundle_json(bundle)  # the mirror's text, the cache's body too (it reads any layout)
        atomic.write_text(job.bundle_path(bundle.doc_id), text, sync=False)  # a mirror: FileStore.save
        if job.cache_root is not None:
            BundleCache(job.cache_root).put(
                bundle, password=kwargs.get("password"), body=text.encode("utf-8")
            )
        checked = classify_and_verify(
            bundle, job.profile, job.classifier, verifiers=job.verifiers, context=job.context
        )
    except BaseException as exc:  # the parent records it as an internal error, as if it had checked it
        log.error("internal error on document %s: %s", bundle.doc_id, describe(exc))
        return Handed(stripped(bundle), Prepared(ingest_ms, fault=type(exc).__name__))
    return Handed(stripped(bundle), Prepared(ingest_ms, checked))


def stripped(bundle: DocumentBundle) -> DocumentBundle:
    """The bundle without its text, paragraphs, line boxes and readings: its shape (pages, their OCR status) is
    what the parent still reads; the whole bundle is already in its mirror file and the cache."""
    pages = [p.model_copy(update={"text": "", "paragraphs": [], "lines": []}) for p in bundle.pages]
    return bundle.model_copy(update={"pages": pages, "readings": None})


class WorkerFault(ArbiterError):
    """A worker's check raised: recorded by the parent as the internal error it would have been there."""

    def __init__(self, type_name: str) -> None:
        super().__init__(type_name)
        self.type_name = type_name


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


def failure_outcome(doc_id: str, reason: str, message: str, profile: Profile) -> VerificationOutcome:
    """The outcome of a document that could not be verified at all: an escalation whose reason says why."""
    return VerificationOutcome(
        doc_id=doc_id,
        final_decision=FinalDecision.ESCALATE_TO_SME,
        escalation_reason=reason,
        escalation_message=message,
        stop_reason=StopReason.INPUT_FAILED,
        policy_version=profile.arbiter.policy_version,
    )


def verify_one(
    bundle: IngestResult, raw: str | bytes, *, profile: Profile, llm: LLMClient | None = None
) -> VerificationOutcome:
    """One document's given classification verified, nothing written (`arbiter verify`): the same outcome
    as a run's for an unreadable PDF, and the same LLM usage on it."""
    if isinstance(bundle, IngestFailure):
        return failure_outcome(bundle.doc_id, f"pdf_{bundle.kind}", bundle.message, profile)
    too_large = classification_problem(raw, profile.limits)
    if too_large is not None:
        return failure_outcome(bundle.doc_id, TOO_LARGE, too_large, profile)
    doc_llm = llm.for_document(bundle.doc_id) if llm is not None else None
    outcome = verify_with_retries(raw, bundle, profile, context=VerifyContext(llm=doc_llm))
    usage = llm_usage(doc_llm)
    return outcome.model_copy(update=usage) if usage else outcome
