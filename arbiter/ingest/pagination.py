"""A document's own page numbering ("Page 2 of 5", "2 | Page", "Page 2 of"), read from a page's lines.

Runs of numbering tell where documents begin and end: page k+1 of the same run continues page k, and a
page numbered 1 begins a document. A fax machine's count of the whole transmission (a line that also
names fax, from, to, ...) is left out: it runs across every document in the packet. The baseline
classifier splits where numbering restarts and V2 checks boundaries against it, so both read it here.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from arbiter.contracts import BlockType, Page

_FORMS = (
    re.compile(r"\bpage\s+(\d{1,4})\s*(?:of|/)\s*(\d{1,4})\b"),
    re.compile(r"\bpage\s+(\d{1,4})\s+of\b(?!\s*\d)"),
    re.compile(r"(?:^|\s)(\d{1,4})\s*\|\s*p\s?a\s?g\s?e\b"),
    re.compile(r"^\s*(\d{1,4})\s+of\s+(\d{1,4})\s*$"),
)
_GATES = ("page", "page", "|", "of")  # a word each form cannot match without
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class PageMark:
    """One page number printed on a page: its number, the total when printed, and the line's shape."""

    number: int
    total: int | None
    template: str  # the normalised line with every number as "#": one run of numbering shares it
    seen: str  # the line as printed (clipped), for messages

    def continued_by(self, later: PageMark) -> bool:
        """`later` is the next page of the same run of numbering."""
        same_total = self.total is None or later.total is None or self.total == later.total
        return self.template == later.template and later.number == self.number + 1 and same_total


def page_marks(lines: Iterable[tuple[str, str]], transmission_words: Sequence[str]) -> tuple[PageMark, ...]:
    """The document page numbers on a page's lines, given as (printed, normalised lowercase) pairs; lines
    naming a transmission word (a fax machine's counter) are left out."""
    marks: list[PageMark] = []
    for printed, norm in lines:
        if "page" not in norm and " of " not in norm and "p a g e" not in norm:
            continue
        for form, gate in zip(_FORMS, _GATES, strict=True):
            match = form.search(norm) if gate in norm else None
            if match is None:
                continue
            if _names_any(norm, transmission_words):
                break
            total = int(match.group(2)) if form.groups > 1 and match.group(2) else None
            number = int(match.group(1))
            if number >= 1 and (total is None or number <= total <= 9999):
                marks.append(PageMark(number, total, _DIGITS.sub("#", norm), " ".join(printed.split())[:60]))
            break
    return tuple(marks)


@lru_cache(maxsize=16)
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])(?:" + "|".join(re.escape(w) for w in words) + ")")


def _names_any(norm: str, words: Sequence[str]) -> bool:
    """Whether a line names one of the words at a word start ("sent", not the end of "consent")."""
    return bool(words) and _words_pattern(tuple(words)).search(norm) is not None


def continues(before: Iterable[PageMark], after: Iterable[PageMark]) -> tuple[PageMark, PageMark] | None:
    """A pair of marks showing the page with `after` continues the page with `before`, else None."""
    later = list(after)
    for early in before:
        for late in later:
            if early.continued_by(late):
                return early, late
    return None


def restart(marks: Iterable[PageMark]) -> PageMark | None:
    """A mark that numbers its page as the first of a document ("Page 1 of 3")."""
    return next((mark for mark in marks if mark.number == 1), None)


_NUMBER_LINE = re.compile(r"^\s*(?:page[:\s]*)?\d+\s*(?:of|/)\s*\d+\s*$|^\s*page[:\s]*\d+\s*$", re.IGNORECASE)
_RUNNING = (BlockType.HEADER, BlockType.FOOTER)


def page_fill(page: Page) -> float | None:
    """How far down the page its body text runs (0 top, 1 bottom edge), or None when the page has no line
    boxes or no size. Running headers and footers and a bare page number do not count."""
    if not page.height or not page.lines:
        return None
    running = sorted((p.start, p.end) for p in page.paragraphs if p.block_type in _RUNNING)
    starts = [start for start, _ in running]
    reach = list(accumulate((end for _, end in running), max))  # the furthest end of those up to each
    lowest: float | None = None
    for line in page.lines:
        # In a header or footer: one of the running paragraphs starting at or before it reaches past it.
        at = bisect_right(starts, line.start) - 1
        if at >= 0 and line.start < reach[at]:
            continue
        text = page.text[line.start : line.end]
        if not text.strip() or _NUMBER_LINE.match(text):
            continue
        bottom = line.box[1]
        lowest = bottom if lowest is None else min(lowest, bottom)
    if lowest is None:
        return None
    return max(0.0, min(1.0, (page.height - lowest) / page.height))
