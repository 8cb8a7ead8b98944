"""The export's one streamed query, read one batch ahead on a second thread (`prefetched`), so the database's
work overlaps the parsing and writing of the batch before.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import DEFAULT_KIND
from arbiter.store import Store
from arbiter.store.exports import iter_in_force

_DONE = object()


@contextmanager
def prefetched(
    store: Store, as_of: datetime | None, batch: int, kind: str = DEFAULT_KIND
) -> Iterator[Iterator[Any]]:
    """iter_in_force read on a second thread, one batch ahead, so the database's work (and the driver's)
    overlaps the parsing and writing of the previous batch. Errors on that thread are raised here."""
    if store.dialect == "sqlite" and sa.make_url(store.url).database in (None, "", ":memory:"):
        # An in-memory database is one connection per thread: read it on this one.
        with store.read() as conn:
            yield iter_in_force(conn, as_of, batch=batch, kind=kind)
        return
    handoff: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            with store.read() as conn:
                for item in iter_in_force(conn, as_of, batch=batch, kind=kind):
                    if not put(item):
                        return
        except BaseException as exc:  # handed to the consumer, which raises it
            put(exc)
            return
        put(_DONE)

    def consume() -> Iterator[Any]:
        while (item := handoff.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item

    worker = threading.Thread(target=read, name="arbiter-export-read", daemon=True)
    worker.start()
    try:
        yield consume()
    finally:
        stop.set()
        worker.join()
