"""The words Arbiter really writes, read from where they are defined, so seeded data is data a run could
have produced: document types from the default profile's taxonomy, issue codes (with their severity and
fixability) from verifiers/codes.py, decision rules and the policy version from the profile, stop reasons
from the contracts."""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.contracts import FinalDecision, Severity, StopReason
from arbiter.contracts.profile import load_profile
from arbiter.verifiers.codes import CODES as CATALOGUE  # re-exported: seeding reads severities from it

__all__ = [
    "ACCEPT_RULES",
    "BLOCKER_CODES",
    "CATALOGUE",
    "DOC_TYPES",
    "ESCALATIONS",
    "FIXABLE_CODES",
    "MAJOR_CODES",
    "POLICY_VERSION",
    "REASONS",
    "RETRY_RULE",
    "RULE_REASONS",
    "Escalation",
]

PROFILE = load_profile()
DOC_TYPES: tuple[str, ...] = tuple(PROFILE.taxonomy.document_types)
POLICY_VERSION: str = PROFILE.arbiter.policy_version
RULE_REASONS: dict[str, str] = {rule.name: rule.reason for rule in PROFILE.arbiter.rules}
ACCEPT_RULES: tuple[str, ...] = tuple(
    r.name for r in PROFILE.arbiter.rules if r.decision == FinalDecision.AUTO_ACCEPT
)
RETRY_RULE: str = next(r.name for r in PROFILE.arbiter.rules if r.decision == "AUTO_RETRY")


def _codes(severity: Severity, *, fixable: bool) -> tuple[str, ...]:
    """Rule-based codes (no model, no crash) of this severity and fixability, in catalogue order."""
    return tuple(
        code
        for code, spec in CATALOGUE.items()
        if spec.severity == severity
        and spec.auto_fixable == fixable
        and not code.endswith(("_ERROR", ".INVALID_JSON", ".SCHEMA_VIOLATION"))
        and ".LLM_" not in code
    )


BLOCKER_CODES = _codes(Severity.BLOCKER, fixable=False)
MAJOR_CODES = _codes(Severity.MAJOR, fixable=False)
FIXABLE_CODES = _codes(Severity.MAJOR, fixable=True)


@dataclass(frozen=True)
class Escalation:
    """One way a document is escalated: the last rule that fired, why the loop stopped, and its findings."""

    rule: str
    stop: StopReason
    codes: tuple[str, ...]

    @property
    def reason(self) -> str:
        """The escalation_reason Arbiter records: the rule's name for a policy escalation, else the stop's."""
        return self.rule if self.stop == StopReason.ESCALATED_BY_POLICY else self.stop.value


ESCALATIONS: tuple[Escalation, ...] = (
    Escalation("non_fixable_major", StopReason.ESCALATED_BY_POLICY, ("V4.SNIPPET_NOT_FOUND",)),
    Escalation("blocker_present", StopReason.ESCALATED_BY_POLICY, ("V3.ROUTINE_VENDOR_GENOMIC",)),
    Escalation(RETRY_RULE, StopReason.MAX_RETRIES, ("V2.MIXTURE_SHARES_SUM", "V1.PAGE_COUNT_MISMATCH")),
    Escalation(RETRY_RULE, StopReason.NO_PROGRESS, ("V2.MIXTURE_MISMATCH", "V4.SNIPPET_WRONG_PAGE")),
    Escalation(
        "several_non_fixable_major",
        StopReason.ESCALATED_BY_POLICY,
        ("V2.DOMINANT_TYPE_MISMATCH", "V4.SNIPPET_OUTSIDE_SEGMENT"),
    ),
)
# The escalation reasons packets carry: every story's reason, plus the input failures a run records.
REASONS: tuple[str, ...] = (*dict.fromkeys(e.reason for e in ESCALATIONS), "pdf_encrypted")
