"""Time per packet is measured on the server, from the start of the claim that was submitted to the submit
(SQLite and PostgreSQL); the client's clock is not trusted and lease renewals do not restart it."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
)

from arbiter.contracts import SMEReview
from arbiter.export import export_ground_truth
from arbiter.metrics.loader import reviews as loaded_reviews
from arbiter.metrics.reviewers import reviewer_stats
from arbiter.store import Store

T = T0 + timedelta(days=30)
S = timedelta(seconds=1)


def _client_review(reviewer: str) -> SMEReview:
    """What a client whose session restarted would send: it thinks the work took 6 seconds."""
    return review(reviewer, at=T + 500 * S).model_copy(
        update={"started_at": T + 494 * S, "submitted_at": T + 500 * S}
    )


def _submit(store: Store, packet_id: str, who: str, at: object) -> None:
    store.reviews.submit(
        packet_id, who, _client_review(who), CLASSIFICATION, idempotency_key=f"{who}-{packet_id}", now=at
    )  # type: ignore[arg-type]


def _seconds(store: Store, packet_id: str) -> float | None:
    with store.read() as conn:
        value = conn.execute(
            sa.text("SELECT duration_s FROM reviews WHERE packet_id = :p"), {"p": packet_id}
        ).scalar_one()
    return None if value is None else float(value)


def _claim_next(store: Store, who: str, at: object) -> str:
    packet = store.queue.claim_next(who, now=at)  # type: ignore[arg-type]
    assert packet is not None
    return packet.packet_id


def _claim_direct(store: Store, who: str, at: object) -> str:
    packet_id = store.queue.page(status="PENDING", limit=1)[0].packet_id
    assert store.queue.claim(packet_id, who, now=at) is not None  # type: ignore[arg-type]
    return packet_id


@pytest.mark.parametrize("claim", [_claim_next, _claim_direct], ids=["claim-next", "direct-claim"])
def test_claim_at_t_submit_at_t_plus_120_is_120_seconds(store: Store, claim: Callable[..., str]) -> None:
    """Claimed at t and submitted at t+120 s: the review stores 120 s, whatever the client's clock said."""
    store.records.record(escalated("d1"))
    packet_id = claim(store, "alice", T)
    _submit(store, packet_id, "alice", T + 120 * S)
    assert _seconds(store, packet_id) == 120.0
    saved = store.reviews.get(packet_id)
    assert saved is not None
    assert (saved.started_at, saved.submitted_at) == (T, T + 120 * S)
    [record] = store.ground_truth.history("d1")
    assert record.sme_review is not None
    assert record.sme_review.started_at == T


def test_a_new_store_object_measures_the_same_span(store: Store) -> None:
    """An app restart (a new Store on the same database between claim and submit) does not restart the clock."""
    store.records.record(escalated("d1"))
    packet_id = _claim_next(store, "alice", T)
    again = Store(store.url)
    try:
        _submit(again, packet_id, "alice", T + 120 * S)
    finally:
        again.dispose()
    assert _seconds(store, packet_id) == 120.0


# What happens to the span between claim (at T) and submit (at T + 300 s), in the order given.
SPANS = [
    ("lease renewed", lambda s, p: s.queue.renew(p, "alice", now=T + 100 * S), 300.0),
    (
        "claim next hands back the open claim",
        lambda s, p: s.queue.claim_next("alice", now=T + 100 * S),
        300.0,
    ),
    ("the holder claims it again directly", lambda s, p: s.queue.claim(p, "alice", now=T + 100 * S), 300.0),
    (
        "released, then claimed again (a new span)",
        lambda s, p: (
            s.queue.release(p, "alice", now=T + 50 * S),
            s.queue.claim(p, "alice", now=T + 100 * S),
        ),
        200.0,
    ),
    (
        "an admin reassigns it (a new span)",
        lambda s, p: s.queue.reassign(p, "alice", "root", now=T + 100 * S),
        200.0,
    ),
]


@pytest.mark.parametrize(("what", "between", "expected"), SPANS, ids=[s[0] for s in SPANS])
def test_which_claim_the_span_starts_at(
    store: Store, what: str, between: Callable[[Store, str], object], expected: float
) -> None:
    """The span is the submitted claim's: renewals keep its start; a release or a reassign starts a new one."""
    store.users.add("alice", "reviewer", None)
    store.users.add("root", "admin", None)
    store.records.record(escalated("d1"))
    packet_id = _claim_next(store, "alice", T)
    between(store, packet_id)
    _submit(store, packet_id, "alice", T + 300 * S)
    assert _seconds(store, packet_id) == expected


def test_metrics_take_time_per_packet_from_the_server(store: Store) -> None:
    """Median and p90 per reviewer come from the stored server spans, not the client's 6 seconds."""
    for n, seconds in enumerate((60, 120, 180)):
        store.records.record(escalated(f"d{n}"))
        packet_id = _claim_next(store, "alice", T + 1000 * n * S)
        _submit(store, packet_id, "alice", T + (1000 * n + seconds) * S)
    with store.read() as conn:
        [stats] = reviewer_stats(loaded_reviews(conn))
    assert (stats.median_s, stats.reviews) == (120.0, 3)
    assert stats.p90_s is not None
    assert stats.p90_s > 120.0


def test_exports_carry_the_server_span(store: Store, tmp_path: Path) -> None:
    """The CSV export's review_seconds and the JSONL review's start and submit times are the server's."""
    store.records.record(escalated("d1"))
    packet_id = _claim_next(store, "alice", T)
    _submit(store, packet_id, "alice", T + 120 * S)
    export_ground_truth(store, ("csv", "jsonl"), tmp_path, now=T + 1000 * S)
    with open(tmp_path / "ground_truth.csv", newline="", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["review_seconds"] == "120.0"
    [line] = (tmp_path / "ground_truth.jsonl").read_text().splitlines()
    saved = json.loads(line)["sme_review"]
    assert (saved["started_at"], saved["submitted_at"]) == ("2026-02-04T09:00:00Z", "2026-02-04T09:02:00Z")
