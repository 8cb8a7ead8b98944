"""Tesseract's words turned into a RawPage: specks dropped, words grouped into rows of the page (deskewed),
rows into lines and paragraphs of page.text, boxes turned from image pixels into PDF points."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from arbiter.ingest.ocr import Word
from arbiter.ingest.textpage import Box, RawLine, RawPage, count_wide_gaps

# A "word" with no letter or digit read with less confidence than this is a mark of dust or a speck, not
# punctuation on the page: it is dropped (real punctuation and rules read at 75-95 here).
MARK_MIN_CONF = 50.0
# Tesseract lines whose centres, deskewed, are closer than this share of the smaller line's height form
# one row of the page (table cells, a label and its value), read left to right as one line.
ROW_SHARE = 0.5
# Rows further apart than this many row heights are separated by an empty line in page.text.
PARAGRAPH_GAP = 1.9


@dataclass
class _Row:
    centre: float  # deskewed vertical centre, pixels
    height: float
    lines: list[list[Word]] = field(default_factory=list)

    def overlaps(self, left: int, right: int) -> bool:
        return any(ws[0].left < right and left < ws[-1].left + ws[-1].width for ws in self.lines)


def _centre(word: Word) -> tuple[float, float]:
    return word.left + word.width / 2, word.top + word.height / 2


def rows(words: Iterable[Word]) -> list[_Row]:
    """Tesseract's lines regrouped into the page's visual rows, top to bottom, each left to right.

    Tesseract reads a table column by column (each column a block); snippets and the text layer of a
    digital page read it row by row. Rows are found after removing the page's skew, measured as the
    median slope of Tesseract's own lines. Lines side by side are joined even in two-column prose:
    medical records hold far more tables and label-value forms than newspaper columns.
    """
    grouped: dict[tuple[int, int, int], list[Word]] = {}
    for word in words:
        if word.conf >= MARK_MIN_CONF or any(ch.isalnum() for ch in word.text):
            grouped.setdefault(word.line, []).append(word)
    lines = [sorted(ws, key=lambda w: w.left) for ws in grouped.values()]
    slopes = []
    for ws in lines:
        (x0, y0), (x1, y1) = _centre(ws[0]), _centre(ws[-1])
        if x1 - x0 > 0:
            slopes.append((y1 - y0) / (x1 - x0))
    skew = statistics.median(slopes) if slopes else 0.0
    placed = []
    for ws in lines:
        centre = statistics.fmean(cy - skew * cx for cx, cy in map(_centre, ws))
        placed.append((centre, float(max(w.height for w in ws)), ws))
    placed.sort(key=lambda item: item[0])
    found: list[_Row] = []
    for centre, height, ws in placed:
        row = found[-1] if found else None
        right = ws[-1].left + ws[-1].width
        if (
            row is not None
            and abs(centre - row.centre) <= ROW_SHARE * min(height, row.height)
            and not row.overlaps(ws[0].left, right)
        ):
            row.lines.append(ws)
            row.height = max(row.height, height)
        else:
            found.append(_Row(centre, height, [ws]))
    for row in found:
        row.lines.sort(key=lambda ws: ws[0].left)
    return found


def to_raw_page(
    words: Iterable[Word], page_num: int, width: float, height: float, scale: float
) -> tuple[RawPage, float | None]:
    """A RawPage (text, lines with boxes and word boxes in PDF points) and the mean word confidence.

    Each visual row becomes one line of page.text, its words joined by a space; rows are joined by a
    newline (an empty line where the gap is wide), so a line-end hyphen is undone by normalisation as on
    a digital page.
    """
    parts: list[str] = []
    pos = 0
    lines: list[RawLine] = []
    conf_sum = conf_chars = 0.0
    previous: _Row | None = None
    for row in rows(words):
        if previous is not None:
            gap = "\n\n" if row.centre - previous.centre > PARAGRAPH_GAP * previous.height else "\n"
            parts.append(gap)
            pos += len(gap)
        previous = row
        spans: list[tuple[int, int, Box]] = []
        for word in (w for ws in row.lines for w in ws):
            if spans:
                parts.append(" ")
                pos += 1
            parts.append(word.text)
            spans.append((pos, pos + len(word.text), _to_points(word, height, scale)))
            pos += len(word.text)
            if word.conf >= 0:
                conf_sum += word.conf * len(word.text)
                conf_chars += len(word.text)
        boxes = [b for _, _, b in spans]
        box = (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
        lines.append(RawLine(spans[0][0], spans[-1][1], "", box, 0.0, count_wide_gaps(boxes), spans))
    page_text = "".join(parts)
    for line in lines:
        line.text = page_text[line.start : line.end]
    confidence = round(conf_sum / conf_chars, 2) if conf_chars else None
    return RawPage(page_num, page_text, lines, width, height), confidence


def _to_points(word: Word, page_height: float, scale: float) -> Box:
    """A word's pixel box (top-left origin) as (left, bottom, right, top) in points from bottom-left."""
    return (
        round(word.left / scale, 2),
        round(page_height - (word.top + word.height) / scale, 2),
        round((word.left + word.width) / scale, 2),
        round(page_height - word.top / scale, 2),
    )
