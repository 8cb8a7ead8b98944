"""The grounded-answer export layout (`arbiter export --kind grounded-answer`; docs/ground-truth/index.md, "Grounded answers").

The ground truth in force per item (answer rows only), written by export/writer.py as:

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

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from arbiter.contracts.answers import Verdict
from arbiter.contracts.grounded import KIND
from arbiter.export.arrow import TIMESTAMP
from arbiter.export.flat import neutralise
from arbiter.metrics.grounded import NOT_JUDGED, UNJUDGED, JudgedItem

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
