"""The page image: pypdfium2 render, highlight boxes converted from PDF points (bottom-left) to pixels."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from PIL import Image
from review_helpers import FIXTURES, PDFS

from arbiter.contracts import DocumentBundle, Extractor, Highlight, Issue
from arbiter.ingest import ingest_pdf
from arbiter.review.render import (
    Mark,
    MarkKind,
    RenderError,
    page_marks,
    render_page,
    to_pixels,
    unhighlighted_reason,
)

PDF = PDFS / "packet-01.pdf"


def _png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


@pytest.mark.parametrize(
    ("box", "height", "scale", "pixels"),
    [
        ((10, 700, 110, 720), 792, 1.0, (10, 72, 110, 92)),
        ((10, 700, 110, 720), 792, 2.0, (20, 144, 220, 184)),
        ((110, 720, 10, 700), 792, 1.0, (10, 72, 110, 92)),
    ],
)
def test_boxes_flip_to_top_left(
    box: tuple[float, float, float, float], height: float, scale: float, pixels: tuple[float, ...]
) -> None:
    """y becomes page_height - y, scaled; boxes given corner-swapped come out ordered."""
    assert to_pixels(box, height, scale) == pixels


def test_page_renders_at_the_requested_resolution() -> None:
    """A letter page at 72 dpi is 612 x 792 pixels."""
    image = _png(render_page(PDF, 1, dpi=72))
    assert image.size == (612, 792)


def test_highlight_is_drawn_where_the_box_is() -> None:
    """A box near the top of the page tints the pixels at the flipped position, not at the bottom."""
    box = (100.0, 700.0, 300.0, 720.0)
    plain = _png(render_page(PDF, 1, dpi=72))
    marked = _png(render_page(PDF, 1, [Mark(MarkKind.ISSUE, box)], dpi=72))
    assert plain.getpixel((200, 82)) != marked.getpixel((200, 82))
    assert plain.getpixel((200, 792 - 82)) == marked.getpixel((200, 792 - 82))


@pytest.mark.parametrize("page", [0, 6])
def test_missing_page_is_a_plain_error(page: int) -> None:
    """Asking for a page the document lacks says so instead of crashing."""
    with pytest.raises(RenderError, match=f"no page {page}"):
        render_page(PDF, page)


def test_damaged_file_is_a_plain_error(tmp_path: Path) -> None:
    """A file that is not a PDF is reported in words."""
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf")
    with pytest.raises(RenderError, match="could not be drawn"):
        render_page(bad, 1)


def test_evidence_and_issue_marks_for_a_page() -> None:
    """Evidence snippets cited for the page are located; issue highlights on the page are added."""
    bundle = ingest_pdf(PDF, doc_id="packet-01")
    assert isinstance(bundle, DocumentBundle)
    classification = json.loads((FIXTURES / "classifications" / "packet-01.json").read_text())
    issue = Issue(
        issue_id="V4-0001",
        code="V4.SNIPPET_WRONG_PAGE",
        verifier="V4",
        severity="MAJOR",
        message="m",
        highlight=Highlight(page=1, start=0, end=3, boxes=[(1.0, 2.0, 3.0, 4.0)]),
    )
    marks = page_marks(bundle, classification, [issue], 1)
    kinds = [m.kind for m in marks]
    assert kinds.count(MarkKind.EVIDENCE) >= 2
    assert (MarkKind.ISSUE, (1.0, 2.0, 3.0, 4.0), "V4-0001") in [(m.kind, m.box, m.label) for m in marks]
    assert page_marks(bundle, classification, [issue], 2) == page_marks(bundle, classification, [], 2)


def test_concurrent_renders_share_the_pdfium_lock() -> None:
    """Sessions run in threads; rendering from several at once gives the same images."""
    expected = render_page(PDF, 2, dpi=36)
    results: list[bytes] = []

    def work() -> None:
        results.append(render_page(PDF, 2, dpi=36))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 6


def _positionless(bundle: DocumentBundle) -> DocumentBundle:
    """The same bundle as an extractor that gives text without word positions would return it."""
    pages = [page.model_copy(update={"lines": []}) for page in bundle.pages]
    extractor = Extractor(name="documentai-layout", version="1")
    return bundle.model_copy(update={"pages": pages, "extractor": extractor})


def test_evidence_without_positions_says_why_it_is_not_highlighted() -> None:
    """Text with no word positions (Layout Parser): the packet says why the cited evidence is not marked."""
    bundle = ingest_pdf(PDFS / "path-lung-01.pdf")
    assert isinstance(bundle, DocumentBundle)
    answer = json.loads((FIXTURES / "classifications" / "path-lung-01.json").read_text(encoding="utf-8"))
    page = answer["segments"][0]["types"][2]["evidence"][0]["page"]
    assert unhighlighted_reason(bundle, answer, page) is None
    why = unhighlighted_reason(_positionless(bundle), answer, page)
    assert why is not None
    assert "cannot be highlighted" in why
    assert "documentai-layout" in why
