"""Typed reads of Document AI JSON (proto3 JSON mapping): a missing field is its default, a wrong type an error.

proto3 JSON omits fields at their default value (0, "", false, empty lists) and writes int64 fields as
strings ("startIndex": "120"); int32 and float fields are numbers. Errors name the field's path and never
quote a value, so they can be shown and logged without leaking document text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from arbiter.errors import ExtractionError

# Deeper nesting than this is not a layout a processor produces; stopping keeps recursion bounded.
MAX_DEPTH = 64
_INT64 = 2**63


class DocumentAIFormatError(ExtractionError, ValueError):
    """The JSON is not shaped like a Document AI v1 Document; `path` says where."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'the document'} {problem}")
        self.path = path
        self.problem = problem


def as_object(value: Any, path: str) -> Mapping[str, Any]:
    """`value` as a JSON object; None (absent) is an empty one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DocumentAIFormatError(path, "is not a JSON object")
    return value


def obj(parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    return as_object(parent.get(key), f"{path}.{key}" if path else key)


def objects(parent: Mapping[str, Any], key: str, path: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The objects of a repeated message field, each with its path; absent is empty."""
    where = f"{path}.{key}" if path else key
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise DocumentAIFormatError(where, "is not a list")
    return [(f"{where}[{i}]", as_object(item, f"{where}[{i}]")) for i, item in enumerate(value)]


def text(parent: Mapping[str, Any], key: str, path: str) -> str:
    value = parent.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DocumentAIFormatError(f"{path}.{key}" if path else key, "is not a string")
    return value


def integer(parent: Mapping[str, Any], key: str, path: str) -> int:
    """An int32 (number) or int64 (decimal string) field; absent is 0."""
    value = parent.get(key)
    where = f"{path}.{key}" if path else key
    if value is None:
        return 0
    if isinstance(value, bool):
        raise DocumentAIFormatError(where, "is not a whole number")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) <= 24:
        number = int(value.strip())
    else:
        raise DocumentAIFormatError(where, "is not a whole number")
    if not -_INT64 <= number < _INT64:
        raise DocumentAIFormatError(where, "is out of range")
    return number


def number(parent: Mapping[str, Any], key: str, path: str) -> float:
    """A float field (a number, or a numeric string as proto3 JSON allows); absent is 0.0."""
    value = parent.get(key)
    where = f"{path}.{key}" if path else key
    if value is None:
        return 0.0
    if isinstance(value, bool):
        raise DocumentAIFormatError(where, "is not a number")
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:
            raise DocumentAIFormatError(where, "is out of range") from None
    elif isinstance(value, str) and len(value) <= 40:
        try:
            result = float(value)
        except ValueError:
            raise DocumentAIFormatError(where, "is not a number") from None
    else:
        raise DocumentAIFormatError(where, "is not a number")
    if not math.isfinite(result):
        raise DocumentAIFormatError(where, "is not a finite number")
    return result


def check_depth(depth: int, path: str) -> None:
    if depth > MAX_DEPTH:
        raise DocumentAIFormatError(path, f"nests blocks more than {MAX_DEPTH} levels deep")
