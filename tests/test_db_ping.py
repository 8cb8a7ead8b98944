"""Pooled PostgreSQL connections are pinged only after sitting idle (arbiter/store/ping.py): none for a connection
just returned, and a connection the server dropped while idle is replaced before it is used."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from store_fixtures import pg_server_url_fixture  # noqa: F401  (fixture)

from arbiter.store import ping
from arbiter.store.db import make_engine


def count_pings(engine: sa.Engine) -> list[int]:
    seen = [0]
    real = engine.dialect.do_ping

    def counted(conn: Any) -> bool:
        seen[0] += 1
        return bool(real(conn))

    engine.dialect.do_ping = counted  # type: ignore[method-assign,assignment]
    return seen


def test_a_connection_just_returned_is_not_pinged(pg_server_url: str) -> None:
    """Back-to-back transactions on one pooled connection send no ping (pool_pre_ping sent one each)."""
    engine = make_engine(pg_server_url, pool_size=1)
    try:
        seen = count_pings(engine)
        for _ in range(5):
            with engine.connect() as conn:
                assert conn.execute(sa.text("SELECT 1")).scalar() == 1
        assert seen[0] == 0
    finally:
        engine.dispose()


def test_a_connection_dropped_while_idle_is_replaced(
    pg_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection the server ended while it sat idle past the threshold is pinged, found gone and replaced."""
    monkeypatch.setattr(ping, "PING_IDLE_S", 0.0)
    engine = make_engine(pg_server_url, pool_size=1)
    try:
        seen = count_pings(engine)
        with engine.connect() as conn:
            pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
        killer = sa.create_engine(pg_server_url)
        with killer.connect() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        killer.dispose()
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_backend_pid()")).scalar() != pid
        assert seen[0] >= 1
    finally:
        engine.dispose()
