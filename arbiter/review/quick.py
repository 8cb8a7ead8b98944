"""Quick corrections on the reviewer's segment rows (docs/design.md §8.3): each is one action on the packet
page and returns new rows (or a new evidence pool); the page checks the result once.

Rows are the segment editor's rows (`forms.segment_rows`): pages, a dominant type (None: the type with the
largest share, so it follows the shares) and one share per taxonomy type. The evidence pool is the
correction's evidence, document-wide: one item per (type, page, quote). A segment keeps the items of its
types that lie on its pages, so evidence follows its page through a split or a merge.
"""

from __future__ import annotations

from typing import Any

from arbiter.contracts.profile import Profile
from arbiter.review.rows import DOMINANT_COLUMN, cell_number, whole_number
from arbiter.review.rows import pool_evidence as evidence_for
from arbiter.verifiers.shares import arg_max

TYPE_KEY = "document_type"
__all__ = ["evidence_for"]


def shares_of(row: dict[str, Any], types: list[str]) -> dict[str, float]:
    return {name: cell_number(row.get(name), blank=0.0) or 0.0 for name in types}


def dominant_of(row: dict[str, Any], types: list[str]) -> str:
    """The row's dominant type: the one the reviewer pinned, else the one with the largest share."""
    pinned = row.get(DOMINANT_COLUMN)
    if isinstance(pinned, str) and pinned in types:
        return pinned
    return str(arg_max(shares_of(row, types), types))


def following_rows(rows: list[dict[str, Any]], types: list[str]) -> list[dict[str, Any]]:
    """The rows with the dominant type left blank wherever it is the largest share, so it follows the
    shares from then on; a dominant type that differs from the largest share stays pinned."""
    out = []
    for row in rows:
        copy = dict(row)
        if copy.get(DOMINANT_COLUMN) == arg_max(shares_of(row, types), types):
            copy[DOMINANT_COLUMN] = None
        out.append(copy)
    return out


def set_type(rows: list[dict[str, Any]], index: int, name: str, types: list[str]) -> list[dict[str, Any]]:
    """Segment `index` (0-based) is `name`: its only type, share 1.0, dominant (the others at 0)."""
    if name not in types:
        raise ValueError(f"{name} is not a type of the taxonomy")
    _check_index(rows, index)
    out = [dict(r) for r in rows]
    out[index].update(dict.fromkeys(types, 0.0))
    out[index][name] = 1.0
    out[index][DOMINANT_COLUMN] = None  # follows the shares: it is `name`
    return out


def split(rows: list[dict[str, Any]], index: int, page: int) -> list[dict[str, Any]]:
    """Split segment `index` so that `page` starts a new segment; both halves keep the segment's shares."""
    _check_index(rows, index)
    start, end = _pages(rows[index])
    if not start < page <= end:
        raise ValueError(f"page {page} is not inside pages {start + 1}–{end} of the segment")
    first, second = dict(rows[index]), dict(rows[index])
    first["end_page"], second["start_page"] = page - 1, page
    return [*rows[:index], first, second, *rows[index + 1 :]]


def merge_next(rows: list[dict[str, Any]], index: int, types: list[str]) -> list[dict[str, Any]]:
    """Merge segment `index` with the one after it: one segment over both page ranges, its shares the
    page-weighted mean of theirs, its dominant type the larger share (or the pin both had)."""
    _check_index(rows, index)
    if index + 1 >= len(rows):
        raise ValueError("the last segment has no next segment to merge with")
    a, b = rows[index], rows[index + 1]
    (a_start, a_end), (b_start, b_end) = _pages(a), _pages(b)
    a_pages, b_pages = max(a_end - a_start + 1, 1), max(b_end - b_start + 1, 1)
    sa, sb = shares_of(a, types), shares_of(b, types)
    merged = {
        "start_page": min(a_start, b_start),
        "end_page": max(a_end, b_end),
        DOMINANT_COLUMN: a.get(DOMINANT_COLUMN) if a.get(DOMINANT_COLUMN) == b.get(DOMINANT_COLUMN) else None,
        **{t: round((sa[t] * a_pages + sb[t] * b_pages) / (a_pages + b_pages), 4) for t in types},
    }
    return [*rows[:index], merged, *rows[index + 2 :]]


def boundary_at(rows: list[dict[str, Any]], page: int) -> str | None:
    """What clicking `page` on the page strip does: "join" when it starts a segment after the first (its
    segment joins the one before), "split" when it is inside a segment (it starts a new one), None when
    neither applies (the first page of the first segment, a page outside every segment, unreadable pages)."""
    for index, row in enumerate(rows):
        try:
            start, end = _pages(row)
        except ValueError:
            continue
        if page == start and index > 0:
            return "join"
        if start < page <= end:
            return "split"
    return None


def toggle_boundary(rows: list[dict[str, Any]], page: int, types: list[str]) -> list[dict[str, Any]]:
    """The rows after a click on `page` on the page strip: a segment boundary there goes (the two segments
    merge), none there makes one (the segment splits so that `page` starts a new segment)."""
    action = boundary_at(rows, page)
    for index, row in enumerate(rows):
        try:
            start, end = _pages(row)
        except ValueError:
            continue
        if action == "join" and page == start and index > 0:
            return merge_next(rows, index - 1, types)
        if action == "split" and start < page <= end:
            return split(rows, index, page)
    raise ValueError(f"page {page} neither starts a later segment nor lies inside one")


def rows_with_edits(base: list[dict[str, Any]], delta: Any) -> list[dict[str, Any]]:
    """The segment table as the reviewer sees it: `base` with the data editor's pending edits (its state:
    edited_rows by position, added_rows, deleted_rows) applied, the same way st.data_editor applies them."""
    if not isinstance(delta, dict):
        return [dict(r) for r in base]
    edited = delta.get("edited_rows") or {}
    deleted = {
        int(i) for i in delta.get("deleted_rows") or [] if isinstance(i, int | str) and str(i).isdigit()
    }
    rows = []
    for position, row in enumerate(base):
        if position in deleted:
            continue
        change = edited.get(position, edited.get(str(position))) or {}
        rows.append({**row, **(change if isinstance(change, dict) else {})})
    rows.extend(dict(r) for r in delta.get("added_rows") or [] if isinstance(r, dict))
    return rows


def split_pages(row: dict[str, Any]) -> list[int]:
    """Pages a segment can be split at (each would start the second half)."""
    start, end = _pages(row)
    return list(range(start + 1, end + 1))


def _pages(row: dict[str, Any]) -> tuple[int, int]:
    start, end = whole_number(row.get("start_page")), whole_number(row.get("end_page"))
    if start is None or end is None:
        raise ValueError("the segment's pages are not whole numbers; fix them in the table first")
    return start, end


def _check_index(rows: list[dict[str, Any]], index: int) -> None:
    if not 0 <= index < len(rows):
        raise ValueError(f"there is no segment {index + 1}")


# Evidence ------------------------------------------------------------------------------------------------


def evidence_pool(classification: Any) -> list[dict[str, Any]]:
    """The machine's evidence as one pool: {document_type, page, snippet}, each once, in document order."""
    segments = classification.get("segments") if isinstance(classification, dict) else None
    pool: list[dict[str, Any]] = []
    for seg in segments if isinstance(segments, list) else []:
        for entry in (seg.get("types") or []) if isinstance(seg, dict) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get(TYPE_KEY), str):
                continue
            for item in entry.get("evidence") or []:
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("page"), int)
                    and isinstance(item.get("snippet"), str)
                ):
                    found = {TYPE_KEY: entry[TYPE_KEY], "page": item["page"], "snippet": item["snippet"]}
                    if found not in pool:
                        pool.append(found)
    return pool


def add_evidence(pool: list[dict[str, Any]], name: str, page: int, snippet: str) -> list[dict[str, Any]]:
    """The pool with one more quote (a quote already there is not added twice; blank text is refused)."""
    text = snippet.strip()
    if not text:
        raise ValueError("an evidence quote cannot be blank")
    item = {TYPE_KEY: name, "page": page, "snippet": text}
    return list(pool) if item in pool else [*pool, item]


def remove_evidence(pool: list[dict[str, Any]], name: str, page: int, snippet: str) -> list[dict[str, Any]]:
    item = {TYPE_KEY: name, "page": page, "snippet": snippet}
    return [e for e in pool if e != item]


def machine_said(classification: Any, start: Any, end: Any) -> list[str]:
    """What the machine said of the segments overlapping pages start..end: "Machine, pages 1–2,
    PATHOLOGY_REPORT: <its reasoning>" for each (nothing for pages that are not numbers)."""
    if not isinstance(start, int) or not isinstance(end, int):
        return []
    segments = classification.get("segments") if isinstance(classification, dict) else None
    said = []
    for seg in segments if isinstance(segments, list) else []:
        if not isinstance(seg, dict):
            continue
        first, last = seg.get("start_page"), seg.get("end_page")
        if not isinstance(first, int) or not isinstance(last, int) or last < start or first > end:
            continue
        pages = f"page {first}" if first == last else f"pages {first}–{last}"
        reasoning = seg.get("classification_reasoning")
        said.append(
            f"Machine, {pages}, {seg.get('dominant_type')}: {reasoning}"
            if isinstance(reasoning, str) and reasoning.strip()
            else f"Machine, {pages}, {seg.get('dominant_type')} (no reasoning given)"
        )
    return said


def page_lines(text: str) -> list[str]:
    """A page's text as the lines a reviewer picks evidence from (blank lines and repeats left out)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line and line not in lines:
            lines.append(line)
    return lines


def guidance_for(profile: Profile, names: list[str]) -> list[tuple[str, str]]:
    """The profile's guidance on telling each of these types, in taxonomy order (types without any left out)."""
    wanted = set(names)
    return [
        (name, profile.guidance[name])
        for name in profile.taxonomy.document_types
        if name in wanted and profile.guidance.get(name)
    ]
