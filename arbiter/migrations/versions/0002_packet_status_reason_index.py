"""Covering index for the queue's counts by status and escalation reason.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.create_index("ix_packets_status_reason", ["status", "escalation_reason"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.drop_index("ix_packets_status_reason")
