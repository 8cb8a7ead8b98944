"""About a type is not of that type: a heading phrase that names a document the text sends, orders or
refers to ("Re: Comprehensive genomic profiling results", a requisition's "Lipid panel") counts for the
profile's `about_type`, not for the type it names. The words are the profile's [content] `about_markers`
and `order_titles`; content.py asks here for each phrase of another type it finds.
"""

from __future__ import annotations

import re
from functools import lru_cache

from arbiter.contracts.profile import Content

_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")


def about_context(norm: str, start: int, content: Content) -> bool:
    """Whether the phrase starting at `start` of a normalised line follows an about marker: the nearest
    marker before it ends at most `about_window` characters earlier, with no sentence end between."""
    if not content.about_markers or not content.about_type or start == 0:
        return False
    before = norm[:start]
    ends = [m.end() for m in _markers(tuple(content.about_markers)).finditer(before)]
    if not ends:
        return False
    between = before[ends[-1] :]
    return len(between) <= content.about_window and _SENTENCE_END.search(between) is None


@lru_cache(maxsize=16)
def _markers(markers: tuple[str, ...]) -> re.Pattern[str]:
    """The markers as one pattern, each at a word start and, ending in a letter, at a word end."""
    parts = [
        re.escape(m) + (r"(?!\w)" if m[-1].isalnum() else "") for m in sorted(markers, key=len, reverse=True)
    ]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + ")")
