"""Builders for the V1/V2 tests: a consistent classification dict, a tiny bundle, and fix application."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import jsonpatch

from arbiter.contracts import DocumentBundle, Extractor, Page, VerifierResult
from arbiter.contracts.profile import load_profile
from arbiter.contracts.schemas import load_subject
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.v1_schema import V1Schema
from arbiter.verifiers.v2_consistency import V2Consistency

PROFILE = load_profile()
TYPES = PROFILE.taxonomy.document_types
DOC_ID = "doc-1"


def make_bundle(
    total_pages: int = 3,
    doc_id: str = DOC_ID,
    *,
    blank: Sequence[int] = (),
    no_text_layer: Sequence[int] = (),
) -> DocumentBundle:
    """A bundle of `total_pages` pages with text, except the blank ones and those without a text layer."""
    pages = []
    for number in range(1, total_pages + 1):
        scanned = number in no_text_layer
        text = "" if number in blank or scanned else f"Report text on page {number}."
        pages.append(Page(page_num=number, text=text, has_text_layer=not scanned))
    return DocumentBundle(
        doc_id=doc_id,
        file_path=f"{doc_id}.pdf",
        file_sha256="0" * 64,
        total_pages=total_pages,
        pages=pages,
        extractor=Extractor(name="test", version="1"),
        processing_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


def make_segment(index: int, start: int, end: int, dominant: str) -> dict[str, Any]:
    """A segment that is wholly `dominant` (PRIMARY, with evidence) and lists every other type as absent."""
    types = []
    for name in TYPES:
        present = name == dominant
        types.append(
            {
                "document_type": name,
                "presence_level": "PRIMARY" if present else "NO_EVIDENCE",
                "share": 1.0 if present else 0.0,
                "confidence": 0.9,
                "evidence": [{"page": start, "snippet": f"Report text on page {start}."}] if present else [],
            }
        )
    return {
        "segment_index": index,
        "start_page": start,
        "end_page": end,
        "segment_page_count": end - start + 1,
        "dominant_type": dominant,
        "classification_reasoning": "Test segment.",
        "types": types,
    }


def make_classification(
    ranges: Sequence[tuple[int, int, str]] = ((1, 2, "LAB_REPORT"), (3, 3, "ADMINISTRATIVE")),
    doc_id: str = DOC_ID,
) -> dict[str, Any]:
    """A classification that passes V1 and V2 against make_bundle(max end page)."""
    segments = [make_segment(i + 1, start, end, dominant) for i, (start, end, dominant) in enumerate(ranges)]
    pages = dict.fromkeys(TYPES, 0)
    for start, end, dominant in ranges:
        pages[dominant] += max(end - start + 1, 0)
    total = sum(pages.values()) or 1
    mixture = [{"document_type": name, "share": round(pages[name] / total, 4)} for name in TYPES]
    return {
        "doc_id": doc_id,
        "producer": {"name": "test-model", "version": "1"},
        "number_of_segments": len(segments),
        "dominant_type": max(TYPES, key=lambda name: (pages[name], -TYPES.index(name))),
        "vendor_signals": [],
        "segments": segments,
        "document_mixture": mixture,
    }


def run_v1(data: Any, bundle: DocumentBundle | None = None) -> VerifierResult:
    raw = data if isinstance(data, str | bytes) else json.dumps(data)
    return V1Schema().verify(load_subject(raw), bundle or make_bundle(), PROFILE, VerifyContext())


def run_v2(data: Any, bundle: DocumentBundle | None = None, llm: Any = None) -> VerifierResult:
    raw = data if isinstance(data, str | bytes) else json.dumps(data)
    return V2Consistency().verify(load_subject(raw), bundle or make_bundle(), PROFILE, VerifyContext(llm=llm))


def codes(result: VerifierResult) -> list[str]:
    return sorted(issue.code for issue in result.issues)


def apply_fixes(data: dict[str, Any], *results: VerifierResult) -> dict[str, Any]:
    """Apply every fixable issue's patch once (identical operations merged), as the fix engine does."""
    seen: set[str] = set()
    ops = []
    for result in results:
        for issue in result.issues:
            for op in issue.fix or []:
                key = json.dumps(op, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    ops.append(op)
    return jsonpatch.JsonPatch(ops).apply(copy.deepcopy(data))
