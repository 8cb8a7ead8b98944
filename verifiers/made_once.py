"""Values made from a profile's settings once, and remembered for that very settings object (profiles are never
changed in place; a copy with other settings is another object, so it gets its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_KEEP = 16  # settings objects remembered per table (a run has one profile; a what-if a few)


def made_once(table: dict[int, tuple[object, T]], owner: object, make: Callable[[], T]) -> T:
    """`make()` for `owner`, made the first time and then taken from `table` while `owner` is the same object."""
    entry = table.get(id(owner))
    if entry is not None and entry[0] is owner:
        return entry[1]
    value = make()
    if len(table) >= _KEEP:
        table.clear()
    table[id(owner)] = (owner, value)
    return value
