"""Exact boxes for highlighted words, from the glyphs pdfium placed on the page.

Ingestion keeps one box per line, and a span inside a line is placed in proportion to its characters,
which misses in proportional fonts ("megaba|se"). When the page's text layer is the one the bundle was read
from, the words' own glyph boxes replace that estimate. The caller holds PDFIUM_LOCK."""

from __future__ import annotations

from typing import Any

Box = tuple[float, float, float, float]


class PageGlyphs:
    """The text of a pdfium text page as ingestion saw it ("\\r\\n" read as "\\n") and its glyph boxes."""

    def __init__(self, textpage: Any) -> None:
        self._textpage = textpage
        count = textpage.count_chars()
        raw = textpage.get_text_range(0, count) if count > 0 else ""
        # Text offsets are glyph indexes only when each character is one glyph (no astral characters).
        self._usable = len(raw) == count
        self._raw_index = [i for i, ch in enumerate(raw) if not (ch == "\r" and raw[i + 1 : i + 2] == "\n")]
        self.text = "".join(raw[i] for i in self._raw_index)

    def boxes(self, start: int, end: int, expected: str) -> list[Box] | None:
        """One box per line of the characters [start, end) of the text, or None when the page's text there
        is not `expected` (the bundle came from elsewhere: OCR, another extractor) or has no glyph boxes."""
        if not self._usable or not expected or self.text[start:end] != expected:
            return None
        lines: list[list[Box]] = [[]]
        for offset in range(start, end):
            ch = self.text[offset]
            if ch == "\n":
                lines.append([])
            elif not ch.isspace():
                left, bottom, right, top = self._textpage.get_charbox(self._raw_index[offset])
                if right > left and top > bottom:
                    lines[-1].append((left, bottom, right, top))
        boxes = [
            (
                round(min(b[0] for b in line), 2),
                round(min(b[1] for b in line), 2),
                round(max(b[2] for b in line), 2),
                round(max(b[3] for b in line), 2),
            )
            for line in lines
            if line
        ]
        return boxes or None
