"""Rendered page images shared by every session of the review app: a bounded LRU of PNG bytes, and a
one-thread prefetcher that renders the page a reviewer is likely to open next into the same cache.

A page asked for while its prefetch is still running waits for that render instead of starting a second
one. No Streamlit here: the app keeps one PageCache per process (arbiter.review_app.state.page_cache).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor


class PageCache:
    def __init__(self, max_entries: int = 128) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._pending: dict[Hashable, Future[bytes]] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arbiter-prefetch")
        self.renders = 0  # how many times `make` ran (tests and the benchmark read it)

    def get(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        """The cached bytes for `key`, else those of a prefetch under way, else `make()` (then cached)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            pending = self._pending.get(key)
        if pending is not None:
            return pending.result()
        return self._store(key, make())

    def prefetch(self, key: Hashable, make: Callable[[], bytes]) -> Future[bytes] | None:
        """Render `key` in the background unless it is cached or already on its way; errors are dropped
        (the page is rendered again, and its error shown, when it is opened)."""
        with self._lock:
            if key in self._items or key in self._pending:
                return None
            future = self._pool.submit(self._background, key, make)
            self._pending[key] = future
            return future

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _background(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        try:
            return self._store(key, make())
        finally:
            with self._lock:
                self._pending.pop(key, None)

    def _store(self, key: Hashable, data: bytes) -> bytes:
        with self._lock:
            self.renders += 1
            self._items[key] = data
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return data
