"""Stress: 4 reviewer processes × 500 claims each (claim_next, then submit or release), all released at once
on SQLite and PostgreSQL, with zero double claims. ARBITER_STRESS_PROCESSES and ARBITER_STRESS_CLAIMS
override the process and per-process counts (e.g. 8 and 1000 for a longer soak)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import claim_violations, create_pg_database, drop_pg_database, row_counts, run_stress

from arbiter.store import Store

PROCESSES = int(os.environ.get("ARBITER_STRESS_PROCESSES", "4"))
CLAIMS = int(os.environ.get("ARBITER_STRESS_CLAIMS", "500"))
RELEASE_EVERY = 10


@pytest.fixture(params=["sqlite", "postgresql"])
def stress_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'stress.db'}" if request.param == "sqlite" else create_pg_database()
    store = Store(url)
    store.migrate()
    store.dispose()
    yield url
    if request.param == "postgresql":
        drop_pg_database(url)


def test_concurrent_processes_never_double_claim(
    stress_url: str, record_property: pytest.RecordProperty
) -> None:
    """Every claim is exclusive: no submit loses its claim, each packet is reviewed at most once, and the
    audit log never shows a packet claimed while someone else held it."""
    report = run_stress(stress_url, processes=PROCESSES, claims=CLAIMS, release_every=RELEASE_EVERY)
    workers = report["workers"]
    record_property("stress_seconds", round(report["seconds"], 1))
    store = Store(stress_url)
    try:
        claimed = sum(w["claimed"] for w in workers)
        released = sum(w["released"] for w in workers)
        counts = row_counts(store)
        assert sum(w["lost"] for w in workers) == 0
        assert claimed == PROCESSES * CLAIMS
        assert released == claimed // RELEASE_EVERY
        assert counts["reviews"] == counts["ground_truth"] == claimed - released
        with store.read() as conn:
            twice = conn.exec_driver_sql(
                "SELECT packet_id FROM reviews GROUP BY packet_id HAVING count(*) > 1"
            ).all()
        assert twice == []
        assert claim_violations(store) == []
        assert store.queue.count(status="COMPLETED") == claimed - released
    finally:
        store.dispose()
