"""An admin's retry of an operations item (issue 11, item 1) on SQLite and PostgreSQL: the demo's encrypted
lab report run again through the normal pipeline with a password; a wrong one leaves a new operations item,
the right one replaces the item by the normal supersede rules; audited, and the password stored nowhere."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.demo.damaged import PASSWORD, locked_pdf
from arbiter.ingest import ingest_pdf
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.compose import PipelineParts, build_engine, pipeline
from arbiter.run.operations import retry
from arbiter.store import NotInOperations, PermissionDenied, Store

DOC = "locked-lab-report"


@pytest.fixture(name="locked")
def locked_fixture(store: Store, tmp_path: Path) -> Path:
    """The demo's encrypted lab report, run once without its password: one operations item."""
    pdf = tmp_path / "docs" / f"{DOC}.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(locked_pdf())
    parts = PipelineParts(
        store=DatabaseResultStore(store, tmp_path / "out"),
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
        run_id="run-nightly",
    )
    pipeline(build_engine(), parts).process(pdf, DOC)
    store.users.add("root", "admin", "pw-root-123456")
    store.users.add("alice", "reviewer", "pw-alice-123456")
    assert [i.doc_id for i in store.operations.page()] == [DOC]
    return pdf


def _retry(store: Store, tmp_path: Path, password: str | None, who: str = "root") -> object:
    return retry(store, DOC, admin=who, password=password, out_dir=tmp_path / "out", isolated=False)


def test_the_right_password_replaces_the_item_with_a_normal_result(
    store: Store, locked: Path, tmp_path: Path
) -> None:
    """With clinic-2026 the report is read and decided; the operations item is superseded; the retry audited."""
    old = store.operations.find(DOC).packet_id
    result = _retry(store, tmp_path, PASSWORD)
    assert result.opened  # type: ignore[attr-defined]
    assert store.operations.page() == []
    assert store.queue.status(old) == "SUPERSEDED"
    [event] = store.audit.events(action="ops.retry")
    assert (event.actor, event.target, event.details["with_password"]) == ("root", old, True)
    if result.packet_id is not None:  # type: ignore[attr-defined]
        assert store.queue.status(result.packet_id) == "PENDING"  # type: ignore[attr-defined]
    else:
        assert store.ground_truth.latest(DOC) is not None


def test_a_wrong_password_leaves_a_new_operations_item(store: Store, locked: Path, tmp_path: Path) -> None:
    """A wrong password: still unreadable, said so; the new run's item replaces the old one in the lane."""
    old = store.operations.find(DOC).packet_id
    result = _retry(store, tmp_path, "not-the-password")
    assert not result.opened  # type: ignore[attr-defined]
    assert "still could not be read" in result.message  # type: ignore[attr-defined]
    [item] = store.operations.page()
    assert item.packet_id != old
    assert store.queue.status(old) == "SUPERSEDED"


def test_the_password_is_stored_nowhere(
    store: Store, locked: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither the database (every table, as text), the output folder nor the log holds the password."""
    caplog.set_level(logging.DEBUG)
    _retry(store, tmp_path, PASSWORD)

    assert PASSWORD not in caplog.text
    with store.read() as conn:
        for table in ("documents", "outcomes", "packets", "audit_log", "ground_truth", "runs"):
            for row in conn.exec_driver_sql(f"SELECT * FROM {table}"):
                assert PASSWORD not in str(tuple(row))
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_only_an_admin_retries(store: Store, locked: Path, tmp_path: Path) -> None:
    """A reviewer's retry is refused before anything runs."""
    with pytest.raises(PermissionDenied):
        _retry(store, tmp_path, PASSWORD, who="alice")
    assert store.audit.events(action="ops.retry") == []
    assert store.operations.count() == 1


def test_retrying_what_is_not_in_the_lane_says_so(store: Store, locked: Path, tmp_path: Path) -> None:
    """After a successful retry the document is no longer an operations item: a second retry is refused."""
    _retry(store, tmp_path, PASSWORD)
    with pytest.raises(NotInOperations, match="operations lane"):
        _retry(store, tmp_path, PASSWORD)
