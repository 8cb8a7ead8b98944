"""Issues, verifier results, arbiter decisions and the verification outcome (docs/design.md §3.3–3.4)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Severity(StrEnum):
    BLOCKER = "BLOCKER"
    MAJOR = "MAJOR"
    MINOR = "MINOR"


SEVERITY_ORDER = {Severity.BLOCKER: 0, Severity.MAJOR: 1, Severity.MINOR: 2}


class VerifierStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERRORED = "ERRORED"
    SKIPPED = "SKIPPED"


class PhaseStatus(StrEnum):
    """State of a verifier's LLM phase; NOT_APPLICABLE for verifiers that have none."""

    NOT_APPLICABLE = "NOT_APPLICABLE"
    SKIPPED = "SKIPPED"
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERRORED = "ERRORED"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"  # a token budget ran out before the phase could run


class SemanticChecks(StrEnum):
    """How a decision was earned: by the rule checks alone, or by the rules and a language model."""

    RULES_ONLY = "rules_only"
    RULES_AND_MODEL = "rules_and_model"


# The verifiers that have an LLM (semantic) phase, and the phase states in which the model judged.
SEMANTIC_VERIFIERS = ("V2", "V3", "V4")
MODEL_JUDGED = frozenset({PhaseStatus.PASSED, PhaseStatus.FAILED})


class Decision(StrEnum):
    AUTO_ACCEPT = "AUTO_ACCEPT"
    AUTO_RETRY = "AUTO_RETRY"
    ESCALATE_TO_SME = "ESCALATE_TO_SME"


class FinalDecision(StrEnum):
    AUTO_ACCEPT = "AUTO_ACCEPT"
    ESCALATE_TO_SME = "ESCALATE_TO_SME"


class IssueSource(StrEnum):
    RULE = "rule"
    LLM = "llm"


class Location(Strict):
    segment_index: int | None = None
    document_type: str | None = None
    page: int | None = None
    path: str = Field(default="", description="JSON Pointer (RFC 6901) into the classification.")


class Highlight(Strict):
    """Where a piece of evidence was found: page, character span in page.text, boxes in PDF points."""

    page: int
    start: int
    end: int
    boxes: list[tuple[float, float, float, float]] = Field(default_factory=list)
    score: float = 1.0


class Issue(Strict):
    issue_id: str = Field(description="e.g. V1-0001, unique within one verifier result.")
    code: str = Field(description="Stable code, documented in verifiers/README.md.")
    verifier: str
    severity: Severity
    message: str
    auto_fixable: bool = False
    fix: list[dict[str, Any]] | None = Field(default=None, description="RFC 6902 JSON Patch.")
    location: Location = Field(default_factory=Location)
    source: IssueSource = IssueSource.RULE
    highlight: Highlight | None = None

    @model_validator(mode="after")
    def _fix_required_when_fixable(self) -> Issue:
        if self.auto_fixable and not self.fix:
            raise ValueError("an auto_fixable issue must carry a fix (JSON Patch)")
        return self


class TokenUsage(Strict):
    input_tokens: int = 0
    output_tokens: int = 0


class EvidenceCheck(Strict):
    """V4's record of one evidence item: where it was claimed and where it was found."""

    segment_index: int
    document_type: str
    claimed_page: int
    path: str
    status: str
    found: Highlight | None = None


class VerifierResult(Strict):
    verifier: str
    version: str
    status: VerifierStatus
    issues: list[Issue] = Field(default_factory=list)
    score: float = Field(default=1.0, ge=0.0, le=1.0)
    duration_ms: float = 0.0
    llm_calls: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    llm_phase: PhaseStatus = PhaseStatus.NOT_APPLICABLE
    notes: list[str] = Field(default_factory=list)
    evidence_checks: list[EvidenceCheck] = Field(default_factory=list)


def has_semantic_phase(result: VerifierResult, phased: Collection[str] = SEMANTIC_VERIFIERS) -> bool:
    """Whether this verifier has an LLM phase: it is one of `phased` (the kind's verifiers with one; the
    medical kind's V2, V3 and V4) or its result's phase has a state."""
    return result.verifier in phased or result.llm_phase != PhaseStatus.NOT_APPLICABLE


def semantic_checks_of(
    results: Sequence[VerifierResult], phased: Collection[str] = SEMANTIC_VERIFIERS
) -> SemanticChecks:
    """RULES_AND_MODEL when the results include an LLM phase and the model judged in every one of them
    (phase PASSED or FAILED); RULES_ONLY when any was skipped, errored or out of budget, or none exists.
    `phased`: the verifiers that have a phase in this kind (a grounded answer's V4 alone)."""
    semantic = [result for result in results if has_semantic_phase(result, phased)]
    if semantic and all(result.llm_phase in MODEL_JUDGED for result in semantic):
        return SemanticChecks.RULES_AND_MODEL
    return SemanticChecks.RULES_ONLY


class Counts(Strict):
    blocker: int = 0
    major: int = 0
    major_fixable: int = 0
    major_non_fixable: int = 0
    minor: int = 0
    total: int = 0
    errored: int = Field(default=0, description="Verifiers that raised or could not run.")
    not_run: int = Field(default=0, description="Required verifiers that are ERRORED or SKIPPED.")
    budget_exhausted: int = Field(default=0, description="Verifiers whose LLM phase ran out of token budget.")


class ArbiterDecision(Strict):
    decision: Decision
    rule: str
    reason: str
    counts: Counts
    policy_version: str


class FixRecord(Strict):
    issue_id: str
    code: str
    patch: list[dict[str, Any]]
    before: dict[str, Any] = Field(description="Values at each patched path before the fix, by path.")
    after: dict[str, Any] = Field(description="Values at each patched path after the fix, by path.")


class Attempt(Strict):
    attempt: int
    fingerprint: str
    verifier_results: list[VerifierResult]
    decision: ArbiterDecision
    fixes_applied: list[FixRecord] = Field(
        default_factory=list, description="Fixes applied after this attempt, producing the next one."
    )


class StopReason(StrEnum):
    """Why the retry loop ended (docs/design.md §6.3)."""

    ACCEPTED = "accepted"
    ESCALATED_BY_POLICY = "escalated_by_policy"
    MAX_RETRIES = "max_retries"
    REPEATED_FINGERPRINT = "repeated_fingerprint"
    NO_PROGRESS = "no_progress"
    CONFLICTING_PATCHES = "conflicting_patches"
    PATCH_FAILED = "patch_failed"
    NO_FIX_AVAILABLE = "no_fix_available"
    INPUT_FAILED = "input_failed"  # the PDF could not be read or the classifier produced nothing


class VerificationOutcome(Strict):
    doc_id: str
    final_decision: FinalDecision
    escalation_reason: str | None = Field(
        default=None,
        description="Machine-readable reason (policy rule or governor stop); None when accepted.",
    )
    escalation_message: str | None = Field(default=None, description="The same reason in plain English.")
    stop_reason: StopReason
    policy_version: str
    attempts: list[Attempt] = Field(default_factory=list)
    final_classification: dict[str, Any] | None = None
    final_issues: list[Issue] = Field(default_factory=list)
    llm_usage: TokenUsage = Field(default_factory=TokenUsage)
    llm_calls: int = 0
    llm_cost_usd: float | None = Field(
        default=0.0,
        description="Estimated from the configured prices; cached calls cost 0; null when the model's "
        "price is unknown.",
    )
    timings: dict[str, float] = Field(default_factory=dict, description="Milliseconds by stage.")
    semantic_checks: SemanticChecks = Field(
        default=SemanticChecks.RULES_ONLY,
        description="rules_and_model when every LLM phase of the final attempt ran (PASSED or FAILED), "
        "else rules_only. Left out (outcomes stored before it existed), it is worked out from the attempts.",
    )

    @model_validator(mode="after")
    def _semantic_checks_from_attempts(self) -> VerificationOutcome:
        if "semantic_checks" not in self.model_fields_set and self.attempts:
            self.semantic_checks = semantic_checks_of(self.attempts[-1].verifier_results)
        return self

    @property
    def accepted_after_fixes(self) -> bool:
        return self.final_decision == FinalDecision.AUTO_ACCEPT and len(self.attempts) > 1
