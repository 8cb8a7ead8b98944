"""Reviewers' kinds: `user_kinds` names the kinds of answer an account reviews (a clinician the medical
classifications, a compliance analyst the grounded answers); an account with no row reviews every kind, as
every account did before. The claim statements, the queue pages and the counts read it in the same statement
(docs/design.md §8.2). `ix_packets_status_kind` keeps the queue's counts by kind an index-only read.

A table rather than a list column on `users`: membership is one primary-key probe inside the claim statement,
the same SQL on SQLite and PostgreSQL (no list parsing, no JSON functions), every kind name is a row a change
adds or removes, and `users` is left as it is. Nothing existing is rebuilt, so the append-only triggers of
0004 stay; changes of an account's kinds are in the append-only audit log (`user.kinds`).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "user_kinds",
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("answer_kind", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["user_name"], ["users.name"], name=op.f("fk_user_kinds_user_name_users")),
        sa.PrimaryKeyConstraint("user_name", "answer_kind", name=op.f("pk_user_kinds")),
    )
    op.create_index("ix_packets_status_kind", "packets", ["status", "answer_kind"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_packets_status_kind", table_name="packets")
    op.drop_table("user_kinds")
