"""Rows and sentences for calibrated accepts and known-answer accuracy, shared by the CLI and the Metrics page
(values from inputs stay text)."""

from __future__ import annotations

from typing import Any

from arbiter.metrics.known import MIN_ANSWERS
from arbiter.metrics.result import Calibration, KnownAnswerAccuracy
from arbiter.metrics.text import rate_text


def reliability_rows(calibration: Calibration) -> list[dict[str, Any]]:
    """The reliability diagram as rows: each bin's estimated and observed share right on held-out audits."""
    return [
        {
            "Estimated P(right)": f"{b.low:.1f}–{b.high:.1f}",
            "Held-out audits": b.audits,
            "Mean estimate": "" if b.predicted is None else f"{b.predicted:.3f}",
            "Observed right": rate_text(b.observed),
            "Accepts": b.accepts,
        }
        for b in calibration.bins
        if b.audits or b.accepts
    ]


def known_answer_rows(found: list[KnownAnswerAccuracy]) -> list[dict[str, Any]]:
    """Each reviewer's accuracy on known-answer packets; below MIN_ANSWERS answers only the count."""
    return [
        {
            "Reviewer": k.reviewer,
            "Answered": k.answered,
            "Accuracy (Wilson 95 %)": rate_text(k.accuracy)
            if k.shown
            else f"shown after {MIN_ANSWERS} answers ({MIN_ANSWERS - k.answered} to go)",
        }
        for k in found
    ]
