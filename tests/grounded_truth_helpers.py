"""A hand-built grounded-answer history for the metrics and export tests: six items whose every figure is counted
by hand in tests/test_grounded_metrics.py, written the way the runs and the review desk write them (records with
AUDIT samples through the store, expert versions with statement verdicts through store.versions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from arbiter.contracts import (
    DocumentRecord,
    FinalDecision,
    GroundTruthSource,
    PacketKind,
    SMEPacket,
    SMEReview,
    StopReason,
    VerificationOutcome,
)
from arbiter.contracts.answers import StatementVerdict, UnsupportedReason, Verdict
from arbiter.contracts.grounded import KIND
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_blind_packet
from arbiter.store import Store
from arbiter.store.versions import insert_gt, latest_gt, next_version

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
RUN = "run-g1"
SHA = "e" * 64
S, U, C = Verdict.SUPPORTED, Verdict.UNSUPPORTED, Verdict.CORRECTED


def answer(
    *statements: tuple[str, list[str]], abstained: bool = False, missing: tuple[str, ...] = ()
) -> dict[str, Any]:
    """An Answer dict: statements (text, cites), a quote for every cited id, a confidence unless it abstains."""
    ids = sorted({c for _, cites in statements for c in cites})
    return {
        "language": "en",
        "statements": [{"text": text, "cites": cites} for text, cites in statements],
        "quotes": [{"quote_id": q, "chunk_id": "C1", "text": f"verbatim text of {q}"} for q in ids],
        "confidence": None if abstained else "low",
        "abstained": abstained,
        "missing_evidence": list(missing),
    }  # fmt: skip


def verdicts(*rows: tuple[int, Verdict, UnsupportedReason | None, list[str]]) -> list[StatementVerdict]:
    return [StatementVerdict(index=i, verdict=v, reason=r, cites=c) for i, v, r, c in rows]


ABSTAIN = answer(abstained=True, missing=("the retention period",))
I1 = answer(
    ("Requests are answered within 30 days.", ["Q1"]), ("An extension of 30 days is allowed.", ["Q2"])
)
I2 = answer(("Fees must be reasonable and cost-based.", ["Q1", "Q3"]))
I4_PRIMARY = answer(
    ("Access must be given.", ["Q1"]), ("Within 90 days.", ["Q2"]), ("In the form requested.", ["Q3"])
)
I4_TRUTH = answer(("Access must be given.", ["Q1"]), ("In the form requested.", ["Q4"]))
I4_VERDICTS = verdicts(
    (0, S, None, ["Q1"]), (1, U, UnsupportedReason.CHANGED_NUMBER, []), (2, C, None, ["Q4"])
)
I5_TRUTH = answer(("Records are kept six years.", ["Q5"]))
I6_PRIMARY = answer(("Denials must be written.", ["Q1"]), ("Denials may be oral.", ["Q2"]))
I6_TRUTH = answer(("Denials must be written.", ["Q1"]))
I6_VERDICTS = verdicts((0, S, None, ["Q1"]), (1, U, UnsupportedReason.NOT_IN_SOURCE, []))


def _outcome(item_id: str, final: dict[str, Any], accept: bool) -> VerificationOutcome:
    return VerificationOutcome(
        doc_id=item_id,
        final_decision=FinalDecision.AUTO_ACCEPT if accept else FinalDecision.ESCALATE_TO_SME,
        escalation_reason=None if accept else "non_fixable_major",
        stop_reason=StopReason.ACCEPTED if accept else StopReason.ESCALATED_BY_POLICY,
        policy_version="g-1",
        final_classification=final,
    )


def accept_answer(store: Store, item_id: str, primary: dict[str, Any], audit: bool) -> str | None:
    """Record an accepted answer (auto-accept ground truth) with an AUDIT sample when `audit`; the packet id."""
    out = _outcome(item_id, primary, accept=True)
    gt = auto_accept_record(out, None, primary=primary, production=None, pdf_sha256=SHA, run_id=RUN)
    assert gt is not None
    gt = gt.model_copy(update={"answer_kind": KIND, "created_at": T0})
    fields: dict[str, Any] = {"pdf_path": f"items.jsonl#{item_id}", "pdf_sha256": SHA, "bundle_path": None,
                              "total_pages": 0, "primary": primary, "run_id": RUN, "now": T0}  # fmt: skip
    samples: tuple[SMEPacket, ...] = ()
    if audit:
        blind = build_blind_packet(PacketKind.AUDIT, out, **fields).model_copy(update={"answer_kind": KIND})
        samples = (blind,)
    record = DocumentRecord(
        doc_id=item_id, run_id=RUN, skip_key="k", pdf_path=f"items.jsonl#{item_id}", outcome=out, primary_raw=None,
        bundle=None, packet=None, ground_truth=gt, samples=samples, answer_kind=KIND, audit_probability=0.5,
    )  # fmt: skip
    assert store.records.record(record, now=T0).recorded
    return samples[0].packet_id if samples else None


def _review(
    store: Store, packet_id: str, reviewer: str, truth: dict[str, Any], agrees: bool, minute: int
) -> None:
    at = T0 + timedelta(hours=1, minutes=minute)
    assert store.queue.claim(packet_id, reviewer, now=at - timedelta(seconds=60)) is not None
    review = SMEReview(reviewer=reviewer, agrees_with_primary=agrees, confidence=0.9,
                       started_at=at - timedelta(seconds=50), submitted_at=at)  # fmt: skip
    store.reviews.submit(packet_id, reviewer, review, truth, idempotency_key=f"{packet_id}-r", now=at)


def expert_version(
    store: Store,
    item_id: str,
    primary: dict[str, Any],
    truth: dict[str, Any],
    verdict_rows: list[StatementVerdict],
    minute: int,
    source: GroundTruthSource = GroundTruthSource.SME_CORRECTED,
) -> None:
    """An expert's version with statement verdicts, as the review desk writes it (superseding what stands)."""
    with store.write() as conn:
        previous = latest_gt(conn, item_id)
        record = next_version(
            previous, doc_id=item_id, source=source, classification=truth, primary=primary, production=None,
            outcome=_outcome(item_id, primary, accept=False), pdf_sha256=SHA, run_id=RUN,
            now=T0 + timedelta(hours=2, minutes=minute), answer_kind=KIND, statement_verdicts=verdict_rows,
        )  # fmt: skip
        assert record is not None
        insert_gt(conn, record)


def seed_answers(store: Store) -> None:
    """i1 accepted, audited, the auditor agrees; i2 accepted; i3 an accepted abstention; i4 escalated and corrected
    by an expert (one statement unsupported, one citation corrected); i5 an abstention the expert answered; i6
    accepted, audited, found wrong (one statement unsupported)."""
    audit_1 = accept_answer(store, "i1", I1, audit=True)
    accept_answer(store, "i2", I2, audit=False)
    accept_answer(store, "i3", ABSTAIN, audit=False)
    audit_6 = accept_answer(store, "i6", I6_PRIMARY, audit=True)
    assert audit_1 is not None
    assert audit_6 is not None
    _review(store, audit_1, "alice", I1, True, 1)
    _review(store, audit_6, "bob", I6_TRUTH, False, 2)
    expert_version(store, "i6", I6_PRIMARY, I6_TRUTH, I6_VERDICTS, 3)
    expert_version(store, "i4", I4_PRIMARY, I4_TRUTH, I4_VERDICTS, 4)
    expert_version(store, "i5", ABSTAIN, I5_TRUTH, [], 5)
