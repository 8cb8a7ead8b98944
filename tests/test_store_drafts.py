"""Drafts on the server (SQLite and PostgreSQL): one per packet and reviewer, written while the reviewer
holds the claim, read back only by that reviewer, deleted when the packet is submitted or skipped."""

from __future__ import annotations

from datetime import timedelta

from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
)

from arbiter.store import Store

NOW = T0 + timedelta(days=30)
DRAFT = {"rows": [{"start_page": 1, "end_page": 6, "dominant_type": "CLINICAL_NOTE"}], "notes": "half done"}


def _claimed(store: Store, who: str = "alice") -> str:
    store.records.record(escalated("d1"))
    packet = store.queue.claim_next(who, now=NOW)
    assert packet is not None
    return packet.packet_id


def test_a_draft_is_read_back_by_its_reviewer(store: Store) -> None:
    """Saved twice, the newest draft is what the reviewer gets back."""
    packet_id = _claimed(store)
    assert store.drafts.save(packet_id, "alice", {"notes": "first"}, now=NOW)
    assert store.drafts.save(packet_id, "alice", DRAFT, now=NOW + timedelta(seconds=5))
    assert store.drafts.get(packet_id, "alice") == DRAFT


def test_no_draft_is_none(store: Store) -> None:
    """A packet nobody drafted has no draft."""
    packet_id = _claimed(store)
    assert store.drafts.get(packet_id, "alice") is None


def test_another_reviewer_never_reads_the_draft(store: Store) -> None:
    """Bob, or an admin, gets nothing from Alice's draft, also after taking the packet over."""
    packet_id = _claimed(store)
    store.drafts.save(packet_id, "alice", DRAFT, now=NOW)
    assert store.drafts.get(packet_id, "bob") is None
    taken = store.queue.claim_next("bob", now=NOW + timedelta(hours=1))  # Alice's lease lapsed
    assert taken is not None
    assert taken.packet_id == packet_id
    assert store.drafts.get(packet_id, "bob") is None
    assert store.drafts.get(packet_id, "root") is None


def test_only_the_claim_holder_can_save(store: Store) -> None:
    """A reviewer who does not hold the claim writes no draft."""
    packet_id = _claimed(store)
    assert not store.drafts.save(packet_id, "bob", DRAFT, now=NOW)
    assert store.drafts.get(packet_id, "bob") is None


def test_submit_deletes_the_drafts(store: Store) -> None:
    """Once the packet is submitted its drafts are gone."""
    packet_id = _claimed(store)
    store.drafts.save(packet_id, "alice", DRAFT, now=NOW)
    store.reviews.submit(packet_id, "alice", review("alice"), CLASSIFICATION, idempotency_key="k1", now=NOW)
    assert store.drafts.get(packet_id, "alice") is None


def test_skip_deletes_the_reviewers_draft(store: Store) -> None:
    """Skipping gives the packet back without the draft."""
    packet_id = _claimed(store)
    store.drafts.save(packet_id, "alice", DRAFT, now=NOW)
    assert store.queue.release(packet_id, "alice", now=NOW)
    assert store.drafts.get(packet_id, "alice") is None


def test_a_lost_claim_keeps_the_draft_for_its_reviewer(store: Store) -> None:
    """A lapsed lease keeps Alice's draft: when she claims the packet again, it is hers to restore."""
    packet_id = _claimed(store)
    store.drafts.save(packet_id, "alice", DRAFT, now=NOW)
    later = NOW + timedelta(hours=1)
    assert store.queue.claim(packet_id, "alice", now=later) is not None
    assert store.drafts.get(packet_id, "alice") == DRAFT
