"""Automatic ground truth for an accepted outcome; the versioning rule itself lives with the store
(arbiter.store.versions.next_version): append-only, a new version supersedes, nothing is overwritten."""

from __future__ import annotations

from typing import Any

from arbiter.contracts import (
    FinalDecision,
    GroundTruthRecord,
    GroundTruthSource,
    ProductionClassification,
    VerificationOutcome,
)
from arbiter.store.versions import next_version


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
