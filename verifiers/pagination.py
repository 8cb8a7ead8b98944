"""A document's own page numbering ("Page 2 of 5", "2 | Page", "Page 2 of"), read from every line of a page.

Runs of numbering tell where documents begin and end: page k+1 of the same run continues page k, and a
run that restarts at 1 begins a new document. A fax machine's count of the whole transmission (a line
that also names fax, from, to, ...) is left out: it runs across every document in the packet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arbiter.profile import Profile
from verifiers.textnorm import normalize_plain

_FORMS = (
    re.compile(r"\bpage\s+(\d{1,4})\s*(?:of|/)\s*(\d{1,4})\b"),
    re.compile(r"\bpage\s+(\d{1,4})\s+of\b(?!\s*\d)"),
    re.compile(r"(?:^|\s)(\d{1,4})\s*\|\s*p\s?a\s?g\s?e\b"),
    re.compile(r"^\s*(\d{1,4})\s+of\s+(\d{1,4})\s*$"),
)
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class PageMark:
    """One page number printed on a page: its number, the total when printed, and the line's shape."""

    number: int
    total: int | None
    template: str  # the line with every number replaced by "#": one run of numbering shares it
    seen: str  # the line as printed (clipped)

    def continued_by(self, later: PageMark) -> bool:
        """`later` is the next page of the same run of numbering."""
        same_total = self.total is None or later.total is None or self.total == later.total
        return self.template == later.template and later.number == self.number + 1 and same_total


def page_marks(lines: list[str], profile: Profile) -> tuple[PageMark, ...]:
    """The document page numbers printed on a page's lines (transmission counts left out)."""
    words = profile.content.transmission_words
    marks: list[PageMark] = []
    for line in lines:
        norm = normalize_plain(line)
        if "page" not in norm and " of " not in norm and "p a g e" not in norm:
            continue
        for form in _FORMS:
            match = form.search(norm)
            if match is None:
                continue
            if any(word in norm for word in words):
                break
            total = int(match.group(2)) if form.groups > 1 and match.group(2) else None
            number = int(match.group(1))
            if number < 1 or (total is not None and (total < number or total > 9999)):
                break
            seen = " ".join(line.split())
            marks.append(PageMark(number, total, _DIGITS.sub("#", norm), seen[:60]))
            break
    return tuple(marks)


def continues(before: tuple[PageMark, ...], after: tuple[PageMark, ...]) -> tuple[PageMark, PageMark] | None:
    """A pair of marks showing the page with `after` continues the page with `before`, else None."""
    for early in before:
        for late in after:
            if early.continued_by(late):
                return early, late
    return None


def restart(marks: tuple[PageMark, ...]) -> PageMark | None:
    """A mark that numbers its page as the first of a document ("Page 1 of 3")."""
    return next((mark for mark in marks if mark.number == 1), None)
