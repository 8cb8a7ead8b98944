"""Text context of an issue (docs/design.md §8.3): the paragraph it is about, 2 before and 3 after, plus its segment.

The passage is found from V4's highlight when the issue has one, else by locating the evidence snippet
the issue points at, else the issue's page is shown from its top. Running headers and footers are left
out of the surrounding paragraphs: they repeat on every page and tell a reviewer nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import BlockType, DocumentBundle, Issue, OcrStatus, Page
from arbiter.review.closest import Closest, closest_text
from arbiter.verifiers.textmatch import PageIndex

BEFORE = 2
AFTER = 3
_EVIDENCE_PATH = re.compile(r"^/segments/(\d+)/types/(\d+)/evidence/(\d+)")
_NOISE = {BlockType.HEADER, BlockType.FOOTER}
# Issues about a quote the page does not hold: the closest text there is shown with its differences.
NOT_ON_PAGE = frozenset({"V4.SNIPPET_NOT_FOUND", "V4.SNIPPET_NUMBERS_DIFFER"})


@dataclass(frozen=True)
class Passage:
    """Paragraphs around a match; `match` is None when the issue names a page but no exact place."""

    page: int
    before: tuple[str, ...]
    match: str | None
    after: tuple[str, ...]
    span: tuple[int, int] | None = None  # the matched characters within `match`
    note: str | None = None  # why there is nothing to show (a page without text)


@dataclass(frozen=True)
class SegmentInfo:
    index: int
    start_page: Any
    end_page: Any
    dominant_type: Any
    reasoning: str


@dataclass(frozen=True)
class EvidenceInfo:
    page: Any
    snippet: str
    anchor: str | None


@dataclass(frozen=True)
class IssueContext:
    issue: Issue
    page: int | None  # the page a reviewer should look at for this issue
    passage: Passage | None
    segment: SegmentInfo | None
    evidence: EvidenceInfo | None
    closest: Closest | None = None  # for a quote not on its page: the page's text most like it


def paragraph_spans(page: Page) -> list[tuple[int, int, str, BlockType]]:
    """(start, end, text, block type) of each paragraph; offsets recovered by search in old bundles."""
    if any(p.end > p.start for p in page.paragraphs):
        return [(p.start, p.end, p.text, p.block_type) for p in page.paragraphs]
    spans: list[tuple[int, int, str, BlockType]] = []
    cursor = 0
    for p in page.paragraphs:
        at = page.text.find(p.text, cursor)
        start = at if at >= 0 else cursor
        end = start + len(p.text)
        spans.append((start, end, p.text, p.block_type))
        cursor = end if at >= 0 else cursor
    return spans


def passage_at(page: Page, start: int, end: int, before: int = BEFORE, after: int = AFTER) -> Passage:
    """The paragraph holding character `start` of page.text with its neighbours (headers/footers left out)."""
    spans = paragraph_spans(page)
    if not spans:
        text = page.text
        return Passage(page.page_num, (), text or None, (), (start, end) if text else None)
    hit = next((i for i, s in enumerate(spans) if s[0] <= start < max(s[1], s[0] + 1)), None)
    if hit is None:  # between paragraphs: take the next one, or the last
        hit = next((i for i, s in enumerate(spans) if s[0] >= start), len(spans) - 1)
    p_start, _, text, _ = spans[hit]
    lo = max(0, start - p_start)
    hi = min(len(text), max(lo, end - p_start))
    prior = [s[2] for s in spans[:hit] if s[3] not in _NOISE][-before:] if before else []
    later = [s[2] for s in spans[hit + 1 :] if s[3] not in _NOISE][:after]
    return Passage(page.page_num, tuple(prior), text, tuple(later), (lo, hi) if hi > lo else None)


def page_opening(page: Page, count: int = BEFORE + 1 + AFTER) -> Passage:
    """The first paragraphs of a page, for an issue about the page as a whole."""
    texts = [s[2] for s in paragraph_spans(page) if s[3] not in _NOISE][:count]
    if not texts and page.text.strip():
        texts = [page.text.strip()]
    return Passage(page.page_num, (), None, tuple(texts), note=None if texts else empty_page_reason(page))


# Why a page has no text, by what OCR did with it (docs/design.md §7.1).
_NO_TEXT_WHY = {
    OcrStatus.NO_TEXT: "is a scanned image with no text layer, and OCR found no readable text on it: it may be "
    "blank, or too faint to read.",
    OcrStatus.UNAVAILABLE: "is a scanned image with no text layer, and OCR is not available here, so it was "
    "not read.",
    OcrStatus.DISABLED: "is a scanned image with no text layer, and OCR is turned off, so it was not read.",
    OcrStatus.FAILED: "is a scanned image with no text layer, and OCR failed on it.",
    OcrStatus.APPLIED: "is a scanned image; OCR read it but found no words.",
}


def empty_page_reason(page: Page) -> str:
    """Why a page's text is empty, in words: what OCR did with a scan, or a page with no text at all."""
    why = _NO_TEXT_WHY.get(page.ocr_status) if page.ocr_status is not None else None
    if why is None and not page.has_text_layer and not page.ocr_applied:
        why = "is a scanned image with no text layer, and OCR was not run on it."
    return f"Page {page.page_num} {why or 'has no text at all: it looks blank.'} Look at the page image."


def _segment(classification: Any, number: int | None) -> SegmentInfo | None:
    segments = classification.get("segments") if isinstance(classification, dict) else None
    if not isinstance(segments, list) or number is None or not 1 <= number <= len(segments):
        return None
    seg = segments[number - 1]
    if not isinstance(seg, dict):
        return None
    reasoning = seg.get("classification_reasoning")
    return SegmentInfo(
        index=number,
        start_page=seg.get("start_page"),
        end_page=seg.get("end_page"),
        dominant_type=seg.get("dominant_type"),
        reasoning=reasoning if isinstance(reasoning, str) else "",
    )


def _evidence(classification: Any, path: str) -> EvidenceInfo | None:
    found = _EVIDENCE_PATH.match(path or "")
    if not found or not isinstance(classification, dict):
        return None
    i, j, k = (int(g) for g in found.groups())
    try:
        item = classification["segments"][i]["types"][j]["evidence"][k]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(item, dict) or not isinstance(item.get("snippet"), str):
        return None
    anchor = item.get("anchor")
    return EvidenceInfo(item.get("page"), item["snippet"], anchor if isinstance(anchor, str) else None)


def issue_context(
    issue: Issue, bundle: DocumentBundle | None, classification: Any, fuzzy_threshold: float = 92.0
) -> IssueContext:
    """Everything a reviewer needs beside one issue's message; never raises on a malformed classification."""
    evidence = _evidence(classification, issue.location.path)
    segment_number = issue.location.segment_index
    if segment_number is None and (found := _EVIDENCE_PATH.match(issue.location.path or "")):
        segment_number = int(found.group(1)) + 1
    segment = _segment(classification, segment_number)
    page_num = issue.highlight.page if issue.highlight else issue.location.page
    if page_num is None and evidence is not None and isinstance(evidence.page, int):
        page_num = evidence.page
    if page_num is None and segment is not None and isinstance(segment.start_page, int):
        page_num = segment.start_page
    passage: Passage | None = None
    page = bundle.page(page_num) if bundle is not None and page_num is not None else None
    closest = None
    if bundle is not None and evidence is not None and issue.code in NOT_ON_PAGE:
        claimed = evidence.page if isinstance(evidence.page, int) and bundle.page(evidence.page) else None
        span = segment_pages(segment, bundle.total_pages)
        closest = closest_text(evidence.snippet, bundle, [claimed] if claimed else span, fuzzy_threshold)
        if closest is not None:
            page_num, page = closest.page, bundle.page(closest.page)
    if bundle is not None and page is not None:
        if closest is not None:
            passage = passage_at(page, closest.start, closest.end)
        elif issue.highlight is not None and issue.highlight.page == page.page_num:
            passage = passage_at(page, issue.highlight.start, issue.highlight.end)
        elif evidence is not None:
            match = PageIndex.shared(bundle, fuzzy_threshold).find(evidence.snippet, page.page_num)
            if match is not None:
                passage = passage_at(page, match.start, match.end)
        if passage is None:
            passage = page_opening(page)
    if bundle is not None and page is None:
        page_num = None  # the document has no such page: nothing to show
    return IssueContext(issue, page_num, passage, segment, evidence, closest)


def segment_pages(segment: SegmentInfo | None, total: int) -> list[int]:
    """The pages of a segment that the document has (none when its pages are not numbers)."""
    if segment is None or not isinstance(segment.start_page, int) or not isinstance(segment.end_page, int):
        return []
    return list(range(max(1, segment.start_page), min(segment.end_page, total) + 1))
