"""What the two Document AI forms are reduced to before they become contract Pages: text, typed spans and
boxes as fractions of the page, plus the boxes' conversion to PDF points from the bottom-left corner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arbiter.contracts.bundle import BlockType
from arbiter.ingest.documentai.shape import number, objects

# (x0, y0, x1, y1) as fractions of the page's width and height, from its top-left corner (image order).
NormBox = tuple[float, float, float, float]
# (left, bottom, right, top) in PDF points from the bottom-left corner, as LineBox holds them.
Box = tuple[float, float, float, float]
# A line of a page draft: [start, end) in the draft's text, its box, and its words' spans and boxes.
BoxedLine = tuple[int, int, NormBox, list[tuple[tuple[int, int], NormBox]]]

POINTS_PER_UNIT = {"points": 1.0, "point": 1.0, "pt": 1.0, "inches": 72.0, "inch": 72.0, "in": 72.0}


@dataclass
class Span:
    """A typed paragraph of a page draft: [start, end) in the draft's text."""

    start: int
    end: int
    kind: BlockType


@dataclass
class PageDraft:
    """One page as read from the response, before boxes are put in points."""

    text: str = ""
    spans: list[Span] = field(default_factory=list)
    lines: list[BoxedLine] = field(default_factory=list)
    size_points: tuple[float, float] | None = None  # from the response itself, when it states a unit


def poly_box(
    poly: Mapping[str, Any], path: str, pixel_size: tuple[float, float] | None = None
) -> NormBox | None:
    """The normalised extent of a BoundingPoly: normalizedVertices, else pixel vertices over the page size.

    Vertices at 0 are written without x or y (proto3 defaults), so a missing coordinate is 0.
    """
    points = [
        (number(v, "x", vpath), number(v, "y", vpath))
        for vpath, v in objects(poly, "normalizedVertices", path)
    ]
    if not points and pixel_size is not None:
        width, height = pixel_size
        points = [
            (number(v, "x", vpath) / width, number(v, "y", vpath) / height)
            for vpath, v in objects(poly, "vertices", path)
        ]
    if len(points) < 2:
        return None
    xs = [min(max(x, 0.0), 1.0) for x, _ in points]
    ys = [min(max(y, 0.0), 1.0) for _, y in points]
    return (min(xs), min(ys), max(xs), max(ys))


def union(a: NormBox | None, b: NormBox | None) -> NormBox | None:
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def to_points(box: NormBox, width: float, height: float) -> Box:
    """A normalised top-left box in PDF points from the bottom-left, rounded like the local extractor's."""
    x0, y0, x1, y1 = box
    return (
        round(x0 * width, 2),
        round(height - y1 * height, 2),
        round(x1 * width, 2),
        round(height - y0 * height, 2),
    )


def split_lines(text: str, start: int, box: NormBox) -> list[BoxedLine]:
    """Line spans of a block of text, each given an equal horizontal strip of the block's box.

    The layout parser gives one box per block; strips put a highlight on about the right line (exact when
    lines are evenly spaced, which a paragraph's usually are). Blank lines get no box but keep their strip.
    """
    parts = text.split("\n")
    x0, y0, x1, y1 = box
    step = (y1 - y0) / len(parts)
    out: list[BoxedLine] = []
    pos = start
    for i, part in enumerate(parts):
        if part.strip():
            out.append((pos, pos + len(part), (x0, y0 + i * step, x1, y0 + (i + 1) * step), []))
        pos += len(part) + 1
    return out


def size_in_points(width: float, height: float, unit: str) -> tuple[float, float] | None:
    """A page dimension in points when its unit says how (pixels do not: their resolution is unknown)."""
    scale = POINTS_PER_UNIT.get(unit.strip().lower())
    if scale is None or width <= 0 or height <= 0:
        return None
    return (round(width * scale, 2), round(height * scale, 2))
