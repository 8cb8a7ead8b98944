"""Smoke test of the policy what-if benchmark at a tiny size: the JSON has the documented shape and no model
was called. Timings are measured by bench/policy_whatif.py, never asserted here."""

from __future__ import annotations

from bench import policy_whatif


def test_policy_whatif_bench_shape() -> None:
    result = policy_whatif.run(docs=40, distinct=8, sample=4, log=lambda _msg: None)
    assert result["docs"] == 40
    for name in ("policy_candidate", "semantic_candidate"):
        figures = result[name]
        assert figures["llm_calls"] == 0
        assert sum(figures["paths"].values()) == 40
    assert result["content_candidate_sample"]["docs"] == 4
    assert result["slowest_s"] == max(
        result["policy_candidate"]["seconds"], result["semantic_candidate"]["seconds"]
    )
    assert isinstance(result["met"], bool)
