"""The metrics report as data: pydantic models with a JSON form (`MetricsReport.to_json`). Every rate
carries its count and denominator and a Wilson 95 % interval; a rate over nothing is None, never 0."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rate(Strict):
    """k of n; rate, low and high (Wilson 95 %) are None when n is 0."""

    k: int
    n: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None


class MeanEstimate(Strict):
    """A mean over n values with mean ± 1.96·sd/√n (normal approximation); None fields when undefined."""

    n: int
    mean: float | None = None
    sd: float | None = None
    low: float | None = None
    high: float | None = None


class Confusion(Strict):
    """counts[i][j]: items whose truth is labels[i] and whose prediction is labels[j]."""

    labels: list[str] = Field(default_factory=list)
    counts: list[list[int]] = Field(default_factory=list)


class Kappa(Strict):
    n: int
    kappa: float | None = None
    low: float | None = None
    high: float | None = None
    expected: float | None = Field(default=None, description="Chance agreement p_e.")
    agreement: Rate
    confusion: Confusion


class Boundaries(Strict):
    """Page-level boundary scores, micro-averaged over documents (see arbiter/metrics/model.py)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    precision: Rate
    recall: Rate
    f1: float | None = None
    docs_with_boundaries: int = Field(0, description="Documents where truth or prediction has a boundary.")
    exact: Rate = Field(description="Documents whose predicted boundary set equals the truth's.")


class ModelScores(Strict):
    model: Literal["primary", "production"]
    scope: Literal["sme", "all"]
    docs: int = Field(description="Ground-truth documents in scope.")
    missing: int = Field(description="Documents in scope without a prediction from this model.")
    accuracy: Rate
    confusion: Confusion
    boundaries: Boundaries | None = Field(default=None, description="None: the model gives no segments.")
    mixture_mae: MeanEstimate | None = Field(default=None, description="None: the model gives no mixture.")


class Share(Strict):
    label: str
    rate: Rate


class DecisionMix(Strict):
    docs: int
    decisions: list[Share]
    escalation_reasons: list[Share] = Field(description="Shares of the escalated documents.")


class Retry(Strict):
    success: Rate = Field(description="Documents the arbiter sent to auto-fix that ended accepted.")
    stop_reasons: list[Share] = Field(description="Why the others were escalated, as shares of them.")


class Audit(Strict):
    false_accept: Rate = Field(description="Blind audits of accepted documents that the SME corrected.")
    dominant_wrong: Rate = Field(description="Audits whose SME dominant type differs from the accepted one.")
    open: int = Field(description="Audit packets created but not reviewed yet.")
    false_accept_by_semantic_checks: dict[str, Rate] = Field(
        default_factory=dict,
        description="The false-accept rate by how the audited accept was earned: rules_only and "
        "rules_and_model (an audit whose accept has no stored outcome is in neither).",
    )
    min_audits: int = Field(
        default=30, description="Reviewed audits below which the rate is too few to estimate (profile)."
    )
    target: float = Field(default=0.05, description="The profile's target false-accept rate.")
    clean_audits_needed: int = Field(
        default=0,
        description="More audits with no false accept that would bring the Wilson upper bound under the target.",
    )
    too_few: bool = Field(
        default=False,
        description="Audits were reviewed, but fewer than min_audits: the rate is not a figure yet.",
    )


class CodePrecision(Strict):
    code: str
    verifier: str
    precision: Rate


class Precision(Strict):
    escalations: Rate = Field(description="Reviewed escalations the SME corrected.")
    by_verifier: list[CodePrecision]
    by_code: list[CodePrecision]


class Disagreement(Strict):
    doc_id: str
    packet_id: str
    first: str
    second: str


class Agreement(Strict):
    kappa: Kappa
    skipped: int = Field(description="Pairs left out: a review without a ground-truth label.")
    disagreements: list[Disagreement]
    same_reviewer: int = Field(
        default=0,
        description="Pairs left out because one reviewer wrote both answers (stored before the store refused "
        "it): a reviewer agreeing with herself is not agreement.",
    )


class ReviewerStats(Strict):
    reviewer: str
    reviews: int
    corrected: Rate
    median_s: float | None
    p90_s: float | None
    active_hours: int
    per_active_hour: float | None


class RunTrend(Strict):
    run_id: str
    created_at: datetime | None
    docs: int
    accepted: Rate
    escalated: Rate
    unreadable: Rate
    retry_success: Rate
    false_accept: Rate
    primary_accuracy_sme: Rate


class Totals(Strict):
    documents: int = 0
    runs: int = 0
    ground_truth_docs: int = 0
    sme_ground_truth_docs: int = 0
    reviews: int = 0
    reviews_by_kind: dict[str, int] = Field(default_factory=dict)


class Guarantee(Strict):
    """The risk-weighted false-accept rate of a group of accepts (metrics/guarantee.py): the Horvitz–Thompson
    estimate, its two-sided interval and the one-sided upper `bound` at `confidence` ("≤ bound with that
    confidence"), and the further audits that would bring the bound under the target (None: none can, at the
    estimated rate, or nothing to extrapolate from). Figures are None with no reviewed audit."""

    scope: Literal["all", "kind", "type"]
    label: str
    accepts: int
    audits: int = Field(description="Audit packets of these accepts (reviewed or waiting).")
    reviewed: int
    false_accepts: int
    confidence: float
    target: float
    rate: float | None = None
    low: float | None = None
    high: float | None = None
    bound: float | None = None
    further_audits: int | None = None


class DriftAlarm(Strict):
    """A drift alarm across runs (metrics/drift.py, record/drift.py): the producer and test (and, for the type
    mix, the type) that moved."""

    stratum: str = Field(description="The producer whose answers moved.")
    test: str = Field(
        description="escalation_rate, risk_mix (the share of high-risk accepts) or type_mix (the share of "
        "its documents the content check's page reader reads as `read_type`)."
    )
    raised_at: int = Field(description="The n-th document of its run (of those followed) when it was raised.")
    run_id: str | None
    stratum_documents: int = Field(description="The producer's documents in that run when it was raised.")
    rate: float = Field(description="The producer's rate in that run when it was raised.")
    baseline: float = Field(description="The rate it was compared with.")
    standing: bool = Field(description="Still standing: the producer's audits are raised until it settles.")
    read_type: str | None = Field(default=None, description="type_mix: the type whose share rose.")


class ReliabilityBin(Strict):
    """One bin of the reliability diagram: held-out audits whose estimated probability of being right falls in
    [low, high), their mean estimate and the share that was right; and how many accepts fall in the bin."""

    low: float
    high: float
    audits: int
    predicted: float | None = Field(default=None, description="Mean estimated probability of its audits.")
    observed: Rate = Field(description="Its held-out audits whose accept was right.")
    accepts: int = Field(default=0, description="Accepts whose estimated probability falls in the bin.")


class Calibration(Strict):
    """Calibrated accepts (metrics/calibration.py): the fitted curve of P(the accept is right | risk), what it
    says of the accepts in aggregate, and how well it holds on held-out audits. `status`: fitted, too_few (not
    enough audits to fit: `message` says how many), none (nothing fitted yet) or invalid (the file is unusable)."""

    status: Literal["fitted", "too_few", "none", "invalid"]
    message: str
    file: str | None = None
    fitted_at: datetime | None = None
    audits: int = Field(default=0, description="Reviewed audits of accepts with a risk score, as of the cut.")
    train_audits: int = Field(default=0, description="Of them, outside the held-out share (the fit's).")
    holdout_audits: int = Field(default=0, description="Of them, in the held-out share (never fitted on).")
    min_audits: int = 0
    accepts: int = Field(default=0, description="Accepts with a risk score, as of the cut.")
    mean_probability: float | None = Field(
        default=None, description="The accepts' mean estimated probability of being right."
    )
    expected_wrong: float | None = Field(default=None, description="Accepts expected to be wrong (Σ 1 − p).")
    ece: float | None = Field(default=None, description="Expected calibration error on held-out audits.")
    bins: list[ReliabilityBin] = Field(default_factory=list)


class KnownAnswerAccuracy(Strict):
    """A reviewer's answers on known-answer packets (review/known.py): right when they match the adjudicated
    answer (contracts/agreement.py); the accuracy is shown from `min_answers` on."""

    reviewer: str
    answered: int
    accuracy: Rate
    shown: bool = Field(description="At least min_answers answered: the accuracy is a figure.")


class MetricsReport(Strict):
    generated_at: datetime
    as_of: datetime | None
    database: str
    totals: Totals
    audit: Audit
    models: list[ModelScores]
    decisions: DecisionMix
    retry: Retry
    precision: Precision
    agreement: Agreement
    reviewers: list[ReviewerStats]
    runs: list[RunTrend]
    guarantees: list[Guarantee] = Field(
        default_factory=list,
        description="The risk-weighted false-accept guarantee: overall, per kind, per type.",
    )
    drift: list[DriftAlarm] = Field(
        default_factory=list, description="Drift alarms per producer across runs, in the order raised."
    )
    calibration: Calibration | None = Field(default=None, description="Calibrated accepts (None: not asked).")
    known_answers: list[KnownAnswerAccuracy] = Field(
        default_factory=list, description="Each reviewer's accuracy on known-answer packets (admins only)."
    )
    seconds: float = Field(0.0, description="Time the computation took.")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    def model_scores(self, model: str, scope: str) -> ModelScores:
        return next(m for m in self.models if m.model == model and m.scope == scope)
