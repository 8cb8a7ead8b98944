"""Issue 27.6 on PostgreSQL: the owner migrates (`arbiter db migrate`) and grants an application role
(`arbiter db grant-app-role`) that runs and reviews but cannot erase history, disable triggers or migrate."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_fixtures import PG_URL, create_pg_database, drop_pg_database
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.run.compose import open_store
from arbiter.run.job import RunOptions, execute
from arbiter.store import DatabaseUnavailable, Store
from tests.conftest import FIXTURES

runner = CliRunner()
PDF = FIXTURES / "pdfs" / "note-progress-01.pdf"


@pytest.fixture(name="roles")
def roles_fixture() -> Iterator[tuple[str, str]]:
    """(owner URL, application-role URL) of a fresh database the owner migrated; the role is dropped after."""
    owner_url = create_pg_database(prefix="arbiter_roles")
    role = f"arbiter_app_{secrets.token_hex(4)}"
    admin = sa.create_engine(sa.make_url(PG_URL).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
    app_url = sa.make_url(owner_url).set(username=role).render_as_string(hide_password=False)
    try:
        yield owner_url, app_url
    finally:
        drop_pg_database(owner_url)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        admin.dispose()


def migrate_and_grant(owner_url: str, app_url: str) -> None:
    migrated = runner.invoke(app, ["db", "migrate", "--db", owner_url])
    assert migrated.exit_code == 0, migrated.output
    role = sa.make_url(app_url).username
    granted = runner.invoke(app, ["db", "grant-app-role", str(role), "--db", owner_url])
    assert granted.exit_code == 0, granted.output


def refused(app_url: str, statement: str) -> bool:
    engine = sa.create_engine(app_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(statement)
    except sa.exc.DBAPIError:
        return True
    finally:
        engine.dispose()
    return False


def test_the_app_role_cannot_erase_history_or_disable_its_triggers(roles: tuple[str, str]) -> None:
    """As the application role, UPDATE, DELETE and TRUNCATE of audit_log and disabling its triggers fail,
    while reading and appending work."""
    owner_url, app_url = roles
    migrate_and_grant(owner_url, app_url)
    store = open_store(app_url)
    store.audit.record("root", "test.event", "x")
    assert [e.action for e in store.audit.events()] == ["test.event"]
    store.dispose()
    for statement in (
        "UPDATE audit_log SET actor = 'someone'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
        "ALTER TABLE audit_log DISABLE TRIGGER USER",
        "SET session_replication_role = replica",
        "DROP TABLE audit_log",
        "TRUNCATE ground_truth",
        "CREATE TABLE evil (x int)",
    ):
        assert refused(app_url, statement), statement


def test_a_run_works_as_the_app_role(roles: tuple[str, str], tmp_path: Path) -> None:
    """`arbiter run` connected as the application role processes and records a document without migrating."""
    owner_url, app_url = roles
    migrate_and_grant(owner_url, app_url)
    summary = execute(RunOptions(inputs=[str(PDF)], out_dir=str(tmp_path / "out"), workers=1, db=app_url))
    assert summary["processed"] == 1
    assert summary["errors"] == 0, summary["errors_by_reason"]
    store = Store(owner_url)
    assert store.records.doc_ids() == [PDF.stem]
    store.dispose()


def test_the_app_role_refuses_a_schema_behind_head_in_one_line(roles: tuple[str, str]) -> None:
    """A schema behind head is not migrated by the application role: open_store refuses naming
    `arbiter db migrate`, and the owner's migrate brings it up to date."""
    owner_url, app_url = roles
    migrate_and_grant(owner_url, app_url)
    owner = Store(owner_url)
    owner.downgrade("-1")
    head_minus_one = owner.current_revision()
    with pytest.raises(DatabaseUnavailable) as refusal:
        open_store(app_url)
    message = str(refusal.value)
    assert "arbiter db migrate" in message
    assert "\n" not in message
    assert owner.current_revision() == head_minus_one
    owner.migrate()
    owner.dispose()
    open_store(app_url).dispose()


def test_grant_app_role_prints_the_sql_for_a_dba() -> None:
    """`--print` shows the grants, with only SELECT and INSERT on the history tables and no TRUNCATE."""
    shown = runner.invoke(app, ["db", "grant-app-role", "arbiter_app", "--print", "--db", PG_URL])
    assert shown.exit_code == 0, shown.output
    assert "GRANT SELECT, INSERT ON ground_truth, audit_log, reviews" in shown.output.replace('"', "")
    assert "TRUNCATE" not in shown.output
