"""Risk-weighted audits: each accept keeps its audit risk score and the probability with which it was drawn
into the blind audit sample, so the false-accept rate can be weighted by 1 / probability.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMNs (no batch copy): on SQLite a table rebuild would drop the append-only triggers.
    op.add_column("documents", sa.Column("risk", sa.Float(), nullable=True))
    op.add_column("documents", sa.Column("audit_p", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("documents", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("audit_p")
        batch_op.drop_column("risk")
