"""Initial schema: runs, documents, outcomes, packets, reviews, ground truth, users, audit log.

ground_truth and audit_log are append-only: triggers refuse UPDATE and DELETE on both databases.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
APPEND_ONLY = ("ground_truth", "audit_log")

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=255), nullable=False),
        sa.Column("details", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_log_action"), ["action"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_actor"), ["actor"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_target"), ["target"], unique=False)

    op.create_table(
        "ground_truth",
        sa.Column("gt_id", sa.String(length=64), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("supersedes", sa.String(length=64), nullable=True),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.PrimaryKeyConstraint("gt_id", name=op.f("pk_ground_truth")),
        sa.UniqueConstraint("doc_id", "version", name="uq_ground_truth_doc_version"),
    )
    with op.batch_alter_table("ground_truth", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ground_truth_doc_id"), ["doc_id"], unique=False)

    op.create_table(
        "outcomes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("outcome", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outcomes")),
        sa.UniqueConstraint("doc_id", "run_id", name="uq_outcomes_doc_run"),
    )
    op.create_table(
        "packets",
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("escalation_reason", sa.String(length=128), nullable=False),
        sa.Column("doc_type", sa.String(length=128), nullable=True),
        sa.Column("top_codes", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claim_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("superseded_by", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.PrimaryKeyConstraint("packet_id", name=op.f("pk_packets")),
    )
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_packets_claimed_by"), ["claimed_by"], unique=False)
        batch_op.create_index(batch_op.f("ix_packets_doc_id"), ["doc_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_packets_doc_type"), ["doc_type"], unique=False)
        batch_op.create_index(batch_op.f("ix_packets_escalation_reason"), ["escalation_reason"], unique=False)
        batch_op.create_index(
            "ix_packets_open_order",
            ["priority", "created_at", "packet_id"],
            unique=False,
            postgresql_where=sa.text("status IN ('PENDING', 'IN_REVIEW')"),
            sqlite_where=sa.text("status IN ('PENDING', 'IN_REVIEW')"),
        )
        batch_op.create_index("ix_packets_order", ["priority", "created_at", "packet_id"], unique=False)
        batch_op.create_index(
            "ix_packets_status_order", ["status", "priority", "created_at", "packet_id"], unique=False
        )

    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_runs")),
    )
    op.create_table(
        "users",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_users")),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("skip_key", sa.String(length=128), nullable=False),
        sa.Column("pdf_path", sa.String(), nullable=False),
        sa.Column("pdf_sha256", sa.String(length=64), nullable=False),
        sa.Column("final_decision", sa.String(length=32), nullable=False),
        sa.Column("escalation_reason", sa.String(length=128), nullable=True),
        sa.Column("doc_type", sa.String(length=128), nullable=True),
        sa.Column("error", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.run_id"], name=op.f("fk_documents_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_documents")),
        sa.UniqueConstraint("doc_id", "run_id", name="uq_documents_doc_run"),
    )
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_documents_doc_id"), ["doc_id"], unique=False)

    op.create_table(
        "packet_codes",
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["packet_id"], ["packets.packet_id"], name=op.f("fk_packet_codes_packet_id_packets")
        ),
        sa.PrimaryKeyConstraint("packet_id", "code", name=op.f("pk_packet_codes")),
    )
    with op.batch_alter_table("packet_codes", schema=None) as batch_op:
        batch_op.create_index("ix_packet_codes_code_packet", ["code", "packet_id"], unique=False)

    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("packet_id", sa.String(length=64), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("reviewer", sa.String(length=128), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("gt_id", sa.String(length=64), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["packet_id"], ["packets.packet_id"], name=op.f("fk_reviews_packet_id_packets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_reviews_idempotency_key")),
    )
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reviews_doc_id"), ["doc_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_reviews_packet_id"), ["packet_id"], unique=False)

    _append_only_triggers()


def downgrade() -> None:
    _drop_append_only_triggers()
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reviews_packet_id"))
        batch_op.drop_index(batch_op.f("ix_reviews_doc_id"))

    op.drop_table("reviews")
    with op.batch_alter_table("packet_codes", schema=None) as batch_op:
        batch_op.drop_index("ix_packet_codes_code_packet")

    op.drop_table("packet_codes")
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_documents_doc_id"))

    op.drop_table("documents")
    op.drop_table("users")
    op.drop_table("runs")
    with op.batch_alter_table("packets", schema=None) as batch_op:
        batch_op.drop_index("ix_packets_status_order")
        batch_op.drop_index("ix_packets_order")
        batch_op.drop_index(
            "ix_packets_open_order",
            postgresql_where=sa.text("status IN ('PENDING', 'IN_REVIEW')"),
            sqlite_where=sa.text("status IN ('PENDING', 'IN_REVIEW')"),
        )
        batch_op.drop_index(batch_op.f("ix_packets_escalation_reason"))
        batch_op.drop_index(batch_op.f("ix_packets_doc_type"))
        batch_op.drop_index(batch_op.f("ix_packets_doc_id"))
        batch_op.drop_index(batch_op.f("ix_packets_claimed_by"))

    op.drop_table("packets")
    op.drop_table("outcomes")
    with op.batch_alter_table("ground_truth", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ground_truth_doc_id"))

    op.drop_table("ground_truth")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_target"))
        batch_op.drop_index(batch_op.f("ix_audit_log_at"))
        batch_op.drop_index(batch_op.f("ix_audit_log_actor"))
        batch_op.drop_index(batch_op.f("ix_audit_log_action"))

    op.drop_table("audit_log")


def _append_only_triggers() -> None:
    """History must not be rewritten, whatever code (or person with a SQL prompt) tries."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION arbiter_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION arbiter_append_only()"
            )
        return
    for table in APPEND_ONLY:
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )


def _drop_append_only_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        op.execute("DROP FUNCTION IF EXISTS arbiter_append_only()")
        return
    for table in APPEND_ONLY:
        for verb in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{verb}")
