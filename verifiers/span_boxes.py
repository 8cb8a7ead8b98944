"""The PDF boxes of a span of a page's text: each overlapping line's box clipped to the characters covered
(by its word boxes when OCR gave them, else in proportion to its characters). A span is first widened to
whole words, so a highlight never stops inside one ("megaba" of "megabase")."""

from __future__ import annotations

from arbiter.contracts import LineBox, Page

Box = tuple[float, float, float, float]


def clip_line(line: LineBox, start: int, end: int) -> Box | None:
    """The part of a line's box covering [start, end), or None: from the boxes of the words covered when
    the line has them (OCR), else in proportion to the line's characters."""
    length = line.end - line.start
    if length <= 0 or line.end <= start or line.start >= end:
        return None
    if line.words:
        covered = [w for w in line.words if w.end > start and w.start < end and w.end > w.start]
        if covered:
            first, last = covered[0], covered[-1]
            lo = (max(start, first.start) - first.start) / (first.end - first.start)
            hi = (min(end, last.end) - last.start) / (last.end - last.start)
            return (
                round(first.box[0] + (first.box[2] - first.box[0]) * lo, 2),
                min(w.box[1] for w in covered),
                round(last.box[0] + (last.box[2] - last.box[0]) * hi, 2),
                max(w.box[3] for w in covered),
            )
    left, bottom, right, top = line.box
    width = right - left
    lo = (max(start, line.start) - line.start) / length
    hi = (min(end, line.end) - line.start) / length
    return (round(left + width * lo, 2), bottom, round(left + width * hi, 2), top)


def word_span(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to the whole words it touches (letters and digits either side of an edge)."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    if end <= start:
        return start, end
    while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
        end += 1
    return start, end


def boxes_for_span(page: Page, start: int, end: int) -> tuple[Box, ...]:
    """Boxes of the lines overlapping [start, end) widened to whole words, each clipped to the characters
    covered."""
    if end <= start:
        return ()
    start, end = word_span(page.text, start, end)
    return tuple(box for line in page.lines if (box := clip_line(line, start, end)) is not None)
