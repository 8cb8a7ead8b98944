"""Adjudication: each review keeps the classification it gave (`answer`), so a second review that disagrees
with the first is recorded (and counted for agreement) without becoming a ground-truth version.

Revision ID: 0008
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy): on SQLite a table rebuild would drop the append-only triggers.
    op.add_column("reviews", sa.Column("answer", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reviews", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("answer")
