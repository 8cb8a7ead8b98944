"""Smoke test of the metrics benchmark at a tiny size: both readings run on both databases, agree, and the
JSON has the documented shape. Timings are measured by bench/metrics_speed.py, never asserted here."""

from __future__ import annotations

from bench import metrics_speed


def test_metrics_bench_shape() -> None:
    """Both databases report arbiter and naive timings, the seeded counts and that the figures match."""
    result = metrics_speed.run(records=120, repeats=1)
    assert result["errors"] == []
    assert set(result["results"]) == {"sqlite", "postgresql"}
    for figures in result["results"].values():
        assert figures["ground_truth_docs"] == 120
        assert figures["figures_match"] is True
        assert len(figures["arbiter_runs_s"]) == len(figures["naive_runs_s"]) == 1
        assert {"arbiter_s", "naive_s", "speedup", "seed_s", "false_accept", "met", "packets"} <= set(figures)
    assert set(result["met"]) == {"sqlite", "postgresql"}
    assert isinstance(result["all_met"], bool)
