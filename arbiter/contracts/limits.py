"""Size limits on every input (the profile's [limits] table): a classification's bytes, its segments, its
evidence items and their text, its reasoning, and a reviewer's notes. Too much is refused in one plain line
before anything of it is checked or stored: a run escalates that document (`classification_too_large`) and
goes on; the store refuses a review (TooLarge)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from arbiter.contracts.classification import Strict

TOO_LARGE = "classification_too_large"


class Limits(Strict):
    classification_bytes: int = Field(
        default=2_000_000, ge=1_000, description="Largest classification JSON accepted, in bytes (UTF-8)."
    )
    segments: int = Field(default=2_000, ge=1, description="Most segments one classification may have.")
    evidence_items: int = Field(
        default=10_000,
        ge=1,
        description="Most evidence items one classification may have, all segments together.",
    )
    evidence_chars: int = Field(default=5_000, ge=100, description="Longest evidence snippet or anchor.")
    reasoning_chars: int = Field(
        default=20_000, ge=100, description="Longest classification_reasoning of one segment."
    )
    review_notes_chars: int = Field(
        default=10_000, ge=100, description="Longest review notes a reviewer may save."
    )


def classification_problem(raw: str | bytes | None, limits: Limits) -> str | None:
    """One plain line when the classification is over a limit, else None (a classification that is not JSON
    at all is left to the schema check, which says so)."""
    if raw is None:
        return None
    size = len(raw.encode("utf-8", errors="replace")) if isinstance(raw, str) else len(raw)
    if size > limits.classification_bytes:
        return (
            f"The classification is {size:,} bytes, more than the {limits.classification_bytes:,} the profile "
            "allows ([limits] classification_bytes); it was not checked or stored."
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return structure_problem(data, limits)


def structure_problem(data: Any, limits: Limits) -> str | None:
    """The first limit a parsed classification (or a reviewer's answer) breaks, in one line; else None."""
    segments = data.get("segments") if isinstance(data, dict) else None
    if not isinstance(segments, list):
        return None
    if len(segments) > limits.segments:
        return _too_many("segments", len(segments), limits.segments, "segments")
    evidence = 0
    for index, segment in enumerate(segments, 1):
        if not isinstance(segment, dict):
            continue
        reasoning = segment.get("classification_reasoning")
        if isinstance(reasoning, str) and len(reasoning) > limits.reasoning_chars:
            what = f"classification_reasoning of segment {index}"
            return _too_long(what, len(reasoning), limits.reasoning_chars, "reasoning_chars")
        for assessment in segment.get("types") or []:
            items = assessment.get("evidence") if isinstance(assessment, dict) else None
            for item in items if isinstance(items, list) else []:
                evidence += 1
                if evidence > limits.evidence_items:
                    return _too_many("evidence items", evidence, limits.evidence_items, "evidence_items")
                for key in ("snippet", "anchor"):
                    text = item.get(key) if isinstance(item, dict) else None
                    if isinstance(text, str) and len(text) > limits.evidence_chars:
                        what = f"evidence {key} in segment {index}"
                        return _too_long(what, len(text), limits.evidence_chars, "evidence_chars")
    return None


def answer_problem(data: Any, limits: Limits, *, what: str = "answer") -> str | None:
    """One plain line when a reviewer's answer (or draft) is over a limit, else None: its JSON size (the
    classification's bytes plus the notes' characters, for a draft) and the classification's structure."""
    allowed = limits.classification_bytes + (limits.review_notes_chars * 4 if what == "draft" else 0)
    size = len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))
    if size > allowed:
        return f"The {what} is {size:,} bytes, more than the {allowed:,} allowed; nothing was saved."
    problem = structure_problem(data, limits)
    if problem is None:
        return None
    return problem.replace("The classification", f"The {what}", 1).replace(
        "it was not checked or stored", "nothing was saved"
    )


def notes_problem(notes: str, limits: Limits) -> str | None:
    if len(notes) > limits.review_notes_chars:
        return (
            f"The review notes are {len(notes):,} characters, more than the {limits.review_notes_chars:,} "
            "allowed: shorten them and save again."
        )
    return None


def _too_many(what: str, found: int, limit: int, key: str) -> str:
    return (
        f"The classification has {found:,} {what} or more, more than the {limit:,} the profile allows "
        f"([limits] {key}); it was not checked or stored."
    )


def _too_long(what: str, found: int, limit: int, key: str) -> str:
    return (
        f"The classification's {what} is {found:,} characters, more than the {limit:,} the profile allows "
        f"([limits] {key}); it was not checked or stored."
    )
