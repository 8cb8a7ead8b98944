"""Rows for the ground-truth page: newest version per document and a document's version history."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arbiter.contracts import GroundTruthRecord

SOURCE_LABELS = {
    "PRIMARY_AGENT_AUTO_ACCEPT": "Accepted automatically",
    "SME_VALIDATED": "Reviewer agreed",
    "SME_CORRECTED": "Reviewer corrected",
    "SME_ADJUDICATED": "Adjudicated",
}


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if hasattr(value, "strftime") else str(value or "")


def latest_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """store.ground_truth.page rows as table rows."""
    return [
        {
            "Document": r["doc_id"],
            "Version": r["version"],
            "Source": SOURCE_LABELS.get(r["source"], r["source"]),
            "Saved": _when(r["created_at"]),
            "Settled": "awaiting adjudication" if r.get("unsettled") else "yes",
        }
        for r in rows
    ]


def history_rows(history: Iterable[GroundTruthRecord]) -> list[dict[str, Any]]:
    """Every version, newest first, with who decided and what the document was called."""
    rows = []
    for record in sorted(history, key=lambda r: r.version, reverse=True):
        review = record.sme_review
        rows.append(
            {
                "Version": record.version,
                "Source": SOURCE_LABELS.get(
                    record.ground_truth_source.value, record.ground_truth_source.value
                ),
                "Dominant type": record.ground_truth_classification.get("dominant_type"),
                "Segments": len(record.ground_truth_classification.get("segments") or []),
                "Reviewer": review.reviewer if review else "",
                "Supersedes": record.supersedes or "",
                "Saved": _when(record.created_at),
            }
        )
    return rows


def version_caption(record: GroundTruthRecord) -> str:
    """One line on a version: number, source, who and when, what it replaced."""
    source = SOURCE_LABELS.get(record.ground_truth_source.value, record.ground_truth_source.value)
    parts = [f"Version {record.version}", source]
    if record.sme_review is not None:
        parts.append(f"by {record.sme_review.reviewer} (confidence {record.sme_review.confidence:.0%})")
    parts.append(_when(record.created_at))
    if record.supersedes:
        parts.append(f"supersedes {record.supersedes}")
    return " · ".join(parts)
