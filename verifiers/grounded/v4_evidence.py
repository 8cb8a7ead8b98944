"""Grounded-answer V4, evidence: each quote is found verbatim in the chunk it cites (the medical V4's
locator, verifiers/textmatch.py, with spans) and is about the question; each statement is supported by its
own quotes — offline, by content words, numbers, negation and modality. With a language model configured, the
entailment phase (entailment.py) then asks it whether each statement's verified quotes entail it; it can only
add findings, and an unusable answer makes V4 ERRORED.

The only fixes are those that cannot change what the answer says: a quote re-copied from its chunk when it
differs only in spacing, case or hyphens, and a quote's offsets set to where it is. An unsupported
statement or a quote that is not in its chunk is never fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import Highlight, VerifierResult
from arbiter.contracts.grounded import GroundedItem, GroundedProfile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, penalty_score, skipped
from arbiter.verifiers.grounded.codes import CODES
from arbiter.verifiers.grounded.entailment import entailment_phase
from arbiter.verifiers.grounded.evidence import (
    QuoteCheck,
    bundle_of,
    check_quotes,
    item_of,
    profile_of,
    quotes_by_id,
)
from arbiter.verifiers.grounded.subject import GroundedSubject
from arbiter.verifiers.grounded.text import coverage, read, shared
from arbiter.verifiers.grounded.v2_consistency import about
from arbiter.verifiers.grounded.v3_traps import modal_change
from arbiter.verifiers.llm_phase import finish


@dataclass
class GroundedV4:
    name: str = "V4"
    version: str = "1.1.0"
    output_file: str = "v4_evidence_quality.json"

    def verify(self, subject: Subject, bundle: Any, profile: Any, context: VerifyContext) -> VerifierResult:
        if not isinstance(subject, GroundedSubject) or subject.item is None:
            return skipped(self, "The item did not fit the schema (see V1).")
        item, rules = item_of(subject), profile_of(profile)
        checks = check_quotes(item, bundle_of(bundle, item), rules)
        issues = IssueList(self.name, CODES)
        question = read(item.question.text, rules).content
        for check in checks:
            _locate(issues, check)
            if (
                check.found
                and len(shared(question, about(check, rules))) < rules.thresholds.question_min_overlap
            ):
                issues.add(
                    "V4.QUOTE_OFF_QUESTION",
                    f"Quote {check.quote.quote_id} (and its chunk's section) shares no content word with the "
                    "question; it does not address it.",
                    path=f"/answer/quotes/{check.index}/text",
                )
        _support(issues, item, checks, rules)
        phase = entailment_phase(context, issues, item, checks)
        found = sum(c.found for c in checks)
        notes = [f"{found} of {len(checks)} quote(s) found in their cited chunks."]
        return finish(self, issues, phase, score=penalty_score, notes=notes)


def _locate(issues: IssueList, check: QuoteCheck) -> None:
    quote, where = check.quote, f"/answer/quotes/{check.index}"
    if check.chunk is None:
        return  # V1.CITED_ID_UNKNOWN
    if check.match is None:
        also = f"; it is in chunk {', '.join(check.elsewhere)} instead" if check.elsewhere else ""
        issues.add(
            "V4.QUOTE_NOT_IN_CHUNK",
            f"Quote {quote.quote_id} is not found in chunk {check.chunk.chunk_id} ({check.chunk.source}){also}.",
            path=f"{where}/text",
        )
        return
    span = check.chunk.text[check.match.start : check.match.end]
    highlight = Highlight(page=check.page or 1, start=check.match.start, end=check.match.end)
    if not check.exact:
        issues.add(
            "V4.QUOTE_SPACING",
            f"Quote {quote.quote_id} matches chunk {check.chunk.chunk_id} only after spacing, case or hyphens "
            "are normalised; it is re-copied from the chunk.",
            path=f"{where}/text",
            fix=[
                {"op": "replace", "path": f"{where}/text", "value": span},
                {"op": "add", "path": f"{where}/start", "value": check.match.start},
                {"op": "add", "path": f"{where}/end", "value": check.match.end},
            ],
            highlight=highlight,
        )
        return
    given = (quote.start, quote.end)
    if given != (None, None) and check.chunk.text[quote.start or 0 : quote.end or 0] != quote.text:
        at = check.chunk.text.find(quote.text)
        issues.add(
            "V4.QUOTE_OFFSETS",
            f"Quote {quote.quote_id}'s offsets {given[0]}–{given[1]} do not hold it; it is at {at}–{at + len(quote.text)}.",
            path=where,
            fix=[
                {"op": "add", "path": f"{where}/start", "value": at},
                {"op": "add", "path": f"{where}/end", "value": at + len(quote.text)},
            ],
            highlight=highlight,
        )


def _support(
    issues: IssueList, item: GroundedItem, checks: list[QuoteCheck], profile: GroundedProfile
) -> None:
    by_id = quotes_by_id(item, checks)
    for i, statement in enumerate(item.answer.statements):
        quotes = [by_id[q] for q in statement.cites if q in by_id]
        if not quotes:
            continue  # V1.STATEMENT_UNCITED or V1.CITED_ID_UNKNOWN
        gaps = support_gaps(statement.text, [q.quote.text for q in quotes], profile)
        if gaps:
            issues.add(
                "V4.STATEMENT_UNSUPPORTED",
                f"Statement {i + 1} is not supported by its quotes: {'; '.join(gaps)}.",
                path=f"/answer/statements/{i}",
            )


def support_gaps(statement: str, quotes: list[str], profile: GroundedProfile) -> list[str]:
    """Why a statement is not supported by the texts of its quotes, in plain English; empty when it is.

    V4's offline support decision: at least `support_min_coverage` of the statement's content words in its
    quotes, no number its quotes lack, the negation its quotes state kept, and their force (must, may, must
    not) unchanged. A statement with no quote is not judged here (empty list): V1 reports it uncited.
    """
    if not quotes:
        return []
    said = read(statement, profile)
    quoted = [read(q, profile) for q in quotes]
    held = set().union(*(q.content for q in quoted))
    share = coverage(said.content, held)
    gaps = []
    if share < profile.thresholds.support_min_coverage:
        missing = sorted(said.content - shared(said.content, held))[:5]
        gaps.append(
            f"only {share:.0%} of its content words are in its quotes (missing: {', '.join(missing)})"
        )
    extra = said.numbers - set().union(*(q.numbers for q in quoted))
    if extra:
        gaps.append(f"its number(s) {', '.join(sorted(extra))} are not in its quotes")
    if said.negated and not any(q.negated for q in quoted):
        gaps.append("it negates what its quotes state")
    elif not said.negated and all(q.negated for q in quoted):
        gaps.append("it drops the negation its quotes state")
    change = modal_change(said, quoted)
    if change:
        gaps.append(f"it {change}")
    return gaps
