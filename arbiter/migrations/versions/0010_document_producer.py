"""Drift alarms: each document keeps who classified it (the classification's producer name), the stratum the
per-producer CUSUMs follow across runs (docs/design.md §9.5).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy): on SQLite a table rebuild would drop the append-only triggers.
    op.add_column("documents", sa.Column("producer", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("documents", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("producer")
