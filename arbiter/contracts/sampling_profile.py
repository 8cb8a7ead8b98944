"""The profile's `[sampling]` and `[metrics]` tables: how blind review samples are drawn and what the
false-accept guarantee aims for (docs/design.md §9.1, §9.3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RiskWeights(Strict):
    """The audit risk score of an accept: a logistic of what Arbiter already recorded about it,
    sigmoid(intercept + Σ weight × feature). A prior, not a probability fitted to audits (`arbiter metrics
    calibrate` fits that); it only decides where audits are spent."""

    intercept: float = Field(default=-4.0, description="Log-odds of a clean accept (about 1.8 %).")
    minor_finding: float = Field(default=0.35, description="Per MINOR finding left on the accept (up to 5).")
    fix_applied: float = Field(
        default=0.7, description="Per auto-fix patch applied before accepting (up to 5)."
    )
    production_disagrees: float = Field(
        default=1.2, description="The production classifier's dominant type differs from the primary's."
    )
    low_confidence: float = Field(
        default=3.0,
        description="Times (1 − the primary's lowest dominant-type confidence over its segments).",
    )
    pages: float = Field(default=0.25, description="Times log2 of the page count.")
    rules_only: float = Field(default=0.5, description="The accept was earned by rules only (no model).")


class Sampling(Strict):
    """Blind review samples (docs/design.md §9.1). Membership is a hash of (salt, kind, doc_id, pdf sha256) read
    as a number u in [0, 1), sampled when u < the inclusion probability: reproducible, independent of run
    order, and unrelated to whether the answer was right. `design = "uniform"` gives every accept
    `audit_share`; `"risk"` gives an accept audit_share × √(risk / risk_reference), at least `audit_floor`
    (every accept can be audited) and at most 1, and records that probability with the decision so the
    false-accept rate is estimated without bias (inverse-probability weighting)."""

    audit_share: float = Field(
        default=0.05, ge=0, le=1, description="Share of auto-accepted documents sent to a blind audit."
    )
    second_review_share: float = Field(
        default=0.10, ge=0, le=1, description="Share of escalations given a blind second review."
    )
    salt: str = Field(default="arbiter-sample-1", min_length=1)
    design: Literal["uniform", "risk"] = Field(
        default="uniform", description="uniform: every accept has audit_share; risk: more where the risk is."
    )
    audit_floor: float = Field(
        default=0.01, gt=0, le=1, description="The least inclusion probability of any accept (risk design)."
    )
    risk_reference: float = Field(
        default=0.05, gt=0, lt=1, description="The risk score audited at exactly audit_share (risk design)."
    )
    risk: RiskWeights = Field(default_factory=RiskWeights)


class MetricsPolicy(Strict):
    """When a rate from blind audits is a figure (docs/design.md §9.3): below `min_audits_for_rate` reviewed
    audits the false-accept rate is "too few to estimate", shown as its Wilson upper bound and the clean audits
    still needed to bring that bound under `target_false_accept_rate`. The guarantee line states the
    risk-weighted upper bound at `guarantee_confidence` and the further audits that would bring it under
    the target."""

    min_audits_for_rate: int = Field(
        default=30, ge=1, description="Reviewed blind audits needed before the false-accept rate is shown."
    )
    target_false_accept_rate: float = Field(
        default=0.05, gt=0, lt=1, description="The false-accept rate the arbiter should stay under."
    )
    guarantee_confidence: float = Field(
        default=0.95, ge=0.5, lt=1, description="The confidence of the guarantee's one-sided upper bound."
    )


class DriftPolicy(Strict):
    """Drift alarms (docs/design.md §9.5): one-sided Bernoulli CUSUMs per producer on the escalation rate, on
    the share of high-risk accepts and on the share of documents the content check's page reader reads as each
    type, against the producer's own earlier rate (or, for a new producer, the pooled rate); while an alarm
    stands, the producer's audit probability is multiplied by `audit_boost`."""

    enabled: bool = Field(
        default=True, description="Follow the producers' escalation rate, risk mix and type mix."
    )
    type_mix: bool = Field(
        default=True,
        description="Follow each producer's type mix: per type, the share of its documents the content "
        "check's page reader reads as that type (its alarm threshold raised by ln of the types followed).",
    )
    threshold: float = Field(
        default=9.0,
        gt=0,
        description="The CUSUM score that raises an alarm on a producer with a track record (`min_history` "
        "documents in earlier runs); higher: fewer, later alarms.",
    )
    new_threshold: float = Field(
        default=4.0,
        gt=0,
        description="The CUSUM score that raises an alarm on a producer with fewer than `min_history` "
        "documents in earlier runs (judged against the pooled rate).",
    )
    shift_odds: float = Field(
        default=4.0, gt=1, description="The rise the CUSUM is tuned to detect, as an odds ratio on the rate."
    )
    high_risk: float = Field(
        default=0.1, gt=0, lt=1, description="An accept at or above this risk score counts as high-risk."
    )
    prior_escalation_rate: float = Field(
        default=0.1, gt=0, lt=1, description="The escalation rate assumed before any document is seen."
    )
    prior_high_risk_share: float = Field(
        default=0.1, gt=0, lt=1, description="The share of high-risk accepts assumed before any is seen."
    )
    prior_type_share: float = Field(
        default=0.9,
        gt=0,
        lt=1,
        description="The share of documents read as any one type assumed before any is seen: high, so that "
        "a database's first run does not alarm on its commonest type before the pooled shares are known.",
    )
    prior_weight: int = Field(
        default=50, ge=1, description="Pseudo-documents the priors weigh against the pooled counts."
    )
    min_history: int = Field(
        default=100, ge=1, description="A producer's documents in earlier runs before it is its own baseline."
    )
    audit_boost: float = Field(
        default=3.0, ge=1, description="Factor on the audit probability of a producer under a standing alarm."
    )


class CalibrationPolicy(Strict):
    """Calibrated accepts (docs/design.md §9.6): `arbiter metrics calibrate` fits the probability that an accept
    is right on its risk score over reviewed blind audits outside the held-out share (chosen by the PDF's hash),
    and writes it to `file` (relative to the output folder unless absolute); the metrics read it back and
    measure it on the held-out audits."""

    file: str = Field(default="calibration.json", description="Where the fitted curve is written and read.")
    min_audits: int = Field(
        default=40, ge=2, description="Reviewed audits of accepts (outside the held-out share) needed to fit."
    )
    holdout_share: float = Field(
        default=0.3, gt=0, lt=1, description="The share of documents, by PDF hash, kept out of the fit."
    )
    bins: int = Field(default=10, ge=2, le=50, description="Bins of the reliability diagram.")
