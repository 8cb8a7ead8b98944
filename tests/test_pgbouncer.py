"""Issue 32.3, bounded connections: a run through PgBouncer in transaction pooling mode (started by the test in
front of the local PostgreSQL, two server connections at most) with more document threads than that finishes
and decides every document, psycopg's prepared statements off; the per-process pool and the cluster budget
are enforced, and a misconfiguration is refused in one line rather than run half-safely."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_fixtures import pg_server_url_fixture, reset  # noqa: F401  (fixture)

from arbiter.errors import ConfigError
from arbiter.run.job import RunOptions, execute
from arbiter.store import Store, pooling
from arbiter.store.db import make_engine
from testing.pgbouncer import ServerConnections, pgbouncer
from tests.conftest import FIXTURES

needs_pgbouncer = pytest.mark.usefixtures("pgbouncer_present")  # fails, never skips, without PgBouncer
CAP = 2  # PgBouncer's server connections to the database: fewer than the run's threads


@pytest.fixture(name="bouncer")
def bouncer_fixture(pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An empty database behind a fresh PgBouncer, and the settings a site would give Arbiter for it."""
    store = Store(pg_server_url)
    reset(store)
    store.dispose()
    monkeypatch.setenv(pooling.ENV_POOLING, "transaction")
    monkeypatch.setenv(pooling.ENV_SESSION_URL, pg_server_url)  # the run lock's session: PostgreSQL directly
    monkeypatch.setenv(pooling.ENV_POOL, "3")
    with pgbouncer(pg_server_url, server_connections=CAP) as url:
        yield url


@needs_pgbouncer
def test_a_run_through_transaction_pooling_finishes_within_the_cap(
    bouncer: str, pg_server_url: str, tmp_path: Path
) -> None:
    """Six document threads through PgBouncer (transaction pooling, two server connections) decide all 31
    fixtures with no error and never use more than two server connections; a second run skips them all."""
    options = RunOptions(
        inputs=[str(FIXTURES / "pdfs")],
        classifications=str(FIXTURES / "demo"),
        out_dir=str(tmp_path / "out"),
        db=bouncer,
        workers=6,
    )
    with ServerConnections(pg_server_url) as seen:
        summary = execute(options)
    total = len(list((FIXTURES / "pdfs").glob("*.pdf")))
    assert (summary["processed"], summary["errors"]) == (total, 0)
    assert 1 <= seen.peak <= CAP
    engine = sa.create_engine(pg_server_url)
    try:
        with engine.connect() as conn:
            recorded = conn.execute(sa.text("SELECT count(DISTINCT doc_id) FROM documents")).scalar_one()
    finally:
        engine.dispose()
    assert recorded == total
    again = execute(options)
    assert (again["skipped_unchanged"], again["processed"]) == (total, 0)


@needs_pgbouncer
def test_prepared_statements_are_what_transaction_pooling_breaks(bouncer: str) -> None:
    """The same statement run often enough for psycopg to prepare it, through PgBouncer: fine with the setting
    (prepared statements off); with them on it fails once a transaction lands on another server connection."""

    def hammer(engine: sa.Engine) -> None:
        with engine.connect() as a, engine.connect() as b:  # two clients: server connections get swapped
            for i in range(40):
                for conn in (a, b):
                    conn.execute(sa.text("SELECT :i + 1"), {"i": i}).scalar_one()
                    conn.commit()

    safe = make_engine(bouncer)
    try:
        hammer(safe)
    finally:
        safe.dispose()
    unsafe = make_engine(bouncer, connect_args={"prepare_threshold": 1})
    try:
        with pytest.raises(sa.exc.DBAPIError, match="prepared statement"):
            hammer(unsafe)
    finally:
        unsafe.dispose()


def test_the_run_lock_needs_a_session_behind_transaction_pooling(monkeypatch: pytest.MonkeyPatch) -> None:
    """With transaction pooling and no ARBITER_DB_SESSION_URL a run is refused (its advisory lock would not
    hold), in a message that names the setting; without pooling the database URL is the lock's."""
    monkeypatch.delenv(pooling.ENV_SESSION_URL, raising=False)
    monkeypatch.setenv(pooling.ENV_POOLING, "session")
    assert pooling.session_url("postgresql://db/a") == "postgresql://db/a"
    monkeypatch.setenv(pooling.ENV_POOLING, "transaction")
    with pytest.raises(ConfigError, match=pooling.ENV_SESSION_URL):
        pooling.session_url("postgresql://bouncer/a")
    monkeypatch.setenv(pooling.ENV_SESSION_URL, "postgresql://db/a")
    assert pooling.session_url("postgresql://bouncer/a") == "postgresql://db/a"


@pytest.mark.parametrize(
    ("budget", "workers", "pool", "share"),
    [(None, 8, "5", 5), ("40", 8, "5", 4), ("100", 8, "5", 5), ("12", 4, "2", 2), ("14", 8, "5", 1)],
)
def test_each_ray_worker_gets_its_share_of_the_cluster_budget(
    monkeypatch: pytest.MonkeyPatch, budget: str | None, workers: int, pool: str, share: int
) -> None:
    """A Ray worker's pool is the budget less the driver's connections, shared equally, never more than
    ARBITER_DB_POOL_SIZE; no budget: ARBITER_DB_POOL_SIZE."""
    monkeypatch.setenv(pooling.ENV_POOL, pool)
    if budget is None:
        monkeypatch.delenv(pooling.ENV_BUDGET, raising=False)
    else:
        monkeypatch.setenv(pooling.ENV_BUDGET, budget)
    assert pooling.worker_pool_size(workers, int(pool) + 1) == share


def test_a_budget_too_small_for_the_workers_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget that leaves a worker no connection is refused in one message with the ways out."""
    monkeypatch.setenv(pooling.ENV_POOL, "5")
    monkeypatch.setenv(pooling.ENV_BUDGET, "10")
    with pytest.raises(ConfigError, match="cannot give 8 workers one database connection each"):
        pooling.worker_pool_size(8, 6)


@pytest.mark.parametrize("value", ["0", "-1", "many", "2.5"])
def test_a_pool_size_that_is_not_a_count_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """ARBITER_DB_POOL_SIZE and ARBITER_DB_CONNECTIONS take whole numbers of 1 or more."""
    monkeypatch.setenv(pooling.ENV_POOL, value)
    with pytest.raises(ConfigError, match=pooling.ENV_POOL):
        pooling.pool_size()


def test_one_process_holds_at_most_its_pool(pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ARBITER_DB_POOL_SIZE bounds a process's engine: no overflow beyond it."""
    monkeypatch.setenv(pooling.ENV_POOL, "2")
    monkeypatch.delenv(pooling.ENV_POOLING, raising=False)
    engine = make_engine(pg_server_url)
    try:
        assert (engine.pool.size(), engine.pool._max_overflow) == (2, 0)  # type: ignore[attr-defined]
    finally:
        engine.dispose()
