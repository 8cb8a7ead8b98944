"""SME packets, reviews and ground-truth records (docs/design.md §3.5)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arbiter.contracts.answers import StatementVerdict
from arbiter.contracts.verification import ArbiterDecision, FixRecord, Issue, SemanticChecks


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewStatus(StrEnum):
    PENDING = "PENDING"
    IN_REVIEW = "IN_REVIEW"
    COMPLETED = "COMPLETED"
    SUPERSEDED = "SUPERSEDED"  # a later run queued the document again before anyone claimed this packet
    # The operations lane: the document could not be read, so no clinician can review it; an admin retries
    # it (a password) or dismisses it (not a medical record). Never in a clinician's claim order.
    OPERATIONS = "OPERATIONS"
    DISMISSED = "DISMISSED"  # closed by an admin: not a medical record (no ground truth is written)


class PacketKind(StrEnum):
    """Why a packet is in the queue. AUDIT and SECOND_REVIEW packets are blind: their body carries no
    decision, issues or retry log, so the reviewer judges the classification on its own."""

    ESCALATION = "ESCALATION"  # the arbiter escalated the document
    AUDIT = "AUDIT"  # a sample of auto-accepted documents: measures the false-accept rate
    SECOND_REVIEW = "SECOND_REVIEW"  # a sample of escalations reviewed again by someone else: agreement
    # The two reviews of a double-reviewed document disagree: an admin or a third reviewer decides.
    ADJUDICATION = "ADJUDICATION"


BLIND_KINDS = frozenset({PacketKind.AUDIT, PacketKind.SECOND_REVIEW})

# The kind of answer a document, packet or ground-truth version holds (arbiter/kinds names the kinds); every
# row written before answer kinds existed (migration 0013) is a medical classification.
DEFAULT_KIND = "medical-classification"


class GroundTruthSource(StrEnum):
    PRIMARY_AGENT_AUTO_ACCEPT = "PRIMARY_AGENT_AUTO_ACCEPT"
    SME_VALIDATED = "SME_VALIDATED"
    SME_CORRECTED = "SME_CORRECTED"
    SME_ADJUDICATED = "SME_ADJUDICATED"  # an adjudicator's decision between two disagreeing reviews


class ProductionClassification(Strict):
    doc_id: str
    dominant_type: str


class RetryLogEntry(Strict):
    attempt: int
    fingerprint: str
    decision: str
    rule: str
    issue_codes: list[str]
    fixes_applied: list[FixRecord] = Field(default_factory=list)


class ReviewedAnswer(Strict):
    """One of the two answers an adjudicator compares: who gave it, on which packet, and the classification."""

    packet_id: str
    reviewer: str
    classification: dict[str, Any]
    agrees_with_primary: bool
    review_notes: str = ""
    confidence: float = Field(ge=0.0, le=1.0)
    submitted_at: datetime
    statement_verdicts: list[StatementVerdict] | None = Field(
        default=None, description="grounded-answer only: the reviewer's verdict on each statement."
    )


class AdjudicationCase(Strict):
    """What an ADJUDICATION packet asks: first (the escalation's review) or second (the blind second review),
    and where they differ, in words."""

    first: ReviewedAnswer
    second: ReviewedAnswer
    differences: list[str]


class AdjudicationChoice(StrEnum):
    FIRST = "FIRST"  # the escalation's review was right
    SECOND = "SECOND"  # the blind second review was right
    CORRECTED = "CORRECTED"  # neither: the adjudicator's own answer


class SMEPacket(Strict):
    packet_id: str
    doc_id: str
    pdf_filename: str
    pdf_path: str
    pdf_sha256: str
    document_bundle_path: str | None
    total_pages: int
    primary_agent_classification: dict[str, Any] | None
    final_classification: dict[str, Any] | None
    v5_decision: ArbiterDecision | None
    escalation_reason: str
    escalation_message: str
    total_issues: int
    issues_summary: list[Issue]
    retry_log: list[RetryLogEntry]
    production_classification: ProductionClassification | None = None
    production_differs: bool | None = None
    priority: int = Field(description="Lower is reviewed first: 0 blocker, 1 major, 2 minor/other.")
    review_status: ReviewStatus = ReviewStatus.PENDING
    claimed_by: str | None = None
    claim_expires_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    run_id: str
    policy_version: str
    packet_kind: PacketKind = PacketKind.ESCALATION
    pair_of: str | None = Field(
        default=None, description="SECOND_REVIEW only: the escalation packet this one reviews again."
    )
    adjudication: AdjudicationCase | None = Field(
        default=None, description="ADJUDICATION only: the two reviews that disagree, side by side."
    )
    answer_kind: str = Field(
        default=DEFAULT_KIND, description="The kind of answer under review (arbiter/kinds)."
    )
    context: dict[str, Any] | None = Field(
        default=None,
        description="For a kind whose items carry their own context (grounded-answer): the question and the "
        "retrieved chunks the answer is checked against (GroundedContext). None for a PDF.",
    )
    semantic_checks: SemanticChecks | None = Field(
        default=None,
        description="ESCALATION only: whether the decision rested on the rules alone or on the rules and a "
        "language model. None on blind packets and on packets stored before it was recorded.",
    )

    @property
    def blind(self) -> bool:
        return self.packet_kind in BLIND_KINDS


class Corrections(Strict):
    corrected_dominant_type: str | None = None
    corrected_segments: list[dict[str, Any]] | None = None
    corrected_document_mixture: list[dict[str, Any]] | None = None
    correction_notes: str = ""


class SMEReview(Strict):
    reviewer: str
    agrees_with_primary: bool
    review_notes: str = ""
    confidence: float = Field(ge=0.0, le=1.0)
    corrections: Corrections | None = None
    reason_codes: list[str] = Field(default_factory=list)
    started_at: datetime
    submitted_at: datetime
    adjudication: AdjudicationChoice | None = Field(
        default=None, description="ADJUDICATION packets only: which answer the adjudicator chose."
    )


class VerificationSummary(Strict):
    final_decision: str
    rule: str
    attempts: int
    issue_codes: list[str]
    stop_reason: str


class GroundTruthRecord(Strict):
    gt_id: str
    doc_id: str
    version: int = Field(ge=1)
    supersedes: str | None = None
    ground_truth_source: GroundTruthSource
    ground_truth_classification: dict[str, Any]
    primary_agent_classification: dict[str, Any] | None
    production_classification: ProductionClassification | None = None
    verification_summary: VerificationSummary
    sme_review: SMEReview | None = None
    policy_version: str
    pdf_sha256: str
    created_at: datetime
    run_id: str | None = None
    answer_kind: str = Field(default=DEFAULT_KIND, description="The kind of answer (arbiter/kinds).")
    statement_verdicts: list[StatementVerdict] | None = Field(
        default=None,
        description="grounded-answer only: each statement of the primary's answer judged (supported, "
        "unsupported with the reason, corrected); None for a medical classification, and for an accept "
        "no expert has judged.",
    )
    semantic_checks: SemanticChecks | None = Field(
        default=None,
        description="How the decision that produced this ground truth was earned (the auto-accept, or the "
        "escalation an SME then reviewed): rules_only or rules_and_model. None on records written before "
        "it was recorded.",
    )
