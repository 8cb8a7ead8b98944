"""JSON Schemas of the contracts (`arbiter schema NAME`) and loading of a raw classification into a Subject.

Raw input is checked with jsonschema against the pydantic-generated schema so that V1 can name every
problem by its JSON Pointer in plain English; nothing here raises for bad input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from arbiter.contracts import (
    ArbiterDecision,
    ClassificationOutput,
    DocumentBundle,
    GroundTruthRecord,
    Issue,
    SMEPacket,
    SMEReview,
    VerificationOutcome,
    VerifierResult,
)
from arbiter.contracts.subject import SchemaProblem, Subject
from arbiter.errors import ConfigError

SCHEMAS: dict[str, type[BaseModel]] = {
    "bundle": DocumentBundle,
    "classification": ClassificationOutput,
    "issue": Issue,
    "verifier-result": VerifierResult,
    "decision": ArbiterDecision,
    "outcome": VerificationOutcome,
    "packet": SMEPacket,
    "review": SMEReview,
    "ground-truth": GroundTruthRecord,
}

PathPart = str | int

_JSON_MESSAGES = {
    "Expecting value": "expected a value",
    "Expecting ',' delimiter": "expected a comma",
    "Expecting ':' delimiter": "expected a colon",
    "Expecting property name enclosed in double quotes": "expected a field name in double quotes",
    "Extra data": "unexpected text after the end of the JSON",
    "Unterminated string starting at": "a text value is not closed with a double quote",
    "Invalid control character at": "a text value contains a raw control character",
    "Invalid \\escape": "a text value contains an invalid backslash escape",
}

_TYPE_WORDS = {
    "number": "a number",
    "integer": "a whole number",
    "string": "text",
    "array": "a list",
    "object": "an object",
    "boolean": "true or false",
    "null": "null",
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one contract, by its `arbiter schema` name."""
    model = SCHEMAS.get(name)
    if model is None:
        raise ConfigError(f"Unknown schema {name!r}; choose one of: {', '.join(SCHEMAS)}.")
    return model.model_json_schema()


@cache
def classification_validator() -> jsonschema.Draft202012Validator:
    """A validator for raw ClassificationOutput JSON (built once)."""
    schema = json_schema("classification")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_subject(raw: str | bytes) -> Subject:
    """Parse and schema-check a raw classification; problems are recorded on the Subject, never raised."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            shown = raw.decode("utf-8", errors="replace")
            return Subject(
                shown, parse_error=f"The classification is not UTF-8 text (bad byte at {exc.start})."
            )
    else:
        text = raw
    body = text[1:] if text.startswith("\ufeff") else text
    if not body.strip():
        return Subject(text, parse_error="The classification is empty.")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return Subject(text, parse_error=_decode_message(exc))
    except RecursionError:
        return Subject(text, parse_error="The classification is not valid JSON: it is nested too deeply.")
    except ValueError as exc:  # e.g. an integer with more digits than Python will convert
        return Subject(text, parse_error=f"The classification is not valid JSON: {exc}.")
    # Fast path: a strict model parse accepts only what the JSON Schema accepts (tests/test_schemas.py
    # checks that), and costs a fortieth of jsonschema. jsonschema runs only to explain a failure.
    try:
        return Subject(text, data, model=ClassificationOutput.model_validate(data, strict=True))
    except (ValidationError, RecursionError, ValueError, TypeError, OverflowError):
        pass
    problems = schema_problems(data)
    if problems:
        return Subject(text, data, schema_problems=problems)
    try:
        model = ClassificationOutput.model_validate(data)
    except ValidationError as exc:  # the schema and the model disagree only at the edges (huge numbers)
        return Subject(text, data, schema_problems=_pydantic_problems(exc))
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        problem = SchemaProblem("", f"The classification could not be read: {exc}", "model")
        return Subject(text, data, schema_problems=(problem,))
    return Subject(text, data, model=model)


def schema_problems(
    data: Any, validator: jsonschema.Draft202012Validator | None = None
) -> tuple[SchemaProblem, ...]:
    """Every schema problem of parsed data, sorted by path: against the classification's schema, or
    `validator`'s (another kind's item, arbiter/kinds)."""
    try:
        non_finite = {problem.path: problem for problem in _non_finite(data)}
        found: list[SchemaProblem] = []
        for error in (validator or classification_validator()).iter_errors(data):
            for problem in _describe(error):
                # NaN is not "out of range": report it once, as a value that is not a number.
                if problem.path in non_finite and problem.validator in {"minimum", "maximum"}:
                    continue
                found.append(problem)
        described = {problem.path for problem in found}
        found.extend(problem for path, problem in non_finite.items() if path not in described)
    except RecursionError:
        return (SchemaProblem("", "The classification is nested too deeply to check.", "depth"),)
    found.sort(key=lambda p: (_sort_key(p.path), p.validator, p.message))
    return tuple(_dedupe(found))


def pointer(parts: Any) -> str:
    """RFC 6901 JSON Pointer for a sequence of keys and indexes ("" is the whole document)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def display_path(parts: Any) -> str:
    """A readable path like segments[0].types[2].share; "the classification" for the root."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "the classification"


def _decode_message(exc: json.JSONDecodeError) -> str:
    what = exc.msg
    for prefix, words in _JSON_MESSAGES.items():
        if exc.msg.startswith(prefix):
            what = words
            break
    return f"The classification is not valid JSON: {what} at line {exc.lineno}, column {exc.colno}."


def _non_finite(data: Any) -> Iterator[SchemaProblem]:
    """NaN and Infinity are accepted by Python's json module but are not JSON numbers; walk iteratively."""
    stack: list[tuple[list[PathPart], Any]] = [([], data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            message = f"{display_path(parts)} must be a finite number, got {_describe_value(value)}"
            yield SchemaProblem(pointer(parts), message, "type", value)
        elif isinstance(value, dict):
            stack.extend(([*parts, str(key)], item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend(([*parts, index], item) for index, item in enumerate(value))


def _describe(error: jsonschema.ValidationError) -> list[SchemaProblem]:
    parts = list(error.absolute_path)
    where = display_path(parts)
    keyword = str(error.validator)
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "required":
        required: list[Any] = list(error.validator_value) if isinstance(error.validator_value, list) else []
        missing = [name for name in required if isinstance(instance, dict) and name not in instance]
        suffix = f" in {where}" if parts else ""
        return [
            SchemaProblem(pointer([*parts, name]), f'missing required field "{name}"{suffix}', keyword)
            for name in missing
        ]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = set(schema.get("properties", {}))
        suffix = f" in {where}" if parts else ""
        return [
            SchemaProblem(pointer([*parts, key]), f'unexpected field "{key}"{suffix}', keyword, instance[key])
            for key in instance
            if key not in allowed
        ]
    if keyword in {"type", "anyOf"}:
        expected = _expected_types(error)
        message = f"{where} must be {expected}, got {_describe_value(instance)}"
    elif keyword in {"minimum", "maximum"}:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            bound = f"between {_number(low)} and {_number(high)}"
        elif low is not None:
            bound = f"at least {_number(low)}"
        else:
            bound = f"at most {_number(high)}"
        message = f"{where} must be {bound}, got {_describe_value(instance)}"
    elif keyword == "minItems":
        count = error.validator_value
        message = (
            f"{where} must not be empty" if count == 1 else f"{where} must list at least {count} entries"
        )
    else:
        message = f"{where} is not allowed here ({keyword})"
    return [SchemaProblem(pointer(parts), message, keyword, instance)]


def _expected_types(error: jsonschema.ValidationError) -> str:
    if error.validator == "type":
        names = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    else:
        options: list[Any] = list(error.validator_value) if isinstance(error.validator_value, list) else []
        names = [sub.get("type") for sub in options if isinstance(sub, dict)]
    words = [_TYPE_WORDS.get(str(name), str(name)) for name in names if name]
    if not words:
        return "of a different form"
    return " or ".join(words)


def _describe_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the value {'true' if value else 'false'}"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int | float):
        return f"the number {_number(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, list):
        return "an empty list" if not value else f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return "an unexpected value"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _pydantic_problems(exc: ValidationError) -> tuple[SchemaProblem, ...]:
    problems = [
        SchemaProblem(
            pointer(err["loc"]),
            f"{display_path(err['loc'])} is not valid: {err['msg'].lower()}",
            str(err["type"]),
            err.get("input"),
        )
        for err in exc.errors()
    ]
    return tuple(sorted(problems, key=lambda p: _sort_key(p.path)))


def _sort_key(path: str) -> tuple[tuple[int, int, str], ...]:
    # Numeric array indexes sort numerically (segments/2 before segments/10), names alphabetically.
    return tuple(
        (0, int(part), "") if part.isascii() and part.isdigit() and len(part) < 16 else (1, 0, part)
        for part in path.split("/")[1:]
    )


def _dedupe(problems: list[SchemaProblem]) -> Iterator[SchemaProblem]:
    seen: set[tuple[str, str]] = set()
    for problem in problems:
        key = (problem.path, problem.message)
        if key not in seen:
            seen.add(key)
            yield problem
