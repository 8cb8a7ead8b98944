"""Bounded connections to PostgreSQL: how many one process opens, how many a whole cluster run may open, and
operation behind PgBouncer in transaction pooling mode.

* `ARBITER_DB_POOL_SIZE` (default 5): the most connections one process holds (SQLAlchemy's pool_size, no
  overflow); a thread that finds them all in use waits for one (up to the retry budget) instead of opening
  another. A run's document threads share them: each holds one only while it writes its document.
* `ARBITER_DB_CONNECTIONS` (default: none): the budget of a whole `--engine ray` run, the driver's
  connections included; the driver gives every Ray worker an equal share (`worker_pool_size`) and refuses a
  run whose workers cannot each have one connection (run/ray_engine.py).
* `ARBITER_DB_POOLING=transaction`: the database URL goes through PgBouncer in transaction pooling mode, where
  nothing of a session survives a transaction. psycopg's server-side prepared statements are then off
  (`prepare_threshold=None`), no `options` startup parameter is sent (PgBouncer refuses it), each new connection
  checks that the server's time zone is UTC (set it in postgresql.conf, or `connect_query` in pgbouncer.ini),
  and the run lock, a session advisory lock, goes to `ARBITER_DB_SESSION_URL` (PostgreSQL directly, or a
  session-mode PgBouncer database): a run without it is refused.
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from arbiter.errors import ConfigError

ENV_POOL = "ARBITER_DB_POOL_SIZE"
ENV_BUDGET = "ARBITER_DB_CONNECTIONS"
ENV_POOLING = "ARBITER_DB_POOLING"
ENV_SESSION_URL = "ARBITER_DB_SESSION_URL"
DEFAULT_POOL = 5
UTC_NAMES = frozenset({"utc", "etc/utc", "universal", "zulu", "etc/universal", "etc/zulu", "gmt", "etc/gmt"})


def _count(name: str, default: int | None) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"{name} must be a whole number of connections (1 or more), not {text!r}.")
    return int(text)


def pool_size() -> int:
    """Connections one process may hold (ARBITER_DB_POOL_SIZE)."""
    size = _count(ENV_POOL, DEFAULT_POOL)
    assert size is not None
    return size


def budget() -> int | None:
    """The cluster-wide connection budget of a Ray run (ARBITER_DB_CONNECTIONS); None: no budget."""
    return _count(ENV_BUDGET, None)


def transaction_pooling(mode: str | None = None) -> bool:
    """Whether the database URL goes through a transaction-pooling PgBouncer (`mode`, else ARBITER_DB_POOLING)."""
    mode = (mode if mode is not None else os.environ.get(ENV_POOLING, "session")).strip().lower() or "session"
    if mode not in ("session", "transaction"):
        raise ConfigError(f"{ENV_POOLING} must be session or transaction, not {mode!r}.")
    return mode == "transaction"


def session_url(db_url: str) -> str:
    """The URL the run lock's session holds its advisory lock on: the database URL itself, or behind a
    transaction-pooling PgBouncer ARBITER_DB_SESSION_URL (refused when not set: the lock would not hold)."""
    if not transaction_pooling():
        return db_url
    direct = os.environ.get(ENV_SESSION_URL, "").strip()
    if not direct:
        raise ConfigError(
            f"{ENV_POOLING}=transaction: a run's lock is a session advisory lock, which a transaction-pooling "
            f"PgBouncer does not keep. Set {ENV_SESSION_URL} to the same database reached directly (or through "
            "a session-mode PgBouncer database)."
        )
    return direct


def worker_pool_size(workers: int, driver_connections: int) -> int:
    """Each Ray worker's pool size under the run's budget: the budget less the driver's connections, shared
    equally (never more than ARBITER_DB_POOL_SIZE); a ConfigError when a worker would get none."""
    per_process = pool_size()
    total = budget()
    if total is None:
        return per_process
    share = (total - driver_connections) // max(1, workers)
    if share < 1:
        raise ConfigError(
            f"{ENV_BUDGET}={total} cannot give {workers} workers one database connection each beside the "
            f"driver's {driver_connections}: lower --workers, raise {ENV_BUDGET}, or put PgBouncer in front "
            f"of PostgreSQL ({ENV_POOLING}=transaction) and count its connections instead."
        )
    return min(per_process, share)


def postgres_engine_args(
    kwargs: dict[str, Any], connect_args: dict[str, Any], retry_s: float, pooling: str | None = None
) -> None:
    """Fill in the pool bounds and the PgBouncer settings (in place) for a PostgreSQL engine (`pooling`: the
    mode, else ARBITER_DB_POOLING)."""
    if "poolclass" not in kwargs:
        kwargs.setdefault("pool_size", pool_size())
        kwargs.setdefault("max_overflow", 0)
        kwargs.setdefault("pool_timeout", max(1.0, retry_s))
    if transaction_pooling(pooling):
        connect_args.setdefault("prepare_threshold", None)  # no server-side prepared statements
    else:
        connect_args.setdefault("options", "-c timezone=UTC")


def check_time_zone(engine: Engine, pooling: str | None = None) -> None:
    """Behind a transaction-pooling PgBouncer the session's time zone cannot be set per connection: each new
    server connection is checked to be on UTC (fail closed: a ConfigError says how to set it)."""
    if not transaction_pooling(pooling):
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        with dbapi_conn.cursor() as cur:
            cur.execute("SHOW timezone")
            zone = str(cur.fetchone()[0])
        dbapi_conn.rollback()
        if zone.lower() not in UTC_NAMES:
            raise ConfigError(
                f"The database's time zone is {zone}; behind a transaction-pooling PgBouncer Arbiter needs UTC "
                "(timezone = 'UTC' in postgresql.conf, or connect_query = 'SET timezone=UTC' in pgbouncer.ini)."
            )
