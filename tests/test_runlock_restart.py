"""Issue 27.5: the PostgreSQL run lock survives a restart of a server this test started itself: the running
run takes it again so a second run is still refused, or, when another run took it first, the running run
stops cleanly with a plain message, its summary, and everything it wrote kept."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from pg_server import OwnServer, own_pg_server

from arbiter.run import lock
from arbiter.run.batch import discover
from arbiter.run.document import DocResult
from arbiter.run.lock import RunLocked, run_lock
from arbiter.store import Store
from tests.test_db_faults import fresh_database, inputs, recorded, runner


@pytest.fixture(scope="module")
def server() -> Iterator[OwnServer]:
    with own_pg_server() as own:
        yield own


def lock_holders(url: str) -> int:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(
                conn.exec_driver_sql(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                    f"AND objid = {lock.PG_LOCK_KEY} AND granted"
                ).scalar_one()
            )
    finally:
        engine.dispose()


def test_the_run_lock_is_taken_again_after_a_restart(
    server: OwnServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an immediate restart the holder takes the lock again by itself, and a second run is refused."""
    monkeypatch.setattr(lock, "CHECK_S", 0.2)
    url = fresh_database(server, "relock")
    with run_lock(tmp_path / "a", url, wait_s=0):
        assert lock_holders(url) == 1
        server.restart(down_s=0.5)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and lock_holders(url) == 0:
            time.sleep(0.2)
        assert lock_holders(url) == 1
        with pytest.raises(RunLocked, match="the database"), run_lock(tmp_path / "b", url, wait_s=0):
            pass
        lock.check_run_locks()  # still held: the running run goes on
    assert lock_holders(url) == 0  # released at the end


def test_a_run_whose_lock_another_run_took_during_a_restart_stops_cleanly(
    server: OwnServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run takes the lock while the server restarts: the running batch stops after the documents it
    finished, with RunLocked naming the other run, summary.json saying why, and its documents kept."""
    monkeypatch.setattr(lock, "CHECK_S", 3600.0)  # no watcher: the other run wins the race
    monkeypatch.setattr(lock, "VERIFY_MIN_S", 0.0)
    url = fresh_database(server, "lost")
    store = Store(url, retry_s=60)
    store.migrate()
    root = inputs(tmp_path)
    batch, pipeline = runner(root, store)
    other = sa.create_engine(url, poolclass=sa.pool.NullPool)
    other_conn: list[sa.Connection] = []
    restarted = threading.Event()

    def progress(_result: DocResult) -> None:
        if restarted.is_set():
            return
        restarted.set()
        server.restart(down_s=0.5)
        conn = other.connect()
        conn.exec_driver_sql("SET application_name = 'arbiter-run pid=4242 started=2026-01-05T09:00:00'")
        assert conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({lock.PG_LOCK_KEY})").scalar_one()
        conn.commit()
        other_conn.append(conn)

    try:
        with run_lock(root / "out", url, wait_s=0), pytest.raises(RunLocked) as stopped:
            batch.run(discover([root / "in"]), progress=progress)
        message = str(stopped.value)
        assert "PID 4242" in message
        assert "lost its lock" in message
        assert "\n" not in message
        summary = json.loads((root / "out" / "runs" / pipeline.run_id / "summary.json").read_text())
        assert summary["stopped"] == "run_lock_lost"
        assert 1 <= recorded(store) < 5
        assert recorded(store) == summary["processed"]
    finally:
        for conn in other_conn:
            conn.close()
        other.dispose()
        store.dispose()
