"""The report's figures in words and table rows, shared by the HTML report, the CLI summary and the review
app's Metrics page, so all three say the same thing the same way."""

from __future__ import annotations

from typing import Any

from arbiter.metrics.charts import pct
from arbiter.metrics.result import (
    Agreement,
    Audit,
    Guarantee,
    Kappa,
    MeanEstimate,
    MetricsReport,
    ModelScores,
    Rate,
)

UNKNOWN_FALSE_ACCEPT = "No blind audits reviewed yet — rate unknown."
TOO_FEW_AUDITS = "Too few audits"
SCOPE_LABELS = {
    "sme": "SME-reviewed documents",
    "all": "all ground truth (includes auto-accepted: circular)",
}
MODEL_LABELS = {"primary": "Primary model", "production": "Production classifier"}
SEMANTIC_LABELS = {"rules_only": "rules only", "rules_and_model": "rules and a model"}
# Below this many reviews (or pairs) a headline figure is not stated: "100.0 %" from 1 of 1, or κ 0.00 from one
# pair, says more than it knows. Every figure carries its n.
MIN_N = 5


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 run', '2 runs'."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def same_reviewer_note(agreement: Agreement) -> str:
    """Why pairs by one reviewer are not in the agreement figures ('' when there are none)."""
    n = agreement.same_reviewer
    if not n:
        return ""
    return (
        f"{plural(n, 'pair')} left out: one reviewer wrote both answers (stored before Arbiter refused it); "
        "agreement counts only pairs by two distinct reviewers."
    )


def kappa_text(kappa: Kappa) -> str:
    """κ with its interval, or why it is undefined."""
    if kappa.n == 0:
        return "κ: no double-reviewed escalations yet"
    if kappa.n < MIN_N:
        return f"κ: not enough double reviews (n = {kappa.n}; {MIN_N} needed)"
    if kappa.kappa is None:
        return "κ undefined: every pair has one and the same label (chance agreement is 1)"
    band = (
        f" (95 % CI {kappa.low:.2f}–{kappa.high:.2f})"
        if kappa.low is not None and kappa.high is not None
        else ""
    )
    return f"κ = {kappa.kappa:.3f}{band} (n = {kappa.n})"


def interval(rate: Rate) -> str:
    """'95 % CI 1.1–8.9 %', or '' when the rate is undefined."""
    if rate.low is None or rate.high is None:
        return ""
    return f"95 % CI {100 * rate.low:.1f}–{100 * rate.high:.1f} %"


def rate_text(rate: Rate, of: str = "") -> str:
    """'3.2 % (95 % CI 1.1–8.9 %; 4 of 125)' or 'no data (0 of 0)'."""
    counts = f"{rate.k:,} of {rate.n:,}" + (f" {of}" if of else "")
    if rate.rate is None:
        return f"no data ({counts})"
    return f"{pct(rate.rate)} ({interval(rate)}; {counts})"


def mean_text(estimate: MeanEstimate | None) -> str:
    if estimate is None or estimate.mean is None:
        return "—"
    band = f"; 95 % CI {estimate.low:.3f}–{estimate.high:.3f}" if estimate.low is not None else ""
    return f"{estimate.mean:.3f} (n = {estimate.n}{band})"


def false_accept_sentence(audit: Audit) -> str:
    """The headline in plain words; never a 0 % when nothing was audited."""
    fa = audit.false_accept
    waiting = (
        f" {audit.open:,} audit packet{'s are' if audit.open != 1 else ' is'} waiting in the queue."
        if audit.open
        else ""
    )
    if fa.rate is None:
        return f"{UNKNOWN_FALSE_ACCEPT} {clean_audits_sentence(audit)}{waiting}"
    if audit.too_few:
        return (
            f"Too few blind audits to estimate the false-accept rate: {plural(fa.n, 'audit')} reviewed "
            f"({fa.k:,} corrected), fewer than the {audit.min_audits:,} the profile asks for. The rate could be "
            f"as high as {pct(fa.high)} (the upper end of its Wilson 95 % interval). "
            f"{clean_audits_sentence(audit)}{waiting}"
        )
    return (
        f"Of {plural(fa.n, 'automatically accepted document')} audited blind, the SME corrected "
        f"{fa.k:,}: an estimated {pct(fa.rate)} of accepted documents are wrong ({interval(fa)})." + waiting
    )


def clean_audits_sentence(audit: Audit) -> str:
    """How many more audits with no false accept would bring the Wilson upper bound under the target."""
    target = pct(audit.target)
    if audit.clean_audits_needed == 0:
        return f"The upper bound is already under the {target} target."
    return (
        f"{plural(audit.clean_audits_needed, 'more audit')} with no false accept would bring the upper bound "
        f"under the {target} target."
    )


def headline_value(audit: Audit) -> str:
    """The headline figure: the rate only when enough audits back it."""
    fa = audit.false_accept
    if fa.rate is None:
        return "Unknown"
    return TOO_FEW_AUDITS if audit.too_few else pct(fa.rate)


def headline_detail(audit: Audit) -> str:
    """The line under the headline figure: its interval (or only its upper bound) and n."""
    fa = audit.false_accept
    if fa.rate is None:
        return ""
    counts = f"n = {plural(fa.n, 'blind audit')}, {fa.k:,} corrected"
    if audit.too_few:
        return f"upper bound {pct(fa.high)} (Wilson 95 %) · {counts} · {audit.min_audits:,} needed"
    return f"{interval(fa)} · {counts}"


def false_accept_split(audit: Audit) -> list[tuple[str, Rate]]:
    """(how the accept was earned, false-accept rate) for rules only and for rules and a model."""
    split = audit.false_accept_by_semantic_checks
    return [(label, split[key]) for key, label in SEMANTIC_LABELS.items() if key in split]


def false_accept_split_sentence(audit: Audit) -> str:
    """'False accepts by how the accept was earned: rules only 3.2 % (95 % CI …; 4 of 125); rules and a
    model …' ('' when the report has no split)."""
    parts = [f"{label} {rate_text(r)}" for label, r in false_accept_split(audit)]
    return f"False accepts by how the accept was earned: {'; '.join(parts)}." if parts else ""


def headline_figures(report: MetricsReport) -> list[tuple[str, str, str]]:
    """(name, value, detail) for the figures under the headline."""
    primary = report.model_scores("primary", "sme").accuracy
    production = report.model_scores("production", "sme").accuracy
    kappa = report.agreement.kappa
    if kappa.n < MIN_N:
        k_value = small_n(kappa.n, "pairs")
    else:
        k_value = "undefined" if kappa.kappa is None else f"{kappa.kappa:.2f} (n={kappa.n})"
    k_detail = plural(kappa.n, "double-reviewed packet")
    if report.agreement.same_reviewer:
        k_detail += f" ({report.agreement.same_reviewer:,} by one reviewer left out)"
    if kappa.low is not None and kappa.high is not None:
        k_detail += f"; 95 % CI {kappa.low:.2f}–{kappa.high:.2f}"
    return [
        (
            "Dominant type wrong (audits)",
            figure(report.audit.dominant_wrong),
            _counts(report.audit.dominant_wrong),
        ),
        ("Primary accuracy (SME-reviewed)", figure(primary), _counts(primary)),
        ("Production accuracy (SME-reviewed)", figure(production), _counts(production)),
        (
            "Escalations the SME corrected",
            figure(report.precision.escalations),
            _counts(report.precision.escalations),
        ),
        ("Auto-fix success", figure(report.retry.success, "retries"), _counts(report.retry.success)),
        ("Reviewer agreement κ", k_value, k_detail),
    ]


def small_n(n: int, what: str = "reviews") -> str:
    """What a headline says instead of a figure below MIN_N."""
    return f"not enough {what} (n={n})"


def figure(rate: Rate, what: str = "reviews") -> str:
    """A headline figure with its n, or 'not enough reviews (n=1)' below MIN_N."""
    if rate.n < MIN_N:
        return small_n(rate.n, what)
    return f"{pct(rate.rate)} (n={rate.n:,})"


def _counts(rate: Rate) -> str:
    band = interval(rate)
    return f"{rate.k:,} of {rate.n:,}" + (f" · {band}" if band else "")


def model_rows(models: list[ModelScores]) -> list[dict[str, Any]]:
    rows = []
    for m in models:
        b = m.boundaries
        rows.append(
            {
                "Model": MODEL_LABELS[m.model],
                "Scope": SCOPE_LABELS[m.scope],
                "Documents": m.docs,
                "No prediction": m.missing,
                "Dominant-type accuracy": rate_text(m.accuracy),
                "Boundary precision": rate_text(b.precision) if b else "n/a (no segments)",
                "Boundary recall": rate_text(b.recall) if b else "n/a",
                "Boundary F1": "—" if b is None or b.f1 is None else f"{b.f1:.3f}",
                "Mixture MAE": mean_text(m.mixture_mae) if m.mixture_mae is not None else "n/a (no mixture)",
            }
        )
    return rows


def reviewer_rows(report: MetricsReport) -> list[dict[str, Any]]:
    return [
        {
            "Reviewer": r.reviewer,
            "Reviews": r.reviews,
            "Corrected": rate_text(r.corrected),
            "Median time per packet": _duration(r.median_s),
            "90th percentile": _duration(r.p90_s),
            "Active hours": r.active_hours,
            "Packets per active hour": "—" if r.per_active_hour is None else f"{r.per_active_hour:.1f}",
        }
        for r in report.reviewers
    ]


def run_rows(report: MetricsReport) -> list[dict[str, Any]]:
    return [
        {
            "Run": t.run_id,
            "Started": t.created_at.strftime("%Y-%m-%d %H:%M UTC") if t.created_at else "",
            "Documents": t.docs,
            "Accepted": rate_text(t.accepted),
            "Escalated": rate_text(t.escalated),
            "Unreadable": rate_text(t.unreadable),
            "Auto-fix success": rate_text(t.retry_success),
            "False accept (audits)": rate_text(t.false_accept),
            "Primary accuracy (SME)": rate_text(t.primary_accuracy_sme),
        }
        for t in report.runs
    ]


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


GUARANTEE_SCOPES = {"all": "all accepts", "kind": "accepted by", "type": "document type"}


def guarantee_label(g: Guarantee) -> str:
    """'all accepts', 'accepted by rules only', 'document type LAB_REPORT'."""
    if g.scope == "all":
        return GUARANTEE_SCOPES["all"]
    name = SEMANTIC_LABELS.get(g.label, g.label) if g.scope == "kind" else g.label
    return f"{GUARANTEE_SCOPES[g.scope]} {name}"


def further_audits_sentence(g: Guarantee) -> str:
    """What more audits would do for the bound, against the profile's target."""
    target = pct(g.target)
    if g.bound is None:
        return f"Review audits of these accepts to bound it (target {target})."
    if g.further_audits == 0:
        return f"Under the {target} target."
    if g.further_audits is None:
        return (
            f"No number of further audits would bring it under {target}: the estimate itself is not under it."
        )
    return f"{plural(g.further_audits, 'further audit')} would bring it under the {target} target."


def guarantee_sentence(g: Guarantee) -> str:
    """'False-accept rate ≤ 3.1 % with 95 % confidence (all accepts; …)', or why there is none yet."""
    where = guarantee_label(g)
    if g.bound is None or g.rate is None:
        waiting = f", {plural(g.audits, 'audit')} waiting" if g.audits else ""
        return (
            f"{where}: no reviewed audit yet, so no guarantee ({plural(g.accepts, 'accept')}{waiting}). "
            + further_audits_sentence(g)
        )
    return (
        f"False-accept rate ≤ {pct(g.bound)} with {100 * g.confidence:.0f} % confidence ({where}; "
        f"risk-weighted estimate {pct(g.rate)}, from {plural(g.reviewed, 'reviewed audit')} of "
        f"{plural(g.accepts, 'accept')}, {g.false_accepts:,} wrong). {further_audits_sentence(g)}"
    )


def guarantee_rows(report: MetricsReport) -> list[dict[str, Any]]:
    """One row per group: the bound, the estimate and interval, the counts and the further audits."""
    return [
        {
            "Accepts": guarantee_label(g),
            "False accept ≤": pct(g.bound) if g.bound is not None else "unknown",
            "Estimate": pct(g.rate) if g.rate is not None else "unknown",
            "95 % interval": f"{pct(g.low)}–{pct(g.high)}"
            if g.low is not None and g.high is not None
            else "",
            "Reviewed audits": g.reviewed,
            "Of accepts": g.accepts,
            "Wrong": g.false_accepts,
            "Further audits": "none needed"
            if g.further_audits == 0
            else ("" if g.further_audits is None else f"{g.further_audits:,}"),
        }
        for g in report.guarantees
    ]
