"""The grounded-answer subject: a raw item read into its model, and its retrieved chunks as a bundle.

The chunks become the pages of a DocumentBundle (chunk i is page i + 1), so the medical V4's locator
(verifiers/textmatch.py) finds quotes in chunks exactly as it finds snippets on pages, with spans.
Nothing here raises for bad input: problems are recorded on the subject for V1 to report.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

import jsonschema
from pydantic import ValidationError

from arbiter.contracts import DocumentBundle, Extractor, Page
from arbiter.contracts.grounded import Chunk, GroundedItem
from arbiter.contracts.schemas import schema_problems
from arbiter.verifiers.base import SchemaProblem, Subject

CONTEXT_EXTRACTOR = Extractor(name="retrieved-chunks", version="1")


@dataclass(frozen=True)
class GroundedSubject(Subject):
    """A Subject whose model is a GroundedItem (`item`; None when it is not JSON or does not fit)."""

    item: GroundedItem | None = None


@cache
def item_validator() -> jsonschema.Draft202012Validator:
    schema = GroundedItem.model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_item(raw: str | bytes) -> GroundedSubject:
    """Parse and schema-check one raw item; problems are recorded on the subject, never raised."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        shown = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else ""
        return GroundedSubject(shown, parse_error=f"The item is not UTF-8 text (bad byte at {exc.start}).")
    body = text.removeprefix("\ufeff")
    if not body.strip():
        return GroundedSubject(text, parse_error="The item is empty.")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return GroundedSubject(text, parse_error=f"The item is not valid JSON{where}.")
    try:
        return GroundedSubject(text, data, item=GroundedItem.model_validate(data, strict=True))
    except (ValidationError, RecursionError, ValueError, TypeError, OverflowError):
        pass
    problems = schema_problems(data, item_validator())
    if not problems:
        try:
            return GroundedSubject(text, data, item=GroundedItem.model_validate(data))
        except (ValidationError, RecursionError, ValueError, TypeError, OverflowError):
            problems = (SchemaProblem("", "The item does not fit the grounded-answer schema.", "model"),)
    return GroundedSubject(text, data, schema_problems=problems)


def context_bundle(item_id: str, chunks: list[Chunk], source: str = "") -> DocumentBundle:
    """The retrieved chunks as a bundle: chunk i is page i + 1, its text the page's text."""
    digest = hashlib.sha256(
        json.dumps([c.model_dump() for c in chunks], sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    return DocumentBundle(
        doc_id=item_id,
        file_path=source,
        file_sha256=digest,
        total_pages=len(chunks),
        pages=[Page(page_num=i + 1, text=chunk.text) for i, chunk in enumerate(chunks)],
        extractor=CONTEXT_EXTRACTOR,
        processing_timestamp=datetime(
            2026, 1, 1, tzinfo=UTC
        ),  # fixed: the bundle is a pure function of the chunks
    )


def bundle_for(subject: GroundedSubject, item_id: str, source: str = "") -> DocumentBundle:
    """The context bundle of a loaded subject (no pages when the item could not be read)."""
    return context_bundle(item_id, subject.item.chunks if subject.item else [], source)
