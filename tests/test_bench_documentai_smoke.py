"""Smoke test of the Document AI mapping benchmark at a tiny size: it runs and reports its JSON shape."""

from __future__ import annotations

from bench import documentai_mapping


def test_documentai_mapping_bench_shape() -> None:
    """It reports pages/s for the replayed Document AI path, the mapping alone and local ingestion, and their ratio."""
    result = documentai_mapping.run(rounds=1, repeats=1)
    assert set(result["pages_per_s"]) == {"documentai_replay", "map_only", "local_ingest"}
    assert all(rate > 0 for rate in result["pages_per_s"].values())
    assert result["pages_per_round"] == 36  # 2 + 2 + 2 + 30 pages
    assert result["ratio"] > 0
