"""The Arrow schema of an exported GroundTruthRecord, derived from the contracts, and the conversion of
stored payloads (JSON text, as the database returns them) into Arrow tables.

Every contract field becomes a column of its own type: text, int64, float64, bool, UTC timestamps,
structs for nested models, lists for lists. A field the contract types `dict[str, Any]` (the
classifications; the corrected segments and mixture of a review) is written in the shape Arbiter gives it
(SHAPES: ClassificationOutput, Segment, MixtureEntry). Such a value may not have that shape, so each
top-level field that holds one gets a sibling `<field>_json` text column: when the value fits, the struct
holds it and `<field>_json` is null; when it does not (an unknown key, a wrong type, a required field
missing), the struct is null and `<field>_json` holds the stored JSON unchanged. Nothing is dropped.

Parsing is pyarrow's JSON reader (C++, multi-threaded) with the explicit schema, which refuses unknown
keys and wrong types; required fields are then checked column-wise. Only rows that fail are parsed in
Python, so 100k records convert in seconds.
"""

from __future__ import annotations

import io
import json
import types
import typing
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pydantic import BaseModel

from arbiter.contracts import ClassificationOutput, Corrections, GroundTruthRecord, MixtureEntry, Segment
from arbiter.contracts.version import CONTRACT_VERSION
from arbiter.errors import ArbiterError

TIMESTAMP = pa.timestamp("us", tz="UTC")
JSON_SUFFIX = "_json"

# The shape Arbiter writes into the contract's free-form (dict[str, Any]) fields.
SHAPES: dict[tuple[type[BaseModel], str], type[BaseModel]] = {
    (GroundTruthRecord, "ground_truth_classification"): ClassificationOutput,
    (GroundTruthRecord, "primary_agent_classification"): ClassificationOutput,
    (Corrections, "corrected_segments"): Segment,
    (Corrections, "corrected_document_mixture"): MixtureEntry,
}


class ExportError(ArbiterError):
    """An export that cannot be written; the message is meant for the user."""


@dataclass(frozen=True)
class Spec:
    """One contract value as Arrow: a leaf, a struct of fields, or a list of items."""

    type: pa.DataType
    fields: tuple[FieldSpec, ...] = ()
    item: Spec | None = None
    item_must: bool = False  # list items may not be null
    shaped: bool = False  # holds a SHAPES value somewhere (so it may not fit)


@dataclass(frozen=True)
class FieldSpec:
    name: str
    spec: Spec
    must: bool  # required and not nullable: a null means the value does not fit the shape
    omit_null: bool  # not nullable but has a default: a null read back means the key was absent


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != len(typing.get_args(annotation)) and len(args) == 1:
            return args[0], True
        raise TypeError(f"no Arrow mapping for the union {annotation}")
    return annotation, False


def _spec(annotation: Any, owner: type[BaseModel], name: str) -> tuple[Spec, bool]:
    """(spec, nullable) of a field's annotation."""
    inner, nullable = _unwrap_optional(annotation)
    origin = typing.get_origin(inner)
    if origin is list:
        (item,) = typing.get_args(inner)
        item, item_nullable = _unwrap_optional(item)
        if typing.get_origin(item) is dict and (owner, name) in SHAPES:
            item_spec = _model_spec(SHAPES[(owner, name)], shaped=True)
        else:
            item_spec, _ = _spec(item, owner, name)
        spec = Spec(
            pa.list_(item_spec.type), item=item_spec, item_must=not item_nullable, shaped=item_spec.shaped
        )
        return spec, nullable
    if origin is dict or inner is Any:
        if (owner, name) not in SHAPES:
            raise TypeError(
                f"{owner.__name__}.{name} is free-form; name its shape in arbiter.export.arrow.SHAPES"
            )
        return _model_spec(SHAPES[(owner, name)], shaped=True), nullable
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return _model_spec(inner), nullable
    if isinstance(inner, type) and issubclass(inner, Enum | str):
        return Spec(pa.string()), nullable
    if inner is bool:
        return Spec(pa.bool_()), nullable
    if inner is int:
        return Spec(pa.int64()), nullable
    if inner is float:
        return Spec(pa.float64()), nullable
    if inner is datetime:
        return Spec(TIMESTAMP), nullable
    raise TypeError(f"no Arrow mapping for {owner.__name__}.{name}: {annotation}")


def _model_spec(model: type[BaseModel], *, shaped: bool = False) -> Spec:
    fields = []
    for name, info in model.model_fields.items():
        spec, nullable = _spec(info.annotation, model, name)
        fields.append(FieldSpec(name, spec, must=not nullable and info.is_required(), omit_null=not nullable))
    struct = pa.struct([pa.field(f.name, f.spec.type) for f in fields])
    return Spec(struct, fields=tuple(fields), shaped=shaped or any(f.spec.shaped for f in fields))


@cache
def record_spec() -> Spec:
    """The GroundTruthRecord as a struct spec (one field per contract field)."""
    return _model_spec(GroundTruthRecord)


@cache
def flex_fields() -> tuple[str, ...]:
    """Top-level fields that may not fit their shape, each with a `<field>_json` column."""
    return tuple(f.name for f in record_spec().fields if f.spec.shaped)


@cache
def arrow_schema() -> pa.Schema:
    """The export's schema: the contract's fields in order, each flexible one followed by its _json column.
    Every column is nullable in Arrow; which fields the contract requires is the contract's business."""
    columns: list[pa.Field] = []
    for f in record_spec().fields:
        columns.append(pa.field(f.name, f.spec.type))
        if f.spec.shaped:
            columns.append(pa.field(f.name + JSON_SUFFIX, pa.string()))
    meta = {
        "arbiter.contract": "GroundTruthRecord",
        "arbiter.contract_version": CONTRACT_VERSION,
        "arbiter.json_fallback": ",".join(flex_fields()),
    }
    return pa.schema(columns, metadata=meta)


# Payloads → Arrow ---------------------------------------------------------------------------------------
def _parse(texts: list[bytes], schema: pa.Schema) -> pa.Table:
    data = b"\n".join(texts)
    block = max(4 << 20, 2 * max((len(t) for t in texts), default=0) + 1024)
    table = pa_json.read_json(
        io.BytesIO(data),
        read_options=pa_json.ReadOptions(block_size=block),
        parse_options=pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
    )
    if table.num_rows != len(texts):  # an empty payload is skipped as a blank line
        raise pa.ArrowInvalid("a payload is not one JSON object")
    return table


def _or(a: pa.Array | None, b: pa.Array | None) -> pa.Array | None:
    return b if a is None else (a if b is None else pc.or_(a, b))


def _misfits(arr: pa.Array, spec: Spec) -> pa.Array | None:
    """Boolean per element, true where a required field inside it (or a list item) is null; None when no
    element has one (decided from null counts, so a clean batch costs a few cheap calls)."""
    bad: pa.Array | None = None
    if spec.fields:
        for f in spec.fields:
            child = pc.struct_field(arr, f.name)  # null where the parent is null, too
            if f.must and child.null_count > arr.null_count:
                bad = _or(bad, pc.and_(pc.is_valid(arr), pc.is_null(child)))
            if f.spec.fields or f.spec.item is not None:
                bad = _or(bad, _misfits(child, f.spec))
    elif spec.item is not None:
        values = arr.flatten()
        item_bad = _misfits(values, spec.item) if spec.item.fields or spec.item.item else None
        if spec.item_must and values.null_count:
            item_bad = _or(item_bad, pc.is_null(values))
        if item_bad is not None:
            parents = pc.filter(pc.list_parent_indices(arr), item_bad)
            bad = pc.is_in(pa.array(range(len(arr)), pa.int64()), value_set=parents)
    return bad


def _column_misfits(table: pa.Table, name: str, spec: Spec) -> list[int]:
    bad = _misfits(table.column(name).combine_chunks(), spec)
    return [] if bad is None else pc.indices_nonzero(bad).to_pylist()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _fits(name: str, value: Any) -> bool:
    """Whether `value` converts to field `name`'s shape without loss."""
    field = next(f for f in record_spec().fields if f.name == name)
    schema = pa.schema([pa.field(name, field.spec.type)])
    try:
        table = _parse([_dumps({name: value}).encode()], schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return False
    return not _column_misfits(table, name, field.spec)


def _repair(text: bytes, gt_id: str, only: tuple[str, ...] | None = None) -> bytes:
    """The payload with each flexible field that does not fit its shape moved into its _json column."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ExportError(f"Ground truth {gt_id} is stored as invalid JSON; the export stopped.") from None
    if not isinstance(data, dict):
        raise ExportError(f"Ground truth {gt_id} is not a GroundTruthRecord object; the export stopped.")
    for name in dict.fromkeys(only or flex_fields()):
        value = data.get(name)
        if only is not None or (value is not None and not _fits(name, value)):
            data[name] = None
            data[name + JSON_SUFFIX] = _dumps(value)
    return _dumps(data).encode()


def _unparseable(texts: list[bytes], lo: int, hi: int, schema: pa.Schema) -> list[int]:
    """Indices in [lo, hi) whose rows the JSON reader refuses (bisection: a few parses per bad row)."""
    try:
        _parse(texts[lo:hi], schema)
        return []
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        if hi - lo == 1:
            return [lo]
    mid = (lo + hi) // 2
    return _unparseable(texts, lo, mid, schema) + _unparseable(texts, mid, hi, schema)


@dataclass
class Converted:
    table: pa.Table
    fallbacks: dict[str, int]  # flexible field → rows written as JSON text


def to_table(texts: list[bytes], gt_ids: list[str]) -> Converted:
    """Stored GroundTruthRecord payloads (UTF-8 JSON, one object each) → an Arrow table in arrow_schema()."""
    schema = arrow_schema()
    texts = list(texts)
    fallbacks = dict.fromkeys(flex_fields(), 0)
    if not texts:
        return Converted(schema.empty_table(), fallbacks)
    try:
        table = _parse(texts, schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        for i in _unparseable(texts, 0, len(texts), schema):
            texts[i] = _repair(texts[i], gt_ids[i])
        table = _parse_or_explain(texts, gt_ids, schema)
    flexible = set(flex_fields())
    repairs: dict[int, list[str]] = {}
    for f in record_spec().fields:
        if f.must:
            missing = pc.is_null(table.column(f.name))
            if f.name in flexible:  # kept as the JSON text "null" (or whatever else stands there)
                missing = pc.and_(missing, pc.is_null(table.column(f.name + JSON_SUFFIX)))
                for i in pc.indices_nonzero(missing).to_pylist():
                    repairs.setdefault(i, []).append(f.name)
            else:
                _refuse(pc.indices_nonzero(missing).to_pylist(), f.name, gt_ids)
        if f.spec.fields or f.spec.item is not None:
            rows = _column_misfits(table, f.name, f.spec)
            if f.name not in flexible:
                _refuse(rows, f.name, gt_ids)
            for i in rows:
                repairs.setdefault(i, []).append(f.name)
    if repairs:
        for i, names in repairs.items():
            texts[i] = _repair(texts[i], gt_ids[i], only=tuple(names))
        table = _parse_or_explain(texts, gt_ids, schema)
    for name in fallbacks:
        fallbacks[name] = len(texts) - table.column(name + JSON_SUFFIX).null_count
    return Converted(table, fallbacks)


def _refuse(rows: list[int], name: str, gt_ids: list[str]) -> None:
    if rows:
        which = ", ".join(gt_ids[i] for i in rows[:5])
        raise ExportError(f"Ground truth {which} lacks its required {name}; the export stopped.")


def _parse_or_explain(texts: list[bytes], gt_ids: list[str], schema: pa.Schema) -> pa.Table:
    try:
        return _parse(texts, schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        bad = _unparseable(texts, 0, len(texts), schema)
        which = ", ".join(gt_ids[i] for i in bad[:5])
        raise ExportError(
            f"Ground truth {which} does not match the GroundTruthRecord contract outside its classifications "
            "and reviews; the export stopped."
        ) from None


# Arrow → records (reading an export back) ---------------------------------------------------------------
def _restore(value: Any, spec: Spec) -> Any:
    if value is None:
        return None
    if spec.fields:
        out = {}
        for f in spec.fields:
            v = value.get(f.name)
            if v is None and f.omit_null:
                continue
            out[f.name] = _restore(v, f.spec)
        return out
    if spec.item is not None:
        return [_restore(v, spec.item) for v in value]
    return value


def records_from_table(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of an exported table as GroundTruthRecord-shaped dicts (the inverse of to_table): JSON text
    columns are parsed back verbatim; in a struct, an absent optional field reads back as null."""
    spec = record_spec()
    out = []
    for row in table.to_pylist():
        record: dict[str, Any] = {}
        for f in spec.fields:
            text = row.get(f.name + JSON_SUFFIX) if f.spec.shaped else None
            value = row.get(f.name)
            if text is not None:
                record[f.name] = json.loads(text)
            elif value is not None or not f.omit_null:
                record[f.name] = _restore(value, f.spec)
        out.append(record)
    return out
