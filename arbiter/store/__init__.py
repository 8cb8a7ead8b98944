"""Review store (docs/design.md §8.1): SQLModel tables on SQLite or PostgreSQL, atomic claims, append-only ground truth."""

from arbiter.store.audit import AuditEvent
from arbiter.store.db import DEFAULT_URL, make_engine, resolve_url
from arbiter.store.errors import (
    ClaimLost,
    DatabaseUnavailable,
    DuplicateUser,
    PermissionDenied,
    StoreError,
    TooManyClaims,
    UnknownPacket,
    UnknownUser,
)
from arbiter.store.queue import DEFAULT_LEASE, SUPERSEDED, PacketSummary
from arbiter.store.records import RecordResult
from arbiter.store.store import Store
from arbiter.store.users import ROLES, User

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_URL",
    "ROLES",
    "SUPERSEDED",
    "AuditEvent",
    "ClaimLost",
    "DatabaseUnavailable",
    "DuplicateUser",
    "PacketSummary",
    "PermissionDenied",
    "RecordResult",
    "Store",
    "StoreError",
    "TooManyClaims",
    "UnknownPacket",
    "UnknownUser",
    "User",
    "make_engine",
    "resolve_url",
]
