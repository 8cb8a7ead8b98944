"""Sign-in throttling and lockout: each account counts its failed sign-ins since the last success, when the
last one was, and when it was locked (an admin unlocks it).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("failed_sign_ins", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("last_failed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("locked_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("locked_at")
        batch_op.drop_column("last_failed_at")
        batch_op.drop_column("failed_sign_ins")
