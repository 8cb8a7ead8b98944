"""Share arithmetic shared by V2, the auto-fix engine and the review app's correction check.

One canonical page-weighted mixture (from normalised segment shares, profile taxonomy order, 4 decimals,
summing to 1) so that every check reporting a mixture fault proposes the identical fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from arbiter.contracts import ClassificationOutput, Segment

DECIMALS = 4
_UNIT = 10**DECIMALS


def type_shares(entries: Iterable[Any], types: Sequence[str]) -> dict[str, float]:
    """Share per taxonomy type (0.0 when absent, duplicates summed, unknown types ignored)."""
    shares = dict.fromkeys(types, 0.0)
    for entry in entries:
        if entry.document_type in shares:
            shares[entry.document_type] += entry.share
    return shares


def round_to_one(values: Sequence[float]) -> list[float] | None:
    """Values scaled to sum to 1 and rounded to 4 decimals that sum to exactly 1 (largest remainder method).

    Each result is within 0.0001 of its exact value, so equal values stay within one unit of each other.
    None when they cannot be normalised (their sum is not positive).
    """
    total = sum(values)
    if not total > 0 or not math.isfinite(total):
        return None
    exact = [value / total * _UNIT for value in values]
    units = [math.floor(x) for x in exact]
    missing = _UNIT - sum(units)
    # The units lost to flooring go to the largest remainders; ties to the larger value, then the first.
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - units[i]), -exact[i], i))
    for index in order[: max(missing, 0)]:
        units[index] += 1
    if sum(units) != _UNIT:  # only float noise on absurd inputs can get here
        units[order[0]] += _UNIT - sum(units)
    return [unit / _UNIT for unit in units]


def leads(shares: Mapping[str, float], name: str, tie: float) -> bool:
    """Whether `name` has the largest share, allowing `tie` (and float noise) below the maximum."""
    return max(shares.values(), default=0.0) - shares.get(name, 0.0) <= tie + 1e-9


def arg_max(shares: Mapping[str, float], order: Sequence[str]) -> str:
    """The type with the largest share; the first in taxonomy order on an exact tie."""
    return max(order, key=lambda name: (shares.get(name, 0.0), -order.index(name)))


def page_ranges_valid(segments: Sequence[Segment], total_pages: int) -> bool:
    """Every segment lies within 1..total_pages, starts before it ends, and no two share a page."""
    spans = sorted((s.start_page, s.end_page) for s in segments)
    if any(not (1 <= start <= end <= total_pages) for start, end in spans):
        return False
    return all(prev[1] < cur[0] for prev, cur in pairwise(spans))


def page_weighted_mixture(
    model: ClassificationOutput, total_pages: int, types: Sequence[str]
) -> dict[str, float] | None:
    """The document mixture implied by the segments, unrounded; None when it is not well defined.

    Each segment's shares are first normalised to sum to 1 and weighted by its real page count
    (end - start + 1, not the stated segment_page_count, so fixing that count changes nothing here).
    """
    if not model.segments or not page_ranges_valid(model.segments, total_pages):
        return None
    totals = dict.fromkeys(types, 0.0)
    weight_sum = 0
    for segment in model.segments:
        shares = type_shares(segment.types, types)
        segment_total = sum(shares.values())
        if not segment_total > 0:
            return None
        weight = segment.end_page - segment.start_page + 1
        weight_sum += weight
        for name in types:
            totals[name] += weight * shares[name] / segment_total
    return {name: totals[name] / weight_sum for name in types}


def canonical_mixture(
    model: ClassificationOutput, total_pages: int, types: Sequence[str]
) -> list[dict[str, Any]] | None:
    """The page-weighted mixture as document_mixture entries, taxonomy order, rounded to sum to 1."""
    mixture = page_weighted_mixture(model, total_pages, types)
    if mixture is None:
        return None
    rounded = round_to_one([mixture[name] for name in types])
    if rounded is None:
        return None
    return [{"document_type": name, "share": share} for name, share in zip(types, rounded, strict=True)]


def mixture_fix(
    model: ClassificationOutput, total_pages: int, types: Sequence[str]
) -> list[dict[str, Any]] | None:
    """The one canonical JSON Patch for any mixture fault: replace /document_mixture wholesale."""
    entries = canonical_mixture(model, total_pages, types)
    if entries is None:
        return None
    return [{"op": "replace", "path": "/document_mixture", "value": entries}]


def mixture_disagreement(
    model: ClassificationOutput,
    given: Mapping[str, float],
    expected: Mapping[str, float] | None,
    types: Sequence[str],
    tie: float,
) -> str | None:
    """Why the mixture may not be rewritten from the segments, or None when it may.

    It may only when the stated mixture, the page-weighted segment shares and the stated document type
    all name the same main type: then the two differ only in size. Otherwise rewriting the mixture
    would erase the one sign that a segment or the mixture was relabelled.
    """
    if expected is None:
        return "the segments' page ranges or shares do not define a mixture."
    from_segments = arg_max(expected, types)
    stated = model.dominant_type
    if not leads(given, from_segments, tie) or not leads(expected, arg_max(given, types), tie):
        return (
            f"the mixture's main type is {arg_max(given, types)} but the segments' is {from_segments}, "
            "so one of them is mislabelled."
        )
    if not leads(expected, stated, tie):
        return f"the document is said to be {stated} but the segments' main type is {from_segments}."
    return None
