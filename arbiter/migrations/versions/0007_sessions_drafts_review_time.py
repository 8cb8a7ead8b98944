"""Sessions that survive a reload, drafts on the server, and time per packet measured on the server: the
sessions and drafts tables, the server secret that signs session tokens, and each review's claim start and
seconds from it to the submit.

Revision ID: 0007
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (no batch copy on SQLite): reviews is append-only and its triggers must stay.
    op.add_column("reviews", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("reviews", sa.Column("duration_s", sa.Float(), nullable=True))
    op.create_table(
        "sessions",
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("session_id", name=op.f("pk_sessions")),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_user_name"), ["user_name"], unique=False)
    op.create_table(
        "app_secrets",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_app_secrets")),
    )
    op.create_table(
        "drafts",
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("reviewer", sa.String(length=128), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.PrimaryKeyConstraint("packet_id", "reviewer", name=op.f("pk_drafts")),
    )


def downgrade() -> None:
    op.drop_table("drafts")
    op.drop_table("app_secrets")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_user_name"))
    op.drop_table("sessions")
    op.drop_column("reviews", "duration_s")
    op.drop_column("reviews", "claimed_at")
