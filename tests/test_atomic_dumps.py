"""Mirror JSON (arbiter/atomic.py `dumps`) is byte for byte what json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arbiter.atomic import dumps

CASES: list[Any] = [
    {"a": 0.85, "b": 1e-05, "c": 1e16, "d": float("nan"), "e": float("inf"), "f": -0.0},
    {"text": 'é – \u2028 \x00 "q" \\ \ud800', "empty": {}, "none": [], "nested": [[1, 2], {"k": None}]},
    {1: "int key", "t": (1, 2), "when": datetime(2026, 1, 2, tzinfo=UTC), "p": Path("/x")},
    [True, False, None, 3, "s", 2**70],
    "just a string",
]


@pytest.mark.parametrize("data", CASES)
def test_dumps_writes_what_the_standard_encoder_writes(data: Any) -> None:
    """Plain data through the fast encoder and anything else through the standard one: the same bytes."""
    assert dumps(data) == json.dumps(data, indent=2, ensure_ascii=False, default=str)
