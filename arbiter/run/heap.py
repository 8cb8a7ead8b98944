"""The garbage collector as a batch process sets it (docs/design.md §10.1).

A document's bundle is thousands of small objects (a 30-page one about 7,000: its pages' line boxes and
paragraphs) that live until the document is decided, while the process holds a large heap that lives as
long as it does (the modules, the profile, the readers' tables, the database engine). With CPython's
defaults the collector's young passes run every 700 new objects, move each bundle into the old generation
while it is still in use, and so start a full pass over the whole heap every few documents: a tenth of a
30-page document's CPU (bench/doc_cpu.py, docs/benchmarks.md). Two settings remove most of it:

- what the process holds when its batch starts is set apart from the collector (`gc.freeze`), so a full
  pass walks only what the batch made (the Python documentation's advice for forked workers, which this
  also follows: a worker's pass no longer writes to the pages it shares with its fork server);
- the young generation holds YOUNG new objects before a pass, so a document's bundle is mostly decided
  and freed before it is ever moved (cyclic garbage waits a little longer: a few MB at most).

An ingestion worker (arbiter/ingest/isolated.py) is all batch: `settle()` once, for its life. A run in a
process that outlives it (`arbiter run`, a host application, a test) uses `batch_heap()`, which puts both
back when the batch ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 10_000  # new objects between young passes (CPython's default is 700)


def settle() -> None:
    """For a process that is all batch: what it holds now is kept out of every later pass."""
    gc.freeze()
    _young()


@contextmanager
def batch_heap() -> Iterator[None]:
    """settle() for the length of a batch, then the collector as it was (the frozen objects back in its care)."""
    before = gc.get_threshold()
    settle()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _young() -> None:
    first, *older = gc.get_threshold()
    if 0 < first < YOUNG:  # 0: the collector is off, left so
        gc.set_threshold(YOUNG, *older)
