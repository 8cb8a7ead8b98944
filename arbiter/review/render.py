"""A PDF page as a PNG with highlight boxes drawn on it: pypdfium2 renders, Pillow draws (no JavaScript).

Boxes arrive in PDF points from the page's bottom-left corner (how V4's locator reports them); the image
has its origin top-left, so y becomes page_height - y. pypdfium2 is not thread-safe and Streamlit runs
each session in its own thread, so every pdfium call holds the process-wide lock of arbiter.ingest.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from arbiter.contracts import DocumentBundle, Issue
from arbiter.errors import ArbiterError
from arbiter.ingest import PDFIUM_LOCK
from arbiter.review.glyphs import PageGlyphs
from arbiter.verifiers.span_boxes import word_span
from arbiter.verifiers.textmatch import PageIndex

Box = tuple[float, float, float, float]


class MarkKind(StrEnum):
    EVIDENCE = "evidence"  # an evidence snippet the classification cites, found on this page
    ISSUE = "issue"  # the place an issue is about


# (outline, translucent fill) per kind; the issue colour stays readable for red-green colour blindness.
COLOURS: dict[MarkKind, tuple[tuple[int, int, int, int], tuple[int, int, int, int]]] = {
    MarkKind.EVIDENCE: ((214, 160, 0, 255), (255, 214, 0, 70)),
    MarkKind.ISSUE: ((200, 30, 90, 255), (230, 40, 110, 60)),
}


@dataclass(frozen=True)
class Mark:
    kind: MarkKind
    box: Box  # (left, bottom, right, top) in PDF points from the bottom-left
    label: str = ""
    # The whole words marked, as (start, end) in the page's text and that text: with them the drawing uses
    # the words' glyph boxes from the PDF instead of the line box cut in proportion to its characters.
    span: tuple[int, int] | None = None
    text: str = ""


class RenderError(ArbiterError):
    """The page could not be drawn; the message is plain English for the reviewer."""


def page_marks(
    bundle: DocumentBundle | None,
    classification: Any,
    issues: Iterable[Issue],
    page: int,
    fuzzy_threshold: float = 92.0,
) -> list[Mark]:
    """Boxes to draw on one page: each evidence snippet claimed for it, and each issue highlight on it."""
    marks: list[Mark] = []
    found = bundle.page(page) if bundle is not None else None
    text = found.text if found is not None else ""

    def words(kind: MarkKind, boxes: Iterable[Box], start: int, end: int, label: str = "") -> list[Mark]:
        first, stop = word_span(text, start, end)
        return [Mark(kind, box, label, (first, stop), text[first:stop]) for box in boxes]

    if bundle is not None and found is not None:
        index = PageIndex.shared(bundle, fuzzy_threshold)
        for snippet in _snippets_on(classification, page):
            match = index.find(snippet, page)
            if match is not None:
                marks.extend(words(MarkKind.EVIDENCE, match.boxes, match.start, match.end))
    for issue in issues:
        mark = issue.highlight
        if mark is not None and mark.page == page:
            marks.extend(words(MarkKind.ISSUE, mark.boxes, mark.start, mark.end, issue.issue_id))
    return marks


def unhighlighted_reason(
    bundle: DocumentBundle | None, classification: Any, page: int, fuzzy_threshold: float = 92.0
) -> str | None:
    """Why evidence cited on this page shows no highlight, when the page cannot place it; else None.

    Some extractors give text without positions (Google's Layout Parser returns no bounding boxes), and a
    scan without OCR has no text at all: the reviewer is told so instead of seeing nothing."""
    snippets = _snippets_on(classification, page)
    found = bundle.page(page) if bundle is not None else None
    if not snippets or found is None:
        return None
    if not found.text.strip():
        return f"Page {page} has no text, so the evidence cited on it cannot be located or highlighted."
    index = PageIndex.shared(bundle, fuzzy_threshold) if bundle is not None else None
    matches = [index.find(snippet, page) for snippet in snippets] if index is not None else []
    located = [m for m in matches if m is not None]
    if located and not any(m.boxes for m in located):
        extractor = bundle.extractor.name if bundle is not None else "the extractor"
        return (
            f"The evidence cited on page {page} is in its text but cannot be highlighted: the extraction "
            f"({extractor}) gave no positions for this page's words. Read the quoted words in the issues."
        )
    return None


def _snippets_on(classification: Any, page: int) -> list[str]:
    found: list[str] = []
    segments = classification.get("segments") if isinstance(classification, dict) else None
    for segment in segments if isinstance(segments, list) else []:
        types = segment.get("types") if isinstance(segment, dict) else None
        for entry in types if isinstance(types, list) else []:
            items = entry.get("evidence") if isinstance(entry, dict) else None
            for item in items if isinstance(items, list) else []:
                if (
                    isinstance(item, dict)
                    and item.get("page") == page
                    and isinstance(item.get("snippet"), str)
                ):
                    found.append(item["snippet"])
    return found


def to_pixels(box: Box, page_height: float, scale: float) -> tuple[float, float, float, float]:
    """A PDF box (left, bottom, right, top from bottom-left) as image (x0, y0, x1, y1) from top-left."""
    left, bottom, right, top = box
    x0, x1 = sorted((left * scale, right * scale))
    y0, y1 = sorted(((page_height - top) * scale, (page_height - bottom) * scale))
    return (x0, y0, x1, y1)


def render_page(
    pdf: Path, page: int, marks: Sequence[Mark] = (), *, dpi: float = 144.0, crop: bool = False
) -> bytes:
    """PNG bytes of 1-based `page` of `pdf` with `marks` drawn; RenderError when it cannot be drawn.

    With `crop`, the blank margins are cut off (the page's objects' bounds plus CROP_PAD points): shown
    at the same width, the text is larger (the viewer's default zoom, "Fit text")."""
    scale = dpi / 72.0
    with _page_of(pdf, page) as pdf_page:
        height = pdf_page.get_height()
        image = pdf_page.render(scale=scale).to_pil()
        marks = _on_glyphs(pdf_page, marks)
        bounds = content_bounds(pdf_page) if crop else None
    return _draw(image.convert("RGB"), height, scale, marks, bounds)


def render_thumbnail(pdf: Path, page: int, width_px: int = 96) -> bytes:
    """A small PNG of `page` (no highlights), `width_px` wide, for the viewer's page strip."""
    with _page_of(pdf, page) as pdf_page:
        image = pdf_page.render(scale=width_px / pdf_page.get_width()).to_pil()
    return _draw(image.convert("RGB"), 0.0, 1.0, ())


@contextmanager
def _page_of(pdf: Path, page: int) -> Iterator[Any]:
    """Page `page` of `pdf`, open under PDFIUM_LOCK for the block; RenderError in words when the page is
    missing or pdfium cannot read the file (damaged or locked)."""
    import pypdfium2 as pdfium

    try:
        with PDFIUM_LOCK:
            doc = pdfium.PdfDocument(str(pdf))
            try:
                if not 1 <= page <= len(doc):
                    raise RenderError(f"The document has no page {page}.")
                pdf_page = doc[page - 1]
                try:
                    yield pdf_page
                finally:
                    pdf_page.close()
            finally:
                doc.close()
    except RenderError:
        raise
    except Exception as exc:  # pdfium reports damaged or locked files with its own exception types
        raise RenderError(f"Page {page} could not be drawn ({type(exc).__name__}).") from exc


CROP_PAD = 6.0  # points of margin kept around the page's content when the margins are cut off


def content_bounds(pdf_page: Any) -> Box | None:
    """(left, bottom, right, top) in points around every object on the page, CROP_PAD wider, within the
    page; None for an empty page (under PDFIUM_LOCK)."""
    boxes = [obj.get_bounds() for obj in pdf_page.get_objects()]
    if not boxes:
        return None
    width, height = pdf_page.get_width(), pdf_page.get_height()
    return (
        max(0.0, min(b[0] for b in boxes) - CROP_PAD),
        max(0.0, min(b[1] for b in boxes) - CROP_PAD),
        min(width, max(b[2] for b in boxes) + CROP_PAD),
        min(height, max(b[3] for b in boxes) + CROP_PAD),
    )


def drawn_marks(pdf: Path, page: int, marks: Sequence[Mark]) -> list[Mark]:
    """The marks as render_page draws them on a page of `pdf` (glyph boxes where the PDF has them)."""
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        doc = pdfium.PdfDocument(str(pdf))
        try:
            pdf_page = doc[page - 1]
            try:
                return list(_on_glyphs(pdf_page, marks))
            finally:
                pdf_page.close()
        finally:
            doc.close()


def _on_glyphs(pdf_page: Any, marks: Sequence[Mark]) -> Sequence[Mark]:
    """The marks with each marked span's boxes taken from its glyphs where the PDF's text is the bundle's
    (under PDFIUM_LOCK); marks without a span, or whose text the page does not hold there, stay as given."""
    if not any(m.span for m in marks):
        return marks
    textpage = pdf_page.get_textpage()
    try:
        glyphs = PageGlyphs(textpage)
        placed: list[Mark] = []
        done: set[tuple[MarkKind, str, tuple[int, int]]] = set()
        for mark in marks:
            boxes = glyphs.boxes(*mark.span, mark.text) if mark.span is not None else None
            if boxes is None or mark.span is None:
                placed.append(mark)
                continue
            key = (mark.kind, mark.label, mark.span)
            if key not in done:  # one mark per line box came in; the glyphs give the lines again
                done.add(key)
                placed.extend(Mark(mark.kind, box, mark.label, mark.span, mark.text) for box in boxes)
        return placed
    finally:
        textpage.close()


def _draw(
    image: Image.Image, page_height: float, scale: float, marks: Sequence[Mark], bounds: Box | None = None
) -> bytes:
    if marks:
        overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        pad = 1.5 * scale
        for mark in marks:
            outline, fill = COLOURS[mark.kind]
            x0, y0, x1, y1 = to_pixels(mark.box, page_height, scale)
            draw.rectangle((x0 - pad, y0 - pad, x1 + pad, y1 + pad), fill=fill, outline=outline, width=2)
        image = Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")
    if bounds is not None:
        x0, y0, x1, y1 = to_pixels(bounds, page_height, scale)
        image = image.crop((round(x0), round(y0), round(x1), round(y1)))
    # A hairline frame: the page's white edge would otherwise vanish into the app's white background.
    ImageDraw.Draw(image).rectangle((0, 0, image.width - 1, image.height - 1), outline=(190, 190, 190))
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
