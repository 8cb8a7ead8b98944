"""Grounded-answer V2, consistency: the answer is in the question's language; when retrieved sources state
the same rule differently (another number, another force) the answer presents both; the answer's
abstention agrees with the evidence (abstaining while a retrieved chunk answers the question is as wrong as
answering with no verified, relevant evidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import VerifierResult
from arbiter.contracts.grounded import Chunk, GroundedItem, GroundedProfile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, result, skipped
from arbiter.verifiers.grounded.codes import CODES
from arbiter.verifiers.grounded.evidence import QuoteCheck, bundle_of, check_quotes, item_of, profile_of
from arbiter.verifiers.grounded.subject import GroundedSubject
from arbiter.verifiers.grounded.text import Reading, coverage, language, quantities, read, sentences, shared


@dataclass
class GroundedV2:
    name: str = "V2"
    model_phase = False  # rules only: no language-model phase (governor.phased_of)
    version: str = "1.0.0"
    output_file: str = "v2_consistency_check.json"

    def verify(self, subject: Subject, bundle: Any, profile: Any, context: VerifyContext) -> VerifierResult:
        if not isinstance(subject, GroundedSubject) or subject.item is None:
            return skipped(self, "The item did not fit the schema (see V1).")
        item, rules = item_of(subject), profile_of(profile)
        checks = check_quotes(item, bundle_of(bundle, item), rules)
        issues = IssueList(self.name, CODES)
        _language(issues, item, rules)
        _conflicts(issues, item, rules, checks)
        _abstention(issues, item, rules, checks)
        return result(self, issues)


def _language(issues: IssueList, item: GroundedItem, profile: GroundedProfile) -> None:
    asked = language(item.question.text, profile) or item.question.language
    said = " ".join(s.text for s in item.answer.statements) or " ".join(item.answer.missing_evidence)
    detected = language(said, profile) if said else None
    if item.answer.language != item.question.language or (detected is not None and detected != asked):
        issues.add(
            "V2.LANGUAGE_MISMATCH",
            f"The question is in {asked}, but the answer is in {detected or item.answer.language}.",
            path="/answer/language",
        )


def answering_sentences(item: GroundedItem, profile: GroundedProfile) -> list[tuple[Chunk, str]]:
    """Sentences of chunks above the threshold that, read with their chunk's section title (what the
    sentence is about when it does not repeat it), hold most of the question's content words."""
    question = read(item.question.text, profile).content
    floor = profile.thresholds.evidence_min_coverage
    out = []
    for chunk in item.chunks:
        if chunk.score < profile.thresholds.retrieval_threshold:
            continue
        heading = read(chunk.section, profile).content
        for sentence in sentences(chunk.text):
            if coverage(question, read(sentence, profile).content | heading) >= floor:
                out.append((chunk, sentence))
    return out


def _abstention(
    issues: IssueList, item: GroundedItem, profile: GroundedProfile, checks: list[QuoteCheck]
) -> None:
    answering = answering_sentences(item, profile)
    if item.answer.abstained:
        if answering:
            chunk, _ = answering[0]
            issues.add(
                "V2.ABSTAINED_WITH_EVIDENCE",
                f"The answer abstains, but chunk {chunk.chunk_id} ({chunk.source}) states a requirement that "
                "answers the question.",
                path="/answer/abstained",
            )
        return
    if not item.answer.statements:
        return
    question = read(item.question.text, profile).content
    relevant = [c for c in checks if c.verified and shared(question, about(c, profile))]
    if not relevant or not answering:
        why = (
            "none of its quotes is found in a retrieved chunk above the retrieval threshold and about the question"
            if not relevant
            else "no retrieved chunk above the retrieval threshold states a requirement that answers the question"
        )
        issues.add(
            "V2.ANSWERED_WITHOUT_EVIDENCE",
            f"The answer makes {len(item.answer.statements)} statement(s), but {why}; it should abstain.",
            path="/answer/statements",
        )


def about(check: QuoteCheck, profile: GroundedProfile) -> frozenset[str]:
    """What a quote is about: its own content words and its chunk's section title."""
    section = check.chunk.section if check.chunk else ""
    return read(check.quote.text, profile).content | read(section, profile).content


def _differs(a: str, b: str, ra: Reading, rb: Reading, profile: GroundedProfile) -> bool:
    """Two statements of one rule that disagree: another number of the same measure (one unit, measured
    from the same event: "30 days after discovery" and "60 days after discovery", not "60 days after the end
    of each calendar year"), or another force."""
    theirs = quantities(b, profile.stopwords)
    for mine in quantities(a, profile.stopwords):
        alike = [q for q in theirs if mine.measures_as(q)]
        if alike and all(q.value != mine.value for q in alike):
            return True
    return ra.prohibition != rb.prohibition


def _conflicts(
    issues: IssueList, item: GroundedItem, profile: GroundedProfile, checks: list[QuoteCheck]
) -> None:
    """A cited quote whose rule another retrieved chunk states differently, that chunk not cited."""
    cited_chunks = {c.quote.chunk_id for c in checks if c.found}
    floor = profile.thresholds.conflict_min_overlap
    reported: set[str] = set()
    question = read(item.question.text, profile).content
    for check in checks:
        if not check.verified:
            continue
        mine = read(check.quote.text, profile)
        topic = shared(mine.content, question)
        for other in item.chunks:
            if other.chunk_id in cited_chunks or other.chunk_id in reported:
                continue
            if other.score < profile.thresholds.retrieval_threshold:
                continue
            for sentence in sentences(other.text):
                theirs = read(sentence, profile)
                overlap = coverage(mine.content, theirs.content) if mine.content else 0.0
                same_topic = bool(topic) and shared(topic, theirs.content) == topic
                if (
                    overlap >= floor
                    and same_topic
                    and _differs(check.quote.text, sentence, mine, theirs, profile)
                ):
                    reported.add(other.chunk_id)
                    issues.add(
                        "V2.CONFLICT_NOT_PRESENTED",
                        f"Quote {check.quote.quote_id} ({check.chunk.source if check.chunk else '?'}) and chunk "
                        f"{other.chunk_id} ({other.source}) state this rule differently, and the answer cites "
                        "only the first; conflicting requirements must be presented both ways.",
                        path=f"/answer/quotes/{check.index}",
                    )
                    break
