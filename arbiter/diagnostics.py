"""Describing a failure for engineers without repeating its text, which may quote patient data."""

from __future__ import annotations

import traceback
from pathlib import Path


def where(exc: BaseException) -> str:
    """Where it was raised (file, line, function) — a pointer for engineers without any of its text."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f"at {Path(last.filename).name}:{last.lineno} in {last.name}"


def describe(exc: BaseException) -> str:
    """The exception's type and where it was raised; never its message."""
    return f"{type(exc).__name__} {where(exc)}".strip()
