"""Answer kinds: documents, packets and ground-truth versions name the kind of answer they hold
(arbiter/kinds: `medical-classification`, the default and every earlier row, or `grounded-answer`), so one
database, one queue and one export serve both kinds (docs/design.md §8.1).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT = "medical-classification"
TABLES = ("documents", "packets", "ground_truth")


def upgrade() -> None:
    for table in TABLES:  # ADD COLUMN with a constant default: no table is rebuilt, the triggers stay
        op.add_column(
            table, sa.Column("answer_kind", sa.String(length=64), nullable=False, server_default=DEFAULT)
        )
    op.create_index(op.f("ix_packets_answer_kind"), "packets", ["answer_kind"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_packets_answer_kind"), table_name="packets")
    for table in TABLES:
        with op.batch_alter_table(table, schema=None, recreate="never") as batch_op:
            batch_op.drop_column("answer_kind")
