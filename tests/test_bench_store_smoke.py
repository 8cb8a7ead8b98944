"""Smoke test of the review-store benchmark at a tiny size: it runs on both databases and reports the
documented JSON shape. Timings are measured by bench/claim_next.py, never asserted here."""

from __future__ import annotations

from bench import claim_next


def test_claim_next_bench_shape() -> None:
    """Both databases report claim-next percentiles (also after a run of skips), the query timings and met flags."""
    result = claim_next.run(packets=200, claims=5)
    assert set(result["results"]) == {"sqlite", "postgresql"}
    for figures in result["results"].values():
        assert figures["claim_next"]["n"] == 5
        assert {"first_page", "filter_code", "queue_counts", "get_packet"} <= set(figures["queries"])
        assert figures["claim_next_after_skips"]["n"] == 5
        assert set(figures["met"]) == {
            "claim_next_p95",
            "claim_next_after_skips_p95",
            "claim_next_restricted_p95",
            "queue_page",
        }
    assert isinstance(result["all_met"], bool)
