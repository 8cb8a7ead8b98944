"""From rows to a MetricsReport: one pass over the ground truth, one over the documents, the reviews in
memory (there are far fewer of them). The loader feeds it from the store; tests feed it by hand."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts.profile import MetricsPolicy
from arbiter.metrics.arbiter_side import (
    ACCEPT,
    ESCALATED,
    UNREADABLE,
    audit_stats,
    decision_label,
    decision_mix,
    precision,
    retried,
    retry_stats,
)
from arbiter.metrics.model import Labelled, ModelScorer
from arbiter.metrics.result import MetricsReport, RunTrend, Totals
from arbiter.metrics.reviewers import agreement, reviewer_stats
from arbiter.metrics.rows import DocRun, PacketKind, Reviewed
from arbiter.metrics.sql import KNOWN_ANSWER
from arbiter.metrics.stats import rate


class _RunTally:
    __slots__ = (
        "accepted",
        "audits",
        "docs",
        "escalated",
        "false_accepts",
        "gt_correct",
        "gt_sme",
        "retried",
        "retry_ok",
        "unreadable",
    )

    def __init__(self) -> None:
        self.docs = self.accepted = self.escalated = self.unreadable = 0
        self.retried = self.retry_ok = self.audits = self.false_accepts = self.gt_sme = self.gt_correct = 0

    def add_doc(self, doc: DocRun) -> None:
        n = doc.count
        self.docs += n
        label = decision_label(doc)
        self.accepted += n * (doc.decision == ACCEPT and label != UNREADABLE)
        self.escalated += n * (label == ESCALATED)
        self.unreadable += n * (label == UNREADABLE)
        if retried(doc):
            self.retried += n
            self.retry_ok += n * (doc.decision == ACCEPT and not doc.error)


def mark_latest(rows: Iterable[DocRun]) -> list[DocRun]:
    """(document, run) rows given oldest first, one per document and run, with `latest` set on each
    document's last row and cleared on the others."""
    out = list(rows)
    seen: set[str] = set()
    for row in reversed(out):
        row.latest = row.doc_id not in seen
        seen.add(row.doc_id)
    return out


class GroundTruthScores:
    """The ground-truth side of the report, fed one document at a time: model scores, counts, and the
    primary's accuracy on SME-reviewed documents per run (for the trends)."""

    def __init__(self) -> None:
        self.scorer = ModelScorer()
        self.docs = self.sme = 0
        self.by_run: dict[str, list[int]] = {}  # run_id → [correct, scored]

    def add(self, doc: Labelled) -> None:
        self.docs += 1
        self.scorer.add(doc)
        if doc.sme:
            self._sme(doc.run_id, doc.truth.dominant, None if doc.primary is None else doc.primary.dominant)

    def add_values(self, sme: bool, run_id: str | None, *values: Any) -> None:
        """ModelScorer.add_values's arguments after sme; the loader's fast path (no objects per document)."""
        self.docs += 1
        self.scorer.add_values(sme, *values)
        if sme:
            self._sme(run_id, values[0], values[3])

    def _sme(self, run_id: str | None, truth: str, primary: str | None) -> None:
        self.sme += 1
        if run_id is not None and primary is not None:
            tally = self.by_run.setdefault(run_id, [0, 0])
            tally[0] += primary == truth
            tally[1] += 1

    def add_all(self, docs: Iterable[Labelled]) -> GroundTruthScores:
        add = self.add
        for doc in docs:
            add(doc)
        return self


def build_report(
    ground_truth: GroundTruthScores | Iterable[Labelled],
    documents: Iterable[DocRun],
    reviews: Sequence[Reviewed],
    runs: Sequence[tuple[str, datetime | None]] = (),
    *,
    open_audits: int = 0,
    as_of: datetime | None = None,
    database: str = "",
    label_order: Sequence[str] = (),
    policy: MetricsPolicy | None = None,
) -> MetricsReport:
    """Every figure of the report. `documents` holds every (document, run) row: the decision mix, retry and
    escalation figures use the rows marked `latest` (each document's newest run), the trends all of them."""
    gt = (
        ground_truth
        if isinstance(ground_truth, GroundTruthScores)
        else GroundTruthScores().add_all(ground_truth)
    )
    tallies: dict[str, _RunTally] = {}
    for run_id, (correct, scored) in gt.by_run.items():
        tally = tallies.setdefault(run_id, _RunTally())
        tally.gt_correct, tally.gt_sme = correct, scored
    latest: list[DocRun] = []
    for row in documents:
        tallies.setdefault(row.run_id, _RunTally()).add_doc(row)
        if row.latest:
            latest.append(row)
    for review in reviews:
        if review.kind == PacketKind.AUDIT:
            tally = tallies.setdefault(review.run_id, _RunTally())
            tally.audits += 1
            tally.false_accepts += not review.agrees
    created = dict(runs)
    order = [run_id for run_id, _ in runs] + sorted(set(tallies) - set(created))
    trends = [
        RunTrend(
            run_id=run_id,
            created_at=created.get(run_id),
            docs=t.docs,
            accepted=rate(t.accepted, t.docs),
            escalated=rate(t.escalated, t.docs),
            unreadable=rate(t.unreadable, t.docs),
            retry_success=rate(t.retry_ok, t.retried),
            false_accept=rate(t.false_accepts, t.audits),
            primary_accuracy_sme=rate(t.gt_correct, t.gt_sme),
        )
        for run_id in order
        for t in [tallies.get(run_id, _RunTally())]
    ]
    # A known-answer review counts as the audit it looks like (review/known.py): only admins tell them apart.
    kinds = Counter(PacketKind.AUDIT.value if r.kind == KNOWN_ANSWER else r.kind for r in reviews)
    return MetricsReport(
        generated_at=datetime.now(UTC),
        as_of=as_of,
        database=database,
        totals=Totals(
            documents=sum(d.count for d in latest),
            runs=len(order),
            ground_truth_docs=gt.docs,
            sme_ground_truth_docs=gt.sme,
            reviews=len(reviews),
            reviews_by_kind=dict(sorted(kinds.items())),
        ),
        audit=audit_stats(reviews, open_audits, policy),
        models=gt.scorer.results(label_order),
        decisions=decision_mix(latest),
        retry=retry_stats(latest),
        precision=precision(reviews),
        agreement=agreement(reviews),
        reviewers=reviewer_stats(reviews),
        runs=trends,
    )
