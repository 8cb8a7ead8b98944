"""Engines and transactions: SQLite (WAL, busy timeout, BEGIN IMMEDIATE for writes) or PostgreSQL via
DATABASE_URL; Alembic configured in code so migrations run from an installed package.

Transient faults — a connection lost, a server restarting or refusing connections, SQLite busy or locked, a
serialization failure — are retried with backoff on a fresh connection (the pool is emptied; PostgreSQL
connections are pinged before use) for up to ARBITER_DB_RETRY_S seconds (default 60); after that the
operation raises DatabaseUnavailable with a plain message. A server that refuses the very first connection
(nothing listens at that address) is a configuration mistake, not a fault to wait out: DatabaseUnavailable
says so at once. Store operations are idempotent (batch writes
per document and run, reviews per idempotency key, a claim returns the reviewer's own claim first), so
running one again after a commit whose answer was lost writes nothing twice."""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from arbiter.store import ping
from arbiter.store.errors import DatabaseUnavailable
from arbiter.store.pooling import check_time_zone, postgres_engine_args

log = logging.getLogger(__name__)

DEFAULT_URL = "sqlite:///output/arbiter.db"
BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_WRITE = "arbiter_write"


def resolve_url(url: str | None = None) -> str:
    """The URL given, else DATABASE_URL, else the SQLite file under output/; bare postgresql:// uses psycopg 3."""
    url = url or os.environ.get("DATABASE_URL") or DEFAULT_URL
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def make_engine(
    url: str | None = None, *, busy_timeout_ms: int | None = None, pooling: str | None = None, **kwargs: Any
) -> Engine:
    """An engine with the per-connection settings each database needs; UTC on both. busy_timeout_ms caps
    SQLite's wait for a lock (default BUSY_TIMEOUT_MS); `pooling` the PgBouncer mode (store/pooling.py)."""
    resolved = sa.make_url(resolve_url(url))
    if resolved.get_backend_name() == "sqlite":
        database = resolved.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(resolved, **kwargs)
        _sqlite_events(engine, busy_timeout_ms)
        return engine
    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("connect_timeout", 10)
    # At most ARBITER_DB_POOL_SIZE connections per process; PgBouncer's transaction pooling (store/pooling.py).
    postgres_engine_args(kwargs, connect_args, retry_seconds(), pooling)
    # A connection the server dropped (a restart) is found and replaced before it is used: pinged at checkout
    # once it has sat idle in the pool PING_IDLE_S or longer (a connection back from a transaction a moment ago
    # is not: one round trip saved per transaction); the retry loop below covers a drop mid-transaction.
    ping_when_idle = ping.PING_WHEN_IDLE and "pool_pre_ping" not in kwargs
    kwargs.setdefault("pool_pre_ping", not ping_when_idle)
    kwargs.setdefault("pool_recycle", 1800)
    engine = sa.create_engine(resolved, connect_args=connect_args, **kwargs)
    if ping_when_idle:
        ping.ping_when_idle(engine)
    check_time_zone(engine, pooling)
    return engine


def _sqlite_events(engine: Engine, busy_timeout_ms: int | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The driver's own implicit BEGIN is switched off so we choose DEFERRED or IMMEDIATE ourselves.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        busy = BUSY_TIMEOUT_MS if busy_timeout_ms is None else min(busy_timeout_ms, BUSY_TIMEOUT_MS)
        cur.execute(f"PRAGMA busy_timeout = {int(busy)}")
        _ensure_wal(cur)
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        # REPLACE's implicit delete then fires the append-only DELETE triggers too (the BEFORE INSERT
        # triggers of migration 0004 refuse it on any connection, this one included).
        cur.execute("PRAGMA recursive_triggers = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A write transaction takes the write lock up front: a deferred one that reads first and then
        # writes fails at once with SQLITE_BUSY_SNAPSHOT when another writer got in between.
        immediate = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _ensure_wal(cur: Any) -> None:
    """WAL is a property of the file: set it once. Switching modes needs the database to itself and does
    not wait on the busy timeout, so a connection racing another one's first write retries briefly."""
    if str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# SQLSTATEs of faults that pass: connection exceptions (08…), the server shutting down or starting
# (57P01–57P03), serialization failure and deadlock (40001, 40P01).
TRANSIENT_SQLSTATES = frozenset(
    {"08000", "08001", "08003", "08004", "08006", "57P01", "57P02", "57P03", "40001", "40P01"}
)
TRANSIENT_WORDS = (
    "database is locked",
    "database is busy",
    "database table is locked",
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "could not connect",
    "the database system is",
    "connection is closed",
    "connection already closed",
    "consuming input failed",
    "no connection to the server",
    "connection timed out",
    "connection reset",
    "ssl connection has been closed",
)
ENV_RETRY = "ARBITER_DB_RETRY_S"
DEFAULT_RETRY_S = 60.0
_retrying = threading.local()


def is_transient(exc: BaseException) -> bool:
    """A fault worth trying again on a fresh connection (never a constraint or a programming error)."""
    if not isinstance(exc, sa.exc.DBAPIError) or isinstance(exc, sa.exc.IntegrityError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None) or getattr(getattr(orig, "diag", None), "sqlstate", None)
    if sqlstate in TRANSIENT_SQLSTATES:
        return True
    if not isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError):
        return False
    text = str(orig).lower()
    return any(word in text for word in TRANSIENT_WORDS)


def is_refused(exc: BaseException) -> bool:
    """Whether the server refused the connection outright (nothing listens at that host and port)."""
    return isinstance(exc, sa.exc.DBAPIError) and "connection refused" in str(exc.orig).lower()


def fault_text(exc: BaseException) -> str:
    """The database's own first line (no SQL, no parameters: they may hold document data)."""
    orig = getattr(exc, "orig", exc)
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    return first[:200]


def retry_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_RETRY, DEFAULT_RETRY_S)))
    except ValueError:
        return DEFAULT_RETRY_S


class Database:
    """Holds the engine and hands out read and write transactions; the Store's repositories share one."""

    def __init__(
        self, url: str | None = None, *, engine: Engine | None = None, retry_s: float | None = None
    ) -> None:
        self.url = resolve_url(url)
        self.retry_s = retry_seconds() if retry_s is None else retry_s
        # A lock wait never outlasts the retry budget (the review app uses a short one).
        self.engine = engine or make_engine(self.url, busy_timeout_ms=max(100, int(self.retry_s * 500)))
        # Set at the first connection made: until then, a refused connection is a wrong --db, not a restart.
        self.reached = False
        event.listen(self.engine, "connect", self._on_connect)

    def _on_connect(self, _dbapi_conn: Any, _record: Any) -> None:
        self.reached = True

    def where(self) -> str:
        """The database, for messages (password hidden)."""
        return sa.make_url(self.url).render_as_string(hide_password=True)

    def with_retries(self, fn: Any, *, what: str = "") -> Any:
        """fn(), again on a fresh connection after a transient fault, with backoff, for up to retry_s
        seconds; then DatabaseUnavailable. Calls made inside a retried call are not retried on their own."""
        if getattr(_retrying, "active", False):
            return fn()
        _retrying.active = True
        try:
            deadline = time.monotonic() + self.retry_s
            delay = 0.1
            while True:
                try:
                    return fn()
                except sa.exc.DBAPIError as exc:
                    if not is_transient(exc):
                        raise
                    if not self.reached and is_refused(exc):
                        raise DatabaseUnavailable(self.refused_message(exc)) from None
                    if time.monotonic() + delay > deadline:
                        raise DatabaseUnavailable(self.unavailable_message(exc)) from None
                    log.warning(
                        "database fault%s (%s); trying again in %.1f s on a fresh connection",
                        f" in {what}" if what else "",
                        fault_text(exc),
                        delay,
                    )
                    self.engine.dispose()  # the pool may hold connections to a server that is gone
                    time.sleep(delay)
                    delay = min(delay * 2, 5.0)
        finally:
            _retrying.active = False

    def unavailable_message(self, exc: BaseException) -> str:
        said = fault_text(exc)
        holders = ""
        if self.dialect == "sqlite" and "locked" in said.lower():
            holders = sqlite_holders_text(sa.make_url(self.url).database or "")
        return (
            f"The database {self.where()} did not answer for {self.retry_s:g} s ({said}).{holders} "
            f"Nothing was lost: work already saved stays saved. Start the database again (or wait for the "
            f"process holding it), then run the same command again; {ENV_RETRY} sets how long to wait."
        )

    def refused_message(self, exc: BaseException) -> str:
        return (
            f"Nothing answers at {self.where()} ({fault_text(exc)}): check the host and port in --db or "
            f"DATABASE_URL, or start the database."
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        with self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: True})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()

    # Migrations --------------------------------------------------------------------------------------
    def alembic_config(self, connection: Connection | None = None) -> Any:
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.set_main_option("sqlalchemy.url", self.url.replace("%", "%%"))
        cfg.attributes["connection"] = connection
        return cfg

    def migrate(self, revision: str = "head") -> None:
        """Bring the schema up to `revision` (Alembic upgrade); a locked or restarting database is waited for
        (retry_s), then DatabaseUnavailable names it (and, for SQLite, the processes that have it open)."""
        from alembic import command

        def upgrade() -> None:
            with self._migration_lock() as conn:
                command.upgrade(self.alembic_config(conn), revision)

        self.with_retries(upgrade, what="migration")

    def downgrade(self, revision: str) -> None:
        """Alembic downgrade (tests and emergencies; `base` drops every table)."""
        from alembic import command

        with self._migration_lock() as conn:
            command.downgrade(self.alembic_config(conn), revision)

    @contextmanager
    def _migration_lock(self) -> Iterator[Connection]:
        """One migrator at a time (the app and a batch run may both start now): SQLite's write lock, or a
        PostgreSQL advisory lock held until the migration commits."""
        with self.write() as conn:
            if self.dialect == "postgresql":
                conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7420011)")
            yield conn

    def current_revision(self) -> str | None:
        with self.engine.connect() as conn:
            return schema_revision(conn)


def schema_revision(conn: Connection) -> str | None:
    """The schema revision the database is at, from Alembic's version table without importing Alembic; None
    when it has none yet."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    value = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    return None if value is None else str(value)


def sqlite_holders_text(database: str) -> str:
    """' Held by PID 123 (python arbiter run …).' for the other processes that have the SQLite file open (from
    /proc; empty where that cannot be read)."""
    holders = sqlite_holders(database)
    if not holders:
        return ""
    shown = "; ".join(f"PID {pid} ({cmd})" for pid, cmd in holders[:5])
    return f" Processes with it open: {shown}."


def sqlite_holders(database: str) -> list[tuple[int, str]]:
    if not database or database == ":memory:":
        return []
    target = os.path.realpath(database)
    names = {target, target + "-wal", target + "-shm", target + "-journal"}
    found: list[tuple[int, str]] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) in names:
                    cmd = (
                        (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                    )
                    found.append((int(entry.name), cmd[:80] or "?"))
                    break
            except OSError:
                continue
    return found


def retried(method: Any) -> Any:
    """A repository method run through its Database's with_retries."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        db: Database = self.db
        return db.with_retries(lambda: method(self, *args, **kwargs), what=method.__name__)

    return wrapper
