"""Engines and transactions: SQLite (WAL, busy timeout, BEGIN IMMEDIATE for writes) or PostgreSQL via
DATABASE_URL; Alembic configured in code so migrations run from an installed package."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

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


def make_engine(url: str | None = None, **kwargs: Any) -> Engine:
    """An engine with the per-connection settings each database needs; UTC on both."""
    resolved = sa.make_url(resolve_url(url))
    if resolved.get_backend_name() == "sqlite":
        database = resolved.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(resolved, **kwargs)
        _sqlite_events(engine)
        return engine
    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("options", "-c timezone=UTC")
    # No pool_pre_ping: it costs a round trip per transaction; connections are recycled instead, and a
    # connection found dead raises once and is discarded with the pool (SQLAlchemy invalidates it).
    kwargs.setdefault("pool_recycle", 1800)
    return sa.create_engine(resolved, connect_args=connect_args, **kwargs)


def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The driver's own implicit BEGIN is switched off so we choose DEFERRED or IMMEDIATE ourselves.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
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


class Database:
    """Holds the engine and hands out read and write transactions; the Store's parts build on it."""

    def __init__(self, url: str | None = None, *, engine: Engine | None = None) -> None:
        self.url = resolve_url(url)
        self.engine = engine or make_engine(self.url)

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
        """Bring the schema up to `revision` (Alembic upgrade)."""
        from alembic import command

        with self._migration_lock() as conn:
            command.upgrade(self.alembic_config(conn), revision)

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
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()


def insert_ignore(conn: Connection, table: sa.Table, values: dict[str, Any]) -> bool:
    """INSERT that does nothing when a unique key already holds the row; True when a row was written."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt: Any = pg_insert(table).values(**values).on_conflict_do_nothing()
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(table).values(**values).on_conflict_do_nothing()
    # RETURNING rather than rowcount: psycopg reports -1 for INSERT … ON CONFLICT through SQLAlchemy 2.1.
    return conn.execute(stmt.returning(sa.literal(1))).first() is not None
