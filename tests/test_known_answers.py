"""Known-answer packets (issue 33 item 5, docs/design.md §9.7): seeded from adjudicated ground truth, alike to a
real audit in everything a reviewer sees, never ground truth, and each reviewer's accuracy after 20 answers;
on SQLite and PostgreSQL (also as the DML-only application role)."""

from __future__ import annotations

import dataclasses
import random
from datetime import timedelta
from typing import Any

import pytest
from store_fixtures import T0, pg_app_role_urls_fixture, pg_server_url_fixture, store_fixture  # noqa: F401

from arbiter.contracts import AdjudicationChoice, PacketKind
from arbiter.metrics.collect import compute_metrics
from arbiter.review.known import seed_known
from arbiter.review.queue_view import queue_rows
from arbiter.store import Store
from arbiter.store.errors import PermissionDenied
from tests.test_store_adjudication import answer, audited, double_reviewed, packet_of, submit

# What differs between any two documents' packets by nature: ids, names, times.
PER_DOCUMENT = {"packet_id", "doc_id", "pdf_filename", "pdf_path", "created_at", "updated_at"}


def adjudicate(store: Store, doc_id: str, minute: int, truth: str = "GENOMIC_REPORT") -> None:
    """alice and bob disagree on the document, root decides for bob's answer (SME_ADJUDICATED)."""
    store.records.record(double_reviewed(doc_id), now=T0)
    submit(store, packet_of(store, doc_id, PacketKind.ESCALATION), "alice", answer("LAB_REPORT"), minute)
    submit(store, packet_of(store, doc_id, PacketKind.SECOND_REVIEW), "bob", answer(truth), minute + 1)
    decided = packet_of(store, doc_id, PacketKind.ADJUDICATION)
    submit(store, decided, "root", answer(truth), minute + 2, adjudication=AdjudicationChoice.SECOND)


@pytest.fixture(name="people")
def people_fixture(store: Store) -> Store:
    for name, role in (("alice", "reviewer"), ("bob", "reviewer"), ("carol", "reviewer"), ("root", "admin")):
        store.users.add(name, role, None)
    return store


def seeded_one(store: Store) -> str:
    adjudicate(store, "esc", 0)
    done = seed_known(store, "root", 1, now=T0 + timedelta(hours=2), rng=random.Random(1))
    assert len(done.packets) == 1
    return done.packets[0]


def test_only_an_admin_seeds(people: Store) -> None:
    """A reviewer is refused; nothing is queued."""
    adjudicate(people, "esc", 0)
    with pytest.raises(PermissionDenied):
        seed_known(people, "carol", 1)
    assert people.known.packet_ids() == set()


def test_a_reviewer_sees_a_known_answer_packet_as_a_real_audit(people: Store) -> None:
    """The packet, its queue summary and its queue row are a real audit's, field for field (but for what differs
    between any two documents: ids, names, times)."""
    known = seeded_one(people)
    people.records.record(audited("acc"), now=T0 + timedelta(hours=2))
    real = packet_of(people, "acc", PacketKind.AUDIT)

    def seen(packet_id: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        packet = people.queue.get(packet_id, viewer="carol").model_dump(mode="json")
        summary = next(s for s in people.queue.page(viewer="carol") if s.packet_id == packet_id)
        row = queue_rows([summary], now=T0 + timedelta(hours=3))[0]
        return (
            {k: v for k, v in packet.items() if k not in PER_DOCUMENT},
            {k: v for k, v in dataclasses.asdict(summary).items() if k not in PER_DOCUMENT},
            {k: v for k, v in row.items() if k not in ("Document", "Waiting")},
        )

    mine, theirs = seen(known), seen(real)
    assert len(mine[0]) > 15
    assert mine == theirs


def test_a_known_answer_never_becomes_ground_truth(people: Store) -> None:
    """carol's wrong answer writes no version (the adjudicated one stays in force), opens no adjudication and
    counts in no audit figure; it is carol's accuracy instead."""
    known = seeded_one(people)
    before = people.ground_truth.latest("esc")
    submit(people, known, "carol", answer("LAB_REPORT"), 30)
    after = people.ground_truth.latest("esc")
    assert after == before
    assert after is not None
    assert after.ground_truth_classification["dominant_type"] == "GENOMIC_REPORT"
    assert [p.kind for p in people.queue.page(status="PENDING")] == []
    report = compute_metrics(people, known_answers=True)
    assert report.audit.false_accept.n == 0
    assert report.audit.open == 0
    assert [g.reviewed for g in report.guarantees] == []
    assert [(k.reviewer, k.answered, k.accuracy.k, k.shown) for k in report.known_answers] == [
        ("carol", 1, 0, False)
    ]


def test_the_reviewers_who_decided_it_are_never_handed_it(people: Store) -> None:
    """alice and bob reviewed the document blind: claim next never gives them its known-answer packet."""
    seeded_one(people)
    assert people.queue.claim_next("alice") is None
    assert people.queue.claim_next("bob") is None
    assert people.queue.claim_next("carol") is not None


def test_accuracy_shows_after_twenty_answers(people: Store) -> None:
    """21 known answers, 3 wrong: shown with its Wilson interval; at 19 it is not shown yet."""
    for n in range(21):
        adjudicate(people, f"d{n:02d}", 3 * n)
    done = seed_known(people, "root", 25, now=T0 + timedelta(hours=5), rng=random.Random(2))
    assert len(done.packets) == 21
    order = sorted(done.packets)
    for i, packet_id in enumerate(order):
        truth = "LAB_REPORT" if i < 3 else "GENOMIC_REPORT"
        submit(people, packet_id, "carol", answer(truth), 300 + i)
        if i == 18:
            (early,) = compute_metrics(people, known_answers=True).known_answers
            assert (early.answered, early.shown) == (19, False)
    (found,) = compute_metrics(people, known_answers=True).known_answers
    assert (found.answered, found.accuracy.k, found.shown) == (21, 18, True)
    assert found.accuracy.low is not None
    assert found.accuracy.low < 18 / 21 < (found.accuracy.high or 0)
