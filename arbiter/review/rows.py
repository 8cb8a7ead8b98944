"""The reviewer's segment table, row by row: each cell read as a page number, a share or a blank, and one
row made a segment of the corrected classification that keeps the machine's evidence (inside its pages)
and presence levels (from the machine segment it overlaps most)."""

from __future__ import annotations

import math
from typing import Any

from arbiter.contracts.profile import Profile
from arbiter.verifiers.shares import arg_max

PAGE_COLUMNS = ("start_page", "end_page")
DOMINANT_COLUMN = "dominant_type"


def row_segment(
    position: int,
    start: int,
    end: int,
    dominant: str | None,
    shares: dict[str, float],
    base: Any,
    profile: Profile,
    pool: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One row as a segment. `pool` (the reviewer's evidence, see quick.py) replaces the machine's."""
    taxonomy = profile.taxonomy
    types = taxonomy.document_types
    if dominant is None:
        dominant = arg_max(shares, types)
    origin = _overlapping(base, start, end)
    top = taxonomy.presence_levels[0]
    secondary = next((lvl for lvl in taxonomy.presence_levels[1:] if lvl != taxonomy.no_evidence_level), top)
    entries = []
    for name in types:
        share = shares[name]
        if share <= 0:
            evidence = []
        elif pool is not None:
            evidence = pool_evidence(pool, name, start, end)
        else:
            evidence = _evidence_in(base, name, start, end)
        if share <= 0:
            level = taxonomy.no_evidence_level
        elif name == dominant:
            level = top
        else:
            before = origin.get(name)
            level = before if before not in (None, top, taxonomy.no_evidence_level) else secondary
        entries.append(
            {
                "document_type": name,
                "presence_level": level,
                "share": share,
                "confidence": 1.0,  # the reviewer asserts it
                "evidence": evidence,
            }
        )
    reasoning = origin.get("", "")
    return {
        "segment_index": position,
        "start_page": start,
        "end_page": end,
        "segment_page_count": max(end - start + 1, 0),
        "dominant_type": dominant,
        "classification_reasoning": reasoning,
        "types": entries,
    }


def pool_evidence(pool: list[dict[str, Any]], name: str, start: int, end: int) -> list[dict[str, Any]]:
    """A segment's evidence for one type from the reviewer's pool: its quotes on pages start..end."""
    return [
        {"page": e["page"], "snippet": e["snippet"]}
        for e in pool
        if e.get("document_type") == name
        and isinstance(e.get("page"), int)
        and isinstance(e.get("snippet"), str)
        and start <= e["page"] <= end
    ]


def _base_segments(base: Any) -> list[dict[str, Any]]:
    segments = base.get("segments") if isinstance(base, dict) else None
    return [s for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []


def _overlapping(base: Any, start: int, end: int) -> dict[str, Any]:
    """Presence levels by type (and reasoning under "") of the machine segment overlapping the most."""
    best: dict[str, Any] | None = None
    best_overlap = 0
    for seg in _base_segments(base):
        s, e = whole_number(seg.get("start_page")), whole_number(seg.get("end_page"))
        if s is None or e is None:
            continue
        overlap = min(e, end) - max(s, start) + 1
        if overlap > best_overlap:
            best, best_overlap = seg, overlap
    if best is None:
        return {}
    found: dict[str, Any] = {
        e["document_type"]: e.get("presence_level")
        for e in best.get("types") or []
        if isinstance(e, dict) and isinstance(e.get("document_type"), str)
    }
    reasoning = best.get("classification_reasoning")
    found[""] = reasoning if isinstance(reasoning, str) else ""
    return found


def _evidence_in(base: Any, name: str, start: int, end: int) -> list[dict[str, Any]]:
    """The machine's evidence for `name` on pages start..end, from whichever segment cited it."""
    kept: list[dict[str, Any]] = []
    for seg in _base_segments(base):
        for entry in seg.get("types") or []:
            if not isinstance(entry, dict) or entry.get("document_type") != name:
                continue
            for item in entry.get("evidence") or []:
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("page"), int)
                    and start <= item["page"] <= end
                    and isinstance(item.get("snippet"), str)
                    and item not in kept
                ):
                    kept.append({k: item[k] for k in ("page", "snippet", "anchor") if k in item})
    return kept


def vendor_signals(base: Any) -> list[str]:
    signals = base.get("vendor_signals") if isinstance(base, dict) else None
    return [s for s in signals if isinstance(s, str)] if isinstance(signals, list) else []


def blank_row(row: dict[str, Any], types: list[str]) -> bool:
    keys = [*PAGE_COLUMNS, DOMINANT_COLUMN, *types]
    return all(_missing(row.get(key)) for key in keys)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def whole_number(value: Any) -> int | None:
    """A page number from a table cell (int, float with no fraction, or digits), else None."""
    if isinstance(value, bool) or _missing(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    try:  # numpy integers and the like
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def cell_number(value: Any, blank: float | None = None) -> float | None:
    """A finite number from a table cell; `blank` for an empty cell; None when it is not a number."""
    if isinstance(value, bool):
        return None
    if _missing(value):
        return blank
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
