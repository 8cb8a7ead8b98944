"""Pre-ping only what may have gone stale: SQLAlchemy's pool_pre_ping sends one round trip per checkout, three per
new document; a connection back in the pool from a transaction a moment ago is still there. A connection idle
PING_IDLE_S or longer is pinged before use; the store's retry loop (store/db.py) covers a drop mid-transaction."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

PING_IDLE_S = 1.0  # a pooled connection idle this long is pinged before it is used again
PING_WHEN_IDLE = True  # False: SQLAlchemy's pool_pre_ping, one ping per checkout (bench/doc_cpu.py compares)


def ping_when_idle(engine: Engine) -> None:
    """Ping a pooled connection at checkout only when it sat idle PING_IDLE_S or longer (or failed one: the pool
    replaces it)."""

    @event.listens_for(engine, "connect")
    def _fresh(_dbapi_conn: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()  # just connected: nothing to check

    @event.listens_for(engine, "checkin")
    def _back(_dbapi_conn: Any, record: Any) -> None:
        if record is not None:
            record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _out(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is not None and time.monotonic() - since < PING_IDLE_S:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            raise sa.exc.DisconnectionError(f"pooled connection gone: {type(exc).__name__}") from exc
        if not alive:
            raise sa.exc.DisconnectionError("pooled connection gone")
