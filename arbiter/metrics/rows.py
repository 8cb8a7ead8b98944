"""The plain rows the metrics are computed from: what the loader reads from the store (or a test builds
by hand). Slotted dataclasses, not contract models: 100k of them must be cheap."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from arbiter.contracts import PacketKind

__all__ = ["DocRun", "PacketKind", "Reviewed"]


@dataclass(slots=True)
class DocRun:
    """One document as decided in one run: the documents row, and from its outcome whether there was a second
    attempt (an auto-fix was applied and verified again), the first attempt's decision and the stop reason.
    `count`: how many identical rows this one stands for (the loader groups them); `latest`: this is the
    document's newest run (see compute.mark_latest for rows built one per document)."""

    doc_id: str
    run_id: str
    decision: str
    reason: str | None = None
    error: str | None = None
    reattempted: bool = False
    first_decision: str | None = None
    stop_reason: str | None = None
    count: int = 1
    latest: bool = True


@dataclass(slots=True)
class Reviewed:
    """A packet's first review, with what the metrics need from the packet and the ground truth it wrote.

    label: the dominant type of the answer the review gave (a review saved before answers were kept: of the
    ground-truth version it wrote; None when there is none);
    accepted_label: for an audit, the dominant type the arbiter accepted;
    semantic_checks: for an audit, how the accept was earned (SemanticChecks value; None when unknown).
    """

    packet_id: str
    doc_id: str
    run_id: str
    kind: str
    reviewer: str
    agrees: bool
    label: str | None = None
    accepted_label: str | None = None
    pair_of: str | None = None
    codes: tuple[str, ...] = ()
    started_at: datetime | None = None
    submitted_at: datetime | None = None
    semantic_checks: str | None = None
