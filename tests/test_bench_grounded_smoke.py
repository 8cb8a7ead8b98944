"""Smoke test of bench/grounded.py: its sample-model column is really run (every entailment request of every
benchmark item has a committed sample answer) and set beside the offline one fault kind by fault kind.

How many faults Arbiter escalates is measured by the benchmark and reported in docs/concepts/grounded.md; here
only that the sample model, which can only add findings, never escalates less than the rules alone.
"""

from __future__ import annotations

from arbiter.demo.grounded.fault import WRONG
from bench import grounded


def test_the_sample_model_column_runs_with_no_miss_and_only_adds() -> None:
    report = grounded.main()
    sample = report["sample_replay_model"]
    assert sample["llm"]["backend"] == "replay"
    assert sample["llm"]["errors"] == {}
    assert sample["llm"]["calls"] > 0
    for split in ("fresh_held_out", "held_out", "development", "all"):
        assert sample[split]["faults_escalated"] >= report[split]["faults_escalated"]
        assert sample[split]["faults_planted"] == report[split]["faults_planted"]
    for fault, row in report["side_by_side"]["by_kind"].items():
        assert row["sample_model"] >= row["offline"], fault
    assert set(sample["items_with_not_entailed_finding"]) <= set(WRONG)
