"""The garbage collector during a batch (arbiter/run/heap.py): set for the batch, put back after it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.run import heap


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
    gc.unfreeze()


def test_a_batch_sets_the_collector_and_puts_it_back() -> None:
    """Inside batch_heap what existed is frozen and young passes are rarer; after it, both are as they were."""
    gc.set_threshold(700, 10, 10)
    with heap.batch_heap():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (heap.YOUNG, 10, 10)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == (700, 10, 10)


def test_a_batch_that_fails_puts_the_collector_back() -> None:
    """An exception inside the batch still restores the thresholds and unfreezes."""
    gc.set_threshold(500, 7, 3)
    with pytest.raises(RuntimeError), heap.batch_heap():
        raise RuntimeError("a document failed")
    assert (gc.get_freeze_count(), gc.get_threshold()) == (0, (500, 7, 3))


@pytest.mark.parametrize(("first", "during"), [(0, 0), (700, heap.YOUNG), (50_000, 50_000)])
def test_young_passes_are_never_made_more_frequent_nor_turned_on(first: int, during: int) -> None:
    """A collector turned off (threshold 0) stays off; a larger young threshold than YOUNG is kept."""
    gc.set_threshold(first, 10, 10)
    with heap.batch_heap():
        assert gc.get_threshold()[0] == during
    assert gc.get_threshold()[0] == first


def test_a_run_leaves_the_collector_as_it_found_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arbiter run` (BatchRunner.run) decides its documents with the collector set and restores it after."""
    from typer.testing import CliRunner

    from arbiter.cli.main import app

    gc.set_threshold(700, 10, 10)
    seen: list[tuple[int, tuple[int, int, int]]] = []
    original = heap.settle

    def watched() -> None:
        original()
        seen.append((gc.get_freeze_count(), gc.get_threshold()))

    monkeypatch.setattr(heap, "settle", watched)
    pdf = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "pdfs").glob("*.pdf"))[0]
    result = CliRunner().invoke(
        app, ["run", str(pdf), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert seen, "the run never set the collector"
    assert seen[0][0] > 0
    assert seen[0][1][0] == heap.YOUNG
    assert (gc.get_freeze_count(), gc.get_threshold()) == (0, (700, 10, 10))
