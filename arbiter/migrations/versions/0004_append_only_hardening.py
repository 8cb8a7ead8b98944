"""Append-only that cannot be bypassed: ground_truth, audit_log and reviews refuse UPDATE, DELETE, an INSERT
that would replace an existing key (SQLite's INSERT OR REPLACE / REPLACE INTO), and TRUNCATE (PostgreSQL,
a statement-level BEFORE TRUNCATE trigger: row triggers do not fire on TRUNCATE).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("ground_truth", "audit_log", "reviews")
# Every unique key of each table: REPLACE deletes the row holding any of them.
KEYS = {
    "ground_truth": ("gt_id = NEW.gt_id", "(doc_id = NEW.doc_id AND version = NEW.version)"),
    "audit_log": ("id = NEW.id",),
    "reviews": ("id = NEW.id", "idempotency_key = NEW.idempotency_key"),
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # 0001 made arbiter_append_only() and the row triggers of ground_truth and audit_log.
        op.execute(
            "CREATE TRIGGER reviews_append_only BEFORE UPDATE OR DELETE ON reviews "
            "FOR EACH ROW EXECUTE FUNCTION arbiter_append_only()"
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION arbiter_append_only()"
            )
        return
    for verb in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER reviews_no_{verb.lower()} BEFORE {verb} ON reviews "
            "BEGIN SELECT RAISE(ABORT, 'reviews is append-only'); END"
        )
    for table in APPEND_ONLY:
        keys = " OR ".join(KEYS[table])
        op.execute(
            f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
            f"WHEN EXISTS (SELECT 1 FROM {table} WHERE {keys}) "
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: that key already holds a row'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
        op.execute("DROP TRIGGER IF EXISTS reviews_append_only ON reviews")
        return
    for table in APPEND_ONLY:
        op.execute(f"DROP TRIGGER IF EXISTS {table}_no_replace")
    for verb in ("update", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS reviews_no_{verb}")
