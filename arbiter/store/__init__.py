"""Review store (docs/design.md §8.1): SQLModel tables on SQLite or PostgreSQL, atomic claims, append-only ground truth;
one Store composed of small repositories (see store.py)."""

from arbiter.store.audit import AuditEvent, AuditLog
from arbiter.store.db import DEFAULT_URL, make_engine, resolve_url
from arbiter.store.drafts import Drafts
from arbiter.store.errors import (
    ClaimLost,
    DatabaseUnavailable,
    DuplicateUser,
    KindNotAllowed,
    NotIndependent,
    PermissionDenied,
    StoreError,
    TooLarge,
    TooManyClaims,
    UnknownPacket,
    UnknownUser,
)
from arbiter.store.operations import RESOLUTIONS, NotInOperations, Operations
from arbiter.store.packet_rows import DEFAULT_LEASE, DEFAULT_MAX_CLAIMS, SUPERSEDED, PacketSummary
from arbiter.store.queue import Queue
from arbiter.store.records import REDO_ERRORS, RecordResult, Records
from arbiter.store.reviews import Reviews
from arbiter.store.sessions import Sessions
from arbiter.store.store import Store
from arbiter.store.users import ROLES, User, Users
from arbiter.store.versions import GroundTruth, next_version

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_MAX_CLAIMS",
    "DEFAULT_URL",
    "REDO_ERRORS",
    "RESOLUTIONS",
    "ROLES",
    "SUPERSEDED",
    "AuditEvent",
    "AuditLog",
    "ClaimLost",
    "DatabaseUnavailable",
    "Drafts",
    "DuplicateUser",
    "GroundTruth",
    "KindNotAllowed",
    "NotInOperations",
    "NotIndependent",
    "Operations",
    "PacketSummary",
    "PermissionDenied",
    "Queue",
    "RecordResult",
    "Records",
    "Reviews",
    "Sessions",
    "Store",
    "StoreError",
    "TooLarge",
    "TooManyClaims",
    "UnknownPacket",
    "UnknownUser",
    "User",
    "Users",
    "make_engine",
    "next_version",
    "resolve_url",
]
