"""One `arbiter run` at a time per output folder and per database.

Two runs writing the same output folder or the same database would process the same documents twice and
supersede each other's packets. A run therefore holds, for as long as it runs:

* an exclusive `flock` on `OUT/.arbiter-run.lock`, which also records who holds it (PID, start time, host,
  command line);
* for a SQLite database, the same on `<database file>.run-lock` (another output folder may name the same
  database with --db); for PostgreSQL, a session advisory lock on a connection whose application_name
  records the holder, so a second run can say who it is. A PostgreSQL restart ends that session and its
  lock: the run checks every CHECK_S seconds and takes it again; if another run took it first, the run stops
  cleanly (RunLocked, its summary written, everything written kept).

The operating system releases both when the holder exits, however it exits (kill -9 included): a stale
lock file never blocks anyone. A second run waits up to `wait_s` seconds (ARBITER_RUN_LOCK_WAIT, default
0), then stops with a plain message naming the holder.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import sqlalchemy as sa

from arbiter.errors import UserError

LOCK_NAME = ".arbiter-run.lock"
PG_LOCK_KEY = 7420012  # pg_advisory_lock key of batch runs (7420011 is the migration lock)
APP_PREFIX = "arbiter-run"
ENV_WAIT = "ARBITER_RUN_LOCK_WAIT"
POLL_S = 0.5
CHECK_S = 2.0  # how often a held PostgreSQL lock is checked (and retaken after a restart)
VERIFY_MIN_S = 1.0  # check_run_locks() verifies it itself when the last check is older than this
log = logging.getLogger(__name__)


class RunLocked(UserError):
    """Another run holds the output folder or the database; the message names it."""


def holder_info(now: datetime | None = None) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "started_at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "command": " ".join(sys.argv[:1] + [a for a in sys.argv[1:] if not a.startswith("--password")])[:200],
    }


def describe_holder(info: dict[str, Any] | None) -> str:
    if not info:
        return "another arbiter run (its PID is not recorded)"
    where = f" on {info['host']}" if info.get("host") and info.get("host") != socket.gethostname() else ""
    return f"another arbiter run (PID {info.get('pid', '?')}{where}, started {info.get('started_at', '?')})"


def wait_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_WAIT, "0") or 0))
    except ValueError:
        return 0.0


@contextmanager
def run_lock(out_dir: Path, db_url: str, *, wait_s: float | None = None) -> Iterator[dict[str, Any]]:
    """Hold the output folder's and the database's run locks for the block; RunLocked if another run holds
    either after `wait_s` seconds. Yields what was recorded about this run."""
    wait = wait_seconds() if wait_s is None else wait_s
    info = holder_info()
    with ExitStack() as stack:
        out_dir.mkdir(parents=True, exist_ok=True)
        stack.enter_context(_file_lock(out_dir / LOCK_NAME, info, wait, f"the output folder {out_dir}"))
        url = sa.make_url(db_url)
        if url.get_backend_name() == "sqlite":
            database = url.database or ""
            if database and database != ":memory:" and not database.startswith("file:"):
                db_file = Path(database).resolve()
                stack.enter_context(
                    _file_lock(
                        db_file.with_name(db_file.name + ".run-lock"), info, wait, f"the database {db_file}"
                    )
                )
        elif url.get_backend_name() == "postgresql":
            stack.enter_context(_pg_lock(db_url, info, wait))
        yield info


@contextmanager
def _file_lock(path: Path, info: dict[str, Any], wait_s: float, what: str) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle: IO[str] = open(path, "a+", encoding="utf-8")  # noqa: SIM115  (held for the whole run)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RunLocked(_refusal(what, _read_holder(path), wait_s)) from None
                time.sleep(POLL_S)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(info) + "\n")
        handle.flush()
        yield
    finally:
        handle.close()  # releases the flock


def _read_holder(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _refusal(what: str, info: dict[str, Any] | None, wait_s: float) -> str:
    waited = f" (waited {wait_s:g} s)" if wait_s else ""
    holder = describe_holder(info)
    return (
        f"{holder[0].upper()}{holder[1:]} is using {what}{waited}. Wait for it to finish, or stop it, "
        f"then run again; set {ENV_WAIT}=SECONDS to wait for it instead."
    )


@contextmanager
def _pg_lock(db_url: str, info: dict[str, Any], wait_s: float) -> Iterator[None]:
    from arbiter.store.db import make_engine
    from arbiter.store.pooling import session_url

    name = f"{APP_PREFIX} pid={info['pid']} started={info['started_at']} host={info['host']}"[:63]
    engine = make_engine(session_url(db_url), poolclass=sa.pool.NullPool)  # a session (store/pooling.py)
    conn = engine.connect()
    held: PgRunLock | None = None
    try:
        conn.exec_driver_sql("SELECT set_config('application_name', %(n)s, false)", {"n": name})
        conn.commit()
        deadline = time.monotonic() + wait_s
        while not conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({PG_LOCK_KEY})").scalar_one():
            conn.commit()
            if time.monotonic() >= deadline:
                holder = _pg_holder(conn)
                raise RunLocked(_refusal("the database", holder, wait_s))
            time.sleep(POLL_S)
        conn.commit()
        held = PgRunLock(engine, conn, name)
        _HELD.append(held)
        held.start()
        yield
    finally:
        if held is not None:
            held.stop()
            _HELD.remove(held)
        else:
            conn.close()  # the session ends: the advisory lock is released
        engine.dispose()


class PgRunLock:
    """A held PostgreSQL run lock that survives a database restart: a restart ends the session and with it the
    advisory lock, so a watcher thread checks every CHECK_S seconds that this session still holds it and, if
    not, takes it again on a fresh connection. If another run took it meanwhile, the lock is lost:
    check_run_locks() raises RunLocked and the batch stops cleanly (everything written stays written)."""

    def __init__(self, engine: sa.Engine, conn: sa.Connection, name: str) -> None:
        self.engine = engine
        self.conn: sa.Connection | None = conn
        self.name = name
        self.lost: str | None = None
        self.checked_at = time.monotonic()
        self._mutex = threading.Lock()
        self._stopped = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="arbiter-run-lock", daemon=True)

    def start(self) -> None:
        self._watcher.start()

    def stop(self) -> None:
        self._stopped.set()
        self._watcher.join(timeout=10)
        with self._mutex:
            if self.conn is not None:
                # Released in so many words first: the server ends a closed session's locks only when its
                # backend has exited, a moment later, and a run waiting for the lock would find it held then.
                with suppress(Exception):
                    self.conn.exec_driver_sql(f"SELECT pg_advisory_unlock({PG_LOCK_KEY})")
                self.conn.close()  # the session ends: anything still held is released
                self.conn = None

    def _watch(self) -> None:
        while not self._stopped.wait(CHECK_S):
            self.verify()

    def verify(self) -> None:
        """Make sure this run still holds the lock: retake it after a restart, or record that it is lost."""
        with self._mutex:
            self.checked_at = time.monotonic()
            if self.lost is not None or self._stopped.is_set():
                return
            try:
                if self.conn is not None and self._holds(self.conn):
                    return
            except sa.exc.DBAPIError:
                pass  # the server closed the session (a restart): take the lock again on a fresh one
            self._close_quietly()
            conn: sa.Connection | None = None
            try:
                conn = self.engine.connect()
                conn.exec_driver_sql("SELECT set_config('application_name', %(n)s, false)", {"n": self.name})
                got = conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({PG_LOCK_KEY})").scalar_one()
                conn.commit()
            except sa.exc.DBAPIError:
                if conn is not None:  # connected, then the server went away again: close it, never leave it
                    with suppress(sa.exc.DBAPIError):
                        conn.close()
                return  # still away: try again at the next check (the run's own writes wait for it too)
            if got:
                self.conn = conn
                log.warning("the database's run lock was lost (the server restarted) and is held again")
                return
            holder = _pg_holder(conn)
            conn.close()
            self.lost = (
                f"This run lost its lock on the database (the server restarted) and "
                f"{describe_holder(holder)} took it: this run stopped so that two runs never process the same "
                "documents; everything it wrote is kept. Let the other run finish, then run again for the rest."
            )
            log.error("%s", self.lost)

    def _holds(self, conn: sa.Connection) -> bool:
        held = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = "
            f"{PG_LOCK_KEY} AND pid = pg_backend_pid() AND granted"
        ).scalar_one()
        conn.commit()
        return bool(held)

    def _close_quietly(self) -> None:
        if self.conn is not None:
            with suppress(sa.exc.DBAPIError):
                self.conn.close()
            self.conn = None


_HELD: list[PgRunLock] = []


def check_run_locks() -> None:
    """RunLocked when this process's run lost its database lock to another run (after a restart). Cheap: the
    lock is verified at most every VERIFY_MIN_S seconds here, besides the watcher's own checks."""
    for held in list(_HELD):
        if held.lost is None and time.monotonic() - held.checked_at >= VERIFY_MIN_S:
            held.verify()
        if held.lost is not None:
            raise RunLocked(held.lost)


def _pg_holder(conn: sa.Connection) -> dict[str, Any] | None:
    row = conn.exec_driver_sql(
        "SELECT a.application_name, a.client_addr::text FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid "
        f"WHERE l.locktype = 'advisory' AND l.objid = {PG_LOCK_KEY} AND l.granted "
        # Advisory locks are per database: a run on another database of the same server is not the holder.
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1"
    ).first()
    conn.commit()
    if row is None or not str(row[0]).startswith(APP_PREFIX):
        return None
    fields = dict(part.split("=", 1) for part in str(row[0]).split()[1:] if "=" in part)
    return {"pid": fields.get("pid"), "started_at": fields.get("started"), "host": fields.get("host")}
