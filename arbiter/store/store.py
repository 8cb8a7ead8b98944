"""The review store: one object the batch run, the CLI and the review app share, composed of small
repositories over one database.

    store.records       a batch run's documents (record, completed_key, document, doc_ids, outcome)
    store.queue         packets waiting for review (counts, page, count, get, claim_next, claim, release …)
    store.operations    the operations lane of unreadable documents (page, count, find, dismiss, record_retry)
    store.reviews       SME reviews (submit, get)
    store.ground_truth  ground-truth versions (history, latest, page, every_version)
    store.users         accounts and sign-in (add, get, list_all, attempt_sign_in, unlock, require_admin …)
    store.sessions      signed session tokens that survive a reload (issue, check, revoke)
    store.drafts        reviewers' unsaved answers per claimed packet (save, get, discard)
    store.audit         the audit log (record, events)

Callers name the repository (`store.queue.claim_next(...)`); the Store itself keeps only the database's
lifecycle (migrate, read/write transactions, dispose, where)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Connection, Engine

from arbiter.contracts.limits import Limits
from arbiter.store.audit import AuditLog
from arbiter.store.blind import Blind
from arbiter.store.db import Database
from arbiter.store.drafts import Drafts
from arbiter.store.known import KnownAnswers
from arbiter.store.operations import Operations
from arbiter.store.packet_rows import DEFAULT_MAX_CLAIMS
from arbiter.store.queue import Queue
from arbiter.store.records import Records
from arbiter.store.reviews import Reviews
from arbiter.store.sessions import Sessions
from arbiter.store.users import Users
from arbiter.store.versions import GroundTruth


class Store:
    """Store(url=None): url, else env DATABASE_URL, else sqlite:///output/arbiter.db.

    Call migrate() once before use (idempotent). Thread-safe: every operation opens its own transaction, and
    every repository operation is retried on a fresh connection after a transient fault (Database.with_retries).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        engine: Engine | None = None,
        retry_s: float | None = None,
        max_claims: int = DEFAULT_MAX_CLAIMS,
        limits: Limits | None = None,
    ) -> None:
        self.db = Database(url, engine=engine, retry_s=retry_s)
        self.limits = limits or Limits()  # the profile's [limits]: review notes, answers, drafts
        self.audit = AuditLog(self.db)
        self.users = Users(self.db)
        self.queue = Queue(self.db, self.users, max_claims=max_claims)
        self.operations = Operations(self.db, self.users)
        self.records = Records(self.db)
        self.reviews = Reviews(self.db)
        self.ground_truth = GroundTruth(self.db)
        self.sessions = Sessions(self.db)
        self.drafts = Drafts(self.db)
        self.reviews.limits = self.drafts.limits = self.limits
        self.blind = Blind(self.db)
        self.known = KnownAnswers(self.db, self.users)

    # The database's lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.db.url

    @property
    def engine(self) -> Engine:
        return self.db.engine

    @property
    def dialect(self) -> str:
        return self.db.dialect

    @property
    def retry_s(self) -> float:
        return self.db.retry_s

    def where(self) -> str:
        """The database, for messages (password hidden)."""
        return self.db.where()

    def migrate(self, revision: str = "head") -> None:
        self.db.migrate(revision)

    def ensure_schema(self) -> None:
        """At head: nothing. Behind: migrate when this role may (SQLite, the owner), else DatabaseUnavailable
        in one line naming `arbiter db migrate` (the application role never migrates; arbiter.store.roles)."""
        from arbiter.store.roles import ensure_schema

        ensure_schema(self.db)

    def downgrade(self, revision: str) -> None:
        self.db.downgrade(revision)

    def current_revision(self) -> str | None:
        return self.db.with_retries(self.db.current_revision, what="current_revision")  # type: ignore[no-any-return]

    def dispose(self) -> None:
        self.db.dispose()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (committed when the block ends, rolled back if it raises)."""
        with self.db.write() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.db.read() as conn:
            yield conn
