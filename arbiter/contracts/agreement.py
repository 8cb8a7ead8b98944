"""Whether two reviewers' classifications of one document say the same thing (docs/design.md §8.2): the same
segments (page ranges), the same type for the document and each segment, and the same types present in each
segment. Shares that differ a little, reasoning, notes and evidence do not make a disagreement."""

from __future__ import annotations

from typing import Any

_ABSENT = "NO_EVIDENCE"


def _segments(classification: Any) -> list[dict[str, Any]]:
    segments = classification.get("segments") if isinstance(classification, dict) else None
    return [s for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []


def _pages(segment: dict[str, Any]) -> str:
    return f"{segment.get('start_page')}–{segment.get('end_page')}"


def types_present(segment: dict[str, Any]) -> list[str]:
    """The types a segment says are there: a positive share, or (without a share) a presence other than none."""
    present = []
    for entry in segment.get("types") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("document_type"), str):
            continue
        share = entry.get("share")
        there = share > 0 if isinstance(share, int | float) else entry.get("presence_level") != _ABSENT
        if there:
            present.append(entry["document_type"])
    return sorted(present)


def differences(first: Any, second: Any) -> list[str]:
    """Where the second classification departs from the first, in words (empty: they agree)."""
    found: list[str] = []
    a_type = first.get("dominant_type") if isinstance(first, dict) else None
    b_type = second.get("dominant_type") if isinstance(second, dict) else None
    if a_type != b_type:
        found.append(f"Document type: the first review says {a_type}, the second {b_type}.")
    a_segs, b_segs = _segments(first), _segments(second)
    a_pages, b_pages = [_pages(s) for s in a_segs], [_pages(s) for s in b_segs]
    if a_pages != b_pages:
        found.append(
            f"Segments: the first review has pages {', '.join(a_pages) or 'none'}; "
            f"the second has {', '.join(b_pages) or 'none'}."
        )
        return found
    for a, b in zip(a_segs, b_segs, strict=True):
        if a.get("dominant_type") != b.get("dominant_type"):
            found.append(
                f"Pages {_pages(a)}: the first review says {a.get('dominant_type')}, "
                f"the second {b.get('dominant_type')}."
            )
        a_present, b_present = types_present(a), types_present(b)
        if a_present != b_present:
            found.append(
                f"Pages {_pages(a)}: types present differ (first: {', '.join(a_present) or 'none'}; "
                f"second: {', '.join(b_present) or 'none'})."
            )
    return found
