"""A classification as a reader sees it (the packet page's Classification tab, the ground-truth page):
a summary line, one table row per type of each segment and the evidence quotes with their pages. Plain
values only; the page shows them as tables and escaped text, never as JSON."""

from __future__ import annotations

import json
from typing import Any


def _segments(classification: Any) -> list[dict[str, Any]]:
    segments = classification.get("segments") if isinstance(classification, dict) else None
    return [s for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []


def _share(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def summary_line(classification: Any) -> str:
    """'ADMINISTRATIVE · 2 segments · mixture ADMINISTRATIVE 70%, LAB_REPORT 30%'."""
    if not isinstance(classification, dict):
        return "No readable classification."
    segments = _segments(classification)
    mixture = classification.get("document_mixture")
    parts = [
        f"{e.get('document_type')} {_share(e.get('share')):.0%}"
        for e in (mixture if isinstance(mixture, list) else [])
        if isinstance(e, dict) and _share(e.get("share")) > 0
    ]
    return " · ".join(
        [
            str(classification.get("dominant_type") or "no dominant type"),
            f"{len(segments)} segment{'' if len(segments) == 1 else 's'}",
            f"mixture {', '.join(parts)}" if parts else "no mixture",
        ]
    )


def agree_line(classification: Any) -> str:
    """What Agree saves, in one line: 'Agree saves: LAB_REPORT · pages 1–3 LAB_REPORT; pages 4–6 ADMINISTRATIVE'."""
    if not isinstance(classification, dict):
        return "Agree saves: no readable classification."
    segments = []
    for segment in _segments(classification):
        start, end = segment.get("start_page"), segment.get("end_page")
        pages = f"page {start}" if start == end else f"pages {start}–{end}"
        segments.append(f"{pages} {segment.get('dominant_type')}")
    dominant = str(classification.get("dominant_type") or "no dominant type")
    return f"Agree saves: {dominant} · " + ("; ".join(segments) or "no segments")


def segment_heading(segment: dict[str, Any]) -> str:
    """'Segment 1 · pages 1–3 · LAB_REPORT' ('page 2' for a one-page segment)."""
    start, end = segment.get("start_page"), segment.get("end_page")
    pages = f"page {start}" if start == end else f"pages {start}–{end}"
    return f"Segment {segment.get('segment_index')} · {pages} · {segment.get('dominant_type')}"


def type_rows(segment: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per type of a segment: presence, share, confidence and how many quotes back it; the types
    with a share first, then the rest."""
    rows = []
    for entry in segment.get("types") or []:
        if not isinstance(entry, dict):
            continue
        evidence = entry.get("evidence")
        rows.append(
            {
                "Type": entry.get("document_type"),
                "Presence": entry.get("presence_level"),
                "Share": round(_share(entry.get("share")), 4),
                "Confidence": round(_share(entry.get("confidence")), 4),
                "Quotes": len(evidence) if isinstance(evidence, list) else 0,
            }
        )
    rows.sort(key=lambda r: -_share(r["Share"]))
    return rows


def evidence_quotes(segment: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    """(type, page, quote) for every evidence item of the segment, in the classification's order."""
    quotes = []
    for entry in segment.get("types") or []:
        if not isinstance(entry, dict):
            continue
        for item in entry.get("evidence") or []:
            if isinstance(item, dict) and isinstance(item.get("snippet"), str):
                page = item.get("page") if isinstance(item.get("page"), int) else None
                quotes.append((str(entry.get("document_type")), page, item["snippet"]))
    return quotes


def segments_of(classification: Any) -> list[dict[str, Any]]:
    return _segments(classification)


def as_json(classification: Any) -> str:
    """The classification as stored, for the download button."""
    return json.dumps(classification, indent=2, sort_keys=True, default=str)


def types_in_play(classification: Any) -> list[str]:
    """The types with a share in any segment, or the dominant type: the ones whose guidance is shown."""
    names = [
        str(e.get("document_type"))
        for seg in _segments(classification)
        for e in seg.get("types") or []
        if isinstance(e, dict) and _share(e.get("share")) > 0
    ]
    if isinstance(classification, dict) and isinstance(classification.get("dominant_type"), str):
        names.append(classification["dominant_type"])
    return list(dict.fromkeys(names))
