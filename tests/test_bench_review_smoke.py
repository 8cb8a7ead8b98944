"""Smoke test of the review-app benchmark at a tiny size: it drives the real app and reports the documented
JSON shape. Timings are measured by bench/review_pages.py, never asserted here."""

from __future__ import annotations

import json
import os

import pytest

from arbiter.review.settings import ENV_DB
from bench import review_pages
from bench import run as bench_run

VIEWS = {"default", "deep_page", "filter_code", "filter_code_deep_page", "filter_reason_type"}
SERIES = {"first_ms", "p50_ms", "p95_ms", "max_ms", "n"}


def test_review_pages_shape() -> None:
    """The tiny run reports packet-page and queue-page figures, targets and met flags, and restores the env."""
    before = os.environ.get(ENV_DB)
    result = review_pages.run(**review_pages.PRESETS["tiny"])
    assert os.environ.get(ENV_DB) == before
    assert set(result["targets"]) == {"packet_page_ms", "queue_page_ms"}
    packet = result["packet_page"]
    assert len(packet["first_render_ms"]) == 3
    assert packet["packet"] in packet["first_render_ms"]
    assert set(packet["rerun"]) == SERIES == set(packet["correct_form"])
    assert set(packet["met"]) == {"first_render", "rerun_p95", "correct_form_p95"}
    queue = result["queue_page"]["sqlite"]
    assert set(queue["views"]) == VIEWS
    assert queue["views"]["default"]["matched"] == queue["packets"]
    assert queue["views"]["filter_reason_type"]["matched"] < queue["packets"]
    assert {"queue_counts", "list_last_page"} <= set(queue["queries_p50_ms"])
    assert result["errors"] == {}
    assert set(result["met"]) == {f"packet_page_{k}" for k in packet["met"]} | {"queue_page_sqlite"}
    assert isinstance(result["all_met"], bool)
    assert result["worst_page_ms"] > 0


def test_run_takes_only_review(capsys: pytest.CaptureFixture[str]) -> None:
    """bench/run.py --only review reports the review benchmark under its name with one met flag."""
    assert bench_run.main(["--tiny", "--only", "review"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["met"]) == {"review_pages"}
    assert printed["targets"]["review_pages"]["figure"] == "review_pages.worst_page_ms"
    assert "packet_page" in printed["results"]["review_pages"]
