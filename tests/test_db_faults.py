"""Issues 14.12 and 14.16: database faults survived. A PostgreSQL server this test started itself is
restarted (and stopped) under a running batch; a SQLite database is locked for real by another process.
Transient faults are retried on a fresh connection; a database that stays away stops the run cleanly with
a summary, a plain message and a non-zero exit, and a re-run finishes the rest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import OwnServer, own_pg_server
from typer.testing import CliRunner

from arbiter.classify import get_classifier
from arbiter.contracts.profile import load_profile
from arbiter.ingest import ingest_pdf
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, discover, new_run_id
from arbiter.run.document import DocResult, Pipeline
from arbiter.store import DatabaseUnavailable, Store
from arbiter.store import db as store_db
from tests.conftest import FIXTURES

DOCS = ("path-breast-02", "gen-foundation-01", "lab-quest-01", "note-progress-01", "admin-faxcover-01")


@pytest.fixture(scope="module")
def server() -> Iterator[OwnServer]:
    with own_pg_server() as own:
        yield own


def inputs(tmp_path: Path) -> Path:
    pdfs, cls = tmp_path / "in", tmp_path / "cls"
    pdfs.mkdir()
    cls.mkdir()
    for doc in DOCS:
        shutil.copy(FIXTURES / "pdfs" / f"{doc}.pdf", pdfs / f"{doc}.pdf")
        shutil.copy(FIXTURES / "demo" / f"{doc}.json", cls / f"{doc}.json")
    return tmp_path


def runner(root: Path, store: Store) -> tuple[BatchRunner, Pipeline]:
    sink = DatabaseResultStore(store, root / "out")
    pipeline = Pipeline(
        profile=load_profile(),
        classifier=get_classifier("file", classifications_dir=root / "cls"),
        store=sink,
        run_id=new_run_id(),
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
    )
    return BatchRunner(pipeline, sink, workers=2), pipeline


def fresh_database(server: OwnServer, name: str) -> str:
    import sqlalchemy as sa

    engine = sa.create_engine(server.url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return server.url.rsplit("/", 1)[0] + f"/{name}"


def recorded(store: Store) -> int:
    with store.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(DISTINCT doc_id) FROM documents").scalar_one())


def test_a_postgresql_restart_mid_run_is_survived(server: OwnServer, tmp_path: Path) -> None:
    """The server goes down for 1.5 s (immediate shutdown: connections cut) after the first document; every
    document still gets its result, once, and the run ends normally."""
    store = Store(fresh_database(server, "restart"), retry_s=60)
    store.migrate()
    root = inputs(tmp_path)
    batch, _pipeline = runner(root, store)
    restarted = threading.Event()

    def progress(_result: DocResult) -> None:
        if not restarted.is_set():
            restarted.set()
            server.restart(down_s=1.5)

    summary = batch.run(discover([root / "in"]), progress=progress)
    assert restarted.is_set()
    assert (summary["processed"], summary["errors"], summary["interrupted"]) == (len(DOCS), 0, False)
    assert recorded(store) == len(DOCS)
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM documents").scalar_one() == len(DOCS)
    store.dispose()


def test_a_database_that_stays_away_stops_the_run_cleanly(server: OwnServer, tmp_path: Path) -> None:
    """Stopped for good after the first document: the run stops with summary.json and a plain message
    (no traceback text, no SQL); started again, a re-run finishes the rest."""
    url = fresh_database(server, "away")
    store = Store(url, retry_s=1.5)
    store.migrate()
    root = inputs(tmp_path)
    batch, pipeline = runner(root, store)
    stopped = threading.Event()

    def progress(_result: DocResult) -> None:
        if not stopped.is_set():
            stopped.set()
            server.stop("immediate")

    try:
        with pytest.raises(DatabaseUnavailable) as away:
            batch.run(discover([root / "in"]), progress=progress)
    finally:
        server.start()
    message = str(away.value)
    assert "did not answer" in message
    assert "run the same command again" in message
    assert "SELECT" not in message
    assert "INSERT" not in message
    summary = json.loads((root / "out" / "runs" / pipeline.run_id / "summary.json").read_text())
    assert summary["stopped"] == "database_unavailable"
    done = recorded(store)
    assert 1 <= done < len(DOCS)
    again, _ = runner(root, store)
    rest = again.run(discover([root / "in"]))
    assert rest["skipped_unchanged"] == done
    assert rest["processed"] == len(DOCS) - done
    assert recorded(store) == len(DOCS)
    store.dispose()


LOCKER = """
import pathlib, sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
if sys.argv[3:]:
    pathlib.Path(sys.argv[3]).touch()  # before the lock goes: whoever writes next has waited for this
conn.execute("COMMIT")
"""


def lock_sqlite(path: Path, seconds: float, releasing: Path | None = None) -> subprocess.Popen[str]:
    """A process holding SQLite's write lock for `seconds`; it creates `releasing` just before letting go."""
    marker = [str(releasing)] if releasing is not None else []
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path), str(seconds), *marker], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


def finish(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def test_migrating_a_locked_sqlite_database_names_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the write lock for good: migrate says so plainly, with that process's PID."""
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 300)
    path = tmp_path / "arbiter.db"
    Store(f"sqlite:///{path}").migrate()
    holder = lock_sqlite(path, 60)
    try:
        store = Store(f"sqlite:///{path}", retry_s=1.5)
        with pytest.raises(DatabaseUnavailable) as locked:
            store.migrate()
        store.dispose()
    finally:
        finish(holder)
    assert "locked" in str(locked.value)
    assert f"PID {holder.pid}" in str(locked.value)


def test_a_briefly_locked_sqlite_database_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locked for longer than the busy timeout: migrate and writes wait for the holder, then succeed."""
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 300)
    path, releasing = tmp_path / "arbiter.db", tmp_path / "releasing"
    Store(f"sqlite:///{path}").migrate()
    holder = lock_sqlite(path, 1.2, releasing)
    try:
        store = Store(f"sqlite:///{path}", retry_s=30)
        store.migrate()
        store.audit.record("alice", "sign_in")
        assert releasing.exists()  # the write went through only once the holder was letting go
        assert store.audit.events()[0].actor == "alice"
        store.dispose()
    finally:
        finish(holder)


def test_arbiter_run_on_a_locked_sqlite_database_exits_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arbiter run` against a locked database: one plain message naming the holder, a non-zero exit, no
    traceback."""
    from arbiter.cli.main import app

    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 300)
    monkeypatch.setenv("ARBITER_DB_RETRY_S", "1")
    out = tmp_path / "out"
    Store(f"sqlite:///{out / 'arbiter.db'}").migrate()
    holder = lock_sqlite(out / "arbiter.db", 60)
    try:
        result = CliRunner().invoke(
            app, ["run", str(FIXTURES / "pdfs" / "note-progress-01.pdf"), "--out", str(out)]
        )
    finally:
        finish(holder)
    said = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code != 0
    assert f"PID {holder.pid}" in said
    assert "Traceback" not in said
    assert not isinstance(result.exception, store_db.sa.exc.OperationalError)
