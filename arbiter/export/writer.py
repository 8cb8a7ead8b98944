"""Writing a ground-truth export: data files and manifest.json in one directory, from one streamed query.

Every file is written under a temporary name in the target directory, flushed to disk and renamed into
place; manifest.json is removed first and written last, so a directory whose manifest is present and
whose hashes match is a complete export, and a crash never leaves a partial file under a final name.
The same query feeds every requested format, so they describe one snapshot of the database.

This module writes the export and its manifest; the data files are output.py's, the query read ahead
prefetch.py's, the command line's options options.py's.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

import arbiter
from arbiter import atomic
from arbiter.contracts import DEFAULT_KIND, GroundTruthSource
from arbiter.contracts.grounded import KIND as GROUNDED
from arbiter.contracts.version import CONTRACT_VERSION
from arbiter.export import grounded as answers
from arbiter.export.arrow import ExportError, flex_fields, to_table
from arbiter.export.options import iso, refuse_future
from arbiter.export.output import FILE_NAMES, FORMATS, PARQUET_COMPRESSION, Output
from arbiter.export.prefetch import prefetched
from arbiter.metrics.grounded import judge
from arbiter.outputs import Location
from arbiter.store import Store
from arbiter.store.adjudication import unsettled_count
from arbiter.store.exports import BATCH

# The answer kinds an export can hold, one per export (each its own layout; a manifest without answer_kind is
# the medical layout).
KINDS = (DEFAULT_KIND, GROUNDED)
# The grounded-answer layout's files (export/grounded.py), named here so an export into the same folder retires them.
ANSWER_FILES = {
    "csv": ("answers.csv", "answer_statements.csv"),
    "parquet": ("answers.parquet", "answer_statements.parquet"),
}
DATA_FILES = frozenset([*FILE_NAMES.values(), *(n for names in ANSWER_FILES.values() for n in names)])
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
KIND = "arbiter.ground_truth_export"


def redact(url: str) -> str:
    return sa.make_url(url).render_as_string(hide_password=True)


def contract_info() -> dict[str, str]:
    from arbiter.contracts.schemas import json_schema

    schema = json.dumps(json_schema("ground-truth"), sort_keys=True, separators=(",", ":"))
    return {
        "name": "GroundTruthRecord",
        "version": CONTRACT_VERSION,
        "json_schema_sha256": hashlib.sha256(schema.encode()).hexdigest(),
    }


def export_ground_truth(
    store: Store,
    formats: Sequence[str],
    out_dir: Location,
    *,
    as_of: datetime | None = None,
    batch: int = BATCH,
    now: datetime | None = None,
    kind: str = DEFAULT_KIND,
) -> dict[str, Any]:
    """Write the ground truth in force (newest, or as of `as_of`) per document in `formats` to `out_dir`
    (a folder, or object storage: the files are written in a local temporary folder and each put whole,
    the manifest last) with manifest.json; returns the manifest. Streams `batch` records at a time.
    `kind`: the answer kind whose ground truth is exported (each has its own layout; export/grounded.py)."""
    generated = now or datetime.now(UTC)
    refuse_future(as_of, generated)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ExportError(f"Unknown export format: {', '.join(unknown) or 'none given'}.")
    if kind not in KINDS:
        raise ExportError(f"--kind must be one of {', '.join(KINDS)}; got '{kind}'.")
    staging = None if isinstance(out_dir, Path) else Path(tempfile.mkdtemp(prefix="arbiter-export-"))
    try:
        if kind == GROUNDED:
            return _export_answers(
                store, formats, out_dir, staging, as_of=as_of, batch=batch, generated=generated
            )
        return _export(store, formats, out_dir, staging, as_of=as_of, batch=batch, generated=generated)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _export(
    store: Store,
    formats: Sequence[str],
    out_dir: Location,
    staging: Path | None,
    *,
    as_of: datetime | None,
    batch: int,
    generated: datetime,
) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    previous = _retire_manifest(out_dir)
    outputs: list[Output] = []
    sources: Counter[str] = Counter({s.value: 0 for s in GroundTruthSource})
    policies: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter(dict.fromkeys(flex_fields(), 0))
    newest: datetime | None = None
    records = 0
    try:
        outputs.extend(Output(out_dir, f, staging) for f in FORMATS if f in formats)
        with prefetched(store, as_of, batch) as batches:
            for gt_ids, texts in batches:
                converted = to_table(texts, gt_ids)
                table = converted.table
                for out in outputs:
                    out.write(texts, table)
                records += len(texts)
                _count(sources, table.column("ground_truth_source"))
                _count(policies, table.column("policy_version"))
                fallbacks.update(converted.fallbacks)
                batch_newest = pc.max(table.column("created_at")).as_py()
                newest = batch_newest if newest is None else max(newest, batch_newest)
        files = [out.commit() for out in outputs]
        with store.read() as conn:  # left out: their two reviews disagree and nobody has decided yet
            awaiting = unsettled_count(conn, as_of, DEFAULT_KIND)
    except BaseException:
        for out in outputs:
            out.discard()
        raise
    for name in set(previous) - {f["name"] for f in files}:  # an earlier export's other formats
        (out_dir / name).unlink(missing_ok=True)
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "kind": KIND,
        "formats": [out.format for out in outputs],
        "as_of": iso(as_of) if as_of else None,
        "generated_at": iso(generated),
        "records": records,
        "newest_version_created_at": iso(newest) if newest else None,
        "counts_by_source": dict(sorted(sources.items())),
        "awaiting_adjudication": awaiting,
        "policy_versions": dict(sorted(policies.items())),
        "json_fallbacks": dict(fallbacks),
        "contract": contract_info(),
        "arbiter_version": arbiter.__version__,
        "writer": {"pyarrow": pa.__version__, "parquet_compression": PARQUET_COMPRESSION},
        "database": redact(store.url),
        "files": files,
    }
    atomic.write_json(out_dir / MANIFEST, manifest)
    return manifest


def _export_answers(
    store: Store,
    formats: Sequence[str],
    out_dir: Location,
    staging: Path | None,
    *,
    as_of: datetime | None,
    batch: int,
    generated: datetime,
) -> dict[str, Any]:
    """The grounded-answer export (export/grounded.py's layout: the records, the answers and answer_statements
    tables) with its manifest; returns the manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    previous = _retire_manifest(out_dir)
    outputs: list[tuple[str, Any]] = []  # (table, Output)
    sources: Counter[str] = Counter({s.value: 0 for s in GroundTruthSource})
    policies: Counter[str] = Counter()
    newest: datetime | None = None
    records = statements = 0
    try:
        if "jsonl" in formats:
            outputs.append(("records", Output(out_dir, "jsonl", staging)))
        for fmt in ("csv", "parquet"):
            if fmt in formats:
                item_name, statement_name = ANSWER_FILES[fmt]
                outputs.append(
                    ("answers", Output(out_dir, fmt, staging, name=item_name, header=answers.ITEM_COLUMNS,
                                         schema=answers.ITEM_SCHEMA, to_csv=answers.csv_cells))
                )  # fmt: skip
                outputs.append(
                    ("answer_statements", Output(out_dir, fmt, staging, name=statement_name,
                                                   header=answers.STATEMENT_COLUMNS, schema=answers.STATEMENT_SCHEMA,
                                                   to_csv=answers.csv_cells))
                )  # fmt: skip
        with prefetched(store, as_of, batch, GROUNDED) as batches:
            for gt_ids, texts in batches:
                items, lines = [], []
                for gt_id, text in zip(gt_ids, texts, strict=True):
                    try:
                        data = json.loads(text)
                    except ValueError:
                        raise ExportError(
                            f"Ground truth {gt_id} is stored as invalid JSON; the export stopped."
                        ) from None
                    if not isinstance(data, dict):
                        raise ExportError(
                            f"Ground truth {gt_id} is not a GroundTruthRecord object; the export stopped."
                        )
                    items.append(answers.rows_of(judge(data)))
                    lines.append(text)
                    sources[str(data.get("ground_truth_source") or "(none)")] += 1
                    policies[str(data.get("policy_version") or "(none)")] += 1
                item_table = pa.Table.from_pylist([i for i, _ in items], schema=answers.ITEM_SCHEMA)
                statement_table = pa.Table.from_pylist(
                    [s for _, ss in items for s in ss], schema=answers.STATEMENT_SCHEMA
                )
                for table, out in outputs:
                    out.write(lines, item_table if table != "answer_statements" else statement_table)
                records += len(lines)
                statements += statement_table.num_rows
                for row, _ in items:
                    at = row["created_at"]
                    if at is not None:
                        newest = at if newest is None else max(newest, at)
        files = []
        for table, out in outputs:
            entry = out.commit()
            entry["table"] = table
            files.append(entry)
        with store.read() as conn:
            awaiting = unsettled_count(conn, as_of, GROUNDED)
    except BaseException:
        for _, out in outputs:
            out.discard()
        raise
    for name in set(previous) - {f["name"] for f in files}:
        (out_dir / name).unlink(missing_ok=True)
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "kind": KIND,
        "answer_kind": GROUNDED,
        "layout": answers.LAYOUT,
        "tables": {
            "records": "ground_truth.jsonl: GroundTruthRecord per item, as stored",
            "answers": "one row per item: " + ", ".join(answers.ITEM_COLUMNS),
            "answer_statements": "one row per statement of the primary's answer: "
            + ", ".join(answers.STATEMENT_COLUMNS),
        },
        "formats": [f for f in FORMATS if f in formats],
        "as_of": iso(as_of) if as_of else None,
        "generated_at": iso(generated),
        "records": records,
        "statements": statements,
        "newest_version_created_at": iso(newest) if newest else None,
        "counts_by_source": dict(sorted(sources.items())),
        "awaiting_adjudication": awaiting,
        "policy_versions": dict(sorted(policies.items())),
        "contract": contract_info(),
        "arbiter_version": arbiter.__version__,
        "writer": {"pyarrow": pa.__version__, "parquet_compression": PARQUET_COMPRESSION},
        "database": redact(store.url),
        "files": files,
    }
    atomic.write_json(out_dir / MANIFEST, manifest)
    return manifest


def _count(counter: Counter[str], column: pa.ChunkedArray) -> None:
    for entry in pc.value_counts(column).to_pylist():
        counter[entry["values"] if entry["values"] is not None else "(none)"] += entry["counts"]


def _retire_manifest(out_dir: Location) -> list[str]:
    """Remove an earlier export's manifest from `out_dir` (so no manifest describes files being replaced)
    and return the data files it listed. A manifest.json that is not an Arbiter export's is left alone
    and the export refused."""
    path = out_dir / MANIFEST
    if not path.exists():
        return []
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if not isinstance(old, dict) or old.get("kind") != KIND:
        raise ExportError(f"{path} is not an Arbiter export manifest; choose an empty directory (--to).")
    path.unlink()
    names = [e.get("name") for e in old.get("files") or [] if isinstance(e, dict)]
    return [str(n) for n in names if n in DATA_FILES]


def describe(manifest: dict[str, Any], out_dir: Location) -> str:
    """One line for the terminal: how many documents, which versions, where, which files."""
    when = f"as of {manifest['as_of']}" if manifest["as_of"] else "newest versions"
    files = ", ".join(f"{f['name']} ({_size(f['bytes'])})" for f in manifest["files"])
    what = "answer items" if manifest.get("answer_kind") else "documents"
    return f"Exported {manifest['records']:,} {what} ({when}) to {out_dir}: {files}, {MANIFEST}."


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"  # pragma: no cover
