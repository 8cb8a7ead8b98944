"""The grounded-answer export layout (`arbiter export --kind grounded-answer`; docs/ground-truth/index.md, "Grounded answers").

The ground truth in force per item (answer rows only), written as:

- ground_truth.jsonl: the GroundTruthRecords as stored (every field, the answers and statement verdicts nested);
- answers.csv / answers.parquet: one row per item (ITEM_COLUMNS): the version, whether the primary and the
  truth abstained, the primary's statements counted by verdict, the unsupported reasons, citation counts and the
  citations an expert changed, whether the answer needed no correction;
- answer_statements.csv / answer_statements.parquet: one row per statement of the primary's answer
  (STATEMENT_COLUMNS): its text, verdict, reason, the primary's cites and the truth's.

Both tables come from metrics/grounded.judge, so a row counts what the grounded metrics count. In Parquet, lists
are list<string>, counts int64, flags bool, times UTC timestamps; in CSV lists are `|`-joined, flags
`true`/`false`, a missing value empty, and a text cell that a spreadsheet would run as a formula starts with `'`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

import arbiter
from arbiter import atomic
from arbiter.contracts import GroundTruthSource
from arbiter.contracts.grounded import KIND, Verdict
from arbiter.export.arrow import TIMESTAMP, ExportError
from arbiter.export.flat import neutralise
from arbiter.metrics.grounded import NOT_JUDGED, UNJUDGED, JudgedItem, judge
from arbiter.outputs import Location
from arbiter.store import Store
from arbiter.store.adjudication import unsettled_count

LAYOUT = "grounded-answer/1"
STRING, INT, BOOL, STRINGS = pa.string(), pa.int64(), pa.bool_(), pa.list_(pa.string())

ITEM_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("item_id", STRING),
    ("version", INT),
    ("gt_id", STRING),
    ("supersedes", STRING),
    ("source", STRING),
    ("created_at", TIMESTAMP),
    ("judged_by", STRING),  # verdicts | as_answered | unjudged (metrics/grounded.py)
    ("primary_abstained", BOOL),
    ("abstained", BOOL),
    ("answer_correct", BOOL),
    ("n_statements", INT),
    ("n_supported", INT),
    ("n_corrected", INT),
    ("n_unsupported", INT),
    ("n_unjudged", INT),
    ("unsupported_reasons", STRINGS),
    ("primary_cites", INT),
    ("truth_cites", INT),
    ("matched_cites", INT),
    ("corrected_citations", STRINGS),  # "index:REQ-1,REQ-2": a statement whose cites the review changed
    ("n_truth_statements", INT),
    ("missing_evidence", STRINGS),
    ("primary_confidence", STRING),
    ("confidence", STRING),
    ("reviewer", STRING),
    ("review_agrees_with_primary", BOOL),
    ("final_decision", STRING),
    ("semantic_checks", STRING),
    ("policy_version", STRING),
    ("item_sha256", STRING),
    ("run_id", STRING),
)
STATEMENT_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("item_id", STRING),
    ("version", INT),
    ("gt_id", STRING),
    ("source", STRING),
    ("index", INT),
    ("statement", STRING),
    ("verdict", STRING),
    ("reason", STRING),
    ("primary_cites", STRINGS),
    ("truth_cites", STRINGS),
    ("matched_cites", INT),
    ("cites_changed", BOOL),
)
ITEM_COLUMNS = tuple(name for name, _ in ITEM_FIELDS)
STATEMENT_COLUMNS = tuple(name for name, _ in STATEMENT_FIELDS)


def _schema(fields: Sequence[tuple[str, pa.DataType]], table: str) -> pa.Schema:
    meta = {"arbiter.answer_kind": KIND, "arbiter.layout": LAYOUT, "arbiter.table": table}
    return pa.schema([pa.field(n, t) for n, t in fields], metadata=meta)


ITEM_SCHEMA = _schema(ITEM_FIELDS, "answers")
STATEMENT_SCHEMA = _schema(STATEMENT_FIELDS, "answer_statements")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def rows_of(item: JudgedItem) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The item's row and its statements' rows (typed: Parquet's values; csv_cells renders them)."""
    r = item.record
    truth, primary = _dict(r.get("ground_truth_classification")), _dict(r.get("primary_agent_classification"))
    review, summary = _dict(r.get("sme_review")), _dict(r.get("verification_summary"))
    verdicts = Counter(s.verdict for s in item.statements)
    statements = [
        {
            "item_id": r.get("doc_id"),
            "version": r.get("version"),
            "gt_id": r.get("gt_id"),
            "source": r.get("ground_truth_source"),
            "index": s.index,
            "statement": s.text,
            "verdict": s.verdict,
            "reason": s.reason,
            "primary_cites": list(s.cites),
            "truth_cites": list(s.truth_cites),
            "matched_cites": s.matched,
            "cites_changed": set(s.cites) != set(s.truth_cites),
        }
        for s in item.statements
    ]
    truth_statements = truth.get("statements")
    row = {
        "item_id": r.get("doc_id"),
        "version": r.get("version"),
        "gt_id": r.get("gt_id"),
        "supersedes": r.get("supersedes"),
        "source": r.get("ground_truth_source"),
        "created_at": _when(r.get("created_at")),
        "judged_by": item.basis,
        "primary_abstained": item.primary_abstained,
        "abstained": item.abstained,
        "answer_correct": item.answer_correct,
        "n_statements": item.primary_statements,
        "n_supported": verdicts[Verdict.SUPPORTED.value],
        "n_corrected": verdicts[Verdict.CORRECTED.value],
        "n_unsupported": verdicts[Verdict.UNSUPPORTED.value],
        "n_unjudged": item.primary_statements if item.basis == UNJUDGED else verdicts[NOT_JUDGED],
        "unsupported_reasons": [
            s.reason or "unknown" for s in item.statements if s.verdict == Verdict.UNSUPPORTED.value
        ],
        "primary_cites": sum(len(set(s.cites)) for s in item.judged),
        "truth_cites": sum(len(set(s.truth_cites)) for s in item.judged),
        "matched_cites": sum(s.matched for s in item.judged),
        "corrected_citations": [
            f"{s.index}:{','.join(s.truth_cites)}"
            for s in item.statements
            if s.verdict == Verdict.CORRECTED.value and set(s.cites) != set(s.truth_cites)
        ],
        "n_truth_statements": len(truth_statements) if isinstance(truth_statements, list) else 0,
        "missing_evidence": [m for m in truth.get("missing_evidence") or [] if isinstance(m, str)],
        "primary_confidence": _str(primary.get("confidence")),
        "confidence": _str(truth.get("confidence")),
        "reviewer": _str(review.get("reviewer")),
        "review_agrees_with_primary": review.get("agrees_with_primary") if review else None,
        "final_decision": _str(summary.get("final_decision")),
        "semantic_checks": _str(r.get("semantic_checks")),
        "policy_version": _str(r.get("policy_version")),
        "item_sha256": _str(r.get("pdf_sha256")),
        "run_id": _str(r.get("run_id")),
    }
    return row, statements


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, list):
        return "|".join(str(v) for v in value)
    return value


def csv_cells(table: pa.Table) -> list[tuple[Any, ...]]:
    """A table's rows as CSV cells (lists `|`-joined, flags true/false, None empty, formulas neutralised)."""
    return [tuple(neutralise(_cell(v)) for v in row.values()) for row in table.to_pylist()]


def export_answers(
    store: Store,
    formats: Sequence[str],
    out_dir: Location,
    staging: Path | None,
    *,
    as_of: datetime | None,
    batch: int,
    generated: datetime,
) -> dict[str, Any]:
    """The grounded-answer export (the module's layout) with its manifest; returns the manifest."""
    from arbiter.export import writer as w

    out_dir.mkdir(parents=True, exist_ok=True)
    previous = w._retire_manifest(out_dir)
    outputs: list[tuple[str, Any]] = []  # (table, _Output)
    sources: Counter[str] = Counter({s.value: 0 for s in GroundTruthSource})
    policies: Counter[str] = Counter()
    newest: datetime | None = None
    records = statements = 0
    try:
        if "jsonl" in formats:
            outputs.append(("records", w._Output(out_dir, "jsonl", staging)))
        for fmt in ("csv", "parquet"):
            if fmt in formats:
                item_name, statement_name = w.ANSWER_FILES[fmt]
                outputs.append(
                    ("answers", w._Output(out_dir, fmt, staging, name=item_name, header=ITEM_COLUMNS,
                                          schema=ITEM_SCHEMA, to_csv=csv_cells))
                )  # fmt: skip
                outputs.append(
                    ("answer_statements", w._Output(out_dir, fmt, staging, name=statement_name,
                                                    header=STATEMENT_COLUMNS, schema=STATEMENT_SCHEMA,
                                                    to_csv=csv_cells))
                )  # fmt: skip
        with w._prefetched(store, as_of, batch, KIND) as batches:
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
                    items.append(rows_of(judge(data)))
                    lines.append(text)
                    sources[str(data.get("ground_truth_source") or "(none)")] += 1
                    policies[str(data.get("policy_version") or "(none)")] += 1
                item_table = pa.Table.from_pylist([i for i, _ in items], schema=ITEM_SCHEMA)
                statement_table = pa.Table.from_pylist(
                    [s for _, ss in items for s in ss], schema=STATEMENT_SCHEMA
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
            awaiting = unsettled_count(conn, as_of, KIND)
    except BaseException:
        for _, out in outputs:
            out.discard()
        raise
    for name in set(previous) - {f["name"] for f in files}:
        (out_dir / name).unlink(missing_ok=True)
    manifest = {
        "manifest_version": w.MANIFEST_VERSION,
        "kind": w.KIND,
        "answer_kind": KIND,
        "layout": LAYOUT,
        "tables": {
            "records": "ground_truth.jsonl: GroundTruthRecord per item, as stored",
            "answers": "one row per item: " + ", ".join(ITEM_COLUMNS),
            "answer_statements": "one row per statement of the primary's answer: "
            + ", ".join(STATEMENT_COLUMNS),
        },
        "formats": [f for f in w.FORMATS if f in formats],
        "as_of": w.iso(as_of) if as_of else None,
        "generated_at": w.iso(generated),
        "records": records,
        "statements": statements,
        "newest_version_created_at": w.iso(newest) if newest else None,
        "counts_by_source": dict(sorted(sources.items())),
        "awaiting_adjudication": awaiting,
        "policy_versions": dict(sorted(policies.items())),
        "contract": w.contract_info(),
        "arbiter_version": arbiter.__version__,
        "writer": {"pyarrow": pa.__version__, "parquet_compression": w.PARQUET_COMPRESSION},
        "database": w.redact(store.url),
        "files": files,
    }
    atomic.write_json(out_dir / w.MANIFEST, manifest)
    return manifest
