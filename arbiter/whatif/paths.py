"""Which path each recorded document takes under a candidate profile, and what the candidate changes: the
profile sections that differ, the verifiers whose rules must run again, and whether a focused re-check
suffices. See redecide.py, focused.py and reverify.py for the paths themselves.

- re-decided: the candidate changes only the policy ([arbiter], [retry], [sampling]) and every attempt it
  needs was recorded. The stored issues of each attempt are decided again by arbiter.decide.policy.decide and the
  governor's stop rules (no progress, max retries, and the recorded stop when the same fixes were planned).
- re-decided with a focused re-check: the only verifier settings that differ are thresholds of a rule that
  reads the classification alone (V2's primary doubt); that rule runs again on each stored version.
- re-verified: the candidate changes what a verifier checks (taxonomy, tolerances, traps, vendors,
  content), or it asks for a fixed version the run never verified. The real retry governor runs again
  from the stored bundle and the primary's stored classification, with no language model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import Decision
from arbiter.contracts.profile import Profile
from arbiter.whatif.history import Recorded

ACCEPT, RETRY, ESCALATE = (
    Decision.AUTO_ACCEPT.value,
    Decision.AUTO_RETRY.value,
    Decision.ESCALATE_TO_SME.value,
)
REDECIDED = "re-decided from stored issues"
REVERIFIED = "re-verified (rules only) from the stored bundle"
NOT_VERIFIED = "kept: the document was never verified (input failure)"
KEPT = (
    "kept: the candidate needs a version that was never verified, and no bundle or classification is stored"
)
STORED_ONLY = "re-decided from stored issues (no bundle or classification stored to re-verify)"
REFOCUSED = "re-decided from stored issues, the changed V2 primary-doubt rule re-run on each stored version"

# The profile sections each verifier's rules (and prompts) read; [baseline] is the classifier's only.
VERIFIER_SECTIONS: dict[str, tuple[str, ...]] = {
    "V1": ("taxonomy",),
    "V2": ("taxonomy", "tolerances", "content", "traps"),
    "V3": ("taxonomy", "tolerances", "traps", "vendors", "content"),
    "V4": ("taxonomy", "tolerances", "content", "traps"),
}  # What the language-model phases' prompts read: a change there makes the recorded model findings stale.
LLM_SECTIONS = ("taxonomy", "content")
# Thresholds of a rule that reads only the classification (arbiter.verifiers.v2_content.check_primary_doubt reads
# the segments' types, confidences and shares): checked again on each stored version, nothing else re-run.
FOCUSED_FIELDS = frozenset({"min_dominant_confidence", "dominant_margin"})


def changed_sections(current: Profile, candidate: Profile) -> list[str]:
    """The profile sections whose settings differ (name and version left out)."""
    names = [name for name in Profile.model_fields if name not in ("name", "version")]
    return [name for name in names if getattr(current, name) != getattr(candidate, name)]


# [tolerances] is read field by field: a change to one of these re-runs only the verifiers that read it.
TOLERANCE_READERS: dict[str, tuple[str, ...]] = {
    "share_sum": ("V2",),
    "mixture_match": ("V2",),
    "dominant_tie": ("V2",),
    "min_dominant_confidence": ("V2",),
    "dominant_margin": ("V2",),
    "min_snippet_chars": ("V4",),
    "fuzzy_match_threshold": ("V3", "V4"),
}


def verifiers_to_rerun(current: Profile, candidate: Profile) -> set[str]:
    """The verifiers whose settings differ between the profiles (their rules must run again)."""
    out: set[str] = set()
    for section in changed_sections(current, candidate):
        if section == "tolerances":
            for name in type(current.tolerances).model_fields:
                if getattr(current.tolerances, name) != getattr(candidate.tolerances, name):
                    out.update(TOLERANCE_READERS.get(name, VERIFIER_SECTIONS))
            continue
        out.update(name for name, sections in VERIFIER_SECTIONS.items() if section in sections)
    return out


@dataclass(slots=True)
class Simulated:
    """A document's decision under one profile."""

    decision: str  # AUTO_ACCEPT or ESCALATE_TO_SME
    rule: str  # the accepting rule, or the escalation reason (a rule or a stop)
    reason: str | None  # escalation_reason as the run would record it (None when accepted)
    attempt: int  # index of the deciding attempt (0: the primary's own answer)
    path: str
    classification: dict[str, Any] | None = None  # the decided version, when re-verified
    needs_llm: bool = False
    llm_reused: bool = False


def focused_only(current: Profile, candidate: Profile) -> bool:
    """The candidate's verifier changes are all thresholds of a focused rule."""
    verifying = {s for sections in VERIFIER_SECTIONS.values() for s in sections}
    changed = [s for s in changed_sections(current, candidate) if s in verifying]
    if changed != ["tolerances"]:
        return False
    fields = {
        name
        for name in type(current.tolerances).model_fields
        if getattr(current.tolerances, name) != getattr(candidate.tolerances, name)
    }
    return bool(fields) and fields <= FOCUSED_FIELDS


def current_of(doc: Recorded) -> Simulated:
    """What was recorded, in the simulation's terms."""
    attempts = doc.outcome.get("attempts") or []
    last = attempts[-1] if attempts else {}
    accepted = doc.decision == ACCEPT and not doc.error
    rule = (last.get("decision") or {}).get("rule") if accepted else doc.reason
    return Simulated(
        ACCEPT if accepted else ESCALATE,
        rule or doc.reason or doc.decision,
        None if accepted else doc.reason,
        max(len(attempts) - 1, 0),
        "recorded",
        classification=None,  # read when judged (history.full_outcome)
    )
