"""Where each quote of an answer is in the retrieved chunks, and which quotes count as verified.

Shared by V1 (the confidence level counts verified quotes), V2, V3 and V4. A quote is *verified* when it
is found in the chunk it cites — verbatim, or verbatim but for spacing, case and hyphens (the medical
V4's locator, verifiers/textmatch.py) — and that chunk scored at least the retrieval threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.contracts import DocumentBundle
from arbiter.contracts.grounded import Chunk, Confidence, GroundedItem, GroundedProfile, Quote
from arbiter.verifiers.grounded.subject import GroundedSubject
from arbiter.verifiers.textmatch import Match, PageIndex


@dataclass(frozen=True)
class QuoteCheck:
    index: int  # position in answer.quotes
    quote: Quote
    chunk: Chunk | None  # the chunk it cites (None: no such chunk)
    page: int | None  # that chunk's page in the context bundle
    exact: bool  # a plain substring of the chunk's text
    match: Match | None  # where the locator found it in that chunk (normalised)
    elsewhere: tuple[str, ...]  # other chunks where it is found instead
    above_threshold: bool

    @property
    def found(self) -> bool:
        return self.match is not None

    @property
    def verified(self) -> bool:
        return self.found and self.above_threshold


def item_of(subject: object) -> GroundedItem:
    """The subject's item; a subject of another kind is a wiring fault (the verifier crashes: ERRORED)."""
    if not isinstance(subject, GroundedSubject) or subject.item is None:
        raise TypeError("a grounded-answer verifier was given a subject that is not a readable grounded item")
    return subject.item


def profile_of(profile: object) -> GroundedProfile:
    if not isinstance(profile, GroundedProfile):
        raise TypeError("a grounded-answer verifier was given another kind's profile")
    return profile


def bundle_of(bundle: object, item: GroundedItem) -> DocumentBundle:
    if not isinstance(bundle, DocumentBundle) or len(bundle.pages) != len(item.chunks):
        raise TypeError("a grounded-answer verifier was given a context bundle that is not the item's chunks")
    return bundle


def check_quotes(item: GroundedItem, bundle: DocumentBundle, profile: GroundedProfile) -> list[QuoteCheck]:
    """Every quote of the answer located in its cited chunk (and, when not there, in the others)."""
    index = PageIndex.shared(bundle)
    pages = {chunk.chunk_id: i + 1 for i, chunk in reversed(list(enumerate(item.chunks)))}
    threshold = profile.thresholds.retrieval_threshold
    checks = []
    for i, quote in enumerate(item.answer.quotes):
        page = pages.get(quote.chunk_id)
        chunk = item.chunks[page - 1] if page is not None else None
        match = index.find(quote.text, page) if page is not None and quote.text.strip() else None
        elsewhere: tuple[str, ...] = ()
        if match is None and quote.text.strip():
            elsewhere = tuple(
                c.chunk_id
                for n, c in enumerate(item.chunks, 1)
                if n != page and index.contains(quote.text, n)
            )
        checks.append(
            QuoteCheck(
                index=i,
                quote=quote,
                chunk=chunk,
                page=page,
                exact=chunk is not None and bool(quote.text) and quote.text in chunk.text,
                match=match,
                elsewhere=elsewhere,
                above_threshold=chunk is not None and chunk.score >= threshold,
            )
        )
    return checks


def cited_ids(item: GroundedItem) -> set[str]:
    return {quote_id for statement in item.answer.statements for quote_id in statement.cites}


def verified_count(item: GroundedItem, checks: list[QuoteCheck]) -> int:
    """Quotes that are verified and cited by at least one statement."""
    cited = cited_ids(item)
    return sum(1 for c in checks if c.verified and c.quote.quote_id in cited)


def expected_confidence(count: int, profile: GroundedProfile) -> Confidence | None:
    """The level for a count of verified quotes: high 5+, medium 2–4, low 1, none for 0."""
    bands = profile.thresholds
    if count >= bands.high_min_quotes:
        return Confidence.HIGH
    if count >= bands.medium_min_quotes:
        return Confidence.MEDIUM
    if count >= 1:
        return Confidence.LOW
    return None


def quotes_by_id(item: GroundedItem, checks: list[QuoteCheck]) -> dict[str, QuoteCheck]:
    """The first quote with each id (a duplicate id is V1's finding)."""
    out: dict[str, QuoteCheck] = {}
    for check in checks:
        out.setdefault(check.quote.quote_id, check)
    return out
