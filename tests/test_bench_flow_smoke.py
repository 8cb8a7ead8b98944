"""Smoke test of bench/review_flow.py at a tiny size in Chromium: it runs and reports the documented JSON
shape (figures at this size say nothing about performance)."""

from __future__ import annotations

from bench import review_flow


def test_review_flow_reports_actions_and_seconds_per_task() -> None:
    """One agree, two flips and a type correction: each task has its actions and times; agree is one
    keystroke, a type correction at most four actions (the other corrections: test_browser_corrections.py)."""
    result = review_flow.run(**review_flow.PRESETS["tiny"])
    arbiter = result["arbiter"]
    assert arbiter["agree_and_move_on"]["actions"] == 1
    assert arbiter["agree_and_move_on"]["n"] == 1
    assert arbiter["page_flip"]["n"] == 2
    assert arbiter["page_flip"]["p95_ms"] > 0
    assert arbiter["text_size"]["body_font_px"] >= 12.0
    assert arbiter["type_correction"]["seconds"] > 0
    assert "evidence_edit" not in arbiter  # the tiny size runs the type correction only
    assert arbiter["type_correction"]["actions"] <= 4
    assert result["met"]["type_correction_actions"]
    assert set(result["met"]) == {
        "agree_and_move_on_s",
        "agree_and_move_on_actions",
        "page_flip_p95_ms",
        "type_correction_actions",
    }
    assert result["baseline"] is None
