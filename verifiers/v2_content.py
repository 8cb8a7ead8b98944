"""V2's content rules: does the answer agree with what the pages themselves say (verifiers/content.py)?

Three questions, each a MAJOR that no fix may touch: does a segment's text read as the type it is given;
do its boundaries follow the documents' own structure (page numbering, titles, continuation marks); and
did the primary itself settle the type (its confidence, a tie between shares).
"""

from __future__ import annotations

from itertools import pairwise

from arbiter.contracts import ClassificationOutput, DocumentBundle, Segment
from arbiter.contracts.profile import Profile
from arbiter.ingest.pagination import PageMark, continues, restart
from arbiter.verifiers.base import IssueList
from arbiter.verifiers.content import read_bundle
from arbiter.verifiers.content_reading import ContentReading, PageReading
from arbiter.verifiers.content_text import describe_cues
from arbiter.verifiers.shares import round_to_one, type_shares
from arbiter.verifiers.v2_reader import page_read_as_other, segment_read_as_other
from arbiter.verifiers.v2_reader import span as _span

# What these rules report is a reading of the text, which a reviewer's judgement overrides: the review
# app shows them on a correction as warnings, never as reasons it cannot be saved.
JUDGEMENT_CODES = frozenset(
    {
        "V2.CONTENT_CONTRADICTS_TYPE",
        "V2.BOUNDARY_INSIDE_DOCUMENT",
        "V2.SEGMENT_SPANS_DOCUMENTS",
        "V2.PRIMARY_LOW_CONFIDENCE",
        "V2.PRIMARY_TYPE_TIE",
    }
)


def check_content(
    issues: IssueList, model: ClassificationOutput, bundle: DocumentBundle, profile: Profile
) -> None:
    """The content rules on a classification whose page ranges are sound (no overlaps, within the document)."""
    reading = read_bundle(bundle, profile)
    ordered = sorted(enumerate(model.segments), key=lambda item: item[1].start_page)
    for position, segment in ordered:
        first, last = segment.start_page, min(segment.end_page, bundle.total_pages)
        if first > last:
            continue
        settings = profile.content.reader
        found = False
        if reading.settings is not None:
            found = segment_read_as_other(issues, reading, profile, position, segment, first, last)
            if not found:
                count = len(issues.items)
                page_read_as_other(issues, reading, profile, position, segment, first, last)
                found = len(issues.items) > count
        # Without a reader the lexicons decide; with one, they are a second opinion when the profile says so.
        lexicons = not found and (settings is None or settings.lexicons_too)
        if lexicons and not _segment_reads_as_other(issues, reading, profile, position, segment, first, last):
            _page_reads_as_other(issues, reading, profile, position, segment, first, last)
        _spans_documents(issues, reading, profile, position, segment, first, last, bundle.total_pages)
    for (_, before), (position, after) in pairwise(ordered):
        _boundary_inside_document(issues, reading, profile, position, before, after, bundle.total_pages)


def _segment_reads_as_other(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    segment: Segment,
    first: int,
    last: int,
) -> bool:
    content = profile.content
    types = profile.taxonomy.document_types
    scores = reading.scores(first, last)
    total = sum(scores.values())
    if not total:
        return False
    claimed = segment.dominant_type
    best = max(types, key=lambda t: (scores.get(t, 0.0), -types.index(t)))
    own = scores.get(claimed, 0.0)
    if (
        best == claimed
        or scores[best] < content.clear_score
        or scores[best] < content.clear_share * total
        or own > content.support_share * total
    ):
        return False
    seen = describe_cues(reading.cues(first, last, best))
    if own:
        support = f"Only {describe_cues(reading.cues(first, last, claimed, 2))} reads as {claimed}."
    else:
        support = f"Nothing on these pages reads as {claimed}."
    issues.add(
        "V2.CONTENT_CONTRADICTS_TYPE",
        f"Segment {segment.segment_index} ({_span(first, last)}) is classified as {claimed}, but its pages "
        f"read as {best} ({seen}). {support}",
        path=f"/segments/{position}/dominant_type",
        segment_index=segment.segment_index,
        document_type=claimed,
        page=first,
    )
    return True


def _page_reads_as_other(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    segment: Segment,
    first: int,
    last: int,
) -> None:
    """A page of a longer segment that clearly reads as a type the segment gives (almost) no share."""
    if first == last:
        return
    content = profile.content
    types = profile.taxonomy.document_types
    shares = type_shares(segment.types, types)
    total_share = sum(shares.values()) or 1.0
    fair = 0.5 / (last - first + 1)  # half a page's worth of the segment
    for number in range(first, last + 1):
        page = reading.pages.get(number)
        if page is None or not page.total:
            continue
        best = page.best(types)
        if best is None or best == segment.dominant_type:
            continue
        score, own = page.scores[best], page.scores.get(segment.dominant_type, 0.0)
        if (
            score < content.page_clear_score
            or score < content.clear_share * page.total
            or own > content.support_share * page.total
            or shares[best] / total_share >= fair
        ):
            continue
        seen = describe_cues(reading.cues(number, number, best))
        issues.add(
            "V2.CONTENT_CONTRADICTS_TYPE",
            f"Page {number} of segment {segment.segment_index} reads as {best} ({seen}), but the segment is "
            f"classified as {segment.dominant_type} and gives {best} a share of {shares[best]:.2f}.",
            path=f"/segments/{position}/types",
            segment_index=segment.segment_index,
            document_type=best,
            page=number,
        )
        return


def _spans_documents(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    segment: Segment,
    first: int,
    last: int,
    total_pages: int,
) -> None:
    """A segment inside which a new document starts: numbering restarts, a new title appears, or (with a
    start reader) a page reads as a beginning."""
    settings = profile.content.reader
    new_at = settings.start_new if settings is not None and settings.starts is not None else None
    starts: list[str] = []
    opening = reading.pages.get(first)
    titles = {opening.title} if opening is not None and opening.title else set()
    for number in range(first + 1, last + 1):
        page, previous = reading.pages.get(number), reading.pages.get(number - 1)
        if page is None or previous is None:
            continue
        if _numbering_joins(previous, page, total_pages) or page.continuation:
            continue
        mark = restart(page.marks)
        if mark is not None:
            starts.append(f'page {number} starts its own page numbering ("{mark.seen}")')
        elif page.title and page.title not in titles and page.title != previous.title:
            starts.append(f'page {number} has a new title ("{page.title_seen}")')
        elif page.start is not None and new_at is not None and page.start >= new_at:
            seen = "; ".join(page.start_why) or "its opening lines"
            starts.append(
                f"page {number} reads as the start of a document (start reader {page.start:.2f}: {seen})"
            )
        if page.title:
            titles.add(page.title)
    if not starts:
        return
    issues.add(
        "V2.SEGMENT_SPANS_DOCUMENTS",
        f"Segment {segment.segment_index} ({_span(first, last)}) holds more than one document: "
        f"{'; '.join(starts)}. A new document there needs a segment boundary.",
        path=f"/segments/{position}",
        segment_index=segment.segment_index,
        page=int(starts[0].split()[1]),
    )


def _own_marks(page: PageReading, total_pages: int) -> tuple[PageMark, ...]:
    """A page's numbering, less marks that may be the whole file's: page k numbered k (of the file's page
    count, or of nothing). Record systems and scanners stamp every page of a packet that way, across all
    its documents."""
    return tuple(m for m in page.marks if not (m.number == page.page and m.total in (None, total_pages)))


def _numbering_joins(
    earlier: PageReading, later: PageReading, total_pages: int
) -> tuple[PageMark, PageMark] | None:
    """Marks by which `later` continues the page numbering of `earlier`, or None. A run that numbers each page
    by its place in the file ("Page k of N", N the file's pages) is either one document's own numbering or a
    stamp across a packet: it joins the two pages unless `later` shows the start of a new document (a title
    of its own, numbering that restarts), which in a stamped packet is where one document ends."""
    own = continues(_own_marks(earlier, total_pages), _own_marks(later, total_pages))
    if own is not None or _starts_document(earlier, later):
        return own
    return continues(earlier.marks, later.marks)


def _boundary_inside_document(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    position: int,
    before: Segment,
    after: Segment,
    total_pages: int,
) -> None:
    """A boundary between two pages that one document's own structure joins."""
    last, first = before.end_page, after.start_page
    if first != last + 1:
        return
    earlier, later = reading.pages.get(last), reading.pages.get(first)
    if earlier is None or later is None:
        return
    settings = profile.content.reader
    keep = settings.start_keep if settings is not None else 1.0
    settings_continue = settings.start_continue if settings is not None else 0.0
    pair = _numbering_joins(earlier, later, total_pages)
    if pair is not None:
        why = f'page {first} continues the page numbering of page {last} ("{pair[0].seen}", then "{pair[1].seen}")'
    elif later.continuation and restart(later.marks) is None and not later.title:
        why = f'page {first} is marked as a continuation ("{later.continuation}")'
    elif (
        before.dominant_type == after.dominant_type
        and not _starts_document(earlier, later)
        and (later.start is None or later.start < keep)
    ):
        # Two documents of one type in a row need something that shows where the second begins: a title,
        # numbering that restarts, or (with a start reader) a page that reads as a beginning.
        why = (
            f"both sides are {after.dominant_type} and nothing on page {first} starts a new document "
            "(no title of its own, no page numbering that restarts"
            + (
                f"; the start reader gives a new document there {later.start:.2f}"
                if later.start is not None
                else ""
            )
            + ")"
        )
    elif later.start is not None and later.start < settings_continue and not _starts_document(earlier, later):
        seen = "; ".join(later.start_why) or "its opening lines"
        why = (
            f"page {first} reads as the continuation of page {last} (the start reader gives a new document there "
            f"{later.start:.2f}: {seen})"
        )
    else:
        return
    issues.add(
        "V2.BOUNDARY_INSIDE_DOCUMENT",
        f"Segment {after.segment_index} starts on page {first}, but {why}: the boundary between segments "
        f"{before.segment_index} and {after.segment_index} splits one document.",
        path=f"/segments/{position}/start_page",
        segment_index=after.segment_index,
        page=first,
    )


def _starts_document(earlier: PageReading, later: PageReading) -> bool:
    """Whether a page shows the start of a new document: its own title, or page numbering that restarts.
    (A change of running header alone is not enough: ingestion calls any line in the top margin a header,
    and the second page of a form often starts with fields there.)"""
    return bool(later.title) or restart(later.marks) is not None


def check_primary_doubt(issues: IssueList, model: ClassificationOutput, profile: Profile) -> None:
    """The primary's own doubt: a dominant type it gives low confidence, or shares that do not settle it."""
    tolerances = profile.tolerances
    types = profile.taxonomy.document_types
    for position, segment in enumerate(model.segments):
        entry = next((t for t in segment.types if t.document_type == segment.dominant_type), None)
        if entry is not None and entry.confidence < tolerances.min_dominant_confidence:
            issues.add(
                "V2.PRIMARY_LOW_CONFIDENCE",
                f"The primary model is unsure of segment {segment.segment_index}: it gives its main type "
                f"{segment.dominant_type} a confidence of {entry.confidence:.2f}, below the "
                f"{tolerances.min_dominant_confidence:.2f} this profile requires.",
                path=f"/segments/{position}/types/{segment.types.index(entry)}/confidence",
                segment_index=segment.segment_index,
                document_type=segment.dominant_type,
            )
        given = type_shares(segment.types, types)
        # Judged on the shares as the sum fix would write them, so normalising cannot hide a tie.
        rounded = round_to_one([given[t] for t in types])
        if rounded is None:
            continue
        shares = dict(zip(types, rounded, strict=True))
        ranked = sorted(types, key=lambda t: (-shares[t], types.index(t)))
        top, second = ranked[0], ranked[1]
        if shares[second] <= 0 or shares[top] - shares[second] > tolerances.dominant_margin + 1e-9:
            continue
        issues.add(
            "V2.PRIMARY_TYPE_TIE",
            f"The primary model did not settle what segment {segment.segment_index} is: {top} "
            f"({shares[top]:.2f}) and {second} ({shares[second]:.2f}) are within "
            f"{tolerances.dominant_margin:.2f} of each other.",
            path=f"/segments/{position}/types",
            segment_index=segment.segment_index,
            document_type=top,
        )
