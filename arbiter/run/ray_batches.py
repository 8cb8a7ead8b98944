"""Documents grouped into Ray tasks by pages: one task per document pays Ray's scheduling cost per document,
which for short documents (1–4 pages) is more than deciding them.

The driver (arbiter/run/ray_engine.py) cuts the run's documents, in order, into batches of about
`ARBITER_RAY_TASK_PAGES` pages (default 32), never more documents in one batch than keeps every worker busy
to the end (`PER_WORKER` batches per worker at least, while documents last). A batch is one Ray task
(`run_batch`), which runs the per-document task on each of its documents in turn and returns their results
together; the driver collects each batch as it finishes (`ray.wait`). A document whose task raises is reported
as failed on its own; a batch whose worker or node dies on every try is run again one document per task, so
only a document that kills its worker is lost.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arbiter.errors import ConfigError, UserError
from arbiter.run import heap
from arbiter.run.batch import InputDoc
from arbiter.store.errors import DatabaseUnavailable

ENV_TASK_PAGES = "ARBITER_RAY_TASK_PAGES"
DEFAULT_TASK_PAGES = 32
PER_WORKER = 4  # batches per worker at least: the last ones finish together instead of one worker alone
Outcome = tuple[Any, Any]  # (DocResult, its LLM use) or (None, the name of the exception it raised)


def task_pages() -> int:
    """The pages a Ray task aims for, from ARBITER_RAY_TASK_PAGES (1: one document per task)."""
    raw = os.environ.get(ENV_TASK_PAGES, "").strip() or str(DEFAULT_TASK_PAGES)
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{ENV_TASK_PAGES} must be a whole number of pages of at least 1, not {raw!r}.")
    return int(raw)


def page_count(path: Path) -> int:
    """The PDF's pages as pdfium counts them; 1 for a file it cannot open (encrypted, damaged: the task says)."""
    try:
        import pypdfium2

        from arbiter.ingest import PDFIUM_LOCK

        with PDFIUM_LOCK:
            pdf = pypdfium2.PdfDocument(str(path))
            try:
                return max(1, len(pdf))
            finally:
                pdf.close()
    except Exception:
        return 1


def batches(
    docs: list[InputDoc], *, pages: int, workers: int, count: Callable[[Path], int] = page_count
) -> Iterator[list[InputDoc]]:
    """The documents in order, in batches of at most `pages` pages (a longer document alone) and at most as
    many documents as leave `PER_WORKER` batches per worker; pages are counted as batches are asked for."""
    most = max(1, math.ceil(len(docs) / (max(1, workers) * PER_WORKER)))
    batch: list[InputDoc] = []
    held = 0
    for doc in docs:
        n = count(doc.path)
        if batch and (held + n > pages or len(batch) >= most):
            yield batch
            batch, held = [], 0
        batch.append(doc)
        held += n
    if batch:
        yield batch


def run_batch(
    task: Callable[[Any, Any, str, bool], Outcome], spec: Any, items: list[tuple[Any, str]], force: bool
) -> list[Outcome]:
    """One Ray task: each (what the task reads: a PDF's path, an item's text; doc_id) through `task` in turn,
    with the garbage collector as a batch sets it (arbiter/run/heap.py: the Ray worker's own large heap kept
    out of the collector's passes, put back when the task ends). A user mistake or an unreachable database
    stops the batch (and the run); any other exception is that document's outcome alone."""
    outcomes: list[Outcome] = []
    with heap.batch_heap():
        for source, doc_id in items:
            try:
                outcomes.append(task(spec, source, doc_id, force))
            except (UserError, DatabaseUnavailable):
                raise
            except Exception as exc:
                outcomes.append((None, type(exc).__name__))
    return outcomes
