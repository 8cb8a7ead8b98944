"""The grounded-answer figures in words, for `arbiter metrics --kind grounded-answer` and the Metrics page (values as
text, every rate with its interval and counts: metrics/text.py's rate_text)."""

from __future__ import annotations

from arbiter.metrics.charts import pct
from arbiter.metrics.grounded import GroundedReport, GroundedScores
from arbiter.metrics.text import rate_text

SCOPES = {"all": "all items with ground truth", "sme": "expert-reviewed items"}


def score_rows(scores: GroundedScores) -> list[tuple[str, str, str]]:
    """(figure, value, what it counts) for one scope."""
    reasons = ", ".join(
        f"{s.label} {pct(s.rate.rate)} ({s.rate.k})"
        for s in scores.unsupported_reasons
        if s.rate.rate is not None
    )
    f1 = "unknown" if scores.citation_f1 is None else f"{scores.citation_f1:.3f}"
    unjudged = (
        f"; {scores.unjudged} expert version{'s' if scores.unjudged != 1 else ''} without statement verdicts left out"
        if scores.unjudged
        else ""
    )
    return [
        ("Groundedness", rate_text(scores.groundedness, "statements"), "statements supported as written" + unjudged),
        ("Statements kept", rate_text(scores.kept, "statements"), "supported or corrected by the expert"),
        ("Unsupported reasons", reasons or "none", "shares of the unsupported statements"),
        ("Citation precision", rate_text(scores.citation_precision, "cites"), "the primary's cites the truth keeps"),
        ("Citation recall", rate_text(scores.citation_recall, "cites"), f"the truth's cites the primary gave; F1 {f1}"),
        ("Abstention accuracy", rate_text(scores.abstention_accuracy, "items"), "abstained or answered as the truth does"),
        ("Abstained when it should", rate_text(scores.abstained_when_it_should, "items"), "of items the truth abstains on"),
        ("Answered when it could", rate_text(scores.answered_when_it_could, "items"), "of items the truth answers"),
        ("Answer accuracy", rate_text(scores.answer_accuracy, "answers"), "the primary's answer needed no correction"),
    ]  # fmt: skip


def summary_lines(report: GroundedReport) -> list[str]:
    """Plain lines: totals, then each scope's figures."""
    t = report.totals
    lines = [
        f"Grounded answers: {t.items:,} items with ground truth ({t.sme_items:,} expert-reviewed), "
        f"{t.reviews:,} reviews."
    ]
    for scores in report.scores:
        lines.append(f"{SCOPES[scores.scope].capitalize()} ({scores.items:,}):")
        lines.extend(f"  {name}: {value} — {detail}" for name, value, detail in score_rows(scores))
    return lines
