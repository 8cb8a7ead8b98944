"""Review store: batch writes, queue reads, ground-truth versions, users, audit, mirrors (SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    accepted,
    escalated,
    history_refusal,
    pg_server_url_fixture,
    reset,
    review,
    row_counts,
    store_fixture,
)

from arbiter.contracts import GroundTruthSource, ReviewStatus, Severity, SMEPacket
from arbiter.record.mirrors import export_mirrors
from arbiter.store import DuplicateUser, Store


def test_record_document_writes_document_outcome_packet_and_audit(store: Store) -> None:
    """An escalated document lands as one document, one outcome, one PENDING packet and one audit event."""
    record = escalated("d1")
    result = store.records.record(record)
    counts = row_counts(store)
    assert result.recorded
    assert result.packet_id == record.packet.packet_id  # type: ignore[union-attr]
    assert (counts["documents"], counts["outcomes"], counts["packets"], counts["audit_log"]) == (1, 1, 1, 1)
    assert store.queue.get(result.packet_id or "").review_status == ReviewStatus.PENDING
    assert store.records.outcome("d1", "run-1") == record.outcome


def test_record_document_is_idempotent_per_doc_and_run(store: Store) -> None:
    """Recording the same (doc_id, run_id) twice writes nothing the second time."""
    store.records.record(escalated("d1"))
    store.records.record(accepted("d2"))
    before = row_counts(store)
    again = [store.records.record(escalated("d1")), store.records.record(accepted("d2"))]
    assert not any(r.recorded for r in again)
    assert row_counts(store) == before


def test_a_runs_row_is_written_once_per_run_and_again_after_it_is_gone(store: Store) -> None:
    """A batch inserts its run's row with its first document only; with the row gone under a live store the
    next document is still recorded (the run's row written again)."""
    statements: list[str] = []

    def seen(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        statements.append(statement)

    sa.event.listen(store.db.engine, "before_cursor_execute", seen)
    try:
        for doc in ("d1", "d2", "d3"):
            store.records.record(accepted(doc))
        assert sum("INSERT INTO runs" in s for s in statements) == 1
        with store.write() as conn:  # the run's documents and its row gone (an operator emptied them)
            for table in ("outcomes", "documents", "runs"):
                conn.exec_driver_sql(f"DELETE FROM {table}")
        assert store.records.record(escalated("d4")).recorded
    finally:
        sa.event.remove(store.db.engine, "before_cursor_execute", seen)
    counts = row_counts(store)
    assert (counts["runs"], counts["documents"]) == (1, 1)


def test_get_packet_round_trips_the_contract(store: Store) -> None:
    """get_packet returns the packet the run built, with live claim state, in UTC."""
    record = escalated("d1")
    store.records.record(record)
    assert record.packet is not None
    got = store.queue.get(record.packet.packet_id)
    assert got == record.packet
    assert got.created_at.utcoffset() == UTC.utcoffset(None)


def test_rerun_does_not_reset_a_packet_under_review(store: Store) -> None:
    """A later run of a claimed document adds a new PENDING packet and leaves the claim alone."""
    first = escalated("d1", "run-1")
    store.records.record(first)
    claimed = store.queue.claim_next("alice")
    assert claimed is not None
    second = escalated("d1", "run-2", sha="b" * 64)
    store.records.record(second)
    assert store.queue.get(claimed.packet_id).review_status == ReviewStatus.IN_REVIEW
    assert store.queue.get(claimed.packet_id).claimed_by == "alice"
    assert second.packet is not None
    assert store.queue.get(second.packet.packet_id).review_status == ReviewStatus.PENDING


def test_completed_packet_stays_completed_after_a_rerun(store: Store) -> None:
    """A document already reviewed keeps its COMPLETED packet when a new run escalates it again."""
    store.records.record(escalated("d1", "run-1"))
    packet = store.queue.claim_next("alice")
    assert packet is not None
    store.reviews.submit(packet.packet_id, "alice", review("alice"), CLASSIFICATION, idempotency_key="k")
    store.records.record(escalated("d1", "run-2", sha="b" * 64))
    assert store.queue.get(packet.packet_id).review_status == ReviewStatus.COMPLETED
    assert store.queue.count(status="PENDING") == 1


def test_newer_escalation_supersedes_an_unclaimed_packet(store: Store) -> None:
    """An older PENDING packet of the same document leaves the queue when a newer run escalates it."""
    store.records.record(escalated("d1", "run-1"))
    store.records.record(escalated("d1", "run-2", sha="b" * 64))
    rows = store.queue.page()
    assert [r.packet_id for r in rows] == [store.queue.page(status="PENDING")[0].packet_id]
    assert store.queue.count(status="SUPERSEDED") == 1
    assert store.queue.counts()["total"] == 1
    old = store.queue.page(status="SUPERSEDED")[0]
    assert store.queue.get(old.packet_id).review_status == ReviewStatus.SUPERSEDED


def test_auto_accept_ground_truth_is_versioned_append_only(store: Store) -> None:
    """Accepts add PRIMARY_AGENT_AUTO_ACCEPT versions: same answer adds nothing, a new answer supersedes."""
    store.records.record(accepted("d1", "run-1"))
    store.records.record(accepted("d1", "run-2", store=store))
    store.records.record(accepted("d1", "run-3", store=store, dominant="LAB_REPORT"))
    history = store.ground_truth.history("d1")
    assert [h.version for h in history] == [1, 2]
    assert history[1].supersedes == history[0].gt_id
    assert {h.ground_truth_source for h in history} == {GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT}
    assert store.ground_truth.latest("d1") == history[-1]


def test_auto_accept_rebases_on_the_newest_stored_version(store: Store) -> None:
    """A record computed against stale ground truth is re-based: versions stay 1, 2, 3 with no gaps."""
    store.records.record(accepted("d1", "run-1"))
    stale = accepted("d1", "run-2", dominant="LAB_REPORT")  # computed as if no version existed
    result = store.records.record(stale)
    assert result.ground_truth is not None
    assert result.ground_truth.version == 2
    assert result.ground_truth.supersedes == store.ground_truth.history("d1")[0].gt_id


def test_sme_ground_truth_is_not_superseded_by_a_later_auto_accept(store: Store) -> None:
    """An SME's answer for a PDF stands when a later run auto-accepts the same PDF."""
    store.records.record(escalated("d1", "run-1"))
    packet = store.queue.claim_next("alice")
    assert packet is not None
    store.reviews.submit(
        packet.packet_id, "alice", review("alice", agrees=False), CLASSIFICATION, idempotency_key="k"
    )
    result = store.records.record(accepted("d1", "run-2", store=store, dominant="LAB_REPORT"))
    assert result.ground_truth is None
    assert store.ground_truth.latest("d1").ground_truth_source == GroundTruthSource.SME_CORRECTED  # type: ignore[union-attr]


def test_list_packets_filters_and_pages_in_priority_order(store: Store) -> None:
    """Filters by status, reason, code and type; pages in order severity then age."""
    store.records.record(
        escalated("old-minor", severity=Severity.MINOR, code="V3.HEADER_FOOTER_EVIDENCE", created=T0)
    )
    store.records.record(escalated("new-blocker", severity=Severity.BLOCKER, created=T0.replace(day=9)))
    store.records.record(escalated("old-major", severity=Severity.MAJOR, created=T0.replace(day=6)))
    assert [r.doc_id for r in store.queue.page()] == ["new-blocker", "old-major", "old-minor"]
    assert [r.doc_id for r in store.queue.page(offset=1, limit=1)] == ["old-major"]
    assert [r.doc_id for r in store.queue.page(code="V3.HEADER_FOOTER_EVIDENCE")] == ["old-minor"]
    assert store.queue.count(code="V2.UNCOVERED_PAGES") == 2
    assert store.queue.page(doc_type="LAB_REPORT") == []
    assert len(store.queue.page(doc_type="CLINICAL_NOTE", reason="non_fixable_major")) == 3
    assert store.queue.page(status="IN_REVIEW") == []
    assert store.queue.page()[0].top_codes == ["V2.UNCOVERED_PAGES"]


def test_pages_read_from_the_end_match_pages_read_from_the_start(store: Store) -> None:
    """With the total given, every page (back half read in reverse) equals the plain OFFSET page."""
    severities = [Severity.MINOR, Severity.MAJOR, Severity.BLOCKER]
    for i in range(11):
        code = "V3.HEADER_FOOTER_EVIDENCE" if i % 3 == 0 else "V2.UNCOVERED_PAGES"
        record = escalated(f"d{i:02d}", severity=severities[i % 3], code=code, created=T0.replace(minute=i))
        store.records.record(record)
    for filters in ({}, {"code": "V3.HEADER_FOOTER_EVIDENCE"}, {"status": "PENDING"}):
        total = store.queue.count(**filters)
        for size in (1, 3, 4, 50):
            for offset in range(0, total + size, size):
                plain = store.queue.page(**filters, offset=offset, limit=size)
                assert store.queue.page(**filters, offset=offset, limit=size, total=total) == plain


def test_queue_counts_by_status_and_reason(store: Store) -> None:
    """Counts by status and by escalation reason of open packets."""
    for i in range(3):
        store.records.record(escalated(f"d{i}"))
    store.queue.claim_next("alice")
    counts = store.queue.counts()
    assert counts["by_status"] == {"PENDING": 2, "IN_REVIEW": 1, "COMPLETED": 0}
    assert counts["by_reason"] == {"non_fixable_major": 3}
    assert (counts["open"], counts["total"]) == (3, 3)


def test_filter_options_lists_what_is_present(store: Store) -> None:
    """Reasons, types and codes offered to the queue's filters come from the data."""
    store.records.record(escalated("d1", code="V4.SNIPPET_NOT_FOUND"))
    assert store.queue.filter_options() == {
        "reasons": ["non_fixable_major"],
        "doc_types": ["CLINICAL_NOTE"],
        "codes": ["V4.SNIPPET_NOT_FOUND"],
        "kinds": ["medical-classification"],
    }


def test_users_passwords_are_hashed_and_verified(store: Store) -> None:
    """argon2 hashes: the right password signs in, a wrong one or an unknown name does not."""
    store.users.add("alice", "reviewer", "correct horse")
    assert store.users.verify_password("alice", "correct horse") is not None
    assert store.users.verify_password("alice", "wrong horse") is None
    assert store.users.verify_password("nobody", "correct horse") is None
    with store.read() as conn:
        stored = conn.exec_driver_sql("SELECT password_hash FROM users").scalar_one()
    assert stored.startswith("$argon2")
    assert "correct horse" not in stored


def test_users_roles_duplicates_and_deactivation(store: Store) -> None:
    """Roles are checked, names are unique, and a deactivated user cannot sign in."""
    with pytest.raises(ValueError, match="Role"):
        store.users.add("eve", "superuser", "password1")
    store.users.add("bob", "admin", "password1")
    with pytest.raises(DuplicateUser):
        store.users.add("bob", "reviewer", "password2")
    store.users.set_active("bob", False, actor="root")
    assert store.users.verify_password("bob", "password1") is None
    assert [u.name for u in store.users.list_all()] == ["bob"]
    assert store.users.get("bob").is_admin  # type: ignore[union-attr]


@pytest.mark.parametrize("table", ["audit_log", "ground_truth"])
@pytest.mark.parametrize("verb", ["UPDATE {t} SET doc_id = 'x'", "DELETE FROM {t}"])
def test_append_only_tables_refuse_update_and_delete(store: Store, table: str, verb: str) -> None:
    """The database itself refuses to rewrite history, whatever code tries."""
    store.records.record(accepted("d1"))
    if table == "audit_log":
        verb = verb.replace("doc_id", "actor")
    with pytest.raises(sa.exc.DBAPIError, match=history_refusal(store)), store.write() as conn:
        conn.exec_driver_sql(verb.format(t=table))
    assert row_counts(store)[table] == 1


def _one_review(store: Store) -> None:
    store.records.record(escalated("d2"))
    packet = store.queue.claim_next("alice")
    assert packet is not None
    store.reviews.submit(packet.packet_id, "alice", review("alice"), CLASSIFICATION, idempotency_key="k1")


@pytest.mark.parametrize("verb", ["UPDATE reviews SET reviewer = 'x'", "DELETE FROM reviews"])
def test_reviews_are_append_only(store: Store, verb: str) -> None:
    """A stored SME review is never rewritten or removed."""
    _one_review(store)
    with pytest.raises(sa.exc.DBAPIError, match=history_refusal(store)), store.write() as conn:
        conn.exec_driver_sql(verb)
    assert row_counts(store)["reviews"] == 1


_REPLACE = {
    "ground_truth": "INSERT OR REPLACE INTO ground_truth (gt_id, doc_id, version, supersedes, source, "
    "created_at, payload) SELECT gt_id, doc_id, version, supersedes, source, created_at, "
    "'{\"tampered\":true}' FROM ground_truth",
    "ground_truth_by_version": "REPLACE INTO ground_truth (gt_id, doc_id, version, supersedes, source, "
    "created_at, payload) SELECT 'new-id', doc_id, version, supersedes, source, created_at, "
    "'{\"tampered\":true}' FROM ground_truth",
    "audit_log": "INSERT OR REPLACE INTO audit_log (id, at, actor, action, target, details) "
    "SELECT id, at, 'mallory', action, target, '{}' FROM audit_log",
    "reviews": "INSERT OR REPLACE INTO reviews (id, packet_id, doc_id, reviewer, idempotency_key, gt_id, "
    "payload, created_at) SELECT id, packet_id, doc_id, 'mallory', idempotency_key, gt_id, '{}', "
    "created_at FROM reviews",
}


@pytest.mark.parametrize("case", sorted(_REPLACE))
@pytest.mark.parametrize("driver", ["store", "raw"])
def test_sqlite_insert_or_replace_cannot_rewrite_history(tmp_path: Path, case: str, driver: str) -> None:
    """SQLite: REPLACE deletes the row holding the key and inserts another; refused on the store's own
    connections and on a bare sqlite3 connection (no recursive_triggers) alike."""
    import sqlite3

    db = tmp_path / "a.db"
    store = Store(f"sqlite:///{db}")
    store.migrate()
    store.records.record(accepted("d1"))
    _one_review(store)
    table = case.split("_by_")[0]
    before = _dump(store, table)
    sql = _REPLACE[case]
    if driver == "store":
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.write() as conn:
            conn.exec_driver_sql(sql)
    else:
        raw = sqlite3.connect(db)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            raw.execute(sql)
        raw.rollback()
        raw.close()
    assert _dump(store, table) == before
    store.dispose()


def _dump(store: Store, table: str) -> list[tuple[object, ...]]:
    with store.read() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(f"SELECT * FROM {table} ORDER BY 1").all()]


@pytest.mark.parametrize(
    "sql",
    [
        "TRUNCATE audit_log",
        "TRUNCATE ground_truth CASCADE",
        "TRUNCATE reviews",
        "TRUNCATE packets CASCADE",
        "TRUNCATE runs, documents, outcomes, packets, packet_codes, packet_skips, known_answers, reviews, "
        "ground_truth, users, user_kinds, audit_log",
    ],
)
def test_postgresql_truncate_is_refused(pg_server_url: str, sql: str) -> None:
    """Row triggers do not fire on TRUNCATE: a statement-level BEFORE TRUNCATE trigger refuses it."""
    store = Store(pg_server_url)
    reset(store)
    store.records.record(accepted("d1"))
    _one_review(store)
    before = row_counts(store)
    with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.write() as conn:
        conn.exec_driver_sql(sql)
    assert row_counts(store) == before
    store.dispose()


def test_postgresql_upsert_cannot_rewrite_history(pg_server_url: str) -> None:
    """INSERT … ON CONFLICT DO UPDATE is an UPDATE: refused like one."""
    store = Store(pg_server_url)
    reset(store)
    store.records.record(accepted("d1"))
    with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO ground_truth SELECT * FROM ground_truth "
            "ON CONFLICT (gt_id) DO UPDATE SET payload = '{\"tampered\": true}'::jsonb"
        )
    store.dispose()


def test_audit_has_no_rewrite_api_and_pages_events(store: Store) -> None:
    """Audit events are added and read, never updated or deleted through the store."""
    store.audit.record("alice", "sign_in", "", {"mode": "password"})
    store.audit.record("bob", "sign_in")
    assert [e.actor for e in store.audit.events()] == ["bob", "alice"]
    assert [e.actor for e in store.audit.events(actor="alice")] == ["alice"]
    assert store.audit.events(newest_first=False, limit=1)[0].details == {"mode": "password"}
    assert not [
        name for name in dir(store) if "audit" in name and any(w in name for w in ("update", "delete"))
    ]


def test_export_mirrors_regenerates_packet_and_ground_truth_files(store: Store, tmp_path: object) -> None:
    """The JSON mirrors of docs/design.md §4 are rebuilt from the database and parse as the contracts."""
    from pathlib import Path

    out = Path(str(tmp_path)) / "mirror"
    store.records.record(escalated("d1"))
    store.records.record(accepted("d2", "run-1"))
    store.records.record(accepted("d2", "run-2", store=store, dominant="LAB_REPORT"))
    counts = export_mirrors(store, out)
    assert counts == {"packets": 1, "ground_truth_docs": 1, "ground_truth_versions": 2, "documents": 2}
    packet = SMEPacket.model_validate_json((out / "sme_packets" / "sme_packet_d1.json").read_text())
    assert packet.doc_id == "d1"
    latest = json.loads((out / "ground_truth" / "gt_d2.json").read_text())
    assert latest["version"] == 2
    assert (out / "ground_truth" / "history" / "d2" / "v0001.json").is_file()


def test_naive_datetimes_are_refused(store: Store) -> None:
    """Everything is stored in UTC; a naive timestamp is a bug and is refused loudly."""
    record = escalated("d1")
    assert record.packet is not None
    naive = dataclasses.replace(
        record, packet=record.packet.model_copy(update={"created_at": datetime(2026, 1, 1)})
    )
    with pytest.raises(sa.exc.StatementError, match="naive"):
        store.records.record(naive)


def test_insert_ignore_runs_rows_of_different_columns_through_one_statement(store: Store) -> None:
    """The once-built INSERT … ON CONFLICT writes each row's own columns and ignores a repeated key."""
    from arbiter.store.models import documents, runs
    from arbiter.store.writes import insert_ignore

    row = {"doc_id": "d-1", "run_id": "r-1", "skip_key": "k", "pdf_path": "d.pdf", "pdf_sha256": "0" * 64}
    row |= {"final_decision": "AUTO_ACCEPT", "created_at": T0}
    with store.write() as conn:
        assert insert_ignore(conn, runs, {"run_id": "r-1", "created_at": T0})
        assert not insert_ignore(conn, runs, {"run_id": "r-1", "created_at": T0})
        assert insert_ignore(conn, documents, row)
        assert insert_ignore(conn, documents, row | {"doc_id": "d-2", "risk": 0.25, "error": "unreadable"})
        assert not insert_ignore(conn, documents, row | {"risk": 0.5})
    with store.read() as conn:
        got = conn.execute(
            sa.select(documents.c.doc_id, documents.c.risk, documents.c.error).order_by(documents.c.doc_id)
        ).all()
    assert [tuple(r) for r in got] == [("d-1", None, None), ("d-2", 0.25, "unreadable")]
