"""Ray tasks sized by pages (arbiter/run/ray_batches.py) and the bundle cache's bound, without a cluster."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest

from arbiter.errors import ConfigError
from arbiter.ingest.cache import BundleCache
from arbiter.run import heap
from arbiter.run.batch import InputDoc
from arbiter.run.ray_batches import batches, page_count, run_batch, task_pages
from arbiter.store.errors import DatabaseUnavailable
from tests.conftest import FIXTURES


def docs(*pages: int) -> tuple[list[InputDoc], Any]:
    found = [InputDoc(doc_id=f"d{i}", path=Path(f"/in/d{i}.pdf")) for i in range(len(pages))]
    by_path = {d.path: n for d, n in zip(found, pages, strict=True)}
    return found, by_path.__getitem__


def ids(plan: Any) -> list[list[str]]:
    return [[d.doc_id for d in batch] for batch in plan]


def test_batches_fill_to_the_page_target_in_order() -> None:
    """Documents keep their order and fill a task up to the page target; a longer document goes alone."""
    found, count = docs(2, 3, 4, 40, 1, 1)
    plan = batches(found, pages=8, workers=1, count=count)
    assert ids(plan) == [["d0", "d1"], ["d2"], ["d3"], ["d4", "d5"]]


def test_batches_leave_every_worker_work_to_the_end() -> None:
    """Few documents are not packed into fewer tasks than the workers can share (PER_WORKER each)."""
    found, count = docs(*[1] * 16)
    assert [len(b) for b in batches(found, pages=100, workers=2, count=count)] == [2] * 8
    found, count = docs(*[1] * 3)
    assert [len(b) for b in batches(found, pages=100, workers=2, count=count)] == [1, 1, 1]


def test_page_count_reads_the_pdf_and_counts_a_damaged_one_as_one() -> None:
    """Pages come from the PDF; a file pdfium cannot open counts as one page (its task reports it)."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    import pypdfium2

    assert page_count(pdf) == len(pypdfium2.PdfDocument(str(pdf)))
    assert page_count(FIXTURES / "nowhere.pdf") == 1


def test_task_pages_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """ARBITER_RAY_TASK_PAGES sets the target; anything but a positive whole number is one clear error."""
    monkeypatch.setenv("ARBITER_RAY_TASK_PAGES", "5")
    assert task_pages() == 5
    monkeypatch.setenv("ARBITER_RAY_TASK_PAGES", "0")
    with pytest.raises(ConfigError, match="ARBITER_RAY_TASK_PAGES"):
        task_pages()


def test_run_batch_reports_a_failing_document_alone_and_stops_on_user_errors() -> None:
    """One document's exception is its own outcome; a user mistake or a database away stops the batch."""

    def task(spec: Any, pdf: str, doc_id: str, force: bool) -> tuple[Any, Any]:
        if doc_id == "bad":
            raise ValueError("boom")
        if doc_id == "db":
            raise DatabaseUnavailable("away")
        return doc_id, {}

    items = [("a.pdf", "a"), ("bad.pdf", "bad"), ("c.pdf", "c")]
    assert run_batch(task, None, items, False) == [("a", {}), (None, "ValueError"), ("c", {})]
    with pytest.raises(DatabaseUnavailable):
        run_batch(task, None, [("db.pdf", "db")], False)


def test_a_ray_task_sets_the_collector_for_its_batch_and_puts_it_back() -> None:
    """Inside a Ray task the collector runs as a batch sets it (heap.py); after it, and after a task that
    stopped on a database away, the worker's collector is as it was."""
    seen: list[tuple[int, int]] = []

    def task(spec: Any, pdf: str, doc_id: str, force: bool) -> tuple[Any, Any]:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        if doc_id == "db":
            raise DatabaseUnavailable("away")
        return doc_id, {}

    before = (gc.get_threshold(), gc.get_freeze_count())
    run_batch(task, None, [("a.pdf", "a")], False)
    with pytest.raises(DatabaseUnavailable):
        run_batch(task, None, [("db.pdf", "db")], False)
    assert all(threshold == heap.YOUNG and frozen > 0 for threshold, frozen in seen)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_the_bundle_cache_deletes_its_least_recently_used_entries_past_its_bound(tmp_path: Path) -> None:
    """Past its bound the cache deletes the entries used longest ago, down to nine tenths of the bound."""
    cache = BundleCache(tmp_path, max_bytes=10_000)
    for i in range(12):
        shard = tmp_path / f"{i:02x}"
        shard.mkdir()
        entry = shard / f"{i:02x}{'0' * 62}.v.open.json"
        entry.write_bytes(b"x" * 1000)
        os.utime(entry, (1_000_000 + i, 1_000_000 + i))
    assert cache.prune() == 3  # 12,000 bytes held: down to 9,000
    left = sorted(p.parent.name for p in tmp_path.glob("*/*.json"))
    assert left == [f"{i:02x}" for i in range(3, 12)]
    assert cache.prune() == 0


def test_bundle_cache_bound_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ARBITER_BUNDLE_CACHE_MB sets the bound in MiB; a bad value is one clear error."""
    monkeypatch.setenv("ARBITER_BUNDLE_CACHE_MB", "3")
    assert BundleCache(tmp_path).max_bytes == 3 * 2**20
    monkeypatch.setenv("ARBITER_BUNDLE_CACHE_MB", "lots")
    with pytest.raises(ConfigError, match="ARBITER_BUNDLE_CACHE_MB"):
        BundleCache(tmp_path)
