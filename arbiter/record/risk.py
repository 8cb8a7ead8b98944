"""The audit risk of an accept and its inclusion probability (docs/design.md §9.1).

Every accept gets a risk score from what Arbiter already recorded about it and, from that score and the
profile's `[sampling]` design, the probability that it is sent to a blind audit. The draw itself is the
sample hash read as a uniform number (`record.packets.draw_point`) compared with that probability, and the
probability is stored with the decision, so the metrics can weight each audit by 1 / probability
(Horvitz–Thompson: an unbiased false-accept rate whatever the design).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import FinalDecision, SemanticChecks, Severity, VerificationOutcome
from arbiter.contracts.sampling_profile import RiskWeights, Sampling

COUNT_CAP = 5  # findings and fixes past this many add no more risk


@dataclass(frozen=True)
class RiskFeatures:
    """What the risk score reads of one accept."""

    minor_findings: int = 0
    fixes_applied: int = 0
    production_disagrees: bool = False
    lowest_confidence: float | None = None  # the primary's lowest dominant-type confidence over its segments
    pages: int = 1
    rules_only: bool = True


def lowest_confidence(classification: dict[str, Any] | None) -> float | None:
    """The lowest confidence the classification gives a segment's own dominant type; None when it states
    none (a malformed answer tells nothing here: it is not accepted anyway)."""
    if not isinstance(classification, dict) or not isinstance(classification.get("segments"), list):
        return None
    found: list[float] = []
    for segment in classification["segments"]:
        if not isinstance(segment, dict) or not isinstance(segment.get("types"), list):
            continue
        for entry in segment["types"]:
            if (
                isinstance(entry, dict)
                and entry.get("document_type") == segment.get("dominant_type")
                and isinstance(entry.get("confidence"), int | float)
                and not isinstance(entry.get("confidence"), bool)
                and math.isfinite(entry["confidence"])
            ):
                found.append(min(1.0, max(0.0, float(entry["confidence"]))))
    return min(found) if found else None


def features_of(outcome: VerificationOutcome, *, pages: int, production_differs: bool | None) -> RiskFeatures:
    """The risk features of an outcome (its final issues, the fixes of every attempt, its classification)."""
    return RiskFeatures(
        minor_findings=sum(i.severity == Severity.MINOR for i in outcome.final_issues),
        fixes_applied=sum(len(a.fixes_applied) for a in outcome.attempts),
        production_disagrees=bool(production_differs),
        lowest_confidence=lowest_confidence(outcome.final_classification),
        pages=max(1, pages),
        rules_only=outcome.semantic_checks != SemanticChecks.RULES_AND_MODEL,
    )


def risk_score(features: RiskFeatures, weights: RiskWeights) -> float:
    """sigmoid(intercept + Σ weight × feature), in (0, 1)."""
    confidence = 1.0 if features.lowest_confidence is None else features.lowest_confidence
    logit = (
        weights.intercept
        + weights.minor_finding * min(features.minor_findings, COUNT_CAP)
        + weights.fix_applied * min(features.fixes_applied, COUNT_CAP)
        + weights.production_disagrees * features.production_disagrees
        + weights.low_confidence * (1.0 - confidence)
        + weights.pages * math.log2(max(1, features.pages))
        + weights.rules_only * features.rules_only
    )
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))


def inclusion_probability(risk: float, sampling: Sampling) -> float:
    """The probability that an accept of this risk is audited. Uniform: audit_share. Risk: audit_share ×
    √(risk / risk_reference) (√: the allocation that minimises the estimator's variance when the risk is the
    chance of a false accept), at least audit_floor and at most 1; a share of 0 audits nothing and of 1
    everything, as with the uniform design."""
    share = sampling.audit_share
    if sampling.design == "uniform" or share <= 0 or share >= 1:
        return share
    scaled = share * math.sqrt(max(0.0, risk) / sampling.risk_reference)
    return min(1.0, max(min(sampling.audit_floor, share), scaled))


@dataclass(frozen=True)
class AuditDraw:
    """An accept's risk and audit inclusion probability, stored with its decision."""

    risk: float
    probability: float


def audit_draw(
    outcome: VerificationOutcome,
    sampling: Sampling,
    *,
    pages: int,
    production_differs: bool | None,
    boost: float = 1.0,
) -> AuditDraw | None:
    """The draw of an accepted outcome; None for an escalation (it is not an accept). `boost` (a standing
    drift alarm) multiplies the inclusion probability, at most 1; the raised probability is the one stored."""
    if outcome.final_decision != FinalDecision.AUTO_ACCEPT:
        return None
    risk = risk_score(features_of(outcome, pages=pages, production_differs=production_differs), sampling.risk)
    probability = inclusion_probability(risk, sampling)
    if boost > 1 and probability > 0:
        probability = min(1.0, probability * boost)
    return AuditDraw(risk=risk, probability=probability)
