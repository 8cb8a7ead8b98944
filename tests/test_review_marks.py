"""Highlights on the page image: whole words, the words' own glyph boxes, and issues' pink marks."""

from __future__ import annotations

import json
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from review_helpers import FIXTURES, PDFS

from arbiter.contracts import DocumentBundle, LineBox, Page
from arbiter.ingest import ingest_pdf
from arbiter.review.render import MarkKind, drawn_marks, page_marks
from verifiers.span_boxes import boxes_for_span, word_span

TEXT = "Tumor burden is 4 mutations per megabase (TMB-Low). Stable."


def _span(words: str) -> tuple[int, int]:
    at = TEXT.index(words)
    return at, at + len(words)


WORD_SPANS = [
    ("cut inside the last word", "per megaba", "per megabase"),
    ("cut inside the first word", "mor burden", "Tumor burden"),
    ("cut inside both", "urden is 4 mut", "burden is 4 mutations"),
    ("already whole words", "4 mutations", "4 mutations"),
    ("punctuation is a boundary", "TMB-Lo", "TMB-Low"),
    ("a bracket stays outside", "megabase (TMB", "megabase (TMB"),
    ("the end of the text", "Stab", "Stable"),
]


@pytest.mark.parametrize(("given", "whole"), [c[1:] for c in WORD_SPANS], ids=[c[0] for c in WORD_SPANS])
def test_a_span_widens_to_whole_words(given: str, whole: str) -> None:
    """A highlight span cut inside a word is widened to the whole word, never narrowed."""
    start, end = word_span(TEXT, *_span(given))
    assert TEXT[start:end] == whole


def test_proportional_boxes_cover_the_whole_word() -> None:
    """On a line without word boxes, a span ending inside "megabase" gets the box of the whole word."""
    page = Page(page_num=1, text=TEXT, lines=[LineBox(start=0, end=len(TEXT), box=(0.0, 0.0, 600.0, 10.0))])
    cut = boxes_for_span(page, *_span("per megaba"))
    whole = boxes_for_span(page, *_span("per megabase"))
    assert cut == whole


@pytest.fixture(scope="module")
def guardant() -> DocumentBundle:
    bundle = ingest_pdf(PDFS / "gen-guardant-02.pdf", doc_id="gen-guardant-02")
    assert isinstance(bundle, DocumentBundle)
    return bundle


def _glyph_right(pdf: Path, page: int, word: str) -> float:
    """The right edge of the last glyph of `word` on the page, as pdfium places it."""
    doc = pdfium.PdfDocument(str(pdf))
    try:
        textpage = doc[page - 1].get_textpage()
        text = textpage.get_text_range()
        last = text.index(word) + len(word) - 1
        return float(textpage.get_charbox(last)[2])
    finally:
        doc.close()


def test_evidence_box_reaches_the_end_of_its_last_word(guardant: DocumentBundle) -> None:
    """The evidence ending in "megabase" is drawn to the right edge of its final "e", not short of it."""
    answer = json.loads((FIXTURES / "demo" / "gen-guardant-02.json").read_text())
    marks = [m for m in page_marks(guardant, answer, [], 1) if "megabase" in m.text]
    assert marks, "the TMB evidence is marked on page 1"
    drawn = drawn_marks(PDFS / "gen-guardant-02.pdf", 1, marks)
    right = _glyph_right(PDFS / "gen-guardant-02.pdf", 1, "per megabase")
    assert [m.kind for m in drawn] == [MarkKind.EVIDENCE]
    assert drawn[0].box[2] == pytest.approx(right, abs=0.5)
