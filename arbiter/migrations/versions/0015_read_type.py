"""Drift alarms on the type mix: each document keeps the type the content check's page reader reads it as
(`read_type`, verifiers/v2_reader.py `read_as`), whatever the answer says; the per-producer CUSUMs follow each
type's share across runs (docs/design.md §9.5). Rows recorded before it keep NULL and are left out of the
type mix. A plain nullable column: nothing existing is rebuilt, so the append-only triggers of 0004 stay.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy): on SQLite a table rebuild would drop the append-only triggers.
    op.add_column("documents", sa.Column("read_type", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("documents", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("read_type")
