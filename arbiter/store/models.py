"""SQLModel tables of the review store (docs/design.md §8.1). Contract payloads live in JSON columns; what the
queue filters or orders by is copied into indexed columns, so nothing is filtered by loading JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from arbiter.contracts.review import DEFAULT_KIND

# Set before any table exists: Alembic downgrades need deterministic constraint names (ENGINEERING_NOTES).
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# The open part of the queue, written literally: a partial index is only used when the query repeats its
# predicate verbatim (bound parameters defeat the match on both databases).
OPEN_PREDICATE = "status IN ('PENDING', 'IN_REVIEW')"


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Aware UTC datetimes in and out; SQLite drops time zones, so naive values read back are UTC."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def json_type() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(JSONB(), "postgresql")


def _ts(nullable: bool = False, index: bool = False) -> Any:
    return Field(default=None, sa_column=sa.Column(UTCDateTime(), nullable=nullable, index=index))


def _json(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=sa.Column(json_type(), nullable=nullable))


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    run_id: str = Field(primary_key=True, max_length=64)
    created_at: datetime = _ts()


class DocumentRow(SQLModel, table=True):
    """One document as decided in one run; (doc_id, run_id) is the idempotency key of a batch write."""

    __tablename__ = "documents"
    __table_args__ = (sa.UniqueConstraint("doc_id", "run_id", name="uq_documents_doc_run"),)
    id: int | None = Field(default=None, primary_key=True)
    doc_id: str = Field(index=True, max_length=255)
    run_id: str = Field(foreign_key="runs.run_id", max_length=64)
    skip_key: str = Field(max_length=128)
    pdf_path: str
    pdf_sha256: str = Field(max_length=64)
    final_decision: str = Field(max_length=32)
    escalation_reason: str | None = Field(default=None, max_length=128)
    doc_type: str | None = Field(default=None, max_length=128)
    error: str | None = Field(default=None, max_length=128)
    risk: float | None = Field(default=None, description="An accept's audit risk score (migration 0009).")
    audit_p: float | None = Field(
        default=None, description="An accept's inclusion probability in the audit sample (migration 0009)."
    )
    producer: str | None = Field(
        default=None,
        max_length=128,
        description="Who classified it: the drift alarms' stratum (migration 0010).",
    )
    read_type: str | None = Field(
        default=None,
        max_length=128,
        description="The type the content check's page reader reads it as: the drift alarms' type mix "
        "(migration 0015; None before it, or when no page reads as any type).",
    )
    answer_kind: str = Field(
        default=DEFAULT_KIND,
        sa_column=sa.Column(sa.String(64), nullable=False, server_default=DEFAULT_KIND),
    )  # the kind of answer (arbiter/kinds; migration 0013)
    created_at: datetime = _ts()


class OutcomeRow(SQLModel, table=True):
    __tablename__ = "outcomes"
    __table_args__ = (sa.UniqueConstraint("doc_id", "run_id", name="uq_outcomes_doc_run"),)
    id: int | None = Field(default=None, primary_key=True)
    doc_id: str = Field(max_length=255)
    run_id: str = Field(max_length=64)
    outcome: dict[str, Any] = _json()
    # The primary's answer byte for byte (migration 0009; None before it, or when there was none): what a
    # re-run rewrites a missing classification.json from.
    primary_raw: str | None = Field(default=None, sa_column=sa.Column(sa.Text(), nullable=True))


class PacketRow(SQLModel, table=True):
    """A packet's claim state lives in columns; the SMEPacket contract body in `payload`.

    status is PENDING, IN_REVIEW or COMPLETED, or SUPERSEDED (a later run escalated the same document
    again before anyone claimed this packet, so it left the queue); OPERATIONS for a document that could
    not be read (the admins' operations lane, never claimed), DISMISSED when an admin closed it with a
    `resolution` (migration 0006). kind is a PacketKind; pair_of links a SECOND_REVIEW to the escalation
    packet it doubles.
    """

    __tablename__ = "packets"
    __table_args__ = (
        sa.Index(
            "ix_packets_open_order",
            "priority",
            "created_at",
            "packet_id",
            postgresql_where=sa.text(OPEN_PREDICATE),
            sqlite_where=sa.text(OPEN_PREDICATE),
        ),
        sa.Index("ix_packets_status_order", "status", "priority", "created_at", "packet_id"),
        sa.Index("ix_packets_order", "priority", "created_at", "packet_id"),
        sa.Index("ix_packets_status_reason", "status", "escalation_reason"),  # queue counts, covering
        sa.Index("ix_packets_status_kind", "status", "answer_kind"),  # counts by kind, covering (0014)
        sa.Index(
            "ix_packets_pair_of",
            "pair_of",
            postgresql_where=sa.text("pair_of IS NOT NULL"),
            sqlite_where=sa.text("pair_of IS NOT NULL"),
        ),
    )
    packet_id: str = Field(primary_key=True, max_length=64)
    doc_id: str = Field(index=True, max_length=255)
    run_id: str = Field(max_length=64)
    priority: int
    escalation_reason: str = Field(index=True, max_length=128)
    doc_type: str | None = Field(default=None, index=True, max_length=128)
    top_codes: str = Field(default="", max_length=255)
    status: str = Field(max_length=16)
    claimed_by: str | None = Field(default=None, index=True, max_length=128)
    claimed_at: datetime | None = _ts(nullable=True)
    claim_expires_at: datetime | None = _ts(nullable=True)
    superseded_by: str | None = Field(default=None, max_length=64)
    kind: str = Field(
        default="ESCALATION",
        sa_column=sa.Column(sa.String(16), nullable=False, server_default="ESCALATION", index=True),
    )
    pair_of: str | None = Field(default=None, max_length=64)
    resolution: str | None = Field(default=None, max_length=32)
    answer_kind: str = Field(
        default=DEFAULT_KIND,
        sa_column=sa.Column(sa.String(64), nullable=False, server_default=DEFAULT_KIND, index=True),
    )  # the kind of answer (arbiter/kinds; migration 0013)
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    payload: dict[str, Any] = _json()


class PacketSkipRow(SQLModel, table=True):
    """A reviewer skipped this packet (migration 0006): their claim next offers it again only when nothing
    else is claimable for them, oldest skip first. Other reviewers' order ignores it."""

    __tablename__ = "packet_skips"
    __table_args__ = (sa.Index("ix_packet_skips_reviewer_at", "reviewer", "skipped_at"),)
    reviewer: str = Field(primary_key=True, max_length=128)
    packet_id: str = Field(primary_key=True, foreign_key="packets.packet_id", max_length=64)
    skipped_at: datetime = _ts()


class PacketCodeRow(SQLModel, table=True):
    """Issue codes of a packet, one row each, so "filter by code" is an indexed join."""

    __tablename__ = "packet_codes"
    __table_args__ = (sa.Index("ix_packet_codes_code_packet", "code", "packet_id"),)
    packet_id: str = Field(primary_key=True, foreign_key="packets.packet_id", max_length=64)
    code: str = Field(primary_key=True, max_length=64)


class ReviewRow(SQLModel, table=True):
    """Append-only like ground_truth and audit_log (migration 0004)."""

    __tablename__ = "reviews"
    id: int | None = Field(default=None, primary_key=True)
    packet_id: str = Field(index=True, foreign_key="packets.packet_id", max_length=64)
    doc_id: str = Field(index=True, max_length=255)
    reviewer: str = Field(max_length=128)
    idempotency_key: str = Field(unique=True, max_length=128)
    # The ground-truth version in force after the review: the one it wrote, or (it said the same, or it
    # disagrees with the other review of a double review and awaits adjudication) the one it left in force.
    gt_id: str = Field(max_length=64)
    payload: dict[str, Any] = _json()
    # The classification the review gave (migration 0008; None on reviews saved before it).
    answer: dict[str, Any] | None = _json(nullable=True)
    created_at: datetime = _ts()
    # Time per packet, on the server's clock (migration 0007): the start of the claim that was submitted
    # and the seconds from it to the submit. NULL for reviews saved before it was measured.
    claimed_at: datetime | None = _ts(nullable=True)
    duration_s: float | None = Field(default=None, sa_column=sa.Column(sa.Float(), nullable=True))


class GroundTruthRow(SQLModel, table=True):
    """Append-only versions (triggers refuse UPDATE, DELETE, REPLACE and TRUNCATE); the newest version is the truth."""

    __tablename__ = "ground_truth"
    __table_args__ = (sa.UniqueConstraint("doc_id", "version", name="uq_ground_truth_doc_version"),)
    gt_id: str = Field(primary_key=True, max_length=64)
    doc_id: str = Field(index=True, max_length=255)
    version: int
    supersedes: str | None = Field(default=None, max_length=64)
    source: str = Field(max_length=32)
    answer_kind: str = Field(
        default=DEFAULT_KIND,
        sa_column=sa.Column(sa.String(64), nullable=False, server_default=DEFAULT_KIND),
    )  # the kind of answer (arbiter/kinds; migration 0013)
    created_at: datetime = _ts()
    payload: dict[str, Any] = _json()


class UserRow(SQLModel, table=True):
    __tablename__ = "users"
    name: str = Field(primary_key=True, max_length=128)
    role: str = Field(max_length=16)
    password_hash: str | None = Field(default=None, max_length=255)
    active: bool = True
    created_at: datetime = _ts()
    # Sign-in throttling (migration 0005): failures since the last success, the last one, the lockout.
    failed_sign_ins: int = Field(
        default=0, sa_column=sa.Column(sa.Integer(), nullable=False, server_default="0")
    )
    last_failed_at: datetime | None = _ts(nullable=True)
    locked_at: datetime | None = _ts(nullable=True)


class UserKindRow(SQLModel, table=True):
    """A kind of answer an account reviews (migration 0014): claims, the queue and its counts hand the account
    packets of its kinds only. An account with no row reviews every kind (every account before 0014)."""

    __tablename__ = "user_kinds"
    user_name: str = Field(primary_key=True, foreign_key="users.name", max_length=128)
    answer_kind: str = Field(primary_key=True, max_length=64)


class AuditRow(SQLModel, table=True):
    """Append-only (triggers refuse UPDATE, DELETE, REPLACE and TRUNCATE). Details never hold document text."""

    __tablename__ = "audit_log"
    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _ts(index=True)
    actor: str = Field(index=True, max_length=128)
    action: str = Field(index=True, max_length=64)
    target: str = Field(default="", index=True, max_length=255)
    details: dict[str, Any] = _json()


class SessionRow(SQLModel, table=True):
    """A browser's signed-in session (migration 0007): the token carries this id, signed with the server
    secret; revoked on sign-out, when the account is deactivated or its password is reset."""

    __tablename__ = "sessions"
    session_id: str = Field(primary_key=True, max_length=64)
    user_name: str = Field(index=True, max_length=128)
    created_at: datetime = _ts()
    expires_at: datetime = _ts()
    revoked_at: datetime | None = _ts(nullable=True)


class SecretRow(SQLModel, table=True):
    """Server secrets made on first use (the session tokens' HMAC key), shared by every app process."""

    __tablename__ = "app_secrets"
    name: str = Field(primary_key=True, max_length=64)
    value: str = Field(max_length=255)
    created_at: datetime = _ts()


class DraftRow(SQLModel, table=True):
    """A reviewer's unsaved answer to a claimed packet (migration 0007), restored after a reload; deleted
    on submit or skip. Read only by its reviewer."""

    __tablename__ = "drafts"
    packet_id: str = Field(primary_key=True, max_length=64)  # no foreign key: drafts never hold packets back
    reviewer: str = Field(primary_key=True, max_length=128)
    claimed_at: datetime | None = _ts(nullable=True)
    updated_at: datetime = _ts()
    payload: dict[str, Any] = _json()


class KnownAnswerRow(SQLModel, table=True):
    """A known-answer packet (migration 0012): an AUDIT packet an admin seeded from a document's adjudicated
    ground truth (`gt_id`) to measure reviewers. Only this table tells it from a real audit: its review writes
    no ground-truth version, and the audit figures and the calibration leave it out."""

    __tablename__ = "known_answers"
    packet_id: str = Field(primary_key=True, foreign_key="packets.packet_id", max_length=64)
    doc_id: str = Field(index=True, max_length=255)
    gt_id: str = Field(max_length=64)
    seeded_by: str = Field(max_length=128)
    created_at: datetime = _ts()


runs = RunRow.__table__  # type: ignore[attr-defined]
documents = DocumentRow.__table__  # type: ignore[attr-defined]
outcomes = OutcomeRow.__table__  # type: ignore[attr-defined]
packets = PacketRow.__table__  # type: ignore[attr-defined]
packet_codes = PacketCodeRow.__table__  # type: ignore[attr-defined]
packet_skips = PacketSkipRow.__table__  # type: ignore[attr-defined]
reviews = ReviewRow.__table__  # type: ignore[attr-defined]
ground_truth = GroundTruthRow.__table__  # type: ignore[attr-defined]
users = UserRow.__table__  # type: ignore[attr-defined]
user_kinds = UserKindRow.__table__  # type: ignore[attr-defined]
audit_log = AuditRow.__table__  # type: ignore[attr-defined]
sessions = SessionRow.__table__  # type: ignore[attr-defined]
app_secrets = SecretRow.__table__  # type: ignore[attr-defined]
drafts = DraftRow.__table__  # type: ignore[attr-defined]
known_answers = KnownAnswerRow.__table__  # type: ignore[attr-defined]

APPEND_ONLY_TABLES = ("ground_truth", "audit_log", "reviews")
