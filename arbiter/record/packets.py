"""SME packets (docs/design.md §3.5): what a reviewer needs to judge an escalated document."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import (
    BLIND_KINDS,
    SEVERITY_ORDER,
    FinalDecision,
    Issue,
    PacketKind,
    ProductionClassification,
    RetryLogEntry,
    ReviewStatus,
    SemanticChecks,
    Severity,
    SMEPacket,
    VerificationOutcome,
)

SEMANTIC_CHECKS_TEXT = {
    SemanticChecks.RULES_ONLY: "rules only (no model)",
    SemanticChecks.RULES_AND_MODEL: "rules and a language model",
}


def semantic_checks_text(value: str | None) -> str:
    """'Semantic checks: rules only (no model)', for a packet or an outcome; says so when not recorded."""
    known = {str(key): text for key, text in SEMANTIC_CHECKS_TEXT.items()}
    return f"Semantic checks: {known.get(str(value), 'not recorded')}"


def sort_issues(issues: list[Issue]) -> list[Issue]:
    """BLOCKER → MAJOR → MINOR, then by verifier and issue id, so reviewers see the worst first."""
    return sorted(issues, key=lambda i: (SEVERITY_ORDER[i.severity], i.verifier, i.issue_id))


def priority_of(issues: list[Issue], input_failed: bool) -> int:
    """0 when something critical is wrong (or the PDF could not be read), 1 for major problems, 2 otherwise."""
    if input_failed or any(i.severity == Severity.BLOCKER for i in issues):
        return 0
    if any(i.severity == Severity.MAJOR for i in issues):
        return 1
    return 2


# A document that could not be read at all (empty, encrypted, not a PDF, damaged, too slow): its reason is
# pdf_<kind> (run/document.py). Nobody can review it, so its packet goes to the operations lane, not the queue.
UNREADABLE_PREFIX = "pdf_"


def unreadable(reason: str | None) -> bool:
    """Whether an escalation reason says the PDF itself could not be read (an operations matter)."""
    return bool(reason) and str(reason).startswith(UNREADABLE_PREFIX)


def retry_log(outcome: VerificationOutcome) -> list[RetryLogEntry]:
    return [
        RetryLogEntry(
            attempt=a.attempt,
            fingerprint=a.fingerprint,
            decision=str(a.decision.decision),
            rule=a.decision.rule,
            issue_codes=[i.code for r in a.verifier_results for i in r.issues],
            fixes_applied=a.fixes_applied,
        )
        for a in outcome.attempts
    ]


def production_differs(
    production: ProductionClassification | None, primary: dict[str, Any] | None
) -> bool | None:
    """Seed §9: compare production's dominant type with the primary's; None when either is unknown."""
    if production is None or not isinstance(primary, dict):
        return None
    primary_type = primary.get("dominant_type")
    if not isinstance(primary_type, str):
        return None
    return production.dominant_type != primary_type


def _document_fields(
    outcome: VerificationOutcome,
    pdf_path: str,
    pdf_sha256: str,
    bundle_path: str | None,
    total_pages: int,
    primary: dict[str, Any] | None,
    run_id: str,
    stamp: datetime,
) -> dict[str, Any]:
    """What every packet says about its document and run, whatever put it in the queue."""
    return {
        "doc_id": outcome.doc_id,
        "pdf_filename": pdf_path.rsplit("/", 1)[-1],
        "pdf_path": pdf_path,
        "pdf_sha256": pdf_sha256,
        "document_bundle_path": bundle_path,
        "total_pages": total_pages,
        "primary_agent_classification": primary,
        "final_classification": outcome.final_classification,
        "created_at": stamp,
        "updated_at": stamp,
        "run_id": run_id,
        "policy_version": outcome.policy_version,
    }


# The keys _document_fields gives every packet (a known-answer packet copies them from a document's packet).
DOCUMENT_FIELDS = (
    "doc_id",
    "pdf_filename",
    "pdf_path",
    "pdf_sha256",
    "document_bundle_path",
    "total_pages",
    "primary_agent_classification",
    "final_classification",
    "run_id",
    "policy_version",
    "answer_kind",
    "context",
)


def build_packet(
    outcome: VerificationOutcome,
    *,
    pdf_path: str,
    pdf_sha256: str,
    bundle_path: str | None,
    total_pages: int,
    primary: dict[str, Any] | None,
    production: ProductionClassification | None,
    run_id: str,
    now: datetime | None = None,
) -> SMEPacket:
    """A PENDING packet for an escalated outcome; an accepted outcome has no packet (docs/design.md §3.5)."""
    if outcome.final_decision != FinalDecision.ESCALATE_TO_SME:
        raise ValueError(f"{outcome.doc_id} was accepted; only escalations become SME packets")
    stamp = now or datetime.now(UTC)
    issues = sort_issues(outcome.final_issues)
    last = outcome.attempts[-1].decision if outcome.attempts else None
    packet_id = "pkt-" + hashlib.sha256(f"{outcome.doc_id}|{pdf_sha256}|{run_id}".encode()).hexdigest()[:16]
    return SMEPacket(
        **_document_fields(outcome, pdf_path, pdf_sha256, bundle_path, total_pages, primary, run_id, stamp),
        packet_id=packet_id,
        v5_decision=last,
        escalation_reason=outcome.escalation_reason or "unspecified",
        escalation_message=outcome.escalation_message or "Escalated for review.",
        total_issues=len(issues),
        issues_summary=issues,
        retry_log=retry_log(outcome),
        production_classification=production,
        production_differs=production_differs(production, primary),
        priority=priority_of(issues, outcome.stop_reason == "input_failed"),
        semantic_checks=outcome.semantic_checks,
        review_status=ReviewStatus.OPERATIONS
        if outcome.stop_reason == "input_failed" and unreadable(outcome.escalation_reason)
        else ReviewStatus.PENDING,
    )


def draw_point(kind: PacketKind, doc_id: str, pdf_sha256: str, salt: str) -> float:
    """The document's sample number u in [0, 1) for `kind`: a hash of (salt, kind, doc_id, sha256), so
    reproducible, independent of run order and of whether the answer was right."""
    digest = hashlib.sha256(f"{salt}|{kind.value}|{doc_id}|{pdf_sha256}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def sampled(kind: PacketKind, doc_id: str, pdf_sha256: str, share: float, salt: str) -> bool:
    """Whether this document falls in the blind sample of `kind` with inclusion probability `share`
    (its draw point below the share: reproducible)."""
    if share <= 0:
        return False
    return draw_point(kind, doc_id, pdf_sha256, salt) < share


BLIND_REASON = "review_sample"
BLIND_MESSAGE = (
    "Sampled for an independent review. Judge the classification against the document as you would "
    "any other; the machine's verdict is deliberately not shown."
)


def build_blind_packet(
    kind: PacketKind,
    outcome: VerificationOutcome,
    *,
    pdf_path: str,
    pdf_sha256: str,
    bundle_path: str | None,
    total_pages: int,
    primary: dict[str, Any] | None,
    run_id: str,
    pair_of: str | None = None,
    now: datetime | None = None,
) -> SMEPacket:
    """A blind packet: the document and the classification under review (the accepted answer for an audit,
    the escalated one for a second review), with no decision, issues, retry log or production result —
    nothing in its body tells the reviewer what the machine or another reviewer concluded."""
    if kind not in BLIND_KINDS:
        raise ValueError(f"{kind} is not a blind packet kind")
    if kind == PacketKind.SECOND_REVIEW and pair_of is None:
        raise ValueError("a second review needs the escalation packet it doubles (pair_of)")
    stamp = now or datetime.now(UTC)
    key = f"{outcome.doc_id}|{pdf_sha256}|{run_id}|{kind.value}"
    fields = _document_fields(outcome, pdf_path, pdf_sha256, bundle_path, total_pages, primary, run_id, stamp)
    return blind_packet(kind, fields, "pkt-" + hashlib.sha256(key.encode()).hexdigest()[:16], pair_of)


def blind_packet(
    kind: PacketKind, fields: dict[str, Any], packet_id: str, pair_of: str | None = None
) -> SMEPacket:
    """The blind packet of a document's fields (DOCUMENT_FIELDS with created_at and updated_at): the same body
    for an audit, a second review or a known-answer packet (review/known.py)."""
    return SMEPacket(
        **fields,
        packet_id=packet_id,
        v5_decision=None,
        escalation_reason=BLIND_REASON,
        escalation_message=BLIND_MESSAGE,
        total_issues=0,
        issues_summary=[],
        retry_log=[],
        priority=1,
        packet_kind=kind,
        pair_of=pair_of,
    )
