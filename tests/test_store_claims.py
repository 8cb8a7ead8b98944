"""Claims and submissions: priority order, leases, lost claims refused with nothing written, idempotent
submits, admin release and reassign (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    escalated,
    pg_server_url_fixture,
    review,
    row_counts,
    store_fixture,
)

from arbiter.contracts import GroundTruthSource, ReviewStatus, Severity
from arbiter.store import ClaimLost, PermissionDenied, Store

NOW = T0 + timedelta(days=30)
LEASE = timedelta(minutes=30)


def _queue(store: Store) -> None:
    """Three packets: a minor one oldest, a blocker newest, a major one in between."""
    store.records.record(escalated("minor-old", severity=Severity.MINOR, created=T0))
    store.records.record(escalated("blocker-new", severity=Severity.BLOCKER, created=T0 + timedelta(days=3)))
    store.records.record(escalated("major-mid", severity=Severity.MAJOR, created=T0 + timedelta(days=1)))
    store.records.record(escalated("major-old", severity=Severity.MAJOR, created=T0 - timedelta(days=1)))


def _claim(store: Store, who: str = "alice", at: object = NOW) -> str:
    packet = store.queue.claim_next(who, now=at)  # type: ignore[arg-type]
    assert packet is not None
    return packet.packet_id


def test_claim_next_orders_by_severity_then_age(store: Store) -> None:
    """Blocker first, then majors oldest first, then minor; None when the queue is empty."""
    _queue(store)
    docs = [store.queue.claim_next(f"r{i}", now=NOW) for i in range(5)]
    assert [p.doc_id if p else None for p in docs] == [
        "blocker-new",
        "major-old",
        "major-mid",
        "minor-old",
        None,
    ]


def test_claim_sets_the_lease_and_state(store: Store) -> None:
    """A claim marks the packet IN_REVIEW for the reviewer with a lease ending after `lease`."""
    _queue(store)
    packet = store.queue.claim_next("alice", lease=LEASE, now=NOW)
    assert packet is not None
    assert (packet.review_status, packet.claimed_by, packet.claim_expires_at) == (
        ReviewStatus.IN_REVIEW,
        "alice",
        NOW + LEASE,
    )
    assert store.audit.events(action="packet.claim")[0].actor == "alice"


def test_expired_lease_returns_the_packet_to_the_queue(store: Store) -> None:
    """After the lease lapses, claim_next hands the packet to the next reviewer."""
    store.records.record(escalated("d1"))
    first = _claim(store, "alice", NOW)
    assert store.queue.claim_next("bob", now=NOW + timedelta(minutes=29)) is None
    again = store.queue.claim_next("bob", now=NOW + timedelta(minutes=31))
    assert again is not None
    assert (again.packet_id, again.claimed_by) == (first, "bob")


def test_submit_after_takeover_is_refused_and_writes_nothing(store: Store) -> None:
    """Alice's lease lapsed and Bob claimed it: her submit raises ClaimLost naming Bob; nothing is written."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice", NOW)
    _claim(store, "bob", NOW + timedelta(minutes=31))
    before = row_counts(store)
    with pytest.raises(ClaimLost, match="bob holds it now"):
        store.reviews.submit(
            packet_id,
            "alice",
            review("alice"),
            CLASSIFICATION,
            idempotency_key="a1",
            now=NOW + timedelta(minutes=32),
        )
    assert row_counts(store) == before
    assert store.queue.get(packet_id).claimed_by == "bob"


def test_submit_after_expiry_is_refused(store: Store) -> None:
    """An expired lease nobody took still refuses the submit, saying when it expired."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice", NOW)
    before = row_counts(store)
    with pytest.raises(ClaimLost, match="expired at"):
        store.reviews.submit(
            packet_id,
            "alice",
            review("alice"),
            CLASSIFICATION,
            idempotency_key="a1",
            now=NOW + timedelta(hours=1),
        )
    assert row_counts(store) == before


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("never_claimed", "released back to the queue"),
        ("released", "released back to the queue"),
        ("someone_else", "bob holds it now"),
        ("completed", "already completed"),
    ],
)
def test_submit_without_the_claim_is_refused(store: Store, setup: str, message: str) -> None:
    """Every way of not holding the claim is refused with a plain message; the draft is the caller's."""
    store.records.record(escalated("d1"))
    packet_id = store.queue.page()[0].packet_id
    if setup == "released":
        _claim(store, "alice")
        store.queue.release(packet_id, "alice")
    elif setup == "someone_else":
        _claim(store, "bob")
    elif setup == "completed":
        _claim(store, "bob")
        store.reviews.submit(
            packet_id, "bob", review("bob", at=NOW), CLASSIFICATION, idempotency_key="b1", now=NOW
        )
    before = row_counts(store)
    with pytest.raises(ClaimLost, match=message) as caught:
        store.reviews.submit(
            packet_id, "alice", review("alice", at=NOW), CLASSIFICATION, idempotency_key="a1", now=NOW
        )
    assert "draft is kept" in str(caught.value)
    assert row_counts(store) == before


def test_submit_writes_review_ground_truth_completion_and_audit_together(store: Store) -> None:
    """One submit: one review, one SME ground-truth version, the packet COMPLETED, one audit event."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    before = row_counts(store)
    gt = store.reviews.submit(
        packet_id,
        "alice",
        review("alice", agrees=False, at=NOW),
        CLASSIFICATION,
        idempotency_key="a1",
        now=NOW,
    )
    after = row_counts(store)
    assert {t: after[t] - before[t] for t in ("reviews", "ground_truth", "audit_log")} == {
        "reviews": 1,
        "ground_truth": 1,
        "audit_log": 1,
    }
    assert gt.ground_truth_source == GroundTruthSource.SME_CORRECTED
    assert gt.sme_review is not None
    assert store.queue.get(packet_id).review_status == ReviewStatus.COMPLETED
    assert store.reviews.get(packet_id) == gt.sme_review


def test_double_submit_creates_nothing_twice(store: Store) -> None:
    """The same idempotency key returns the first ground-truth record and adds no rows."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    first = store.reviews.submit(
        packet_id, "alice", review("alice", at=NOW), CLASSIFICATION, idempotency_key="k", now=NOW
    )
    before = row_counts(store)
    second = store.reviews.submit(
        packet_id,
        "alice",
        review("alice", at=NOW),
        CLASSIFICATION,
        idempotency_key="k",
        now=NOW + timedelta(seconds=1),
    )
    assert second == first
    assert row_counts(store) == before


def test_later_review_supersedes_earlier_ground_truth(store: Store) -> None:
    """A document reviewed again adds version 2 superseding version 1; version 1 is unchanged."""
    store.records.record(escalated("d1", "run-1"))
    v1 = store.reviews.submit(
        _claim(store, "alice"), "alice", review("alice", at=NOW), CLASSIFICATION, idempotency_key="1", now=NOW
    )
    store.records.record(escalated("d1", "run-2", sha="b" * 64))
    corrected = {**CLASSIFICATION, "dominant_type": "LAB_REPORT"}
    v2 = store.reviews.submit(
        _claim(store, "bob"),
        "bob",
        review("bob", agrees=False, at=NOW),
        corrected,
        idempotency_key="2",
        now=NOW,
    )
    history = store.ground_truth.history("d1")
    assert history == [v1, v2]
    assert (v2.version, v2.supersedes) == (2, v1.gt_id)
    assert store.ground_truth.latest("d1") == v2


def test_renew_extends_only_the_holders_lease(store: Store) -> None:
    """The holder's renew moves the expiry; anyone else's renew is refused."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice", NOW)
    assert store.queue.renew(packet_id, "alice", lease=LEASE, now=NOW + timedelta(minutes=20))
    assert not store.queue.renew(packet_id, "bob", now=NOW + timedelta(minutes=20))
    assert store.queue.get(packet_id).claim_expires_at == NOW + timedelta(minutes=50)
    assert store.queue.claim_next("bob", now=NOW + timedelta(minutes=45)) is None


def test_release_returns_own_claim_only(store: Store) -> None:
    """A reviewer can release their own claim, not someone else's; released packets are claimable."""
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    assert not store.queue.release(packet_id, "bob")
    assert store.queue.release(packet_id, "alice")
    assert store.queue.get(packet_id).review_status == ReviewStatus.PENDING
    assert store.queue.claim_next("bob", now=NOW) is not None


def test_claim_by_id_respects_other_claims(store: Store) -> None:
    """claim() takes a pending packet, keeps the holder's own, and refuses one someone else holds."""
    store.records.record(escalated("d1"))
    packet_id = store.queue.page()[0].packet_id
    assert store.queue.claim(packet_id, "alice", now=NOW) is not None
    assert store.queue.claim(packet_id, "alice", now=NOW) is not None
    assert store.queue.claim(packet_id, "bob", now=NOW) is None


def test_admin_release_and_reassign_are_audited(store: Store) -> None:
    """Admins release or reassign anyone's claim; each action is in the audit log."""
    store.users.add("root", "admin", "password1")
    store.users.add("carol", "reviewer", "password1")
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    assert store.queue.admin_release(packet_id, "root")
    moved = store.queue.reassign(packet_id, "carol", "root")
    assert (moved.claimed_by, moved.review_status) == ("carol", ReviewStatus.IN_REVIEW)
    actions = [(e.actor, e.action, e.target) for e in store.audit.events(actor="root")]
    assert actions == [("root", "packet.reassign", packet_id), ("root", "packet.admin_release", packet_id)]
    assert store.audit.events(action="packet.reassign")[0].details == {"from": None, "to": "carol"}


def test_non_admins_cannot_release_or_reassign(store: Store) -> None:
    """A reviewer's admin actions are refused."""
    store.users.add("carol", "reviewer", "password1")
    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    with pytest.raises(PermissionDenied):
        store.queue.admin_release(packet_id, "carol")
    with pytest.raises(PermissionDenied):
        store.queue.reassign(packet_id, "carol", "carol")


def test_concurrent_double_submit_creates_nothing_twice(store: Store) -> None:
    """Four simultaneous submits with one key (a double click on two tabs) store one review and one version."""
    from concurrent.futures import ThreadPoolExecutor

    store.records.record(escalated("d1"))
    packet_id = _claim(store, "alice")
    draft = review("alice", at=NOW)

    def submit(_: int) -> str:
        return store.reviews.submit(
            packet_id, "alice", draft, CLASSIFICATION, idempotency_key="same", now=NOW
        ).gt_id

    with ThreadPoolExecutor(4) as pool:
        ids = set(pool.map(submit, range(4)))
    counts = row_counts(store)
    assert len(ids) == 1
    assert (counts["reviews"], counts["ground_truth"]) == (1, 1)
