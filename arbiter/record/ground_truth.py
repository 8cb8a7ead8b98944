"""Ground-truth records (docs/design.md §3.5): append-only versions; a new one supersedes, nothing is overwritten."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import (
    FinalDecision,
    GroundTruthRecord,
    GroundTruthSource,
    ProductionClassification,
    SMEReview,
    VerificationOutcome,
    VerificationSummary,
)


def verification_summary(outcome: VerificationOutcome) -> VerificationSummary:
    last = outcome.attempts[-1].decision.rule if outcome.attempts else "none"
    return VerificationSummary(
        final_decision=str(outcome.final_decision),
        rule=last,
        attempts=len(outcome.attempts),
        issue_codes=sorted({i.code for i in outcome.final_issues}),
        stop_reason=str(outcome.stop_reason),
    )


def next_version(
    previous: GroundTruthRecord | None,
    *,
    doc_id: str,
    source: GroundTruthSource,
    classification: dict[str, Any],
    primary: dict[str, Any] | None,
    production: ProductionClassification | None,
    outcome: VerificationOutcome,
    pdf_sha256: str,
    review: SMEReview | None = None,
    run_id: str | None = None,
    now: datetime | None = None,
) -> GroundTruthRecord | None:
    """The record that supersedes `previous`, or None when it would say exactly what `previous` says."""
    if (
        previous is not None
        and previous.ground_truth_source == source
        and previous.ground_truth_classification == classification
        and previous.pdf_sha256 == pdf_sha256
        and previous.sme_review == review
    ):
        return None
    version = 1 if previous is None else previous.version + 1
    gt_id = "gt-" + hashlib.sha256(f"{doc_id}|{version}|{pdf_sha256}".encode()).hexdigest()[:16]
    return GroundTruthRecord(
        gt_id=gt_id,
        doc_id=doc_id,
        version=version,
        supersedes=previous.gt_id if previous else None,
        ground_truth_source=source,
        ground_truth_classification=classification,
        primary_agent_classification=primary,
        production_classification=production,
        verification_summary=verification_summary(outcome),
        sme_review=review,
        policy_version=outcome.policy_version,
        pdf_sha256=pdf_sha256,
        created_at=now or datetime.now(UTC),
        run_id=run_id,
        semantic_checks=outcome.semantic_checks,
    )


def auto_accept_record(
    outcome: VerificationOutcome,
    previous: GroundTruthRecord | None,
    *,
    primary: dict[str, Any] | None,
    production: ProductionClassification | None,
    pdf_sha256: str,
    run_id: str,
) -> GroundTruthRecord | None:
    """PRIMARY_AGENT_AUTO_ACCEPT ground truth for an accepted outcome (the final, possibly fixed, classification)."""
    if outcome.final_decision != FinalDecision.AUTO_ACCEPT or outcome.final_classification is None:
        raise ValueError(f"{outcome.doc_id} was not accepted; it has no automatic ground truth")
    return next_version(
        previous,
        doc_id=outcome.doc_id,
        source=GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT,
        classification=outcome.final_classification,
        primary=primary,
        production=production,
        outcome=outcome,
        pdf_sha256=pdf_sha256,
        run_id=run_id,
    )
