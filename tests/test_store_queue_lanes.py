"""The queue's lanes on SQLite and PostgreSQL (issue 11, items 1 and 2): documents that could not be read
wait in the operations lane, never in a clinician's claim order; a skip sends a packet behind that
reviewer's other work; the halves of a double review (and an audit) never go to one reviewer."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
import sqlalchemy as sa
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    accepted,
    escalated,
    is_app_role,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.contracts import DocumentRecord, PacketKind, ReviewStatus, Severity
from arbiter.contracts.profile import load_profile
from arbiter.record.packets import build_packet
from arbiter.run.worker import failure_outcome
from arbiter.store import NotIndependent, NotInOperations, PermissionDenied, Store

NOW = T0 + timedelta(days=1)
# What ingestion says about the demo's four damaged files (run/document.py: reason pdf_<kind>).
DAMAGED = {
    "locked-lab-report": (
        "pdf_encrypted",
        "The PDF is password-protected and the password given did not open it.",
    ),
    "empty-upload": ("pdf_empty", "The file is empty (0 bytes)."),
    "not-really-a-pdf": ("pdf_not_pdf", "The file is not a PDF."),
    "truncated-transfer": ("pdf_broken", "The PDF is damaged and could not be opened."),
}


def unreadable(doc_id: str, run_id: str = "run-1", *, minutes: int = 0) -> DocumentRecord:
    """The record a run writes for a document whose PDF could not be read (Pipeline._failed)."""
    reason, message = DAMAGED.get(doc_id, ("pdf_broken", "The PDF is damaged."))
    outcome = failure_outcome(doc_id, reason, message, load_profile())
    packet = build_packet(
        outcome,
        pdf_path=f"/docs/{doc_id}.pdf",
        pdf_sha256="c" * 64,
        bundle_path=None,
        total_pages=0,
        primary=None,
        production=None,
        run_id=run_id,
        now=T0 + timedelta(minutes=minutes),
    )
    return DocumentRecord(
        doc_id=doc_id,
        run_id=run_id,
        skip_key=f"key-{run_id}",
        pdf_path=f"/docs/{doc_id}.pdf",
        outcome=outcome,
        primary_raw=None,
        bundle=None,
        packet=packet,
        ground_truth=None,
        error=reason,
    )


def demo_like(store: Store) -> list[str]:
    """The four damaged documents (critical, oldest) and three ordinary escalations; their doc ids, damaged first."""
    for i, doc_id in enumerate(DAMAGED):
        store.records.record(unreadable(doc_id, minutes=i))
    for i, severity in enumerate((Severity.BLOCKER, Severity.MAJOR, Severity.MINOR)):
        store.records.record(escalated(f"esc-{i}", severity=severity, created=T0 + timedelta(hours=1 + i)))
    return [*DAMAGED, "esc-0", "esc-1", "esc-2"]


def packet_of(store: Store, doc_id: str) -> str:
    with store.read() as conn:
        query = sa.text("SELECT packet_id FROM packets WHERE doc_id = :d")
        return str(conn.execute(query, {"d": doc_id}).scalar_one())


# Operations lane -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc_id", list(DAMAGED))
def test_an_unreadable_document_waits_in_the_operations_lane(store: Store, doc_id: str) -> None:
    """Empty, encrypted, not a PDF, truncated: the packet is an OPERATIONS item, not a pending packet."""
    store.records.record(unreadable(doc_id))
    [item] = store.operations.page()
    assert (item.doc_id, item.status) == (doc_id, "OPERATIONS")
    assert store.queue.page(status=["PENDING", "IN_REVIEW"]) == []
    assert store.queue.counts()["open"] == 0


def test_claim_next_never_hands_out_an_unreadable_document(store: Store) -> None:
    """Claim next walks past the four critical damaged packets to the reviewable ones, then says empty."""
    demo_like(store)
    got = []
    for _ in range(4):
        packet = store.queue.claim_next("alice", now=NOW)
        if packet is None:
            break
        got.append(packet.doc_id)
        store.reviews.submit(
            packet.packet_id, "alice", review("alice", at=NOW), dict(CLASSIFICATION),
            idempotency_key=packet.packet_id, now=NOW,
        )  # fmt: skip
    assert got == ["esc-0", "esc-1", "esc-2"]
    assert store.operations.count() == 4


@pytest.mark.parametrize("who", ["alice", "root"])
def test_a_direct_claim_of_an_operations_item_is_refused(store: Store, who: str) -> None:
    """Nobody, reviewer or admin, can claim a document that could not be read: it stays in the operations lane."""
    store.users.add("root", "admin", "pw-root-123456")
    store.records.record(unreadable("empty-upload"))
    packet_id = packet_of(store, "empty-upload")
    assert store.queue.claim(packet_id, who, now=NOW) is None
    assert store.queue.status(packet_id) == "OPERATIONS"


def test_an_admin_dismisses_an_item_as_not_a_medical_record(store: Store) -> None:
    """Dismissing closes the item with its resolution and an audit event, and writes no ground truth."""
    store.users.add("root", "admin", "pw-root-123456")
    store.records.record(unreadable("not-really-a-pdf"))
    item = store.operations.find("not-really-a-pdf")
    closed = store.operations.dismiss(item.packet_id, "root", now=NOW)
    assert closed.review_status == ReviewStatus.DISMISSED
    with store.read() as conn:
        resolution = conn.exec_driver_sql("SELECT resolution FROM packets").scalar_one()
    assert resolution == "not_medical_record"
    assert store.ground_truth.history("not-really-a-pdf") == []
    [event] = store.audit.events(action="ops.dismiss")
    assert (event.actor, event.target, event.details["resolution"]) == (
        "root",
        item.packet_id,
        "not_medical_record",
    )
    assert store.operations.page() == []
    with pytest.raises(NotInOperations, match="not waiting in the operations lane"):
        store.operations.dismiss(item.packet_id, "root", now=NOW)


def test_only_an_admin_dismisses(store: Store) -> None:
    """A reviewer's dismiss is refused and changes nothing."""
    store.users.add("alice", "reviewer", "pw-alice-123456")
    store.records.record(unreadable("empty-upload"))
    item = store.operations.find("empty-upload")
    with pytest.raises(PermissionDenied):
        store.operations.dismiss(item.packet_id, "alice")
    assert store.queue.status(item.packet_id) == "OPERATIONS"


@pytest.mark.parametrize(
    ("newer", "status_of_new"),
    [
        (lambda: accepted("locked-lab-report", "run-2"), None),
        (lambda: escalated("locked-lab-report", "run-2", sha="d" * 64), "PENDING"),
        (lambda: unreadable("locked-lab-report", "run-2"), "OPERATIONS"),
    ],
    ids=["accepted", "escalated", "still-unreadable"],
)
def test_a_newer_run_replaces_the_operations_item(
    store: Store, newer: object, status_of_new: str | None
) -> None:
    """A retry's result (accepted, escalated for review, or unreadable again) supersedes the old item."""
    store.records.record(unreadable("locked-lab-report"))
    old = store.operations.find("locked-lab-report").packet_id
    result = store.records.record(newer())  # type: ignore[operator]
    assert store.queue.status(old) == "SUPERSEDED"
    if status_of_new is None:
        assert result.packet_id is None
        assert store.operations.page() == []
    else:
        assert result.packet_id is not None
        assert store.queue.status(result.packet_id) == status_of_new


def test_a_dismissed_item_is_not_reopened_by_an_accept(store: Store) -> None:
    """Only open operations items are replaced; a dismissed one keeps its resolution."""
    store.users.add("root", "admin", "pw-root-123456")
    store.records.record(unreadable("empty-upload"))
    item = store.operations.find("empty-upload")
    store.operations.dismiss(item.packet_id, "root")
    store.records.record(accepted("empty-upload", "run-2"))
    assert store.queue.status(item.packet_id) == "DISMISSED"


# Skip -----------------------------------------------------------------------------------------------------
def _skip(store: Store, who: str, at: object) -> str:
    packet = store.queue.claim_next(who, now=at)  # type: ignore[arg-type]
    assert packet is not None
    assert store.queue.release(packet.packet_id, who, now=at)  # type: ignore[arg-type]
    return packet.doc_id


def test_skip_sends_the_packet_behind_the_reviewers_other_work(store: Store) -> None:
    """After a skip, alice's claim next offers every other claimable packet first; the skipped one comes last."""
    demo_like(store)
    assert _skip(store, "alice", NOW) == "esc-0"
    order = []
    for minute in range(1, 5):
        packet = store.queue.claim_next("alice", now=NOW + timedelta(minutes=minute))
        assert packet is not None
        order.append(packet.doc_id)
        store.queue.release(packet.packet_id, "alice", now=NOW + timedelta(minutes=minute))
    assert order == ["esc-1", "esc-2", "esc-0", "esc-1"]


def test_five_skips_in_a_row_never_return_the_same_packet_while_others_wait(store: Store) -> None:
    """Alt+K, Alt+N five times: each claim is a different packet until all were skipped, oldest skip first."""
    for i in range(3):
        store.records.record(escalated(f"d{i}", severity=Severity.BLOCKER, created=T0 + timedelta(minutes=i)))
    got = [_skip(store, "alice", NOW + timedelta(minutes=m)) for m in range(5)]
    assert got == ["d0", "d1", "d2", "d0", "d1"]


def test_a_skip_does_not_change_other_reviewers_order(store: Store) -> None:
    """Bob's claim next still starts with the packet alice skipped."""
    demo_like(store)
    assert _skip(store, "alice", NOW) == "esc-0"
    bob = store.queue.claim_next("bob", now=NOW)
    assert bob is not None
    assert bob.doc_id == "esc-0"


def test_a_skipped_packet_comes_back_when_nothing_else_is_claimable(store: Store) -> None:
    """With one packet in the queue, a skip followed by claim next gives the same packet back."""
    store.records.record(escalated("only"))
    assert _skip(store, "alice", NOW) == "only"
    again = store.queue.claim_next("alice", now=NOW)
    assert again is not None
    assert again.doc_id == "only"


def test_skipping_twice_keeps_one_skip_row(store: Store) -> None:
    """A second skip of the same packet moves its skip time; it does not add a row."""
    store.records.record(escalated("only"))
    _skip(store, "alice", NOW)
    _skip(store, "alice", NOW + timedelta(minutes=1))
    with store.read() as conn:
        rows = conn.exec_driver_sql("SELECT reviewer, skipped_at FROM packet_skips").all()
    assert len(rows) == 1


def test_claim_next_is_still_one_statement(store: Store) -> None:
    """The claim is the one UPDATE … RETURNING (plus the own-claim check): skips add no round trip."""
    demo_like(store)
    _skip(store, "alice", NOW)
    statements: list[str] = []

    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        assert store.queue.claim_next("alice", now=NOW) is not None
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
    writes = [s for s in statements if s.lstrip().upper().startswith("UPDATE")]
    assert len(writes) == 2  # RESUME_OWN (nothing held) and CLAIM_NEXT
    assert "packet_skips" in writes[1]


# Independent reviews --------------------------------------------------------------------------------------
def _pair(store: Store) -> tuple[str, str]:
    record = with_sample(escalated("esc-1"))
    store.records.record(record)
    assert record.packet is not None
    second = next(p for p in store.queue.page() if p.kind == PacketKind.SECOND_REVIEW.value)
    return record.packet.packet_id, second.packet_id


@pytest.mark.parametrize("first_half", ["held", "completed"])
def test_reassign_refuses_the_other_half_of_a_double_review(store: Store, first_half: str) -> None:
    """An admin cannot hand alice the blind second review of an escalation she holds or already reviewed."""
    store.users.add("alice", "reviewer", "pw-alice-123456")
    store.users.add("root", "admin", "pw-root-123456")
    first, second = _pair(store)
    assert store.queue.claim(first, "alice", now=NOW) is not None
    if first_half == "completed":
        store.reviews.submit(
            first, "alice", review("alice", at=NOW), dict(CLASSIFICATION), idempotency_key="k", now=NOW
        )
    with pytest.raises(
        NotIndependent, match=r"alice .* the escalation review of esc-1; the blind second review"
    ):
        store.queue.reassign(second, "alice", "root", now=NOW)
    assert store.queue.get(second).claimed_by is None
    assert store.audit.events(action="packet.reassign") == []


def test_reassign_refuses_the_escalation_to_the_second_reviewer(store: Store) -> None:
    """The other direction too: the escalation cannot go to whoever holds its blind second review."""
    store.users.add("bob", "reviewer", "pw-bob-1234567")
    store.users.add("root", "admin", "pw-root-123456")
    first, second = _pair(store)
    assert store.queue.claim(second, "bob", now=NOW) is not None
    with pytest.raises(NotIndependent, match="bob holds the blind second review of esc-1"):
        store.queue.reassign(first, "bob", "root", now=NOW)


def test_a_direct_claim_of_the_other_half_is_refused_with_a_reason(store: Store) -> None:
    """Alice reviewed the escalation; claiming its second review directly says why it is refused."""
    first, second = _pair(store)
    assert store.queue.claim(first, "alice", now=NOW) is not None
    store.reviews.submit(
        first, "alice", review("alice", at=NOW), dict(CLASSIFICATION), idempotency_key="k", now=NOW
    )
    with pytest.raises(NotIndependent, match="already did the escalation review of esc-1"):
        store.queue.claim(second, "alice", now=NOW)
    assert store.queue.claim(second, "bob", now=NOW) is not None


def test_an_audit_goes_to_someone_who_never_reviewed_the_document(store: Store) -> None:
    """Alice reviewed the document's escalation in an earlier run: its later blind audit goes to someone else."""
    first = escalated("doc-1", "run-1")
    store.records.record(first)
    assert first.packet is not None
    assert store.queue.claim(first.packet.packet_id, "alice", now=NOW) is not None
    store.reviews.submit(
        first.packet.packet_id,
        "alice",
        review("alice", at=NOW),
        dict(CLASSIFICATION),
        idempotency_key="k",
        now=NOW,
    )
    store.records.record(with_sample(accepted("doc-1", "run-2", store=store, sha="e" * 64)))
    audit = next(p for p in store.queue.page(status="PENDING") if p.kind == "AUDIT")
    assert store.queue.claim_next("alice", now=NOW) is None
    with pytest.raises(NotIndependent, match="a blind audit of it needs a different reviewer"):
        store.queue.claim(audit.packet_id, "alice", now=NOW)
    bob = store.queue.claim_next("bob", now=NOW)
    assert bob is not None
    assert bob.packet_id == audit.packet_id


def test_two_plain_escalations_of_one_document_may_share_a_reviewer(store: Store) -> None:
    """Independence binds blind reviews only: a re-escalated document can go back to its first reviewer."""
    one = escalated("doc-1", "run-1")
    store.records.record(one)
    assert one.packet is not None
    store.queue.claim(one.packet.packet_id, "alice", now=NOW)
    store.reviews.submit(
        one.packet.packet_id,
        "alice",
        review("alice", at=NOW),
        dict(CLASSIFICATION),
        idempotency_key="k",
        now=NOW,
    )
    store.records.record(dataclasses.replace(escalated("doc-1", "run-2", sha="f" * 64)))
    again = store.queue.claim_next("alice", now=NOW)
    assert again is not None
    assert again.doc_id == "doc-1"


def test_skipping_one_half_still_bars_the_other(store: Store) -> None:
    """Alice opened the escalation and skipped it: she has seen the machine's answer, so its blind second
    review goes to someone else, by claim next and by a direct claim."""
    first, second = _pair(store)
    assert store.queue.claim(first, "alice", now=NOW) is not None
    assert store.queue.release(first, "alice", now=NOW)
    again = store.queue.claim_next("alice", now=NOW)
    assert again is not None
    assert again.packet_id == first  # her skipped packet, not the blind half
    store.queue.release(first, "alice", now=NOW)
    with pytest.raises(NotIndependent, match=r"alice opened \(and skipped\) the escalation review of esc-1"):
        store.queue.claim(second, "alice", now=NOW)
    bob = store.queue.claim_next("bob", now=NOW)
    assert bob is not None


def test_migration_moves_queued_unreadable_documents_to_the_operations_lane(store: Store) -> None:
    """A database from before 0006 with a damaged PDF waiting (even claimed) in the queue: after migrating,
    it waits in the operations lane unclaimed, and an ordinary escalation stays where it was."""
    if is_app_role(store):
        pytest.skip("migrating is the owner's act; the application role may not (tests/test_db_roles.py)")
    store.downgrade("0005")
    insert = sa.text(
        "INSERT INTO packets (packet_id, doc_id, run_id, priority, escalation_reason, top_codes, status, "
        "claimed_by, kind, created_at, updated_at, payload) VALUES (:p, :d, 'r', 0, :why, '', :s, :who, "
        "'ESCALATION', :t, :t, :body)"
    )
    stamp = T0.replace(tzinfo=None)
    rows = [
        ("pkt-empty", "empty-upload", "pdf_empty", "IN_REVIEW", "alice"),
        ("pkt-plain", "esc-0", "non_fixable_major", "PENDING", None),
        ("pkt-pdfish", "pdfa-report", "pdfa_mismatch", "PENDING", None),
    ]
    with store.write() as conn:
        for packet_id, doc_id, why, status, who in rows:
            conn.execute(
                insert,
                {"p": packet_id, "d": doc_id, "why": why, "s": status, "who": who, "t": stamp, "body": "{}"},
            )
    store.migrate()
    with store.read() as conn:
        found = dict(
            conn.execute(
                sa.text("SELECT packet_id, status || ':' || coalesce(claimed_by, '-') FROM packets")
            ).all()
        )
    assert found == {"pkt-empty": "OPERATIONS:-", "pkt-plain": "PENDING:-", "pkt-pdfish": "PENDING:-"}


def test_skipping_the_blind_half_leaves_the_escalation_open_to_the_reviewer(store: Store) -> None:
    """A blind page shows no verdict: alice skipped the second review and may still take the escalation
    (after which the second review is barred for her by the escalation itself)."""
    first, second = _pair(store)
    assert store.queue.claim(second, "alice", now=NOW) is not None
    assert store.queue.release(second, "alice", now=NOW)
    assert store.queue.claim(first, "alice", now=NOW) is not None
    with pytest.raises(NotIndependent, match="alice holds the escalation review of esc-1"):
        store.queue.claim(second, "alice", now=NOW)
