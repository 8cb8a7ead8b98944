"""What a verifier checks: the raw answer text, its parsed form and its schema problems.

These types sit in the contracts layer so that loading a raw answer (arbiter.contracts.schemas) needs
nothing from the verifiers above it; arbiter.verifiers.base re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts.classification import ClassificationOutput


@dataclass(frozen=True)
class SchemaProblem:
    """One jsonschema error on the raw classification, with a JSON Pointer to the offending value."""

    path: str  # JSON Pointer, e.g. "/segments/0/types/2/confidence"
    message: str  # plain English
    validator: str  # jsonschema keyword that failed: "type", "required", "maximum", ...
    value: Any = None


@dataclass(frozen=True)
class Subject:
    """What is being verified: the raw JSON text, its parsed form and, when it fits the schema, the model.

    Built by arbiter.contracts.schemas.load_subject. `model` is None when the text is not JSON (`parse_error`)
    or does not fit the ClassificationOutput schema (`schema_problems`); V2-V4 then return SKIPPED.
    """

    raw: str
    data: Any = None
    model: ClassificationOutput | None = None
    parse_error: str | None = None
    schema_problems: tuple[SchemaProblem, ...] = ()
