"""The base of the store's repositories: each holds the one Database the Store shares and runs every public
operation through Database.with_retries (a transient fault is tried again on a fresh connection, then
DatabaseUnavailable)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy.engine import Connection

from arbiter.store.db import Database, retried


class Repository:
    """One responsibility of the store (queue, records, reviews, ground truth, users, audit) over a shared
    Database. Subclasses get their public methods retried; calls made inside a retried call are not retried
    on their own."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, attr in list(vars(cls).items()):
            if not name.startswith("_") and inspect.isfunction(attr):
                setattr(cls, name, retried(attr))

    @property
    def dialect(self) -> str:
        return self.db.dialect

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.db.write() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.db.read() as conn:
            yield conn
