"""The metrics report as ONE self-contained HTML file: inline CSS and inline SVG, no scripts, no links to
anything outside the file. The first screen answers "how often does the arbiter accept a wrong answer?"."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from arbiter import atomic
from arbiter.metrics import charts
from arbiter.metrics.charts import Bar
from arbiter.metrics.result import Calibration, MetricsReport
from arbiter.metrics.text import (
    MODEL_LABELS,
    SCOPE_LABELS,
    false_accept_sentence,
    false_accept_split,
    false_accept_split_sentence,
    guarantee_rows,
    guarantee_sentence,
    headline_detail,
    headline_figures,
    headline_value,
    model_rows,
    plural,
    rate_text,
    reviewer_rows,
    run_rows,
    same_reviewer_note,
)
from arbiter.metrics.trust_text import reliability_rows
from arbiter.outputs import Location
from arbiter.record.drift import NO_ALARM, alarm_line

DEFINITIONS = [
    ("False-accept rate", "Blind audits (a sample of automatically accepted documents, reviewed without the machine's "
     "verdict) whose SME did not agree with the accepted classification, over all reviewed audits. The stricter "
     "“dominant type wrong” counts only audits where the SME's dominant type differs from the accepted one."),
    ("Semantic checks", "How an accept was earned: on the rule checks only (no language model took part, or one of "
     "its phases did not run), or on the rules and a model (every LLM phase of the final attempt ran). The "
     "false-accept rate is shown for each, with its own count and interval."),
    ("Intervals", "Every rate is shown with its count and a Wilson score 95 % interval. A rate over nothing is "
     "“no data”, never 0 %."),
    ("Too few audits", "Below the profile's minimum of reviewed blind audits ([metrics] min_audits_for_rate) the "
     "false-accept rate is not shown as a figure: the headline gives the upper end of its Wilson 95 % interval and "
     "how many more audits with no false accept would bring that bound under the profile's target "
     "(target_false_accept_rate)."),
    ("Ground truth", "Each document's newest ground-truth version as of the report's time. “SME-reviewed” uses only "
     "versions an SME validated or corrected (the honest measure); “all” adds automatically accepted documents, "
     "whose truth is the arbiter's own answer, so it flatters the models (circular)."),
    ("Boundaries", "A document's boundaries are the start pages greater than 1 of its segments. TP: in both; FP: "
     "predicted only; FN: in the truth only. Precision, recall and F1 are micro-averaged over documents; one-segment "
     "documents with one-segment truth add nothing to them but count as exact matches."),
    ("Mixture MAE", "Per document, the mean over the union of both mixtures' types of |truth share − predicted share| "
     "(a missing type has share 0); then the mean over documents, with a normal-approximation 95 % interval."),
    ("Decision mix", "Each document's newest run: accepted first time, accepted after auto-fixes, escalated, or "
     "could not be verified (the PDF could not be read). Escalation reasons are shares of the escalated documents."),
    ("Auto-fix success", "Documents whose first verification asked for an auto-fix (or that had a second attempt) "
     "and ended accepted."),
    ("Issue precision", "Reviewed escalation packets (first review): a code on a packet is a true positive when the "
     "SME corrected the classification and a false positive when the SME validated it unchanged. Per verifier, "
     "each packet counts once for each verifier that raised something on it."),
    ("Agreement", "Escalations with a blind second review by another reviewer: Cohen's κ on the two dominant types "
     "(with Cohen's large-sample interval) and the raw agreement."),
    ("Reviewer time", "Time per packet, measured on the server from the start of the claim that was submitted to "
     "the submit (the review's started_at → submitted_at); lease renewals and reloads do not restart it, a "
     "release or a reassign does. Active hours are the distinct clock hours (UTC) with at least one submission."),
]  # fmt: skip

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2933;margin:0;background:#f5f7fa}
main{max-width:1100px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:36px 0 10px;border-bottom:1px solid #d9e2ec;padding-bottom:4px}
.meta{color:#616e7c;font-size:13px;margin-bottom:18px}
.headline{border:2px solid #102a43;border-radius:8px;padding:18px 22px;background:#f0f4f8}
.headline .label{font-size:14px;text-transform:uppercase;letter-spacing:.04em;color:#486581}
.headline .value{font-size:46px;font-weight:700;margin:4px 0}
.headline .ci{font-size:18px;color:#334e68}.headline p{font-size:15px;margin:10px 0 0}
.headline.unknown .value{font-size:26px}
.cards{display:grid;grid-template-columns:repeat(3,1fr);gap:10px;margin-top:14px}
.card{border:1px solid #d9e2ec;border-radius:6px;padding:10px 12px}
.card .name{font-size:12px;color:#616e7c}.card .v{font-size:22px;font-weight:600}.card .d{font-size:12px;color:#616e7c}
table{border-collapse:collapse;font-size:13px;margin:8px 0 4px;width:100%}
th,td{border-bottom:1px solid #e4e7eb;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f0f4f8;font-weight:600}.note{color:#616e7c;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:24px}svg{max-width:100%;height:auto}
dl dt{font-weight:600;margin-top:8px}dl dd{margin:2px 0 0 0;color:#334e68;font-size:14px}
"""


def _table(rows: Sequence[dict[str, Any]], empty: str = "Nothing yet.") -> str:
    if not rows:
        return f"<p class='note'>{escape(empty)}</p>"
    head = "".join(f"<th>{escape(str(k))}</th>" for k in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row.values()) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def headline_html(report: MetricsReport) -> str:
    """The first screen: the false-accept rate with its interval and n (or a plain "unknown"), then cards."""
    audit = report.audit
    if audit.false_accept.rate is None or audit.too_few:
        detail = headline_detail(audit)
        box = (
            "<section class='headline unknown'><div class='label'>Arbiter false-accept rate</div>"
            f"<div class='value'>{escape(headline_value(audit))}</div>"
            + (f"<div class='ci'>{escape(detail)}</div>" if detail else "")
            + f"<p>{escape(false_accept_sentence(audit))}</p></section>"
        )
    else:
        box = (
            "<section class='headline'><div class='label'>Arbiter false-accept rate</div>"
            f"<div class='value'>{escape(headline_value(audit))}</div><div class='ci'>"
            f"{escape(headline_detail(audit))}</div><p>{escape(false_accept_sentence(audit))}</p>"
            f"<p>{escape(false_accept_split_sentence(audit))}</p></section>"
        )
    cards = "".join(
        f"<div class='card'><div class='name'>{escape(n)}</div><div class='v'>{escape(v)}</div>"
        f"<div class='d'>{escape(d)}</div></div>"
        for n, v, d in headline_figures(report)
    )
    return box + f"<div class='cards'>{cards}</div>"


def decision_charts(report: MetricsReport) -> list[str]:
    mix = report.decisions
    return [
        charts.rate_bars(
            [Bar(s.label, s.rate) for s in mix.decisions], f"Decisions ({mix.docs} documents, newest run)"
        ),
        charts.rate_bars(
            [Bar(s.label, s.rate) for s in mix.escalation_reasons], "Escalation reasons (share of escalated)"
        ),
    ]


def confusion_charts(report: MetricsReport) -> list[str]:
    out = []
    for model, scope in (("primary", "sme"), ("production", "sme"), ("primary", "all")):
        m = report.model_scores(model, scope)
        out.append(charts.heatmap(m.confusion, f"{MODEL_LABELS[model]} vs truth — {SCOPE_LABELS[scope]}"))
    return out


def rate_chart(report: MetricsReport) -> str:
    """The main rates side by side, each with its interval."""
    primary, production = report.model_scores("primary", "sme"), report.model_scores("production", "sme")
    bars = [
        Bar("False accept (blind audits)", report.audit.false_accept),
        *(Bar(f"False accept — {label}", r) for label, r in false_accept_split(report.audit)),
        Bar("Dominant type wrong (audits)", report.audit.dominant_wrong),
        Bar("Escalations corrected by SME", report.precision.escalations),
        Bar("Auto-fix success", report.retry.success),
        Bar("Primary accuracy (SME)", primary.accuracy),
        Bar("Production accuracy (SME)", production.accuracy),
        Bar("Reviewer agreement (raw)", report.agreement.kappa.agreement),
    ]
    if primary.boundaries is not None:
        bars += [
            Bar("Boundary precision (SME)", primary.boundaries.precision),
            Bar("Boundary recall (SME)", primary.boundaries.recall),
        ]
    return charts.rate_bars(bars, "Rates with their 95 % intervals")


def reliability_chart(calibration: Calibration) -> str:
    """The calibration's reliability diagram on its held-out audits."""
    ece = "" if calibration.ece is None else f" (ECE {calibration.ece:.3f})"
    return charts.reliability(
        calibration.bins, f"Reliability on {calibration.holdout_audits} held-out audits{ece}"
    )


def precision_charts(report: MetricsReport) -> list[str]:
    p = report.precision
    return [
        charts.rate_bars(
            [Bar(v.verifier, v.precision) for v in p.by_verifier], "Issue precision by verifier"
        ),
        charts.rate_bars(
            [Bar(c.code, c.precision) for c in p.by_code[:25]], "Issue precision by code (25 most frequent)"
        ),
    ]


def trend_chart(report: MetricsReport) -> str:
    runs = [t.run_id for t in report.runs]
    series = [
        ("accepted", [t.accepted for t in report.runs]),
        ("escalated", [t.escalated for t in report.runs]),
        ("false accept", [t.false_accept for t in report.runs]),
        ("primary accuracy (SME)", [t.primary_accuracy_sme for t in report.runs]),
    ]
    return charts.trend_lines(runs, series, "Trends by run")


def trust_html(report: MetricsReport) -> list[str]:
    """The guarantee (overall sentence, then per kind and type) and the calibrated accepts with their
    reliability diagram: what the Metrics page shows beside the drift alarms."""
    parts = ["<h2>Guarantee</h2>"]
    parts += [f"<p><strong>{escape(guarantee_sentence(g))}</strong></p>" for g in report.guarantees[:1]]
    parts.append(_table(guarantee_rows(report), "No accepts yet."))
    parts.append(
        "<p class='note'>Audits are drawn with a recorded probability, higher where the risk is; each counts "
        "1 / that probability (Horvitz–Thompson), so the estimate is unbiased, and the bound is a one-sided "
        "gamma bound.</p>"
    )
    calibrated = report.calibration
    parts.append("<h2>Calibrated accepts</h2>")
    if calibrated is None:
        parts.append("<p class='note'>No calibration asked for.</p>")
    elif calibrated.status != "fitted":
        parts.append(f"<p class='note'>{escape(calibrated.message)}</p>")
    else:
        parts += [
            f"<p>{escape(calibrated.message)}</p>",
            reliability_chart(calibrated),
            _table(reliability_rows(calibrated)),
        ]
    return parts


def render_html(report: MetricsReport) -> str:
    when = report.as_of.strftime("%Y-%m-%d %H:%M UTC") if report.as_of else "now (everything in the database)"
    t = report.totals
    kinds = ", ".join(plural(n, k.lower().replace("_", " ")) for k, n in t.reviews_by_kind.items()) or "none"
    kappa = report.agreement.kappa
    disagreements = [d.model_dump() for d in report.agreement.disagreements[:200]]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Arbiter metrics — {escape(when)}</title><style>{_CSS}</style></head><body><main>",
        "<h1>Arbiter metrics</h1>",
        f"<div class='meta'>As of {escape(when)} · generated {report.generated_at:%Y-%m-%d %H:%M UTC} · "
        f"{escape(report.database)} · {plural(t.documents, 'document')} in {plural(t.runs, 'run')} · "
        f"{t.ground_truth_docs:,} with ground truth ({t.sme_ground_truth_docs:,} SME-reviewed) · "
        f"{plural(t.reviews, 'review')} ({escape(kinds)})</div>",
        headline_html(report),
        *trust_html(report),
        "<h2>Drift alarms</h2>",
        *(f"<p><strong>{escape(alarm_line(a.model_dump()))}</strong></p>" for a in report.drift),
        "" if report.drift else f"<p class='note'>{escape(NO_ALARM)}</p>",
        "<h2>Rates with intervals</h2>",
        rate_chart(report),
        "<h2>Decision mix and escalation reasons</h2><div class='charts'>",
        *decision_charts(report),
        "</div>",
        f"<p class='note'>Auto-fix success: {escape(rate_text(report.retry.success))}.</p>",
        _table(
            [
                {"Why auto-fix stopped short": s.label, "Share": rate_text(s.rate)}
                for s in report.retry.stop_reasons
            ]
        ),
        "<h2>Models against ground truth</h2>",
        _table(model_rows(report.models)),
        "<div class='charts'>",
        *confusion_charts(report),
        "</div>",
        "<h2>Issue precision against SME outcomes</h2><div class='charts'>",
        *precision_charts(report),
        "</div>",
        _table(
            [
                {"Code": c.code, "Verifier": c.verifier, "Precision": rate_text(c.precision)}
                for c in report.precision.by_code
            ],
            "No reviewed escalations yet.",
        ),
        "<h2>Reviewer agreement</h2>",
        f"<p>Cohen's κ = {'—' if kappa.kappa is None else f'{kappa.kappa:.3f}'}"
        + (
            f" (95 % CI {kappa.low:.3f}–{kappa.high:.3f})"
            if kappa.low is not None and kappa.high is not None
            else ""
        )
        + f" over {kappa.n} double-reviewed escalations; raw agreement {escape(rate_text(kappa.agreement))}."
        + (
            f" {report.agreement.skipped} pairs left out (a review without a label)."
            if report.agreement.skipped
            else ""
        )
        + (f" {escape(same_reviewer_note(report.agreement))}" if report.agreement.same_reviewer else "")
        + "</p>",
        charts.heatmap(
            kappa.confusion, "First review vs blind second review", truth="first", predicted="second"
        ),
        "<p class='note'>Documents the two reviewers disagree on (for adjudication):</p>",
        _table(disagreements, "No disagreements."),
        "<h2>Reviewers</h2>",
        _table(reviewer_rows(report), "No reviews yet."),
        "<h2>Trends by run</h2>",
        trend_chart(report),
        _table(run_rows(report), "No runs yet."),
        "<h2>Definitions</h2><dl>",
        *(f"<dt>{escape(term)}</dt><dd>{escape(text)}</dd>" for term, text in DEFINITIONS),
        f"</dl><p class='note'>Computed in {report.seconds:.2f} s.</p></main></body></html>",
    ]
    return "\n".join(parts)


def write_html(report: MetricsReport, path: Location) -> None:
    """Write the report atomically (a temporary file renamed into place)."""
    atomic.write_text(path, render_html(report))
