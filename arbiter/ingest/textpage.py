"""A pdfium text page read into raw lines: each line's span of the page text, its box, font size and wide
column gaps (arbiter/ingest/layout.py types them into paragraphs); and whether a page has a text layer at all.

The per-line pdfium getters are called without ctypes argument conversion (see _unchecked): reading lines
is the hot loop of local ingestion."""

from __future__ import annotations

import ctypes
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pypdfium2.raw as pdfium_c

Box = tuple[float, float, float, float]

# A page with fewer non-space characters than this has no usable text layer (a scan, a photo).
MIN_TEXT_CHARS = 3
# Lines longer than this are never headings (so their font size is rarely read).
HEADING_MAX_CHARS = 80

_ASTRAL = re.compile(r"[\U00010000-\U0010FFFF]")


@dataclass(slots=True)
class RawLine:
    """One extracted text line: its span in page.text, box, font size and count of wide column gaps."""

    start: int
    end: int
    text: str
    box: Box | None
    font_size: float = 0.0
    wide_gaps: int = 0
    words: list[tuple[int, int, Box]] | None = None  # OCR: each word's span in page.text and box


@dataclass(slots=True)
class RawPage:
    """What the PDF engine gave for one page, before layout analysis."""

    page_num: int
    text: str
    lines: list[RawLine]
    width: float | None
    height: float | None


def _text_to_char_index(textpage: Any, raw: str, n_chars: int) -> Callable[[int], int]:
    """Maps a str offset in `raw` to pdfium's char index (which `count_rects` and font calls take).

    pdfium's text counts UTF-16 units (characters beyond U+FFFF count 2) and may skip or insert
    characters relative to its char list; when neither happens, which is nearly always, the map is
    the identity and costs no calls.
    """
    if raw.isascii() or not _ASTRAL.search(raw):
        to_units: Callable[[int], int] = _identity
        units = len(raw)
    else:
        prefix = [0]
        for ch in raw:
            prefix.append(prefix[-1] + (2 if ord(ch) > 0xFFFF else 1))
        to_units = prefix.__getitem__
        units = prefix[-1]
    char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    if to_units is _identity and units == n_chars and char_index(textpage, units - 1) == n_chars - 1:
        return _identity
    return lambda i: int(char_index(textpage, to_units(i)))


def _identity(i: int) -> int:
    return i


def _unchecked(function: Any, restype: Any) -> Any:
    """A pypdfium2.raw function called without its argtypes, for the per-line getters.

    Converting arguments through argtypes costs more than these tiny pdfium calls themselves (a third of
    read_text_page's time went there); callers pass only Python ints and ctypes handles and pointers,
    which ctypes then passes as they are. Calls still go under PDFIUM_LOCK like any other.
    """
    address = ctypes.cast(function, ctypes.c_void_p).value
    if address is None:
        raise ImportError("pypdfium2 gave a null function pointer")
    return ctypes.CFUNCTYPE(restype)(address)


_count_rects = _unchecked(pdfium_c.FPDFText_CountRects, ctypes.c_int)


_get_rect = _unchecked(pdfium_c.FPDFText_GetRect, ctypes.c_int)


_font_size = _unchecked(pdfium_c.FPDFText_GetFontSize, ctypes.c_double)


def round_box(left: float, bottom: float, right: float, top: float) -> Box:
    """The box with each coordinate equal to round(value, 2), about three times faster.

    pdfium's coordinates are single-precision floats, so value * 100 is exact in a double and
    round() of it is the same half-even decision that round(value, 2) makes on the exact value; the
    division then gives the double nearest to that many hundredths, as round(value, 2) does. `or`
    restores the sign of a negative value that rounds to zero (round(-0.001, 2) is -0.0).
    """
    try:
        return (
            round(left * 100) / 100 or left * 0.0,
            round(bottom * 100) / 100 or bottom * 0.0,
            round(right * 100) / 100 or right * 0.0,
            round(top * 100) / 100 or top * 0.0,
        )
    except (ValueError, OverflowError):  # NaN or infinity from a degenerate text matrix
        return (round(left, 2), round(bottom, 2), round(right, 2), round(top, 2))


def read_text_page(textpage: Any, page_num: int, width: float, height: float) -> RawPage:
    """The text and lines (boxes, font sizes, column gaps) of a pdfium text page; the caller holds PDFIUM_LOCK."""
    n_chars = pdfium_c.FPDFText_CountChars(textpage)
    if n_chars <= 0:
        return RawPage(page_num, "", [], width, height)
    buf = (ctypes.c_ushort * (2 * n_chars + 2))()
    written = pdfium_c.FPDFText_GetText(textpage, 0, n_chars, buf)
    raw = ctypes.string_at(buf, max(written - 1, 0) * 2).decode("utf-16-le", errors="replace")
    text = raw.replace("\r\n", "\n")
    to_char = _text_to_char_index(textpage, raw, n_chars)
    identity = to_char is _identity
    count_rects, get_rect, font_size_at = _count_rects, _get_rect, _font_size
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    left_ref, top_ref = ctypes.byref(left), ctypes.byref(top)
    right_ref, bottom_ref = ctypes.byref(right), ctypes.byref(bottom)
    body_samples = 0

    lines: list[RawLine] = []
    add_line = lines.append
    # Where each line starts in `raw`; with only CRLF breaks, each earlier line adds one "\r".
    line_texts = text.split("\n")
    raw_starts: list[int] | None = None
    if raw.count("\n") != raw.count("\r\n"):
        raw_starts, raw_pos = [], 0
        for line_text in line_texts:
            raw_starts.append(raw_pos)
            raw_pos += len(line_text)
            raw_pos += 2 if raw.startswith("\r\n", raw_pos) else 1
    pos = 0
    for index, line_text in enumerate(line_texts):
        start = pos
        length = len(line_text)
        end = pos = start + length
        pos += 1
        stripped = line_text.lstrip()
        if not stripped:
            continue
        raw_start = start + index if raw_starts is None else raw_starts[index]
        first = raw_start + length - len(stripped)
        last = raw_start + length - 1
        if not identity:
            first, last = to_char(first), to_char(last)
        if first < 0 or last < first:
            add_line(RawLine(start, end, line_text, None))
            continue
        box: Box | None = None
        gaps = 0
        n_rects = count_rects(textpage, first, last - first + 1)
        if n_rects == 1:  # the usual line: one run of text
            if get_rect(textpage, 0, left_ref, top_ref, right_ref, bottom_ref):
                box = round_box(left.value, bottom.value, right.value, top.value)
        elif n_rects:
            rects = []
            for i in range(n_rects):
                if get_rect(textpage, i, left_ref, top_ref, right_ref, bottom_ref):
                    rects.append((left.value, bottom.value, right.value, top.value))
            if rects:
                box = round_box(
                    min(r[0] for r in rects),
                    min(r[1] for r in rects),
                    max(r[2] for r in rects),
                    max(r[3] for r in rects),
                )
                gaps = count_wide_gaps(rects)
        # Font size only matters for possible headings and, from a few long lines, the body size.
        font_size = 0.0
        long_line = len(stripped) > HEADING_MAX_CHARS
        if not long_line or body_samples < 5:
            font_size = font_size_at(textpage, first)
            body_samples += long_line
        add_line(RawLine(start, end, line_text, box, font_size, gaps))
    return RawPage(page_num, text, lines, width, height)


def count_wide_gaps(rects: Sequence[Box]) -> int:
    """Horizontal gaps between consecutive text rects of one line wide enough to separate table columns."""
    if len(rects) < 3:
        return 0
    height = max(r[3] - r[1] for r in rects)
    threshold = max(1.5 * height, 8.0)
    ordered = sorted(rects, key=lambda r: r[0])
    return sum(1 for a, b in itertools.pairwise(ordered) if b[0] - a[2] >= threshold)


def has_text_layer(text: str) -> bool:
    """True when the page carries enough extractable characters to be read without OCR."""
    count = 0
    for ch in text:
        if not ch.isspace():
            count += 1
            if count >= MIN_TEXT_CHARS:
                return True
    return False
