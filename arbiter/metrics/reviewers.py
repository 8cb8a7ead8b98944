"""Reviewer figures: throughput and time per packet per reviewer, and Cohen's κ between the two
reviewers of double-reviewed escalations (with the documents they disagree on, for adjudication)."""

from __future__ import annotations

from collections.abc import Iterable

from arbiter.metrics.result import Agreement, Disagreement, ReviewerStats
from arbiter.metrics.rows import PacketKind, Reviewed
from arbiter.metrics.stats import cohen_kappa, percentile, rate


def reviewer_stats(reviews: Iterable[Reviewed]) -> list[ReviewerStats]:
    """Per reviewer: reviews, share corrected, median and p90 seconds from claim to submit (started_at →
    submitted_at, stamped by the store on the server's clock), the distinct UTC clock hours with a
    submission ("active hours") and reviews per active hour. Busiest reviewer first."""
    by_reviewer: dict[str, list[Reviewed]] = {}
    for review in reviews:
        by_reviewer.setdefault(review.reviewer, []).append(review)
    stats = []
    for name, items in by_reviewer.items():
        seconds = [
            (r.submitted_at - r.started_at).total_seconds()
            for r in items
            if r.started_at is not None and r.submitted_at is not None and r.submitted_at >= r.started_at
        ]
        hours = {r.submitted_at.replace(minute=0, second=0, microsecond=0) for r in items if r.submitted_at}
        stats.append(
            ReviewerStats(
                reviewer=name,
                reviews=len(items),
                corrected=rate(sum(not r.agrees for r in items), len(items)),
                median_s=percentile(seconds, 0.5),
                p90_s=percentile(seconds, 0.9),
                active_hours=len(hours),
                per_active_hour=len(items) / len(hours) if hours else None,
            )
        )
    return sorted(stats, key=lambda s: (-s.reviews, s.reviewer))


def agreement(reviews: Iterable[Reviewed]) -> Agreement:
    """Pairs an escalation's first review with its blind second review (pair_of) and compares the dominant
    types the two ground-truth versions hold. Only pairs by two distinct reviewers count: a pair one reviewer
    wrote both halves of (legacy data) is left out and counted as such; a pair where either review wrote no
    label is skipped."""
    firsts: dict[str, Reviewed] = {}
    seconds: list[Reviewed] = []
    for review in reviews:
        if review.kind == PacketKind.ESCALATION:
            firsts[review.packet_id] = review
        elif review.kind == PacketKind.SECOND_REVIEW and review.pair_of:
            seconds.append(review)
    pairs: list[tuple[str, str]] = []
    disagreements: list[Disagreement] = []
    skipped = same_reviewer = 0
    for second in seconds:
        first = firsts.get(second.pair_of or "")
        if first is None:
            continue  # the first review is not in (yet, as of the report's time)
        if first.reviewer == second.reviewer:
            same_reviewer += 1
            continue
        if first.label is None or second.label is None:
            skipped += 1
            continue
        pairs.append((first.label, second.label))
        if first.label != second.label:
            disagreements.append(
                Disagreement(
                    doc_id=first.doc_id, packet_id=first.packet_id, first=first.label, second=second.label
                )
            )
    disagreements.sort(key=lambda d: (d.doc_id, d.packet_id))
    return Agreement(
        kappa=cohen_kappa(pairs), skipped=skipped, disagreements=disagreements, same_reviewer=same_reviewer
    )
