"""Issue 14.15 on both databases: claim next returns the reviewer's own open claim first (a submit lost to
a crash leaves no orphan), and a reviewer holds a bounded number of claims."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_fixtures import T0, escalated, pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.review.desk import Desk
from arbiter.store import Store, TooManyClaims
from arbiter.store.packet_rows import DEFAULT_MAX_CLAIMS


def seed(store: Store, n: int) -> None:
    for i in range(n):
        store.records.record(escalated(f"d{i}", created=T0 + timedelta(minutes=i)))


def held(store: Store, reviewer: str) -> list[str]:
    return [p.packet_id for p in store.queue.page(status="IN_REVIEW", claimed_by=reviewer)]


def test_claim_next_returns_the_reviewers_own_open_claim_first(store: Store) -> None:
    seed(store, 4)
    first = store.queue.claim_next("alice", now=T0 + timedelta(hours=1))
    assert first is not None
    # The submit is lost (a crashed server): the packet stays claimed. Claim next hands it back, renewed.
    again = store.queue.claim_next("alice", now=T0 + timedelta(hours=2))
    assert again is not None
    assert again.packet_id == first.packet_id
    assert again.claim_expires_at is not None
    assert again.claim_expires_at > T0 + timedelta(hours=2)
    assert held(store, "alice") == [first.packet_id]
    other = store.queue.claim_next("bob", now=T0 + timedelta(hours=2))
    assert other is not None
    assert other.packet_id != first.packet_id


def test_repeated_claim_next_never_piles_up_claims(store: Store) -> None:
    seed(store, 10)
    for _ in range(8):
        store.queue.claim_next("alice")
    assert len(held(store, "alice")) == 1


def test_a_reviewer_holds_a_bounded_number_of_claims(store: Store) -> None:
    seed(store, DEFAULT_MAX_CLAIMS + 2)
    ids = [p.packet_id for p in store.queue.page(status="PENDING")]
    for packet_id in ids[:DEFAULT_MAX_CLAIMS]:
        assert store.queue.claim(packet_id, "alice") is not None
    with pytest.raises(TooManyClaims, match="Finish or skip one"):
        store.queue.claim(ids[DEFAULT_MAX_CLAIMS], "alice")
    assert store.queue.claim(ids[0], "alice") is not None  # one already held: re-claiming it is fine
    outcome = Desk(store, "alice").claim(ids[DEFAULT_MAX_CLAIMS])
    assert not outcome.ok
    assert "at most" in outcome.message
    assert len(held(store, "alice")) == DEFAULT_MAX_CLAIMS
