"""Known-answer packets: the `known_answers` table names the AUDIT packets an admin seeded from adjudicated
ground truth to measure reviewers (docs/design.md §9.7). Nothing else changes: the packets themselves are
ordinary audit packets.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "known_answers",
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("gt_id", sa.String(length=64), nullable=False),
        sa.Column("seeded_by", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["packet_id"], ["packets.packet_id"], name=op.f("fk_known_answers_packet_id_packets")
        ),
        sa.PrimaryKeyConstraint("packet_id", name=op.f("pk_known_answers")),
    )
    op.create_index(op.f("ix_known_answers_doc_id"), "known_answers", ["doc_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_known_answers_doc_id"), table_name="known_answers")
    op.drop_table("known_answers")
