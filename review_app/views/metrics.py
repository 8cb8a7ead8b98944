"""Metrics page: the figures of `arbiter metrics --html` (false-accept rate first, then the same charts and
tables), computed from the review database; every signed-in user may see it."""

from datetime import UTC, datetime

import streamlit as st

from arbiter.contracts.profile import load_profile
from arbiter.metrics.as_of import parse_time
from arbiter.metrics.calibration import path_of
from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.grounded import GroundedReport, compute_grounded, has_answers
from arbiter.metrics.grounded_text import SCOPES, score_rows
from arbiter.metrics.report import (
    confusion_charts,
    decision_charts,
    precision_charts,
    rate_chart,
    reliability_chart,
    render_html,
    trend_chart,
)
from arbiter.metrics.result import MetricsReport
from arbiter.metrics.text import (
    false_accept_sentence,
    false_accept_split_sentence,
    guarantee_rows,
    guarantee_sentence,
    headline_detail,
    headline_figures,
    headline_value,
    kappa_text,
    model_rows,
    rate_text,
    reviewer_rows,
    run_rows,
    same_reviewer_note,
)
from arbiter.metrics.trust_text import known_answer_rows, reliability_rows
from arbiter.record.drift import NO_ALARM, alarm_line
from arbiter.review.blind import for_viewer
from arbiter.review.packet_view import escape
from arbiter.review_app import state


def chart(svg: str) -> None:
    """One of the report's inline SVG charts. st.image draws SVG markup; st.html's sanitiser drops <svg>
    in the browser (the element stays empty), which only a real browser shows."""
    st.image(svg)


# Cached a minute (each rerun of the page would recompute otherwise); the page says when it was computed and
# Recompute clears it, so it never silently disagrees with `arbiter metrics`.
@st.cache_data(ttl=60, show_spinner="Computing the metrics…", max_entries=8)
def _report(db_url: str | None, as_of: datetime | None) -> tuple[MetricsReport, datetime]:
    profile = load_profile()
    report = compute_metrics(
        state.the_store(),
        as_of,
        profile.taxonomy.document_types,
        policy=profile.metrics,
        sampling=profile.sampling,
        drift_policy=profile.drift,
        calibration_file=path_of(
            str(state.settings().output_root or state.settings().output_url or "output"), profile.calibration
        ),
        calibration_policy=profile.calibration,
        known_answers=True,
    )
    return report, datetime.now(UTC)


# Grounded answers (metrics/grounded.py): shown when any answer item has ground truth; values as text.
@st.cache_data(ttl=60, show_spinner="Computing the answers' metrics…", max_entries=8)
def _grounded(db_url: str | None, as_of: datetime | None) -> GroundedReport | None:
    store = state.the_store()
    if not has_answers(store):
        return None
    profile = load_profile()
    return compute_grounded(store, as_of, policy=profile.metrics, sampling=profile.sampling)


user = state.require_user()
st.title("Metrics")
left, right = st.columns([3, 1], vertical_alignment="bottom")
as_of_text = left.text_input(
    "As of (optional)", key="metrics_as_of", placeholder="e.g. 2026-03-01 or 2026-03-01T18:00Z (UTC)"
)
if right.button("Recompute", key="metrics_refresh"):
    _report.clear()
    _grounded.clear()
as_of = None
if as_of_text.strip():
    try:
        as_of = parse_time(as_of_text)
    except ValueError as exc:
        st.error(str(exc))
        st.stop()
computed, computed_at = _report(state.settings().db_url, as_of)
st.caption(
    f"As of {computed_at:%Y-%m-%d %H:%M:%S} UTC (kept up to a minute; Recompute reads the database again)",
    help="The same figures `arbiter metrics` prints for the same database and time.",
)
# A document whose blind review the user may still give is left out of the per-document rows; the rows shown
# are answers seen (arbiter/review/blind.py, store/blind.py).
store = state.the_store()
report = for_viewer(computed, store.blind.hidden_docs(user.name))
if not user.is_admin:  # which packets had known answers, and how reviewers did on them, is for admins only
    report = report.model_copy(update={"known_answers": []})
store.blind.mark_seen(user.name, {d.doc_id for d in report.agreement.disagreements})

fa = report.audit.false_accept
st.metric(
    "Arbiter false-accept rate",
    headline_value(report.audit),
    help="Blind audits of automatically accepted documents that the SME corrected (Wilson 95 % interval).",
)
if fa.rate is None or report.audit.too_few:
    if fa.rate is not None:
        st.caption(headline_detail(report.audit))
    st.info(false_accept_sentence(report.audit))
else:
    st.caption(headline_detail(report.audit))
    st.write(false_accept_sentence(report.audit))
    st.write(false_accept_split_sentence(report.audit))
# The trust figures side by side, so one screen shows them: the guarantee and the drift alarms, the calibration
# and its reliability diagram; the tables behind them follow at full width.
guarantee_column, calibration_column = st.columns(2, gap="large")
with guarantee_column:
    st.subheader("Guarantee")
    for g in report.guarantees[:1]:
        st.write(guarantee_sentence(g))
    st.caption(
        "Audits are drawn with a recorded probability, higher where the risk is; each counts 1 / that "
        "probability (Horvitz–Thompson), so the estimate is unbiased, and the bound is a one-sided gamma bound."
    )
    st.subheader("Drift alarms")
    for alarm in report.drift:  # escalation rate, risk mix, type mix per producer (record/drift.py); the
        # producer's name comes from the classifications: shown as text
        (st.error if alarm.standing else st.warning)(escape(alarm_line(alarm.model_dump())))
    if not report.drift:
        st.success(NO_ALARM)
    st.caption(
        "Each producer's escalation rate, share of high-risk accepts and mix of types read against its own "
        "earlier runs (a new producer: against everyone's), every run replayed; while an alarm stands, its audits "
        "are raised."
    )
calibrated = report.calibration
fitted = calibrated is not None and calibrated.status == "fitted"
with calibration_column:
    st.subheader("Calibrated accepts")
    if calibrated is None or not fitted:
        st.info(calibrated.message if calibrated else "No calibration asked for.")
    else:
        st.write(calibrated.message)
        chart(reliability_chart(calibrated))
st.markdown("**The guarantee per kind of accept and document type**")
st.dataframe(guarantee_rows(report), hide_index=True, key="metrics_guarantees")
if calibrated is not None and fitted:
    st.markdown("**The reliability diagram's bins**")
    st.dataframe(reliability_rows(calibrated), hide_index=True, key="metrics_reliability")
    st.caption(
        "Each accept's probability of being right, fitted on its risk score (isotonic) by `arbiter metrics "
        "calibrate` over reviewed audits; the bins compare it with what held-out audits found."
    )
if user.is_admin:
    st.subheader("Reviewers on known answers")
    if report.known_answers:
        st.dataframe(known_answer_rows(report.known_answers), hide_index=True, key="metrics_known")
    else:
        st.info("No known-answer packet reviewed yet: seed some with `arbiter review seed-known`.")
for column, (name, value, detail) in zip(st.columns(3) * 2, headline_figures(report), strict=True):
    column.metric(name, value, help=detail)
    column.caption(detail)

chart(rate_chart(report))
st.subheader("Decision mix and escalation reasons")
for svg in decision_charts(report):
    chart(svg)
st.caption(f"Auto-fix success: {rate_text(report.retry.success)}")
st.subheader("Models against ground truth")
st.dataframe(model_rows(report.models), hide_index=True, key="metrics_models")
for svg in confusion_charts(report):
    chart(svg)
st.subheader("Issue precision against SME outcomes")
for svg in precision_charts(report):
    chart(svg)
st.dataframe(
    [
        {"Code": c.code, "Verifier": c.verifier, "Precision": rate_text(c.precision)}
        for c in report.precision.by_code
    ],
    hide_index=True,
    key="metrics_codes",
)
st.subheader("Reviewer agreement")
st.write(
    f"Cohen's {kappa_text(report.agreement.kappa)}; raw agreement {rate_text(report.agreement.kappa.agreement)}."
)
if report.agreement.same_reviewer:
    st.warning(same_reviewer_note(report.agreement))
if report.agreement.disagreements:
    st.dataframe(
        [d.model_dump() for d in report.agreement.disagreements], hide_index=True, key="metrics_disagree"
    )
st.subheader("Reviewers")
st.dataframe(reviewer_rows(report), hide_index=True, key="metrics_reviewers")
st.subheader("Trends by run")
chart(trend_chart(report))
st.dataframe(run_rows(report), hide_index=True, key="metrics_runs")
st.download_button(
    "Download the HTML report",
    render_html(report),
    file_name="arbiter-metrics.html",
    mime="text/html",
    key="metrics_download",
)
st.caption(
    f"{report.totals.ground_truth_docs} documents with ground truth · computed in {report.seconds:.2f} s"
)


answers = _grounded(state.settings().db_url, as_of)
if answers is not None:
    st.header("Grounded answers")
    st.write(
        f"Arbiter false-accept rate on answers: {headline_value(answers.audit)}"
        + (f" ({headline_detail(answers.audit)})" if headline_detail(answers.audit) else "")
    )
    st.write(false_accept_sentence(answers.audit))
    for g in answers.guarantees[:1]:
        st.write(guarantee_sentence(g))
    for scores in answers.scores:
        st.subheader(f"{SCOPES[scores.scope].capitalize()} ({scores.items:,})")
        st.dataframe(
            [
                {"Figure": name, "Value": value, "Counts": detail}
                for name, value, detail in score_rows(scores)
            ],
            hide_index=True,
            key=f"metrics_grounded_{scores.scope}",
        )
    st.caption(
        "Statement verdicts come from the experts' reviews; an accepted answer counts as all supported, with its "
        "citations as given. `arbiter metrics --kind grounded-answer` prints the same figures."
    )

if state.require_user().is_admin:  # the What-if panel (review_app/whatif_panel.py; logic in arbiter/whatif/)
    from arbiter.review_app import whatif_panel

    whatif_panel.show(state.the_store().url, as_of, state.settings().output_root, state.settings().output_url)
