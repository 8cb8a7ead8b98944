"""Writes that say what to do when a row's key is already there: INSERT … ON CONFLICT DO NOTHING or DO UPDATE,
in PostgreSQL's and SQLite's own forms, each statement built once per dialect and table."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection


def _dialect_insert(conn: Connection, table: sa.Table) -> Any:
    """The dialect's INSERT of `table`, which can say what to do on a conflict."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


# Statements built once per dialect and table, executed with each row's values as parameters: building one per
# row (INSERT … VALUES with the values in it) cost more than half of each statement's CPU.
_STATEMENTS: dict[tuple[Any, ...], Any] = {}


def insert_ignore(conn: Connection, table: sa.Table, values: dict[str, Any]) -> bool:
    """INSERT that does nothing when a unique key already holds the row; True when a row was written."""
    key = ("ignore", conn.dialect.name, table)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        # RETURNING rather than rowcount: psycopg reports -1 for INSERT … ON CONFLICT through SQLAlchemy 2.1.
        stmt = _dialect_insert(conn, table).on_conflict_do_nothing().returning(sa.literal(1))
        _STATEMENTS[key] = stmt
    return conn.execute(stmt, values).first() is not None


def upsert(conn: Connection, table: sa.Table, values: dict[str, Any], update: tuple[str, ...]) -> None:
    """INSERT, or when the primary key already holds the row, UPDATE its `update` columns to these values."""
    key = ("upsert", conn.dialect.name, table, update)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        insert = _dialect_insert(conn, table)
        keys = [c.name for c in table.primary_key.columns]
        stmt = insert.on_conflict_do_update(index_elements=keys, set_={c: insert.excluded[c] for c in update})
        _STATEMENTS[key] = stmt
    conn.execute(stmt, values)
