"""Issue 14.2: one `arbiter run` at a time per output folder and per database (SQLite and PostgreSQL); a
second run waits or says plainly who holds the lock (PID, start time); a killed holder never blocks."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from store_fixtures import (  # noqa: F401  (fixture)
    create_pg_database,
    drop_pg_database,
    pg_server_url_fixture,
)

from arbiter.run import lock
from arbiter.run.job import RunOptions, execute
from arbiter.run.lock import RunLocked, run_lock
from tests.conftest import FIXTURES

PDF = FIXTURES / "pdfs" / "note-progress-01.pdf"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


def options(out: Path, db: str | None = None) -> RunOptions:
    return RunOptions(inputs=[str(PDF)], out_dir=str(out), workers=1, db=db)


def test_a_second_run_on_the_same_output_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with run_lock(out, sqlite_url(out / "arbiter.db"), wait_s=0) as held, pytest.raises(RunLocked) as refused:
        execute(options(out))
    message = str(refused.value)
    assert f"PID {os.getpid()}" in message
    assert f"started {held['started_at']}" in message
    assert str(out) in message
    assert not (out / "runs").exists()  # nothing processed
    assert execute(options(out))["processed"] == 1  # released when the holder ended


def test_another_output_folder_on_the_same_sqlite_database_is_refused(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "shared.db")
    with run_lock(tmp_path / "a", db, wait_s=0), pytest.raises(RunLocked, match="the database"):
        execute(options(tmp_path / "b", db))


def test_another_output_folder_on_the_same_postgresql_database_is_refused(
    tmp_path: Path, pg_server_url: str
) -> None:
    with run_lock(tmp_path / "a", pg_server_url, wait_s=0), pytest.raises(RunLocked) as refused:
        execute(options(tmp_path / "b", pg_server_url))
    assert f"PID {os.getpid()}" in str(refused.value)
    assert "the database" in str(refused.value)
    assert execute(options(tmp_path / "b", pg_server_url))["processed"] == 1


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_second_run_waits_when_told_to(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With wait_s, a second run finding the database locked polls until the holder ends, then gets the lock."""
    db = (
        sqlite_url(tmp_path / "shared.db")
        if backend == "sqlite"
        else request.getfixturevalue("pg_server_url")
    )
    started, release, released = threading.Event(), threading.Event(), threading.Event()
    polls: list[float] = []

    def poll(seconds: float) -> None:
        """The waiting run's pause between tries: the first one lets the holder finish."""
        polls.append(seconds)
        release.set()
        assert released.wait(20)

    def hold() -> None:
        with run_lock(tmp_path / "a", db, wait_s=0):
            started.set()
            release.wait(20)
        released.set()

    monkeypatch.setattr(lock, "time", SimpleNamespace(monotonic=time.monotonic, sleep=poll))
    holder = threading.Thread(target=hold)
    holder.start()
    assert started.wait(20)
    with run_lock(tmp_path / "b", db, wait_s=20):
        assert released.is_set()
    holder.join()
    assert polls == [lock.POLL_S]


def test_a_finished_runs_database_lock_is_free_at_once(tmp_path: Path, pg_server_url: str) -> None:
    """The moment a run's lock is let go another session can take it (no wait for the server to end the old
    session, which made a waiting run poll again), thirty times running."""
    import sqlalchemy as sa

    engine = sa.create_engine(pg_server_url, poolclass=sa.pool.NullPool)
    probe = engine.connect()
    try:
        still_held = 0
        for n in range(30):
            with run_lock(tmp_path / f"run-{n}", pg_server_url, wait_s=0):
                pass
            if probe.exec_driver_sql(f"SELECT pg_try_advisory_lock({lock.PG_LOCK_KEY})").scalar_one():
                probe.exec_driver_sql(f"SELECT pg_advisory_unlock({lock.PG_LOCK_KEY})")
            else:
                still_held += 1
            probe.commit()
        assert still_held == 0
    finally:
        probe.close()
        engine.dispose()


def test_a_run_on_another_database_of_the_server_is_never_named_as_the_holder(
    tmp_path: Path, pg_server_url: str
) -> None:
    """Advisory locks are per database: a run holding its lock on another database of the same server is not
    who holds this one (a refusal named it when both ran at once)."""
    import sqlalchemy as sa

    other = create_pg_database(prefix="arbiter_lock_other")
    engine = sa.create_engine(pg_server_url, poolclass=sa.pool.NullPool)
    try:
        with run_lock(tmp_path / "other", other, wait_s=0), engine.connect() as conn:
            assert lock._pg_holder(conn) is None
            with run_lock(tmp_path / "here", pg_server_url, wait_s=0):
                assert (lock._pg_holder(conn) or {}).get("pid") == str(os.getpid())
    finally:
        engine.dispose()
        drop_pg_database(other)


HOLDER = """
import sys, time
from pathlib import Path
from arbiter.run.lock import run_lock
with run_lock(Path(sys.argv[1]), sys.argv[2], wait_s=0):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_killed_holder_never_blocks_the_next_run(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """Another process holds the locks; while it lives a run is refused with its PID; after kill -9 the
    operating system (or the database server) has released them."""
    out = tmp_path / "out"
    db = sqlite_url(out / "arbiter.db") if backend == "sqlite" else request.getfixturevalue("pg_server_url")
    second = out if backend == "sqlite" else tmp_path / "other"  # PostgreSQL: the database's lock refuses
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out), db], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(RunLocked, match=f"PID {proc.pid}, started "), run_lock(second, db, wait_s=0):
            pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    with run_lock(second, db, wait_s=10):
        pass
    shutil.rmtree(out, ignore_errors=True)


class _Broken(Exception):
    """What the driver raises when the server goes away mid-statement."""


class _Connection:
    def __init__(self) -> None:
        self.closed = False

    def exec_driver_sql(self, *args: object, **kwargs: object) -> object:
        import sqlalchemy as sa

        raise sa.exc.OperationalError("SELECT set_config(...)", {}, _Broken("server closed the connection"))

    def close(self) -> None:
        self.closed = True


def test_a_lock_check_that_loses_the_server_again_closes_the_connection_it_opened() -> None:
    """When the server goes away again between reconnecting and retaking the lock, the watcher closes the new
    connection (it is never left open for the garbage collector) and tries again at the next check."""
    opened: list[_Connection] = []

    def connect() -> _Connection:
        opened.append(_Connection())
        return opened[-1]

    held = lock.PgRunLock(SimpleNamespace(connect=connect), None, "arbiter-run test")  # type: ignore[arg-type]
    held.verify()
    assert len(opened) == 1
    assert opened[0].closed
    assert held.lost is None
    assert held.conn is None
