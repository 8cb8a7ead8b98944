"""The operations lane and per-reviewer skips: a packet's resolution (why an admin closed it), the packets
each reviewer skipped (their claim next offers those last), and the open packets of documents that could
not be read moved out of the review queue into the operations lane.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What record/packets.py calls unreadable: an escalation whose reason is pdf_<kind>.
_UNREADABLE = "kind = 'ESCALATION' AND substr(escalation_reason, 1, 4) = 'pdf_'"


def upgrade() -> None:
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resolution", sa.String(length=32), nullable=True))
    op.create_table(
        "packet_skips",
        sa.Column("reviewer", sa.String(length=128), nullable=False),
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("skipped_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["packet_id"], ["packets.packet_id"], name=op.f("fk_packet_skips_packet_id_packets")
        ),
        sa.PrimaryKeyConstraint("reviewer", "packet_id", name=op.f("pk_packet_skips")),
    )
    op.create_index("ix_packet_skips_reviewer_at", "packet_skips", ["reviewer", "skipped_at"], unique=False)
    # Unreadable documents already queued leave the clinicians' queue (a claim on one is dropped: nobody
    # could review it).
    op.execute(
        "UPDATE packets SET status = 'OPERATIONS', claimed_by = NULL, claimed_at = NULL, "
        f"claim_expires_at = NULL WHERE status IN ('PENDING', 'IN_REVIEW') AND {_UNREADABLE}"
    )


def downgrade() -> None:
    op.execute(f"UPDATE packets SET status = 'PENDING' WHERE status = 'OPERATIONS' AND {_UNREADABLE}")
    op.execute("UPDATE packets SET status = 'COMPLETED' WHERE status = 'DISMISSED'")
    op.drop_index("ix_packet_skips_reviewer_at", table_name="packet_skips")
    op.drop_table("packet_skips")
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.drop_column("resolution")
