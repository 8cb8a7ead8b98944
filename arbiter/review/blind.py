"""Blind stays blind on the pages that list documents from computed figures (the Metrics page and its HTML
report): a document the user holds a blind packet of is left out of them, as the store leaves it out of
every read made for that user (store/blind.py)."""

from __future__ import annotations

from collections.abc import Iterable

from arbiter.contracts import BLIND_KINDS
from arbiter.metrics.result import MetricsReport
from arbiter.store import PacketSummary

_BLIND = {kind.value for kind in BLIND_KINDS}


def held_blind(claims: Iterable[PacketSummary]) -> set[str]:
    """Documents of the user's open claims that are blind packets."""
    return {c.doc_id for c in claims if c.kind in _BLIND and c.status == "IN_REVIEW"}


def for_viewer(report: MetricsReport, hidden: set[str]) -> MetricsReport:
    """The report without the per-document rows of hidden documents (the counts stay as computed)."""
    if not hidden:
        return report
    agreement = report.agreement.model_copy(
        update={"disagreements": [d for d in report.agreement.disagreements if d.doc_id not in hidden]}
    )
    return report.model_copy(update={"agreement": agreement})
