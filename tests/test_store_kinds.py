"""One queue, two kinds (issue 31.5): an admin restricts a reviewer to kinds of answer, and the store never hands
them a packet of another kind — claim next, a direct claim, a reassign, the queue's pages and counts — whatever
the packet (an escalation, a blind second review or audit, an adjudication); an unrestricted reviewer is handed
both kinds as before. On SQLite, PostgreSQL and PostgreSQL as the application role."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_fixtures import (  # noqa: F401 (fixtures)
    CLASSIFICATION,
    T0,
    accepted,
    escalated,
    of_kind,
    pg_app_role_urls_fixture,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.contracts import PacketKind, Severity
from arbiter.kinds import GROUNDED, MEDICAL
from arbiter.store import KindNotAllowed, PermissionDenied, Store, UnknownUser

NOW = T0 + timedelta(hours=1)
OTHER = {**CLASSIFICATION, "dominant_type": "LAB_REPORT"}


def _packet(store: Store, doc_id: str, kind: PacketKind) -> str:
    return next(
        p.packet_id
        for p in store.queue.page(status=None, limit=100)
        if p.doc_id == doc_id and p.kind == kind.value
    )


def _submit(store: Store, packet_id: str, who: str, answer: dict[str, object], minute: int) -> None:
    at = NOW + timedelta(minutes=minute)
    assert store.queue.claim(packet_id, who, now=at - timedelta(minutes=1)) is not None
    store.reviews.submit(
        packet_id, who, review(who, at=at), answer, idempotency_key=f"{packet_id}-{who}", now=at
    )


def _grounded_packet(store: Store, kind: PacketKind) -> str:
    """Queue a grounded-answer packet of this packet kind (most urgent of all) and return its id."""
    if kind is PacketKind.AUDIT:
        store.records.record(of_kind(with_sample(accepted("g1")), GROUNDED), now=T0)
    elif kind is PacketKind.ADJUDICATION:  # two reviewers disagree on a double review of a grounded answer
        store.records.record(
            of_kind(with_sample(escalated("g1", severity=Severity.BLOCKER)), GROUNDED), now=T0
        )
        _submit(store, _packet(store, "g1", PacketKind.ESCALATION), "ana", CLASSIFICATION, 1)
        _submit(store, _packet(store, "g1", PacketKind.SECOND_REVIEW), "ben", OTHER, 2)
    else:
        record = escalated("g1", severity=Severity.BLOCKER)
        store.records.record(
            of_kind(with_sample(record) if kind is PacketKind.SECOND_REVIEW else record, GROUNDED)
        )
    return _packet(store, "g1", kind)


@pytest.fixture(name="people")
def people_fixture(store: Store) -> Store:
    """Accounts: clin (medical classifications only), comp (grounded answers only), ana, ben, eve (every
    kind), root (admin); one medical escalation, the least urgent packet of the queue."""
    for name in ("clin", "comp", "ana", "ben", "eve"):
        store.users.add(name, "reviewer", None)
    store.users.add("root", "admin", None)
    assert store.users.set_kinds("clin", [MEDICAL], actor="root") == (MEDICAL,)
    assert store.users.set_kinds("comp", [GROUNDED], actor="root") == (GROUNDED,)
    store.records.record(escalated("m1", severity=Severity.MINOR, created=T0 + timedelta(days=1)))
    return store


PACKET_KINDS = [
    pytest.param(PacketKind.ESCALATION, id="escalation"),
    pytest.param(PacketKind.SECOND_REVIEW, id="blind-second-review"),
    pytest.param(PacketKind.AUDIT, id="blind-audit"),
    pytest.param(PacketKind.ADJUDICATION, id="adjudication"),
]


@pytest.mark.parametrize("kind", PACKET_KINDS)
def test_a_restricted_reviewer_is_never_handed_another_kind(people: Store, kind: PacketKind) -> None:
    """clin reviews medical classifications only: claim next skips the grounded packet (more urgent) for the
    medical one, then finds nothing; a direct claim and a reassign are refused in words; the queue's pages,
    totals and counts leave it out. An unrestricted reviewer claims it."""
    store = people
    grounded = _grounded_packet(store, kind)
    got = store.queue.claim_next("clin", now=NOW)
    assert got is not None
    assert got.doc_id == "m1"
    assert got.answer_kind == MEDICAL
    store.reviews.submit(
        got.packet_id, "clin", review("clin", at=NOW), CLASSIFICATION, idempotency_key="c1", now=NOW
    )
    assert store.queue.claim_next("clin", now=NOW) is None
    with pytest.raises(KindNotAllowed, match="grounded answer; clin reviews only medical classifications"):
        store.queue.claim(grounded, "clin", now=NOW)
    with pytest.raises(KindNotAllowed):
        store.queue.reassign(grounded, "clin", "root", now=NOW)
    listed = store.queue.page(status=None, limit=100, viewer="clin")
    assert {p.answer_kind for p in listed} == {MEDICAL}
    assert store.queue.count(status=None, viewer="clin") == len(listed)
    assert set(store.queue.counts(viewer="clin")["by_kind"]) == {MEDICAL}
    assert store.queue.status(grounded) == "PENDING"
    taken = store.queue.claim(grounded, "eve", now=NOW)
    assert taken is not None
    assert taken.answer_kind == GROUNDED


@pytest.mark.parametrize("kind", PACKET_KINDS)
def test_a_reviewer_of_the_other_kind_is_handed_it(people: Store, kind: PacketKind) -> None:
    """comp reviews grounded answers only: claim next hands a grounded packet (this one, or the escalation it
    doubles), never the medical one."""
    store = people
    grounded = _grounded_packet(store, kind)
    got = store.queue.claim_next("comp", now=NOW)
    assert got is not None
    assert got.doc_id == "g1"
    assert got.answer_kind == GROUNDED
    if kind is not PacketKind.SECOND_REVIEW:
        assert got.packet_id == grounded
    with pytest.raises(KindNotAllowed, match="comp reviews only grounded answers"):
        store.queue.claim(_packet(store, "m1", PacketKind.ESCALATION), "comp", now=NOW)


def test_an_unrestricted_reviewer_claims_both_kinds(people: Store) -> None:
    """No kinds recorded: the queue as before, both kinds in priority order, both counted."""
    store = people
    grounded = _grounded_packet(store, PacketKind.ESCALATION)
    counts = store.queue.counts(viewer="eve")
    assert counts["by_kind"][GROUNDED]["PENDING"] == counts["by_kind"][MEDICAL]["PENDING"] == 1
    assert counts["by_kind"][GROUNDED]["open"] == 1
    assert counts["open"] == 2
    assert [p.answer_kind for p in store.queue.page(viewer="eve")] == [GROUNDED, MEDICAL]
    first = store.queue.claim_next("eve", now=NOW)
    assert first is not None
    assert first.packet_id == grounded
    store.reviews.submit(grounded, "eve", review("eve", at=NOW), OTHER, idempotency_key="e1", now=NOW)
    second = store.queue.claim_next("eve", now=NOW)
    assert second is not None
    assert second.answer_kind == MEDICAL


def test_the_queue_filters_by_kind(people: Store) -> None:
    store = people
    _grounded_packet(store, PacketKind.ESCALATION)
    assert [p.doc_id for p in store.queue.page(answer_kind=GROUNDED)] == ["g1"]
    assert [p.doc_id for p in store.queue.page(answer_kind=[MEDICAL], viewer="eve")] == ["m1"]
    assert store.queue.count(answer_kind=GROUNDED, viewer="clin") == 0
    assert store.queue.filter_options()["kinds"] == sorted([GROUNDED, MEDICAL])


def test_a_skipped_packet_of_a_kind_taken_away_is_not_handed_back(people: Store) -> None:
    """eve skipped the grounded packet, then was restricted to medical classifications: claim next's
    second pick (the skipped packets) keeps to her kinds too."""
    store = people
    grounded = _grounded_packet(store, PacketKind.ESCALATION)
    medical = _packet(store, "m1", PacketKind.ESCALATION)
    assert store.queue.claim(grounded, "eve", now=NOW) is not None
    assert store.queue.release(grounded, "eve", now=NOW)
    assert store.queue.claim(medical, "ana", now=NOW) is not None  # nothing fresh is left for eve
    store.users.set_kinds("eve", [MEDICAL], actor="root")
    assert store.queue.claim_next("eve", now=NOW) is None


def test_restricting_releases_claims_of_other_kinds_and_is_audited(people: Store) -> None:
    """A claim eve holds on a kind taken from her goes back to the queue at once; the change names the kinds
    before and after and what it released; setting the same kinds again changes and audits nothing; no kinds
    is every kind again."""
    store = people
    grounded = _grounded_packet(store, PacketKind.ESCALATION)
    assert store.queue.claim(grounded, "eve", now=NOW) is not None
    assert store.users.set_kinds("eve", [MEDICAL, MEDICAL], actor="root") == (MEDICAL,)
    assert store.queue.status(grounded) == "PENDING"
    resumed = store.queue.claim_next("eve", now=NOW)
    assert resumed is not None
    assert resumed.answer_kind == MEDICAL
    events = store.audit.events(action="user.kinds", target="eve")
    assert [(e.actor, e.details) for e in events] == [
        ("root", {"from": [], "to": [MEDICAL], "released": [grounded]})
    ]
    store.users.set_kinds("eve", [MEDICAL], actor="root")
    assert len(store.audit.events(action="user.kinds", target="eve")) == 1
    assert store.users.set_kinds("eve", [], actor="root") == ()
    assert store.users.kinds("eve") == ()
    assert store.users.get("eve").kinds == ()  # type: ignore[union-attr]
    assert {u.name: u.kinds for u in store.users.list_all()}["clin"] == (MEDICAL,)


def test_kinds_are_checked_and_set_by_admins_only(people: Store) -> None:
    store = people
    with pytest.raises(
        ValueError, match="no kind of answer named 'grounded'; the kinds are medical-classific"
    ):
        store.users.set_kinds("eve", ["grounded"], actor="root")
    with pytest.raises(PermissionDenied):
        store.users.set_kinds("eve", [GROUNDED], actor="ana")
    with pytest.raises(UnknownUser):
        store.users.set_kinds("nobody", [GROUNDED], actor="root")
    assert store.users.kinds("eve") == ()
