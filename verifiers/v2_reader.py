"""V2's content rules when the profile pins a page reader (arbiter/reader): does a segment, or one page of
it, read as another type to the learned reader? The lexicon rules (v2_content.py) are the second opinion."""

from __future__ import annotations

import math

from arbiter.contracts import DocumentBundle, Segment
from arbiter.contracts.profile import Profile
from arbiter.verifiers.base import IssueList
from arbiter.verifiers.content import read_bundle
from arbiter.verifiers.content_reading import ContentReading, PageReading
from arbiter.verifiers.shares import type_shares


def span(first: int, last: int) -> str:
    """'page 3' or 'pages 3–5'."""
    return f"page {first}" if first == last else f"pages {first}–{last}"


def _judged(reading: ContentReading, profile: Profile, first: int, last: int) -> list[PageReading]:
    """The pages of a range the page reader can judge: readable, with enough words."""
    settings = profile.content.reader
    least = settings.min_words if settings is not None else 0
    return [
        page
        for number in range(first, last + 1)
        if (page := reading.pages.get(number)) is not None and page.probs is not None and page.words >= least
    ]


def segment_probs(pages: list[PageReading], types: list[str]) -> dict[str, float]:
    """A run of pages' reading as one: the normalised geometric mean of its pages' probabilities."""
    logs = {
        t: sum(math.log(max(p.probs.get(t, 0.0) if p.probs else 0.0, 1e-9)) for p in pages) / len(pages)
        for t in types
    }
    top = max(logs.values())
    exp = {t: math.exp(v - top) for t, v in logs.items()}
    total = sum(exp.values())
    return {t: v / total for t, v in exp.items()}


def _why(reading: ContentReading, page: PageReading, toward: str, against: str) -> str:
    if reading.reader is None:
        return ""
    seen = reading.reader.explain(page.text, toward, against)
    return f"page {page.page}: " + ", ".join(seen) if seen else f"page {page.page}"


def _orders(reading: ContentReading, first: int) -> bool:
    """The segment opens on a page titled as an order, a request or a consent."""
    page = reading.pages.get(first)
    return page is not None and page.orders


def segment_read_as_other(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    segment: Segment,
    first: int,
    last: int,
) -> bool:
    """The page reader reads the segment's pages, taken together, as another type, and not as its own."""
    settings = profile.content.reader
    pages = _judged(reading, profile, first, last)
    if settings is None or not pages:
        return False
    types = profile.taxonomy.document_types
    probs = segment_probs(pages, types)
    claimed = segment.dominant_type
    best = max(types, key=lambda t: (probs[t], -types.index(t)))
    if best == claimed or probs.get(claimed, 0.0) > settings.support:
        return False
    if _orders(reading, first) and claimed == profile.content.about_type:
        return False  # an order, request or consent names the tests it is about: it is not their report
    strongest = max(pages, key=lambda p: (p.probs or {}).get(best, 0.0))
    issues.add(
        "V2.CONTENT_CONTRADICTS_TYPE",
        f"Segment {segment.segment_index} ({span(first, last)}) is classified as {claimed}, but the page "
        f"reader reads its pages as {best} (probability {probs[best]:.2f}; {_why(reading, strongest, best, claimed)}) "
        f"and gives {claimed} {probs.get(claimed, 0.0):.2f}.",
        path=f"/segments/{position}/dominant_type",
        segment_index=segment.segment_index,
        document_type=claimed,
        page=first,
    )
    return True


def page_read_as_other(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    segment: Segment,
    first: int,
    last: int,
) -> None:
    """One page of a longer segment that the page reader reads as a type the segment gives (almost) no share."""
    settings = profile.content.reader
    if settings is None or first == last:
        return
    types = profile.taxonomy.document_types
    shares = type_shares(segment.types, types)
    total_share = sum(shares.values()) or 1.0
    fair = 0.5 / (last - first + 1)
    ordered = _orders(reading, first) and segment.dominant_type == profile.content.about_type
    for page in _judged(reading, profile, first, last):
        probs = page.probs or {}
        best = max(types, key=lambda t: (probs.get(t, 0.0), -types.index(t)))
        if (
            ordered
            or best == segment.dominant_type
            or probs[best] < settings.page_clear
            or probs.get(segment.dominant_type, 0.0) > settings.page_support
            or shares[best] / total_share >= fair
        ):
            continue
        issues.add(
            "V2.CONTENT_CONTRADICTS_TYPE",
            f"Page {page.page} of segment {segment.segment_index} reads as {best} to the page reader "
            f"(probability {probs[best]:.2f}; {_why(reading, page, best, segment.dominant_type)}), but the "
            f"segment is classified as {segment.dominant_type} and gives {best} a share of {shares[best]:.2f}.",
            path=f"/segments/{position}/types",
            segment_index=segment.segment_index,
            document_type=best,
            page=page.page,
        )
        return


def read_as(bundle: DocumentBundle, profile: Profile) -> str | None:
    """The type the content check reads the whole document as, whatever the answer says (the drift alarms'
    type mix, arbiter/record/drift.py): the type most of its pages read as. With a page reader, each page it
    judges (or, when it judges none, each page it read) reads as its most probable type; without one, each
    page whose lexicon score reaches `page_clear_score` (or, with none, each that scores at all) as its best
    scored type. Ties go to the larger summed probability or score, then to the taxonomy's order. None: no
    page reads as any type. The reading is V2's own (`read_bundle`, shared): nothing is read again."""
    reading = read_bundle(bundle, profile)
    types = profile.taxonomy.document_types
    if not reading.pages or not types:
        return None
    if reading.settings is not None:
        judged = _judged(reading, profile, min(reading.pages), max(reading.pages))
        pages = [p.probs or {} for p in judged] or [p.probs for p in reading.pages.values() if p.probs]
    else:
        clear = profile.content.page_clear_score
        pages = [p.scores for p in reading.pages.values() if p.total >= clear]
        pages = pages or [p.scores for p in reading.pages.values() if p.total]
    count: dict[str, int] = {}
    weight: dict[str, float] = {}
    for page in pages:
        best = max(types, key=lambda t: (page.get(t, 0.0), -types.index(t)))
        if page.get(best, 0.0) > 0:
            count[best] = count.get(best, 0) + 1
            weight[best] = weight.get(best, 0.0) + page[best]
    if not count:
        return None
    return max(count, key=lambda t: (count[t], weight[t], -types.index(t)))
