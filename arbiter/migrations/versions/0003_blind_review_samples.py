"""Blind review samples: a packet's kind (ESCALATION, AUDIT, SECOND_REVIEW) and the packet a second review
doubles.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="ESCALATION")
        )
        batch_op.add_column(sa.Column("pair_of", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_packets_kind", ["kind"], unique=False)
        batch_op.create_index(
            "ix_packets_pair_of",
            ["pair_of"],
            unique=False,
            postgresql_where=sa.text("pair_of IS NOT NULL"),
            sqlite_where=sa.text("pair_of IS NOT NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.drop_index("ix_packets_pair_of")
        batch_op.drop_index("ix_packets_kind")
        batch_op.drop_column("pair_of")
        batch_op.drop_column("kind")
