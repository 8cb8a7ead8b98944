"""Grounded-answer V3, traps: hedged or speculative wording in a statement of a
requirement; compliance claims; a modal changed between quote and statement (must/shall → may, a
prohibition dropped, a permission made an obligation); a number, date or amount a statement holds and its
quotes do not; instructions addressed to a model inside a retrieved chunk; a quote from a chunk scored
below the retrieval threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import VerifierResult
from arbiter.contracts.grounded import GroundedProfile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, result, skipped
from arbiter.verifiers.grounded.codes import CODES
from arbiter.verifiers.grounded.evidence import (
    QuoteCheck,
    bundle_of,
    check_quotes,
    item_of,
    profile_of,
    quotes_by_id,
)
from arbiter.verifiers.grounded.subject import GroundedSubject
from arbiter.verifiers.grounded.text import Reading, phrases_in, read


@dataclass
class GroundedV3:
    name: str = "V3"
    model_phase = False  # rules only: no language-model phase (governor.phased_of)
    version: str = "1.0.0"
    output_file: str = "v3_trap_detection.json"

    def verify(self, subject: Subject, bundle: Any, profile: Any, context: VerifyContext) -> VerifierResult:
        if not isinstance(subject, GroundedSubject) or subject.item is None:
            return skipped(self, "The item did not fit the schema (see V1).")
        item, rules = item_of(subject), profile_of(profile)
        checks = check_quotes(item, bundle_of(bundle, item), rules)
        by_id = quotes_by_id(item, checks)
        issues = IssueList(self.name, CODES)
        for i, statement in enumerate(item.answer.statements):
            quotes = [by_id[q] for q in statement.cites if q in by_id]
            _wording(issues, i, statement.text, rules)
            if quotes:
                _against_quotes(issues, i, statement.text, quotes, rules)
        for n, chunk in enumerate(item.chunks):
            found = phrases_in(chunk.text, rules.traps.injection_phrases)
            if found:
                issues.add(
                    "V3.CHUNK_INSTRUCTION",
                    f'Chunk {chunk.chunk_id} ({chunk.source}) contains text addressed to an AI model ("{found[0]}"); '
                    "the answer may have been steered by it.",
                    path=f"/chunks/{n}/text",
                )
        threshold = rules.thresholds.retrieval_threshold
        for check in checks:
            if check.chunk is not None and check.chunk.score < threshold:
                issues.add(
                    "V3.LOW_SCORE_CITATION",
                    f"Quote {check.quote.quote_id} comes from chunk {check.chunk.chunk_id}, retrieved with score "
                    f"{check.chunk.score:.2f}, below the threshold {threshold:.2f}.",
                    path=f"/answer/quotes/{check.index}/chunk_id",
                )
        return result(self, issues)


def _wording(issues: IssueList, i: int, text: str, profile: GroundedProfile) -> None:
    hedges = phrases_in(text, profile.traps.hedges)
    if hedges:
        issues.add(
            "V3.HEDGED_REQUIREMENT",
            f'Statement {i + 1} hedges ("{hedges[0]}"); a requirement is stated as its quote states it, or not at all.',
            path=f"/answer/statements/{i}/text",
        )
    claims = phrases_in(text, profile.traps.compliance_claims)
    if claims:
        issues.add(
            "V3.COMPLIANCE_CLAIM",
            f'Statement {i + 1} claims compliance ("{claims[0]}"), a legal conclusion no quote can prove.',
            path=f"/answer/statements/{i}/text",
        )


def modal_change(said: Reading, quoted: list[Reading]) -> str | None:
    """How a statement changes its quotes' force, in plain English, or None when it keeps it."""
    if any(q.prohibition for q in quoted) and not said.prohibition and not said.negated:
        return "drops the prohibition its quote states"
    if said.prohibition and not any(q.prohibition or q.negated for q in quoted):
        return "states a prohibition its quotes do not"
    if any(q.obligation for q in quoted) and not said.obligation and not said.prohibition and said.permission:
        return "turns its quote's obligation (must, shall, required) into a permission or a recommendation"
    if (
        said.obligation
        and any(q.permission for q in quoted)
        and not any(q.obligation or q.prohibition for q in quoted)
    ):
        return "states an obligation where its quotes only permit"
    return None


def _against_quotes(
    issues: IssueList, i: int, text: str, quotes: list[QuoteCheck], profile: GroundedProfile
) -> None:
    said = read(text, profile)
    quoted = [read(q.quote.text, profile) for q in quotes]
    change = modal_change(said, quoted)
    if change:
        issues.add(
            "V3.MODAL_CHANGED",
            f"Statement {i + 1} {change}.",
            path=f"/answer/statements/{i}/text",
        )
    held = set().union(*(q.numbers for q in quoted))
    extra = sorted(said.numbers - held)
    if extra:
        issues.add(
            "V3.NUMBER_NOT_IN_QUOTE",
            f"Statement {i + 1} states {', '.join(extra)}, which none of its quotes holds.",
            path=f"/answer/statements/{i}/text",
        )
