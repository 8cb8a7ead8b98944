"""A query's rows fetched by a thread while the caller works on the rows before: the database driver lets go
of the interpreter while it steps a row (SQLite computes each row's JSON extraction then), so reading and
parsing overlap on two cores."""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator
from contextlib import suppress
from typing import Any


def prefetched(result: Any, size: int = 1000) -> Generator[Any, None, None]:
    """The result's rows, fetched by a thread in batches while the caller works on the batch before (the
    database driver lets go of the interpreter while it steps a row); the caller does not touch the
    connection until the rows are read (the thread is stopped and joined when it leaves early)."""
    batches: queue.Queue[Any] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def pump() -> None:
        try:
            while not stop.is_set():
                rows = result.fetchmany(size)
                batches.put(rows)
                if not rows:
                    return
        except BaseException as exc:  # handed to the caller
            batches.put(exc)

    thread = threading.Thread(target=pump, name="whatif-read", daemon=True)
    thread.start()
    try:
        while True:
            batch = batches.get()
            if isinstance(batch, BaseException):
                raise batch
            if not batch:
                return
            yield from batch
    finally:
        stop.set()
        while thread.is_alive():
            with suppress(queue.Empty):
                batches.get(timeout=0.05)
        thread.join()
