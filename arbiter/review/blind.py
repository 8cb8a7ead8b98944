"""Blind stays blind on the pages that list documents from computed figures (the Metrics page and its HTML
report): a document whose blind review the user may still give is left out of them, as the store leaves it
out of every read made for that user (store/blind.py, Blind.hidden_docs)."""

from __future__ import annotations

from arbiter.metrics.result import MetricsReport


def for_viewer(report: MetricsReport, hidden: set[str]) -> MetricsReport:
    """The report without the per-document rows of hidden documents (the counts stay as computed)."""
    if not hidden:
        return report
    agreement = report.agreement.model_copy(
        update={"disagreements": [d for d in report.agreement.disagreements if d.doc_id not in hidden]}
    )
    return report.model_copy(update={"agreement": agreement})
