"""Highlights on the page image: whole words, the words' own glyph boxes, and issues' pink marks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from review_helpers import FIXTURES, PDFS

from arbiter.contracts import DocumentBundle, Issue, LineBox, OcrStatus, Page, SMEPacket
from arbiter.ingest import ingest_pdf
from arbiter.review.closest import Closest, closest_text, word_diff
from arbiter.review.context import issue_context, page_opening
from arbiter.review.packet_view import closest_markdown, passage_markdown, unreadable_note
from arbiter.review.render import MarkKind, drawn_marks, page_marks
from arbiter.verifiers.span_boxes import boxes_for_span, word_span

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


DIFFS = [
    # (case, quote, page text, the page's words marked as differing, the quote's words marked)
    ("one word changed", "TMB is 4 mutations per megabase", "TMB is 9 mutations per megabase", ["9"], ["4"]),
    ("a word left out", "burden is high today", "burden is today", [], ["high"]),
    ("case and punctuation are not differences", "Tumor burden, high.", "tumor burden high", [], []),
    ("everything differs", "alpha beta", "gamma delta", ["gamma", "delta"], ["alpha", "beta"]),
]


@pytest.mark.parametrize(
    ("quote", "found", "page_marked", "quote_marked"), [c[1:] for c in DIFFS], ids=[c[0] for c in DIFFS]
)
def test_word_diff_marks_the_words_that_differ(
    quote: str, found: str, page_marked: list[str], quote_marked: list[str]
) -> None:
    """Comparing a quote with the closest page text marks exactly the words one side has and the other lacks."""
    quoted, on_page = word_diff(quote, found)
    assert [w.text for w in on_page if w.differs] == page_marked
    assert [w.text for w in quoted if w.differs] == quote_marked
    assert " ".join(w.text for w in on_page) == " ".join(found.split())


def test_closest_text_finds_the_near_miss_on_the_page(guardant: DocumentBundle) -> None:
    """A quote with one wrong number is matched to the sentence the page holds, whole words, the number marked."""
    closest = closest_text("Tumor mutational burden is 11 mutations per megabase", guardant, [1, 2])
    assert closest is not None
    assert closest.page == 1
    assert [w.text for w in closest.found if w.differs] == ["4"]
    assert [w.text for w in closest.quoted if w.differs] == ["11"]
    page_text = guardant.pages[0].text
    assert page_text[closest.start : closest.end] == "Tumor mutational burden is 4 mutations per megabase"


def test_nothing_alike_is_none(guardant: DocumentBundle) -> None:
    """A quote unlike anything on the pages gives no closest text rather than a random one."""
    assert closest_text("Zebra quokka xylophone jamboree", guardant, [1]) is None


def _not_found(snippet: str) -> tuple[Issue, dict[str, Any]]:
    answer = json.loads((FIXTURES / "demo" / "gen-guardant-02.json").read_text())
    answer["segments"][0]["types"][0]["evidence"][1]["snippet"] = snippet
    issue = Issue(
        issue_id="V4-0001",
        code="V4.SNIPPET_NOT_FOUND",
        verifier="V4",
        severity="MAJOR",
        message="not found",
        location={"segment_index": 1, "page": 1, "path": "/segments/0/types/0/evidence/1"},
    )
    return issue, answer


def test_a_quote_not_found_shows_the_closest_text_with_its_differences(guardant: DocumentBundle) -> None:
    """The issue's context holds the closest page text and the passage around it, not the page's opening."""
    issue, answer = _not_found("Tumor mutational burden is 11 mutations per megabase")
    ctx = issue_context(issue, guardant, answer)
    assert ctx.closest is not None
    assert ctx.passage is not None
    assert ctx.passage.match is not None
    assert "Tumor mutational burden is 4 mutations per megabase" in ctx.passage.match
    shown = closest_markdown(ctx.closest)
    assert ":red-background[**4**]" in shown
    assert ":red-background[**11**]" in shown


def test_closest_text_is_shown_as_text_never_markdown() -> None:
    """Words from the document are escaped: a link, emphasis or colour in them is shown as written."""
    quoted, found = word_diff("see [x](http://e/) now", "see **bold** :red[now]")
    shown = closest_markdown(Closest(1, 0, 1, 60.0, found, quoted))
    assert "[x](http" not in shown
    assert "**bold**" not in shown
    assert ":red[now]" not in shown
    assert r"\[x\]\(http" in shown


def test_a_quote_like_nothing_on_the_page_has_no_closest_text(guardant: DocumentBundle) -> None:
    """An invented quote gets no closest text; the page's opening is shown as before."""
    issue, answer = _not_found("Bone marrow aspirate shows 40% myeloblasts with Auer rods.")
    assert issue_context(issue, guardant, answer).closest is None


EMPTY_PAGES = [
    (OcrStatus.NO_TEXT, False, "OCR found no readable text on it"),
    (OcrStatus.UNAVAILABLE, False, "OCR is not available"),
    (OcrStatus.DISABLED, False, "OCR is turned off"),
    (OcrStatus.FAILED, False, "OCR failed on it"),
    (OcrStatus.APPLIED, True, "OCR read it but found no words"),
    (OcrStatus.NOT_NEEDED, True, "no text at all: it looks blank"),
    (None, True, "no text at all: it looks blank"),
]


@pytest.mark.parametrize(("status", "layer", "why"), EMPTY_PAGES)
def test_an_empty_page_says_why_it_has_no_text(status: OcrStatus | None, layer: bool, why: str) -> None:
    """The text panel of a page without text says why: no text layer and what OCR did, or a blank page."""
    page = Page(
        page_num=5, text="", has_text_layer=layer, ocr_applied=status == OcrStatus.APPLIED, ocr_status=status
    )
    passage = page_opening(page)
    assert passage.note is not None
    assert why in passage.note
    assert passage.note.startswith("Page 5 ")
    assert why in passage_markdown(passage).replace("\\", "")


def test_a_page_with_text_has_no_note() -> None:
    """A page with words shows them, without a note."""
    assert page_opening(Page(page_num=1, text="Some words")).note is None


UNREADABLE = [
    ("pdf_broken", "PDF is damaged"),
    ("pdf_empty", "PDF is empty"),
    ("pdf_encrypted", "PDF is password-protected"),
    ("pdf_not_pdf", "Not a PDF"),
]


@pytest.mark.parametrize(("reason", "label"), UNREADABLE)
def test_a_damaged_packet_says_so_plainly(reason: str, label: str) -> None:
    """A packet whose file could not be read says so in words, with no page count and no engine error name."""
    note = unreadable_note(_damaged(reason))
    assert note is not None
    assert label in note
    assert "no pages to show" in note
    assert "Pdfium" not in note
    assert "0 pages" not in note


def test_a_readable_packet_has_no_unreadable_note() -> None:
    """An ordinary packet is not called damaged."""
    assert unreadable_note(_damaged("blocker_present", pages=3)) is None


def _damaged(reason: str, pages: int = 0) -> SMEPacket:
    return SMEPacket.model_validate(
        {
            "packet_id": "pkt-1",
            "doc_id": "doc",
            "pdf_filename": "doc.pdf",
            "pdf_path": "/nowhere/doc.pdf",
            "pdf_sha256": "0" * 64,
            "total_pages": pages,
            "escalation_reason": reason,
            "escalation_message": "The PDF is damaged: its internal structure could not be read.",
            "priority": 0,
            "document_bundle_path": None,
            "primary_agent_classification": None,
            "final_classification": None,
            "v5_decision": None,
            "total_issues": 0,
            "issues_summary": [],
            "retry_log": [],
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "run_id": "run-1",
            "policy_version": "p1",
        }
    )
