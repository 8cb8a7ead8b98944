"""An admin's retry of a document in the operations lane (docs/design.md §8.2): the PDF run again through
the normal pipeline (composition root: run/compose.py) with a password, the result recorded as a new run
that replaces the operations item by the normal supersede rules, and the retry audited.

The password opens the PDF in memory and nothing else: it is not stored, cached, logged or audited (no
bundle cache, so no cache key derived from it; the pipeline's skip key never includes it)."""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from arbiter.contracts import DocumentRecord, FinalDecision
from arbiter.errors import InputError
from arbiter.outputs import Location
from arbiter.record.packets import unreadable
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import new_run_id
from arbiter.run.compose import Engine, PipelineParts, build_engine, open_extraction, pipeline
from arbiter.store import REDO_ERRORS, Store


@dataclass(frozen=True)
class RetryResult:
    """What the retry led to, in words an admin can act on."""

    doc_id: str
    run_id: str
    decision: str  # a FinalDecision value
    reason: str | None  # the escalation reason, when escalated
    packet_id: str | None  # the document's new packet (review queue, or the operations lane again)
    opened: bool  # False: the PDF still could not be read (a new operations item says why)
    message: str


def retry(
    store: Store,
    ref: str,
    *,
    admin: str,
    password: str | None,
    out_dir: Location,
    pdf: Path | None = None,
    engine: Engine | None = None,
    isolated: bool = True,
    timeout_s: float = 120.0,
) -> RetryResult:
    """Run the operations item's document (`ref`: its packet id or doc id) again with `password`, as a new
    run recorded in `store` (mirrors under `out_dir`); `pdf` overrides the path the packet names (the review
    app passes it confined to its documents folder). The engine defaults to the offline baseline."""
    store.users.require_admin(admin)
    item = store.operations.find(ref)
    path = pdf if pdf is not None else Path(item.pdf_path)
    if not path.is_file():
        raise InputError(f"The PDF of {item.doc_id} is not at {path}; nothing was retried.")
    engine = engine or build_engine()
    run_id = new_run_id()
    ingestor, extractor = open_extraction(None, workers=1, timeout_s=timeout_s, isolated=isolated)
    with closing(ingestor):
        parts = PipelineParts(
            store=DatabaseResultStore(store, out_dir),
            ingest=lambda p, doc_id: ingestor.ingest(p, doc_id=doc_id, password=password or None),
            run_id=run_id,
            extractor=extractor,
        )
        done = pipeline(engine, parts).process(path, item.doc_id, force=True)
    record = store.records.document(item.doc_id)
    packet_id = record.packet.packet_id if record is not None and record.packet is not None else None
    opened = not unreadable(done.escalation_reason)
    result = RetryResult(
        doc_id=item.doc_id,
        run_id=run_id,
        decision=done.final_decision,
        reason=done.escalation_reason,
        packet_id=packet_id,
        opened=opened,
        message=_message(item.doc_id, done.final_decision, opened, record),
    )
    details = {
        "doc_id": item.doc_id,
        "run_id": run_id,
        "decision": result.decision,
        "reason": result.reason,
        "packet_id": packet_id,
        "with_password": bool(password),
    }
    store.operations.record_retry(item.packet_id, admin, details)
    return result


def _message(doc_id: str, decision: str, opened: bool, record: DocumentRecord | None) -> str:
    if not opened:
        why = (record.outcome.escalation_message if record is not None else None) or "It could not be read."
        return f"{doc_id} still could not be read: {why} It stays in the operations lane."
    said = record.outcome.escalation_message if record is not None else None
    if record is not None and record.error in REDO_ERRORS:
        return f"The retry of {doc_id} did not finish: {said} Try again."
    if decision == FinalDecision.ESCALATE_TO_SME.value:
        return (
            f"{doc_id} was read this time and escalated: it is now in the review queue. {said or ''}".strip()
        )
    return f"{doc_id} was read this time and accepted automatically; its ground truth is recorded."
