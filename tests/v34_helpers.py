"""Builders for the V3/V4/textmatch tests: tiny DocumentBundles and classification dicts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import BlockType, ClassificationOutput, DocumentBundle, LineBox, Page, Paragraph
from arbiter.contracts.profile import Profile, load_profile
from arbiter.contracts.verification import VerifierResult
from arbiter.verifiers.base import Subject, Verifier, VerifyContext

PROFILE: Profile = load_profile()
TYPES = PROFILE.taxonomy.document_types
LINE_HEIGHT = 14.0
CHAR_WIDTH = 6.0


def line_boxes(text: str) -> list[LineBox]:
    """One LineBox per "\\n"-separated line: 6 pt per character from x=72, 14 pt per line from the top."""
    boxes: list[LineBox] = []
    offset = 0
    for number, line in enumerate(text.split("\n")):
        top = 760.0 - number * LINE_HEIGHT
        box = (72.0, top - 10.0, 72.0 + CHAR_WIDTH * len(line), top)
        boxes.append(LineBox(start=offset, end=offset + len(line), box=box))
        offset += len(line) + 1
    return boxes


def make_page(
    num: int,
    text: str = "",
    *,
    paragraphs: list[tuple[str, str]] | None = None,
    has_text_layer: bool = True,
    ocr_applied: bool = False,
) -> Page:
    """A page; `paragraphs` are (text, block_type) pairs joined by "\\n" into page.text when given."""
    paras: list[Paragraph] = []
    if paragraphs is not None:
        offset = 0
        for para_text, block in paragraphs:
            paras.append(
                Paragraph(
                    text=para_text, block_type=BlockType(block), start=offset, end=offset + len(para_text)
                )
            )
            offset += len(para_text) + 1
        text = "\n".join(p for p, _ in paragraphs)
    return Page(
        page_num=num,
        text=text if has_text_layer or ocr_applied else "",
        paragraphs=paras,
        has_text_layer=has_text_layer,
        ocr_applied=ocr_applied,
        width=612.0,
        height=792.0,
        lines=line_boxes(text) if has_text_layer or ocr_applied else [],
    )


def make_bundle(*pages: Page | str, doc_id: str = "doc-1") -> DocumentBundle:
    """A bundle of the given pages; a plain string becomes a text page numbered by its position."""
    built = [p if isinstance(p, Page) else make_page(i, p) for i, p in enumerate(pages, start=1)]
    return DocumentBundle(
        doc_id=doc_id,
        file_path=f"/fixtures/{doc_id}.pdf",
        file_sha256="0" * 64,
        total_pages=len(built),
        pages=built,
        extractor={"name": "test", "version": "1"},
        processing_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


# An evidence item as (page, snippet) or (page, snippet, anchor).
Ev = tuple[Any, ...]


def evidence(item: Ev) -> dict[str, Any]:
    page, snippet, *rest = item
    return {"page": page, "snippet": snippet, "anchor": rest[0] if rest else None}


def segment(
    start: int,
    end: int,
    dominant: str,
    evidence_by_type: Mapping[str, Sequence[Ev]] | None = None,
    index: int = 1,
) -> dict[str, Any]:
    """A segment whose dominant type has share 1.0; every other profile type is NO_EVIDENCE/0.0."""
    evidence_by_type = evidence_by_type or {}
    types = []
    for doc_type in TYPES:
        items = [evidence(e) for e in evidence_by_type.get(doc_type, [])]
        primary = doc_type == dominant
        types.append(
            {
                "document_type": doc_type,
                "presence_level": "PRIMARY" if primary else ("MENTIONED" if items else "NO_EVIDENCE"),
                "share": 1.0 if primary else 0.0,
                "confidence": 0.9,
                "evidence": items,
            }
        )
    return {
        "segment_index": index,
        "start_page": start,
        "end_page": end,
        "segment_page_count": end - start + 1,
        "dominant_type": dominant,
        "classification_reasoning": "",
        "types": types,
    }


def classification(*segments: dict[str, Any], doc_id: str = "doc-1") -> dict[str, Any]:
    """A classification dict of the given segments (renumbered 1, 2, ...), mixture weighted by pages."""
    segs = [dict(s, segment_index=i) for i, s in enumerate(segments, start=1)]
    pages = sum(s["segment_page_count"] for s in segs) or 1
    mixture = [
        {
            "document_type": t,
            "share": round(sum(s["segment_page_count"] for s in segs if s["dominant_type"] == t) / pages, 4),
        }
        for t in TYPES
    ]
    return {
        "doc_id": doc_id,
        "producer": {"name": "test", "version": "1"},
        "number_of_segments": len(segs),
        "dominant_type": max(mixture, key=lambda m: m["share"])["document_type"],
        "vendor_signals": [],
        "segments": segs,
        "document_mixture": mixture,
    }


def subject(data: dict[str, Any]) -> Subject:
    return Subject(raw=json.dumps(data), data=data, model=ClassificationOutput.model_validate(data))


# The bundled profile without its page reader: the lexicons decide the content rules.
LEXICONS: Profile = PROFILE.model_copy(
    update={"content": PROFILE.content.model_copy(update={"reader": None})}
)


def run(
    verifier: Verifier, data: dict[str, Any], bundle: DocumentBundle, profile: Profile = PROFILE
) -> VerifierResult:
    return verifier.verify(subject(data), bundle, profile, VerifyContext())


def codes(result: VerifierResult) -> list[str]:
    return [issue.code for issue in result.issues]
