"""Migrations: upgrade to head, down to base and up again on SQLite and PostgreSQL; the tables the
models define are exactly what the migrations build."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel
from store_fixtures import accepted, create_pg_database, drop_pg_database, escalated

from arbiter.store import Store

TABLES = {
    "runs",
    "documents",
    "outcomes",
    "packets",
    "packet_codes",
    "packet_skips",
    "known_answers",
    "reviews",
    "ground_truth",
    "users",
    "user_kinds",
    "audit_log",
    "sessions",
    "app_secrets",
    "drafts",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty database of each kind, not yet migrated."""
    url = f"sqlite:///{tmp_path / 'm.db'}" if request.param == "sqlite" else create_pg_database()
    store = Store(url)
    yield store
    store.dispose()
    if request.param == "postgresql":
        drop_pg_database(url)


def _tables(store: Store) -> set[str]:
    return set(sa.inspect(store.engine).get_table_names()) - {"alembic_version"}


def test_upgrade_downgrade_upgrade(fresh: Store) -> None:
    """head builds every table, base removes them all, head again works and the store is usable."""
    fresh.migrate()
    assert _tables(fresh) == TABLES
    assert fresh.current_revision() == "0015"
    fresh.records.record(accepted("d1"))
    fresh.downgrade("base")
    assert _tables(fresh) == set()
    assert fresh.current_revision() is None
    fresh.migrate()
    assert _tables(fresh) == TABLES
    assert fresh.records.record(escalated("d1")).recorded


def test_migrate_twice_is_a_no_op(fresh: Store) -> None:
    """migrate() on an up-to-date database changes nothing."""
    fresh.migrate()
    fresh.records.record(accepted("d1"))
    fresh.migrate()
    assert fresh.ground_truth.latest("d1") is not None


def test_models_match_migrations(fresh: Store) -> None:
    """Autogenerate finds no difference between the models and the migrated schema (no missing migration)."""
    fresh.migrate()
    with fresh.engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"compare_type": True}), SQLModel.metadata
        )
    assert diff == []


def test_concurrent_migrations_do_not_collide(fresh: Store) -> None:
    """The app and a batch run migrating at the same moment both succeed (one waits for the other)."""
    from concurrent.futures import ThreadPoolExecutor

    others = [Store(fresh.url) for _ in range(3)]
    try:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda s: s.migrate(), others))
    finally:
        for other in others:
            other.dispose()
    assert _tables(fresh) == TABLES
    assert fresh.current_revision() == "0015"


def test_the_head_read_from_file_names_is_alembics() -> None:
    """Each migration's revision is its file's four-digit prefix and its parent the one before, so the head
    read from the file names is the one Alembic finds."""
    from alembic.script import ScriptDirectory

    from arbiter.store.db import Database
    from arbiter.store.roles import VERSIONS, head_revision

    script = ScriptDirectory.from_config(Database("sqlite://").alembic_config())
    assert head_revision() == script.get_current_head()
    previous = None
    for path in sorted(VERSIONS.glob("[0-9][0-9][0-9][0-9]_*.py")):
        revision = script.get_revision(path.name[:4])
        assert revision is not None
        assert Path(str(revision.path)).name == path.name
        assert revision.down_revision == previous
        previous = revision.revision


def test_the_revision_read_without_alembic_is_alembics(fresh: Store) -> None:
    """The schema revision read from the version table is what Alembic reads: none before, head after."""
    for migrate in (False, True):
        if migrate:
            fresh.migrate()
        with fresh.engine.connect() as conn:
            assert fresh.current_revision() == MigrationContext.configure(conn).get_current_revision()
    assert fresh.current_revision() == "0015"


def test_a_run_on_a_schema_at_head_does_not_import_alembic(tmp_path: Path) -> None:
    """Opening a store whose schema is at head leaves Alembic unimported (7 MB in every run's process)."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'h.db'}"
    Store(url).migrate()
    code = (
        "import sys\nfrom arbiter.store import Store\n"
        f"s = Store({url!r})\ns.ensure_schema()\nprint(sorted(m for m in sys.modules if m.startswith(('alembic', 'mako'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
