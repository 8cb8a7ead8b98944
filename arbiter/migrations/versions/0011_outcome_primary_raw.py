"""Nothing half-written on a lost node: each outcome keeps the primary's answer byte for byte (`primary_raw`), so a
re-run can rewrite a document's `classification.json` from the database when a kill (or a deleted folder) left
the rows without the file.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy), as 0008: nullable, so rows written before it stay valid.
    op.add_column("outcomes", sa.Column("primary_raw", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outcomes", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("primary_raw")
