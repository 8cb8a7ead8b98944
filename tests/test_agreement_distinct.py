"""Agreement counts only double reviews by two distinct reviewers (issue 11, item 2): a same-reviewer pair
already in the database (stored before the store refused it) is left out, counted, and said so in the
metrics, the report and the review app's Metrics page (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.report import render_html
from arbiter.metrics.reviewers import agreement
from arbiter.metrics.rows import Reviewed
from arbiter.metrics.text import headline_figures
from arbiter.store import Store

NOW = T0 + timedelta(hours=1)


def _submit(store: Store, packet_id: str, who: str, dominant: str, key: str) -> None:
    label = {**CLASSIFICATION, "dominant_type": dominant}
    store.reviews.submit(packet_id, who, review(who, at=NOW), label, idempotency_key=key, now=NOW)


def _legacy_claim(store: Store, packet_id: str, who: str) -> None:
    """What an old admin reassign did: the second half handed to the first half's reviewer."""
    with store.write() as conn:
        conn.execute(
            sa.text(
                "UPDATE packets SET status = 'IN_REVIEW', claimed_by = :w, claimed_at = :t, "
                "claim_expires_at = :e WHERE packet_id = :p"
            ),
            {
                "w": who,
                "t": NOW.replace(tzinfo=None),
                "e": (NOW + timedelta(hours=1)).replace(tzinfo=None),
                "p": packet_id,
            },
        )


def _pair(store: Store, doc_id: str) -> tuple[str, str]:
    record = with_sample(escalated(doc_id))
    store.records.record(record)
    assert record.packet is not None
    second = next(p for p in store.queue.page() if p.doc_id == doc_id and p.kind == "SECOND_REVIEW")
    return record.packet.packet_id, second.packet_id


def seed(store: Store) -> None:
    """doc-a: alice then bob (distinct, they agree); doc-b: alice both halves (legacy), she agrees with herself."""
    first, second = _pair(store, "doc-a")
    assert store.queue.claim(first, "alice", now=NOW) is not None
    _submit(store, first, "alice", "LAB_REPORT", "a1")
    assert store.queue.claim(second, "bob", now=NOW) is not None
    _submit(store, second, "bob", "LAB_REPORT", "a2")
    first, second = _pair(store, "doc-b")
    assert store.queue.claim(first, "alice", now=NOW) is not None
    _submit(store, first, "alice", "CLINICAL_NOTE", "b1")
    _legacy_claim(store, second, "alice")
    _submit(store, second, "alice", "CLINICAL_NOTE", "b2")


def test_a_same_reviewer_pair_is_left_out_and_counted(store: Store) -> None:
    """One distinct pair counts; alice agreeing with herself is excluded and counted as such."""
    seed(store)
    report = compute_metrics(store)
    assert report.agreement.kappa.n == 1
    assert report.agreement.same_reviewer == 1
    assert (report.agreement.kappa.agreement.k, report.agreement.kappa.agreement.n) == (1, 1)


def test_the_report_and_headline_say_a_pair_was_left_out(store: Store) -> None:
    """The HTML report and the headline figure name the same-reviewer pair left out."""
    seed(store)
    report = compute_metrics(store)
    assert "1 pair left out: one reviewer wrote both answers" in render_html(report)
    kappa_row = next(row for row in headline_figures(report) if row[0].startswith("Reviewer agreement"))
    assert "1 by one reviewer left out" in kappa_row[2]


def _reviewed(packet_id: str, kind: str, reviewer: str, label: str, pair_of: str | None = None) -> Reviewed:
    return Reviewed(
        packet_id=packet_id, doc_id="d", run_id="r", kind=kind, reviewer=reviewer, agrees=True, label=label,
        pair_of=pair_of,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("first_by", "second_by", "counted", "left_out"),
    [("alice", "bob", 1, 0), ("alice", "alice", 0, 1), ("bob", "alice", 1, 0)],
)
def test_agreement_counts_distinct_reviewers_only(
    first_by: str, second_by: str, counted: int, left_out: int
) -> None:
    """A pair counts when its two reviewers differ; otherwise it is left out and counted."""
    rows = [
        _reviewed("e1", "ESCALATION", first_by, "LAB_REPORT"),
        _reviewed("s1", "SECOND_REVIEW", second_by, "LAB_REPORT", pair_of="e1"),
    ]
    result = agreement(rows)
    assert (result.kappa.n, result.same_reviewer) == (counted, left_out)
