"""Issue text context (2 paragraphs before, 3 after, docs/design.md §8.3) and how passages are shown."""

from __future__ import annotations

from typing import Any

import pytest

from arbiter.contracts import BlockType, DocumentBundle, Highlight, Issue, Location, Page, Paragraph
from arbiter.review.context import Passage, issue_context, page_opening, passage_at
from arbiter.review.packet_view import escape, passage_markdown

TEXTS = ["Header line", "P1", "P2", "P3 target words here", "P4", "P5", "P6", "P7", "Page 1 of 1"]
KINDS = [BlockType.HEADER] + [BlockType.PARAGRAPH] * 7 + [BlockType.FOOTER]


def _page() -> Page:
    paragraphs, cursor = [], 0
    for text, kind in zip(TEXTS, KINDS, strict=True):
        paragraphs.append(Paragraph(text=text, block_type=kind, start=cursor, end=cursor + len(text)))
        cursor += len(text) + 1
    return Page(page_num=1, text="\n".join(TEXTS), paragraphs=paragraphs)


def _bundle() -> DocumentBundle:
    return DocumentBundle.model_validate(
        {
            "doc_id": "d",
            "file_path": "d.pdf",
            "file_sha256": "0" * 64,
            "total_pages": 1,
            "pages": [_page().model_dump()],
            "extractor": {"name": "t", "version": "1"},
            "processing_timestamp": "2026-01-01T00:00:00Z",
        }
    )


def _issue(**kwargs: Any) -> Issue:
    return Issue(
        issue_id="V4-0001",
        code="V4.SNIPPET_WRONG_PAGE",
        verifier="V4",
        severity="MAJOR",
        message="m",
        **kwargs,
    )


def test_two_before_three_after() -> None:
    """The matched paragraph comes with two paragraphs before it and three after."""
    page = _page()
    at = page.text.index("target")
    passage = passage_at(page, at, at + len("target words"))
    assert passage.before == ("P1", "P2")
    assert passage.match == "P3 target words here"
    assert passage.after == ("P4", "P5", "P6")
    assert passage.span == (3, 15)


def test_headers_and_footers_are_left_out() -> None:
    """Running headers and footers are not shown as context."""
    page = _page()
    first = passage_at(page, page.text.index("P1"), page.text.index("P1") + 2)
    assert first.before == ()
    last = passage_at(page, page.text.index("P7"), page.text.index("P7") + 2)
    assert last.after == ()


def test_offsets_are_recovered_when_the_bundle_has_none() -> None:
    """Bundles written before paragraph offsets existed still find the paragraph by its text."""
    page = _page()
    old = page.model_copy(
        update={"paragraphs": [Paragraph(text=p.text, block_type=p.block_type) for p in page.paragraphs]}
    )
    at = old.text.index("target")
    assert passage_at(old, at, at + 6).match == "P3 target words here"


def test_highlighted_issue_uses_its_span() -> None:
    """An issue with V4's highlight gets the passage around that exact place."""
    bundle = _bundle()
    at = bundle.pages[0].text.index("target")
    issue = _issue(highlight=Highlight(page=1, start=at, end=at + 6), location=Location(page=1))
    ctx = issue_context(issue, bundle, None)
    assert ctx.page == 1
    assert ctx.passage is not None
    assert ctx.passage.match == "P3 target words here"


def test_evidence_issue_locates_its_snippet() -> None:
    """An issue pointing at an evidence item finds the snippet on the page and shows its segment."""
    classification = {
        "segments": [
            {
                "start_page": 1,
                "end_page": 1,
                "dominant_type": "CLINICAL_NOTE",
                "classification_reasoning": "A note.",
                "types": [{"evidence": [{"page": 1, "snippet": "target words", "anchor": None}]}],
            }
        ]
    }
    issue = _issue(location=Location(path="/segments/0/types/0/evidence/0"))
    ctx = issue_context(issue, _bundle(), classification)
    assert ctx.segment is not None
    assert ctx.segment.reasoning == "A note."
    assert ctx.evidence is not None
    assert ctx.evidence.snippet == "target words"
    assert ctx.passage is not None
    assert ctx.passage.span == (3, 15)


def test_page_issue_shows_the_page_opening() -> None:
    """An issue naming only a page shows that page's first paragraphs."""
    ctx = issue_context(_issue(location=Location(page=1)), _bundle(), None)
    assert ctx.passage == page_opening(_bundle().pages[0])
    assert ctx.passage is not None
    assert ctx.passage.match is None


@pytest.mark.parametrize("classification", [None, {}, {"segments": "x"}, {"segments": [None]}, [1, 2]])
def test_malformed_classification_never_raises(classification: Any) -> None:
    """Issues on a classification that failed the schema still get a context (or none), never an error."""
    issue = _issue(location=Location(segment_index=1, path="/segments/0/types/0/evidence/0"))
    ctx = issue_context(issue, _bundle(), classification)
    assert ctx.segment is None


def test_missing_page_gives_no_page() -> None:
    """A page the document does not have is not offered as a page to show."""
    ctx = issue_context(_issue(location=Location(page=7)), _bundle(), None)
    assert ctx.page is None
    assert ctx.passage is None


def test_markdown_shows_document_text_literally() -> None:
    """Markdown, colour directives and LaTeX in document text are escaped."""
    assert escape("**bold** :red[x] $5 #1") == "\\*\\*bold\\*\\* \\:red\\[x\\] \\$5 \\#1"


def test_passage_markdown_highlights_the_match() -> None:
    """The matched words are highlighted and the neighbours greyed."""
    text = passage_markdown(Passage(1, ("before",), "P3 target words here", ("after",), (3, 15)))
    assert ":orange-background[**target words**]" in text
    assert text.startswith(":gray[before]")
    assert text.endswith(":gray[after]")
