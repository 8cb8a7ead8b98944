"""Where a V3 trap's words are on the page, as the issue's highlight: the review app draws it in pink.

A rule matches normalised text (textmatch); the span is mapped back to the page's own characters and
boxes. An injected instruction is marked as its whole sentence, so the reviewer sees all of it."""

from __future__ import annotations

import re

from arbiter.contracts import Highlight
from arbiter.verifiers.span_boxes import boxes_for_span
from arbiter.verifiers.textmatch import Match, PageIndex

# A sentence ends at ".", "!" or "?" before whitespace, or at a blank line; looked for this far around a match.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n")
SENTENCE_REACH = 400


def as_highlight(match: Match | None) -> Highlight | None:
    if match is None:
        return None
    return Highlight(
        page=match.page, start=match.start, end=match.end, boxes=list(match.boxes), score=match.score
    )


def normalised_span(index: PageIndex, page: int, found: re.Match[str]) -> Highlight | None:
    """The highlight of a regex match over index.text_of(page)."""
    return as_highlight(index.span(page, found.start(), found.end()))


def sentence(index: PageIndex, page: int, found: re.Match[str]) -> Highlight | None:
    """The highlight of the whole sentence holding a regex match over index.text_of(page)."""
    match = index.span(page, found.start(), found.end())
    source = index.page(page)
    if match is None or source is None:
        return as_highlight(match)
    text = source.text
    reach = max(0, match.start - SENTENCE_REACH)
    ends = list(_SENTENCE_END.finditer(text, reach, match.start))
    start = ends[-1].end() if ends else match.start
    while start < match.start and text[start].isspace():
        start += 1
    after = _SENTENCE_END.search(text, match.end, min(len(text), match.end + SENTENCE_REACH))
    end = match.end
    if after is not None:  # through the full stop, or up to the blank line
        end = after.start() + (text[after.start()] in ".!?")
    boxes = list(boxes_for_span(source, start, end))
    return Highlight(page=page, start=start, end=end, boxes=boxes, score=match.score)


def words(index: PageIndex, page: int, text: str) -> Highlight | None:
    """The highlight of some words of the page (a title block), where they are found on it."""
    return as_highlight(index.find(text.strip(), page))
