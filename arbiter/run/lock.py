"""One `arbiter run` at a time per output folder and per database.

Two runs writing the same output folder or the same database would process the same documents twice and
supersede each other's packets. A run therefore holds, for as long as it runs:

* an exclusive `flock` on `OUT/.arbiter-run.lock`, which also records who holds it (PID, start time, host,
  command line);
* for a SQLite database, the same on `<database file>.run-lock` (another output folder may name the same
  database with --db); for PostgreSQL, a session advisory lock on a connection whose application_name
  records the holder, so a second run can say who it is.

The operating system releases both when the holder exits, however it exits (kill -9 included): a stale
lock file never blocks anyone. A second run waits up to `wait_s` seconds (ARBITER_RUN_LOCK_WAIT, default
0), then stops with a plain message naming the holder.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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

    name = f"{APP_PREFIX} pid={info['pid']} started={info['started_at']} host={info['host']}"[:63]
    engine = make_engine(db_url, poolclass=sa.pool.NullPool)
    conn = engine.connect()
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
        yield
    finally:
        conn.close()  # the session ends: the advisory lock is released
        engine.dispose()


def _pg_holder(conn: sa.Connection) -> dict[str, Any] | None:
    row = conn.exec_driver_sql(
        "SELECT a.application_name, a.client_addr::text FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid "
        f"WHERE l.locktype = 'advisory' AND l.objid = {PG_LOCK_KEY} AND l.granted LIMIT 1"
    ).first()
    conn.commit()
    if row is None or not str(row[0]).startswith(APP_PREFIX):
        return None
    fields = dict(part.split("=", 1) for part in str(row[0]).split()[1:] if "=" in part)
    return {"pid": fields.get("pid"), "started_at": fields.get("started"), "host": fields.get("host")}
