"""Blind means blind, in the store: a document's earlier answers are hidden from every reviewer who may still
give its blind review (before, during and after a claim, through a skip), and whoever has seen an answer is
never handed the blind review (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    accepted,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.contracts import PacketKind
from arbiter.store import NotIndependent, Store, UnknownPacket

NOW = T0 + timedelta(days=30)


def _answered_by_alice(store: Store) -> tuple[str, str]:
    """esc-1 with its blind second review; alice has answered the escalation. (escalation, second review)"""
    record = with_sample(escalated("esc-1"))
    store.records.record(record)
    assert record.packet is not None
    first = record.packet.packet_id
    second = next(p for p in store.queue.page() if p.kind == PacketKind.SECOND_REVIEW.value).packet_id
    assert store.queue.claim(first, "alice", now=NOW) is not None
    store.reviews.submit(
        first, "alice", review("alice", at=NOW), dict(CLASSIFICATION), idempotency_key="a", now=NOW
    )
    return first, second


def _gt_docs(store: Store, viewer: str) -> list[str]:
    return [row["doc_id"] for row in store.ground_truth.page(viewer=viewer)]


def test_the_first_answer_is_hidden_before_anyone_claims_the_second_review(store: Store) -> None:
    """Unclaimed second review: bob sees no version, no history and no escalation row of esc-1; alice does."""
    first, second = _answered_by_alice(store)
    assert store.ground_truth.history("esc-1", viewer="bob") == []
    assert "esc-1" not in _gt_docs(store, "bob")
    assert [p.packet_id for p in store.queue.page(viewer="bob")] == [second]
    assert store.queue.count(viewer="bob") == 1
    assert store.queue.counts(viewer="bob")["by_status"]["COMPLETED"] == 0
    with pytest.raises(UnknownPacket):
        store.queue.get(first, viewer="bob")
    assert store.blind.hidden_docs("bob") == {"esc-1"}
    assert store.ground_truth.history("esc-1", viewer="alice")  # she gave it: nothing to hide from her


def test_a_skip_keeps_the_answer_hidden_and_the_packet_blind(store: Store) -> None:
    """Bob claims the second review, skips it: the first answer stays hidden and he may claim it again."""
    _, second = _answered_by_alice(store)
    assert store.queue.claim(second, "bob", now=NOW) is not None
    assert store.ground_truth.history("esc-1", viewer="bob") == []
    assert store.queue.release(second, "bob", now=NOW)
    assert store.ground_truth.history("esc-1", viewer="bob") == []
    assert "esc-1" not in _gt_docs(store, "bob")
    again = store.queue.claim(second, "bob", now=NOW)
    assert again is not None
    assert store.audit.events(actor="bob", action="answer.seen") == []


def test_the_answers_show_once_the_double_review_is_done(store: Store) -> None:
    """After bob submits the second review, every reviewer sees esc-1's versions again."""
    _, second = _answered_by_alice(store)
    assert store.queue.claim(second, "bob", now=NOW) is not None
    store.reviews.submit(
        second, "bob", review("bob", at=NOW), dict(CLASSIFICATION), idempotency_key="b", now=NOW
    )
    assert "esc-1" in _gt_docs(store, "carol")
    assert store.ground_truth.history("esc-1", viewer="carol")


def test_whoever_has_seen_an_answer_is_never_handed_the_blind_review(store: Store) -> None:
    """Carol read esc-1's reviewed version; a later blind audit of it goes past her, and a direct claim says why."""
    record = escalated("esc-1", "run-1")
    store.records.record(record)
    assert record.packet is not None
    assert store.queue.claim(record.packet.packet_id, "alice", now=NOW) is not None
    store.reviews.submit(
        record.packet.packet_id,
        "alice",
        review("alice", at=NOW),
        dict(CLASSIFICATION),
        idempotency_key="a",
        now=NOW,
    )
    assert store.ground_truth.history("esc-1", viewer="carol")  # shown, so recorded
    assert len(store.audit.events(actor="carol", action="answer.seen")) == 1
    store.ground_truth.history("esc-1", viewer="carol")
    assert len(store.audit.events(actor="carol", action="answer.seen")) == 1  # once per reviewer and document
    store.records.record(with_sample(accepted("esc-1", "run-2", store=store, sha="e" * 64)))
    audit = next(p for p in store.queue.page(status="PENDING") if p.kind == "AUDIT")
    assert store.queue.claim_next("carol", now=NOW) is None
    with pytest.raises(NotIndependent, match="carol has seen an earlier answer of esc-1"):
        store.queue.claim(audit.packet_id, "carol", now=NOW)
    assert store.ground_truth.history("esc-1", viewer="carol")  # she may not give it: nothing kept from her
    dave = store.queue.claim_next("dave", now=NOW)
    assert dave is not None
    assert dave.packet_id == audit.packet_id
