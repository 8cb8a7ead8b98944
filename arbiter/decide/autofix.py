"""The auto-fix engine: merges the JSON Patch fixes of fixable issues, refuses conflicting ones, applies them.

Identical operations from two checks merge (one canonical fix for one underlying fault); two operations
that write one location, or a location and its ancestor, with different effects are a conflict.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import jsonpointer

from arbiter.contracts import FixRecord, Issue
from arbiter.errors import ArbiterError

_APPEND = "-"


def fingerprint(data: Any) -> str:
    """sha256 of the canonical JSON of `data`; text that is not JSON-serialisable is hashed as it is."""
    try:
        # No circular-reference bookkeeping (half the cost): parsed JSON has no cycles, and a cyclic
        # object still ends in the fallback below, by RecursionError instead of ValueError.
        text = json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
        )
    except (TypeError, ValueError, RecursionError):
        text = data if isinstance(data, str) else repr(data)
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def raw_fingerprint(raw: str | bytes) -> str:
    """sha256 of raw input that could not be parsed, so an unreadable answer still has an identity."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(data).hexdigest()


@dataclass
class FixPlan:
    """What to apply: one record per fixed issue (before/after still empty) and the merged patch."""

    records: list[FixRecord] = field(default_factory=list)
    patch: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.patch)


@dataclass(frozen=True)
class Conflict:
    """Two fixes that disagree about one location of the classification; neither may be applied."""

    path: str
    other_path: str
    issue_ids: tuple[str, str]
    codes: tuple[str, str]

    @property
    def message(self) -> str:
        where = self.path if self.path == self.other_path else f"{self.path} and {self.other_path}"
        return (
            f"Two automatic fixes disagree about the same part of the classification ({where}): "
            f"{self.issue_ids[0]} ({self.codes[0]}) and {self.issue_ids[1]} ({self.codes[1]}); "
            "neither was applied."
        )


class PatchFailed(ArbiterError):
    """A planned fix could not be applied (a path that does not exist, a malformed operation, ...).

    The message names the issue, its code and the path only — never the document's values.
    """

    def __init__(self, issue_id: str, code: str, path: str, kind: str) -> None:
        self.issue_id, self.code, self.path, self.kind = issue_id, code, path, kind
        super().__init__(
            f"The automatic fix for {issue_id} ({code}) could not be applied at '{path}' ({kind})."
        )


def plan_fixes(issues: Sequence[Issue]) -> FixPlan | Conflict:
    """Merge the fixes of the auto-fixable issues, in issue order, or report the first conflict."""
    plan = FixPlan()
    owners: list[
        tuple[dict[str, Any], Issue]
    ] = []  # each distinct operation and the first issue that asked for it
    seen: set[str] = set()
    fixable = sorted((i for i in issues if i.auto_fixable and i.fix), key=lambda i: (i.verifier, i.issue_id))
    for issue in fixable:
        assert issue.fix is not None
        plan.records.append(
            FixRecord(issue_id=issue.issue_id, code=issue.code, patch=issue.fix, before={}, after={})
        )
        for op in issue.fix:
            key = _canonical(op)
            if key in seen:
                continue
            for other, owner in owners:
                if owner.issue_id != issue.issue_id and _clash(op, other):
                    return Conflict(
                        path=_path(other),
                        other_path=_path(op),
                        issue_ids=(owner.issue_id, issue.issue_id),
                        codes=(owner.code, issue.code),
                    )
            seen.add(key)
            owners.append((op, issue))
            plan.patch.append(op)
    return plan


def apply_fixes(data: Any, plan: FixPlan) -> tuple[Any, list[FixRecord]]:
    """Apply the merged patch to a deep copy; each record gets the values before and after at its paths.

    Raises PatchFailed when an operation cannot be applied; `data` is never modified.
    """
    work = json_copy(data)
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    owner = _owner_by_op(plan)
    for op in plan.patch:
        key = _canonical(op)
        path = _path(op)
        issue_id, code = owner.get(key, ("?", "?"))
        try:
            appends = op.get("op") == "add" and _tokens(path)[-1:] == (_APPEND,)
            before[key] = None if appends else json_copy(_value_at(work, path))
            work = jsonpatch.JsonPatch([op]).apply(work, in_place=True)
            after[key] = json_copy(_value_at(work, path))
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            raise PatchFailed(issue_id, code, path, type(exc).__name__) from exc
        except (TypeError, KeyError, IndexError, AttributeError, ValueError) as exc:
            raise PatchFailed(issue_id, code, path, "malformed operation") from exc
    records = []
    for planned in plan.records:
        keys = [_canonical(op) for op in planned.patch]
        records.append(
            planned.model_copy(
                update={
                    "before": {_path(op): before[k] for op, k in zip(planned.patch, keys, strict=True)},
                    "after": {_path(op): after[k] for op, k in zip(planned.patch, keys, strict=True)},
                }
            )
        )
    return work, records


_ATOMS = (str, int, float, bool, type(None))


class _NotPlainJSON(ArbiterError):
    pass


def json_copy(value: Any) -> Any:
    """copy.deepcopy(value), three times faster for parsed JSON: dicts with text keys, lists and atoms,
    no container reached twice. Anything else (tuples, shared or custom objects) goes to deepcopy."""
    try:
        return _copy_plain(value, set())
    except _NotPlainJSON:
        return copy.deepcopy(value)


def _copy_plain(value: Any, seen: set[int]) -> Any:
    kind = type(value)
    if kind is dict or kind is list:
        if id(value) in seen:  # deepcopy keeps such aliases; a plain copy would split them
            raise _NotPlainJSON
        seen.add(id(value))
        if kind is list:
            return [_copy_plain(item, seen) for item in value]
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlainJSON
            copied[key] = _copy_plain(item, seen)
        return copied
    if kind in _ATOMS:
        return value  # immutable: deepcopy returns these very objects too
    raise _NotPlainJSON


def _owner_by_op(plan: FixPlan) -> dict[str, tuple[str, str]]:
    owner: dict[str, tuple[str, str]] = {}
    for record in plan.records:
        for op in record.patch:
            owner.setdefault(_canonical(op), (record.issue_id, record.code))
    return owner


def _canonical(op: Any) -> str:
    try:
        return json.dumps(op, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(op)


def _path(op: Any) -> str:
    path = op.get("path") if isinstance(op, dict) else None
    return path if isinstance(path, str) else ""


def _tokens(pointer: str) -> tuple[str, ...]:
    if not pointer:
        return ()
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:])


def _written(op: Any) -> list[tuple[str, ...]]:
    """The locations an operation changes; a `test` changes none, a `move` changes both ends."""
    if not isinstance(op, dict) or op.get("op") == "test":
        return []
    places = [_tokens(_path(op))]
    source = op.get("from")
    if op.get("op") in ("move", "copy") and isinstance(source, str):
        places.append(_tokens(source))
    return places


def _clash(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two different operations would interfere if both were applied."""
    for x in _written(a):
        for y in _written(b):
            if (
                x
                and y
                and x[-1] == _APPEND
                and y[-1] == _APPEND
                and x == y
                and a.get("op") == b.get("op") == "add"
            ):
                continue  # two appends to one array: both items end up in it
            if x[: len(y)] == y or y[: len(x)] == x:
                return True
            if _shifts(a, x, y) or _shifts(b, y, x):
                return True
    return False


def _shifts(op: dict[str, Any], mine: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """An insert or removal at an array index moves its later siblings, so the other operation may miss."""
    if op.get("op") not in ("add", "remove", "move") or not mine or not mine[-1].isdigit():
        return False
    parent = mine[:-1]
    return len(other) > len(parent) and other[: len(parent)] == parent and other[len(parent)] != _APPEND


def _value_at(doc: Any, pointer: str) -> Any:
    """The value at a JSON Pointer, or None when nothing is there; `/-` means the array's last item."""
    tokens = _tokens(pointer)
    if tokens and tokens[-1] == _APPEND:
        parent = jsonpointer.resolve_pointer(doc, pointer.rsplit("/", 1)[0], None)
        return parent[-1] if isinstance(parent, list) and parent else None
    value = jsonpointer.resolve_pointer(doc, pointer, None)
    return None if isinstance(value, jsonpointer.EndOfList) else value
