"""Two database roles on PostgreSQL: the owner, which migrates (`arbiter db migrate`), and an application
role for `arbiter run` and `arbiter review`, with only the grants they need (`arbiter db grant-app-role`).

The application role reads and writes the working tables, only reads and appends to the append-only history
(ground_truth, audit_log, reviews), and owns nothing: it cannot TRUNCATE, ALTER a table or DISABLE its
triggers. Runs and the app never migrate with it: they check that the schema is at head and, if not, refuse
in one line naming `arbiter db migrate` (an owner — or SQLite, where whoever writes the file owns it — still
brings the schema up to date at start, as before)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from arbiter.store.db import Database, schema_revision
from arbiter.store.errors import DatabaseUnavailable
from arbiter.store.models import APPEND_ONLY_TABLES

HISTORY_TABLES = APPEND_ONLY_TABLES  # SELECT and INSERT only
NOT_AT_HEAD = (
    "The database {where} is at schema revision {current}, not {head}, and {role} may not migrate it: "
    "run `arbiter db migrate` as the database owner, then start again."
)


VERSIONS = Path(__file__).resolve().parents[1] / "migrations" / "versions"


def head_revision() -> str:
    """The newest migration this version of Arbiter ships: a migration's revision is its file's four-digit
    prefix, each one's parent the one before (tests/test_store_migrations.py holds Alembic to that). Read from the
    file names, so a run whose schema is at head never imports Alembic (7 MB and 0.1 s at every start)."""
    found = sorted(p.name[:4] for p in VERSIONS.glob("[0-9][0-9][0-9][0-9]_*.py"))
    if not found:
        raise RuntimeError(f"no database migrations found in {VERSIONS}: the installation is incomplete")
    return found[-1]


def working_tables() -> list[str]:
    """Every table of the store that is not append-only history (SELECT, INSERT, UPDATE, DELETE)."""
    return sorted(name for name in SQLModel.metadata.tables if name not in HISTORY_TABLES)


def may_migrate(conn: Connection) -> bool:
    """Whether the connected role may change the schema: on SQLite always; on PostgreSQL a superuser, or a
    member of the role that owns the schema's tables (a database with no tables yet: try, and let the
    server say no)."""
    if conn.dialect.name != "postgresql":
        return True
    row = conn.exec_driver_sql(
        "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
        "(SELECT pg_has_role(current_user, tableowner, 'USAGE') FROM pg_tables "
        "WHERE schemaname = current_schema() AND tablename = 'alembic_version')"
    ).one()
    superuser, owner = row
    return bool(superuser) or owner is None or bool(owner)


def ensure_schema(db: Database) -> None:
    """Nothing when the schema is at head; else migrate it when this role may, else DatabaseUnavailable with
    one line saying who must run `arbiter db migrate`."""
    head = head_revision()

    def state() -> tuple[str | None, bool]:
        with db.engine.connect() as conn:
            current = schema_revision(conn)
            allowed = may_migrate(conn)
            conn.rollback()
        return current, allowed

    current, allowed = db.with_retries(state, what="schema check")
    if current == head:
        return
    if not allowed:
        raise DatabaseUnavailable(
            NOT_AT_HEAD.format(where=db.where(), current=current or "(none)", head=head, role=_role_text(db))
        )
    db.migrate()


def _role_text(db: Database) -> str:
    user = sa.make_url(db.url).username
    return f"the role {user}" if user else "this role"


def grant_statements(role: str, database: str, schema: str = "public") -> list[str]:
    """The SQL that gives `role` what runs and the review app need, and nothing more (run it as the owner
    after every `arbiter db migrate` that adds a table)."""
    q = _quote
    working = ", ".join(q(t) for t in working_tables())
    history = ", ".join(q(t) for t in HISTORY_TABLES)
    s, r = q(schema), q(role)
    return [
        f"GRANT CONNECT ON DATABASE {q(database)} TO {r}",
        f"GRANT USAGE ON SCHEMA {s} TO {r}",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM {r}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {working} TO {r}",
        f"GRANT SELECT, INSERT ON {history} TO {r}",
        f"GRANT SELECT ON alembic_version TO {r}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
    ]


def grant_app_role(db: Database, role: str) -> list[str]:
    """Grant `role` the application's privileges on this database (run as the owner); returns the SQL run.
    Refuses a role that does not exist, or the owner itself (it would keep every power it has)."""
    if db.dialect != "postgresql":
        raise DatabaseUnavailable("Database roles are a PostgreSQL matter; a SQLite file has no roles.")
    with db.write() as conn:
        exists = conn.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(r)s", {"r": role}).first()
        if exists is None:
            raise DatabaseUnavailable(
                f"There is no role {role!r}: create it first (as a superuser or a role with CREATEROLE): "
                f"CREATE ROLE {_quote(role)} LOGIN PASSWORD '…'"
            )
        powerful = conn.exec_driver_sql(
            "SELECT rolsuper OR pg_has_role(%(r)s, tableowner, 'USAGE') FROM pg_roles, pg_tables "
            "WHERE rolname = %(r)s AND schemaname = current_schema() AND tablename = 'alembic_version'",
            {"r": role},
        ).scalar()
        if powerful:
            raise DatabaseUnavailable(
                f"The role {role!r} owns the tables or is a superuser: the application role must be another one."
            )
        database = conn.exec_driver_sql("SELECT current_database(), current_schema()").one()
        statements = grant_statements(role, database[0], database[1])
        for statement in statements:
            conn.exec_driver_sql(statement)
    return statements


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
