"""Grounded-answer V1, schema and completeness: the item fits the schema; every statement cites a quote that
exists; every quote cites a chunk that exists; quotes are 10–40 words; the confidence level is the one the
count of verified quotes gives (high 5+, medium 2–4, low 1); an abstention lists the evidence it lacks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import VerifierResult
from arbiter.contracts.grounded import GroundedItem, GroundedProfile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, result
from arbiter.verifiers.grounded.codes import CODES
from arbiter.verifiers.grounded.evidence import (
    QuoteCheck,
    bundle_of,
    check_quotes,
    cited_ids,
    expected_confidence,
    profile_of,
    verified_count,
)
from arbiter.verifiers.grounded.subject import GroundedSubject


@dataclass
class GroundedV1:
    name: str = "V1"
    version: str = "1.0.0"
    output_file: str = "v1_schema_validation.json"

    def verify(self, subject: Subject, bundle: Any, profile: Any, context: VerifyContext) -> VerifierResult:
        issues = IssueList(self.name, CODES)
        if subject.parse_error is not None:
            issues.add("V1.ITEM_INVALID_JSON", subject.parse_error)
        for problem in subject.schema_problems:
            issues.add("V1.ITEM_SCHEMA_VIOLATION", f"{problem.message}.", path=problem.path)
        item = subject.item if isinstance(subject, GroundedSubject) else None
        if item is None:
            if not issues.items:  # a subject without its item and without a reason must still never pass
                issues.add("V1.ITEM_SCHEMA_VIOLATION", "The item could not be read.")
            return result(self, issues, notes=["The item did not fit the schema; later checks skip it."])
        rules = profile_of(profile)
        checks = check_quotes(item, bundle_of(bundle, item), rules)
        _ids(issues, item)
        _answer(issues, item, rules, checks)
        return result(self, issues)


def _ids(issues: IssueList, item: GroundedItem) -> None:
    for label, ids, where in (
        ("chunk", [c.chunk_id for c in item.chunks], "/chunks"),
        ("quote", [q.quote_id for q in item.answer.quotes], "/answer/quotes"),
    ):
        for dup, n in Counter(ids).items():
            if n > 1:
                issues.add("V1.DUPLICATE_ID", f'{n} {label}s share the id "{dup}".', path=where)
    chunks = {c.chunk_id for c in item.chunks}
    quotes = {q.quote_id for q in item.answer.quotes}
    for i, quote in enumerate(item.answer.quotes):
        if quote.chunk_id not in chunks:
            issues.add(
                "V1.CITED_ID_UNKNOWN",
                f'Quote {quote.quote_id} cites chunk "{quote.chunk_id}", which was not retrieved.',
                path=f"/answer/quotes/{i}/chunk_id",
            )
    for i, statement in enumerate(item.answer.statements):
        if not statement.cites:
            issues.add(
                "V1.STATEMENT_UNCITED",
                f"Statement {i + 1} cites no quote; every statement must rest on a cited quote.",
                path=f"/answer/statements/{i}/cites",
            )
        for j, cited in enumerate(statement.cites):
            if cited not in quotes:
                issues.add(
                    "V1.CITED_ID_UNKNOWN",
                    f'Statement {i + 1} cites "{cited}", which is not one of the answer\'s quotes.',
                    path=f"/answer/statements/{i}/cites/{j}",
                )


def _answer(
    issues: IssueList, item: GroundedItem, profile: GroundedProfile, checks: list[QuoteCheck]
) -> None:
    answer = item.answer
    limits = profile.thresholds
    if answer.abstained and answer.statements:
        issues.add(
            "V1.ABSTENTION_WITH_STATEMENTS",
            f"The answer abstains and also makes {len(answer.statements)} statement(s).",
            path="/answer/abstained",
        )
    if not answer.abstained and not answer.statements:
        issues.add("V1.ANSWER_EMPTY", "The answer makes no statement and does not abstain.", path="/answer")
    if answer.abstained and not [m for m in answer.missing_evidence if m.strip()]:
        issues.add(
            "V1.ABSTENTION_WITHOUT_MISSING_EVIDENCE",
            "The answer abstains without listing the evidence it could not find.",
            path="/answer/missing_evidence",
        )
    cited = cited_ids(item)
    for check in checks:
        n = len(check.quote.text.split())
        if not limits.quote_min_words <= n <= limits.quote_max_words:
            issues.add(
                "V1.QUOTE_LENGTH",
                f"Quote {check.quote.quote_id} has {n} words; quotes should have "
                f"{limits.quote_min_words} to {limits.quote_max_words}.",
                path=f"/answer/quotes/{check.index}/text",
            )
        if check.quote.quote_id not in cited:
            issues.add(
                "V1.QUOTE_UNUSED",
                f"Quote {check.quote.quote_id} is cited by no statement.",
                path=f"/answer/quotes/{check.index}",
            )
    count = verified_count(item, checks)
    expected = None if answer.abstained else expected_confidence(count, profile)
    if answer.confidence == expected or (expected is None and not answer.abstained):
        return  # an answer with no verified quote is not a confidence problem but an evidence one (V2, V4)
    shown = answer.confidence.value if answer.confidence else "none"
    want = expected.value if expected else "none"
    why = (
        "an abstention has no confidence level"
        if answer.abstained
        else f"{count} verified quote(s) give {want}"
    )
    issues.add(
        "V1.CONFIDENCE_MISMATCH",
        f"The confidence level is {shown}, but {why}.",
        path="/answer/confidence",
        fix=[{"op": "add", "path": "/answer/confidence", "value": want if expected else None}],
    )
