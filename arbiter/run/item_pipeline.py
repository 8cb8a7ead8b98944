"""One item of a kind that carries its own context (grounded-answer) decided and recorded: the per-item code
both engines run — the local engine's threads (arbiter/run/item_batch.py) and the Ray engine's tasks
(arbiter/run/ray_items.py). See item_batch.py for how a run records items.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter import __version__, atomic
from arbiter.contracts import (
    DocumentBundle,
    DocumentRecord,
    FinalDecision,
    SMEPacket,
    StopReason,
    VerificationOutcome,
)
from arbiter.diagnostics import describe
from arbiter.kinds import KindSpec
from arbiter.llm.client import LLMClient
from arbiter.outputs import location
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_packet
from arbiter.record.samples import blind_samples
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import new_run_id
from arbiter.run.items import RawItem, check_item
from arbiter.run.result import DocResult
from arbiter.store import DatabaseUnavailable

log = logging.getLogger(__name__)

DECISION_FILE = "arbiter_decision.json"
ANSWER_FILE = "classification.json"  # the item as given (the mirror keeps a PDF run's file names)
CONTEXT_KEYS = ("item_id", "producer", "question", "chunks")


@dataclass(frozen=True)
class _Named:
    name: str


def split_item(data: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the answer, the context: item id, producer, question and chunks) of an item's JSON; None for a part
    that is missing or not an object."""
    if not isinstance(data, dict):
        return None, None
    answer = data.get("answer")
    context = {k: data[k] for k in CONTEXT_KEYS if k in data}
    return (answer if isinstance(answer, dict) else None), (context or None)


def _parsed(raw: str) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class ItemPipeline:
    """What BatchRunner asks of a pipeline, for items that carry their own context."""

    kind: KindSpec
    profile: Any
    store: DatabaseResultStore
    items: dict[str, RawItem]
    run_id: str = field(default_factory=new_run_id)
    llm: LLMClient | None = None  # None: the kind's model phases are skipped and say so

    def llm_key(self) -> str:
        if self.llm is None:
            return "llm:none"
        return f"llm:{self.llm.settings.backend}:{self.llm.settings.model}"

    @property
    def classifier(self) -> _Named:
        return _Named(f"{self.kind.name} answers (from the input)")

    def skip_key(self, item: RawItem) -> str:
        parts = [
            self.kind.name,
            hashlib.sha256(item.raw.encode()).hexdigest(),
            self.profile.digest,
            __version__,
            self.llm_key(),
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def process(self, path: Path, doc_id: str, *, force: bool = False) -> DocResult:
        return self.process_item(self.items[doc_id], force=force)

    def process_item(self, item: RawItem, *, force: bool = False) -> DocResult:
        """One item verified, decided and recorded (database, then mirrors), or skipped when this kind,
        profile and code already decided the same text and its files are all there. What both engines run
        per item: the local engine's threads and the Ray engine's tasks (arbiter/run/ray_items.py)."""
        started = time.perf_counter()
        doc_id, path = item.item_id, Path(item.origin)
        key = self.skip_key(item)
        if not force and self.store.completed_key(doc_id) == key and self.repair(item):
            return DocResult.skipped_unchanged(doc_id, path, _ms(started))
        try:
            outcome, bundle = check_item(self.kind, item.raw, self.profile, item_id=doc_id, llm=self.llm)
        except (KeyboardInterrupt, DatabaseUnavailable):
            raise
        except BaseException as exc:  # one item never stops the batch
            log.error("internal error on item %s: %s", doc_id, describe(exc))
            return self.failed(item, type(exc).__name__, started)
        samples = self._save(item, outcome, bundle, key)
        return DocResult.decided(outcome, path, _ms(started), samples)

    def failed(self, item: RawItem, what: str, started: float) -> DocResult:
        """The item recorded as an internal error: an escalation saying, in plain words, that Arbiter failed
        on it (`what`: the exception, or how a Ray task was lost) and a person must review it. The next run
        decides it again."""
        message = f"Arbiter failed on this item ({what}); it needs a person to review it."
        outcome = VerificationOutcome(
            doc_id=item.item_id,
            final_decision=FinalDecision.ESCALATE_TO_SME,
            escalation_reason="internal_error",
            escalation_message=message,
            stop_reason=StopReason.INPUT_FAILED,
            policy_version=self.profile.arbiter.policy_version,
        )
        self._save(item, outcome, None, self.skip_key(item), error="internal_error")
        return DocResult.failed(outcome, Path(item.origin), "internal_error", _ms(started))

    def repair(self, item: RawItem) -> bool:
        """The recorded item's files rebuilt from the database where missing; False when one cannot be."""

        def restore_bundle() -> bool:
            _, bundle = check_item(self.kind, item.raw, self.profile, item_id=item.item_id)
            target = location(self.store.bundle_path(item.item_id))
            atomic.write_json(target, bundle)
            return target.is_file()

        return self.store.repair(item.item_id, restore_bundle)

    def _save(
        self,
        item: RawItem,
        outcome: VerificationOutcome,
        bundle: DocumentBundle | None,
        key: str,
        *,
        error: str | None = None,
    ) -> tuple[Any, ...]:
        """Record the item (database, then mirrors); its blind samples."""
        doc_id = item.item_id
        sha = hashlib.sha256(item.raw.encode()).hexdigest()
        primary, context = split_item(_parsed(item.raw))
        final, _ = split_item(outcome.final_classification)
        outcome = outcome.model_copy(update={"final_classification": final})
        kind = {"answer_kind": self.kind.name, "context": context}
        fields: dict[str, Any] = {
            "pdf_path": item.origin,
            "pdf_sha256": sha,
            "bundle_path": self.store.bundle_path(doc_id) if bundle is not None else None,
            "total_pages": bundle.total_pages if bundle is not None else 0,
            "primary": primary,
            "production": None,
            "run_id": self.run_id,
        }
        packet = gt = None
        if outcome.final_decision == FinalDecision.ESCALATE_TO_SME:
            packet = build_packet(outcome, **fields).model_copy(update=kind)
        elif final is not None:
            gt = auto_accept_record(
                outcome, None, primary=primary, production=None, pdf_sha256=sha, run_id=self.run_id
            )
            gt = gt.model_copy(update={"answer_kind": self.kind.name}) if gt is not None else None
        samples: tuple[SMEPacket, ...] = ()
        draw = None
        if error is None:
            found, draw = blind_samples(outcome, packet, self.profile.sampling, **fields)
            samples = tuple(s.model_copy(update=kind) for s in found)
        producer = context.get("producer") if context else None
        self.store.save(
            DocumentRecord(
                doc_id=doc_id,
                run_id=self.run_id,
                skip_key=key,
                pdf_path=item.origin,
                outcome=outcome,
                primary_raw=item.raw,
                bundle=bundle,
                packet=packet,
                ground_truth=gt,
                error=error,
                samples=samples,
                risk=draw.risk if draw else None,
                audit_probability=draw.probability if draw else None,
                producer=str(producer.get("name"))[:128] if isinstance(producer, dict) else None,
                answer_kind=self.kind.name,
            )
        )
        return samples


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
