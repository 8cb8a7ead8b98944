"""The line a batch keeps per document (`DocResult`): what a document's run ended with, in brief."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arbiter.contracts import SMEPacket, VerificationOutcome

PENDING = "PENDING_LLM_BATCH"  # batch mode: waiting for the batch job's answers


@dataclass(frozen=True, kw_only=True)
class DocResult:
    """The line a batch keeps per document (small: a 5,000-document run holds only these).

    Built by keyword, or by one of the constructors below for the four ways a document ends."""

    doc_id: str
    pdf_path: str
    final_decision: str
    escalation_reason: str | None = None
    accepted_after_fixes: bool = False
    error: str | None = None
    skipped: bool = False
    duration_ms: float
    attempts: int = 0
    llm_calls: int = 0
    llm_cost_usd: float | None = 0.0  # None: the model's price is unknown
    samples: tuple[str, ...] = ()  # kinds of the blind packets this document was sampled into
    semantic_checks: str = "rules_only"  # SemanticChecks: whether a language model took part in the decision

    @classmethod
    def skipped_unchanged(cls, doc_id: str, pdf: Path, duration_ms: float) -> DocResult:
        """Nothing changed since the run that decided it: not redone."""
        return cls(
            doc_id=doc_id, pdf_path=str(pdf), final_decision="SKIPPED", skipped=True, duration_ms=duration_ms
        )

    @classmethod
    def pending(cls, doc_id: str, pdf: Path, duration_ms: float) -> DocResult:
        """Batch mode: waiting for its LLM answers; nothing written."""
        return cls(doc_id=doc_id, pdf_path=str(pdf), final_decision=PENDING, duration_ms=duration_ms)

    @classmethod
    def failed(cls, outcome: VerificationOutcome, pdf: Path, reason: str, duration_ms: float) -> DocResult:
        """Could not be verified at all: escalated with `reason`."""
        return cls(
            doc_id=outcome.doc_id,
            pdf_path=str(pdf),
            final_decision=str(outcome.final_decision),
            escalation_reason=reason,
            error=reason,
            duration_ms=duration_ms,
        )

    @classmethod
    def decided(
        cls, outcome: VerificationOutcome, pdf: Path, duration_ms: float, samples: tuple[SMEPacket, ...]
    ) -> DocResult:
        """Verified: accepted or escalated, with its attempts, LLM use and blind samples."""
        return cls(
            doc_id=outcome.doc_id,
            pdf_path=str(pdf),
            final_decision=str(outcome.final_decision),
            escalation_reason=outcome.escalation_reason,
            accepted_after_fixes=outcome.accepted_after_fixes,
            duration_ms=duration_ms,
            attempts=len(outcome.attempts),
            llm_calls=outcome.llm_calls,
            llm_cost_usd=outcome.llm_cost_usd,
            samples=tuple(p.packet_kind.value for p in samples),
            semantic_checks=outcome.semantic_checks.value,
        )
