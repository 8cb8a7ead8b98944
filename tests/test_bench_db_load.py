"""bench/db_load.py's parts: a cloned record is a new document that records beside its template, and the
sustained rate is the best step before the commit latency climbs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from store_fixtures import accepted, escalated

from arbiter.store import Store
from bench.db_load import clone, sustained


def test_clones_record_as_new_documents(tmp_path: Path) -> None:
    """Clones of an escalation and an accept record as documents of their own (new packet and ground-truth
    ids), beside the templates, each once."""
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    templates = [escalated("e", "r0"), accepted("a", "r0")]
    for record in templates:
        store.records.record(record)
    for i, record in enumerate(templates * 2):
        result = store.records.record(clone(record, f"load-{i}", "load-run"))
        assert result.recorded
    with store.read() as conn:
        docs = conn.exec_driver_sql("SELECT count(DISTINCT doc_id) FROM documents").scalar_one()
        packets = conn.exec_driver_sql("SELECT count(*) FROM packets").scalar_one()
        truths = conn.exec_driver_sql("SELECT count(*) FROM ground_truth").scalar_one()
    store.dispose()
    assert (docs, packets, truths) == (6, 3, 3)


def _step(writers: int, rate: float, p95: float, errors: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "writers": writers,
        "docs_per_s": rate,
        "p95_ms": p95,
        "errors": errors or {},
        "waits": {"X": 1.0},
    }


@pytest.mark.parametrize(
    ("steps", "rate", "writers"),
    [
        ([_step(2, 50, 40), _step(4, 90, 60), _step(8, 120, 200)], 90, 4),  # 200 > 3 x 40: climbed
        ([_step(2, 50, 40), _step(4, 90, 60), _step(8, 80, 100)], 90, 4),  # more writers, fewer documents
        ([_step(2, 50, 40), _step(4, 90, 60, {"OperationalError": 1})], 50, 2),  # errors never count
        ([_step(2, 50, 40)], 50, 2),
    ],
)
def test_sustained_is_the_best_step_before_latency_climbs(
    steps: list[dict[str, Any]], rate: float, writers: int
) -> None:
    """The sustained rate is the most documents/s of an error-free step whose p95 is within 3x the first's."""
    got = sustained(steps)
    assert (got["sustained_docs_per_s"], got["at_writers"]) == (rate, writers)
