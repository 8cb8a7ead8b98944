"""The metrics report: one self-contained HTML file with the false-accept rate first, the SVG charts, and
`arbiter metrics` (summary, --json, --html, --as-of) end to end after a demo run and a few reviews."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import SMEReview
from arbiter.contracts.profile import MetricsPolicy
from arbiter.metrics import charts
from arbiter.metrics.as_of import parse_time
from arbiter.metrics.compute import build_report, mark_latest
from arbiter.metrics.model import Labelled, Prediction
from arbiter.metrics.report import render_html, write_html
from arbiter.metrics.result import Calibration, Confusion, Guarantee, MetricsReport, ReliabilityBin
from arbiter.metrics.rows import DocRun, Reviewed
from arbiter.metrics.stats import clean_audits_needed, rate
from arbiter.metrics.text import UNKNOWN_FALSE_ACCEPT
from arbiter.store import Store

runner = CliRunner()
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EXTERNAL = re.compile(
    r"""(?:src|href|action|xlink:href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import""",
    re.I,
)


def _report(
    audits: list[tuple[bool, str]], reviewer: str = "alice", policy: MetricsPolicy | None = None
) -> MetricsReport:
    reviews = [
        Reviewed(f"a{i}", f"d{i}", "r1", "AUDIT", reviewer, agrees, label=label, accepted_label="LAB",
                 started_at=T0, submitted_at=T0 + timedelta(minutes=2))
        for i, (agrees, label) in enumerate(audits)
    ]  # fmt: skip
    docs = mark_latest([DocRun(f"d{i}", "r1", "AUTO_ACCEPT") for i in range(max(1, len(audits)))])
    truth = [
        Labelled(
            "d0", True, Prediction("LAB", frozenset({3})), Prediction("GEN", frozenset({3})), "LAB", "r1"
        )
    ]
    return build_report(
        truth, docs, reviews, [("r1", T0)], open_audits=2, database="sqlite test.db", policy=policy
    )


def _headline(html: str) -> str:
    start = html.index("<section class='headline")
    return html[start : html.index("</section>", start)]


def test_headline_shows_the_false_accept_rate_with_interval_and_n() -> None:
    """With enough audits, the first section is the rate, its 95 % interval and the number of blind audits."""
    html = render_html(
        _report([(False, "GEN")] + [(True, "LAB")] * 9, policy=MetricsPolicy(min_audits_for_rate=10))
    )
    headline = _headline(html)
    assert "Arbiter false-accept rate" in headline
    assert "10.0 %" in headline
    assert "95 % CI 1.8–40.4 %" in headline
    assert "n = 10 blind audits" in headline
    assert html.index("class='headline") < html.index("<h2>")


def test_headline_and_rate_chart_split_the_rate_by_semantic_checks() -> None:
    """The headline and the rate chart give the false-accept rate for rules-only accepts and for accepts with a
    model, each with its interval and counts."""
    reviews = [
        Reviewed(f"a{i}", f"d{i}", "r1", "AUDIT", "alice", agrees, semantic_checks=how)
        for i, (agrees, how) in enumerate(
            [(False, "rules_only"), (True, "rules_only"), (True, "rules_and_model")]
        )
    ]
    enough = MetricsPolicy(min_audits_for_rate=3)
    report = build_report([], [DocRun("d0", "r1", "AUTO_ACCEPT")], reviews, [("r1", T0)], policy=enough)
    headline = _headline(render_html(report))
    assert "False accepts by how the accept was earned: rules only 50.0 % (95 % CI" in headline
    assert "1 of 2); rules and a model 0.0 % (95 % CI 0.0–79.3 %; 0 of 1)." in headline
    html = render_html(report)
    assert "False accept — rules only" in html
    assert "False accept — rules and a model" in html


def test_without_audits_the_rate_is_unknown_not_zero() -> None:
    """No reviewed audits: the headline says so in words, with the audits waiting, and shows no 0 %."""
    headline = _headline(render_html(_report([])))
    assert UNKNOWN_FALSE_ACCEPT in headline
    assert "2 audit packets are waiting in the queue." in headline
    assert "0.0 %" not in headline
    assert "Unknown" in headline


FEW_AUDITS = [
    # (audits, corrected, minimum, target, upper bound shown, clean audits still needed)
    (1, 0, 30, 0.05, "79.3 %", "72 more audits"),
    (2, 0, 30, 0.05, "65.8 %", "71 more audits"),
    (1, 1, 30, 0.05, "100.0 %", None),
    (9, 0, 10, 0.10, "29.9 %", "26 more audits"),
]


@pytest.mark.parametrize(("n", "k", "minimum", "target", "bound", "more"), FEW_AUDITS)
def test_below_the_minimum_the_headline_says_too_few_audits(
    n: int, k: int, minimum: int, target: float, bound: str, more: str | None
) -> None:
    """Below the profile's minimum of audits the headline says too few, gives the upper bound and the clean
    audits needed to bring it under the target; the rate is never the headline figure."""
    policy = MetricsPolicy(min_audits_for_rate=minimum, target_false_accept_rate=target)
    report = _report([(False, "GEN")] * k + [(True, "LAB")] * (n - k), policy=policy)
    assert report.audit.too_few
    headline = _headline(render_html(report))
    assert "<div class='value'>Too few audits</div>" in headline
    assert f"upper bound {bound}" in headline
    assert f"fewer than the {minimum} the profile asks for" in headline
    needed = clean_audits_needed(k, n, target)
    assert report.audit.clean_audits_needed == needed
    assert (
        f"{needed} more audits with no false accept would bring the upper bound under the {100 * target:.1f} %"
        in headline
    )
    if more is not None:
        assert more in headline
    shown = f"{100 * k / n:.1f} %"
    assert f"<div class='value'>{shown}" not in headline


def test_at_the_minimum_the_rate_is_the_headline() -> None:
    """With exactly the minimum of audits the rate is shown as a figure again."""
    report = _report([(True, "LAB")] * 3, policy=MetricsPolicy(min_audits_for_rate=3))
    assert not report.audit.too_few
    assert "<div class='value'>0.0 %</div>" in _headline(render_html(report))


def test_html_is_self_contained() -> None:
    """No scripts, stylesheets, images or fonts from anywhere else: inline CSS and inline SVG only."""
    html = render_html(_report([(False, "GEN"), (True, "LAB")]))
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()
    assert EXTERNAL.search(html) is None
    assert html.count("<svg") >= 6  # rates, decisions, reasons, three heat maps, ... trends
    assert "<style>" in html


def test_html_escapes_what_it_shows() -> None:
    """A reviewer name or label with markup is shown as text, never run."""
    html = render_html(_report([(False, "<b>x</b>")], reviewer="<script>alert(1)</script>"))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_write_html_writes_the_file(tmp_path: Path) -> None:
    """write_html puts the whole report in one file (folders made as needed)."""
    target = tmp_path / "deep" / "report.html"
    write_html(_report([(True, "LAB")]), target)
    assert "Arbiter false-accept rate" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("chart", "text"),
    [
        (charts.rate_bars([], "Nothing"), "no data yet"),
        (charts.rate_bars([charts.Bar("empty", rate(0, 0))], "Undefined"), "no data (0/0)"),
        (charts.heatmap(Confusion(), "Empty"), "no data yet"),
        (charts.trend_lines([], [], "No runs"), "no runs yet"),
        (charts.reliability([], "No audits"), "no held-out audit yet"),
    ],
)
def test_charts_say_when_there_is_nothing_to_draw(chart: str, text: str) -> None:
    """Empty inputs draw a labelled empty chart instead of failing or drawing a 0 %."""
    assert chart.startswith("<svg")
    assert text in chart


def test_heatmap_shows_counts_with_the_diagonal_marked() -> None:
    """Each cell shows its count; the tooltip gives the share of its row."""
    svg = charts.heatmap(Confusion(labels=["A", "B"], counts=[[3, 1], [0, 2]]), "m")
    assert ">3</text>" in svg
    assert "A → B: 1 (25.0 % of the row)" in svg


def test_the_reliability_diagram_draws_each_bin_with_audits_and_zooms_to_them() -> None:
    """A dot per bin with held-out audits (an empty bin none); the axes start at the lowest tenth reached."""
    bins = [
        ReliabilityBin(low=0.8, high=0.9, audits=5, predicted=0.89, observed=rate(5, 5), accepts=100),
        ReliabilityBin(low=0.9, high=1.0, audits=38, predicted=0.99, observed=rate(37, 38), accepts=700),
        ReliabilityBin(low=0.1, high=0.2, audits=0, observed=rate(0, 0), accepts=3),
    ]
    svg = charts.reliability(bins, "Reliability")
    assert svg.count("<circle") == 2
    assert ">37/38 right</text>" in svg
    low = rate(5, 5).low
    assert low is not None
    assert f">{int(low * 10) * 10} %</text>" in svg  # the Wilson interval of 5/5 reaches down to its tenth
    assert ">0 %</text>" not in svg


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
        ("2026-03-01T18:00Z", datetime(2026, 3, 1, 18, tzinfo=UTC)),
        ("2026-03-01T18:00:00+02:00", datetime(2026, 3, 1, 16, tzinfo=UTC)),
        (" 2026-03-01 18:30 ", datetime(2026, 3, 1, 18, 30, tzinfo=UTC)),
    ],
)
def test_as_of_times(text: str, expected: datetime) -> None:
    """--as-of takes ISO 8601 dates and times; without a zone they are UTC."""
    assert parse_time(text, now=datetime(2030, 1, 1, tzinfo=UTC)) == expected


def test_as_of_in_the_future_is_refused() -> None:
    """As with `arbiter export`, a time that has not come yet is refused (its figures could still change)."""
    with pytest.raises(ValueError, match="in the future"):
        parse_time("2026-03-02", now=datetime(2026, 3, 1, tzinfo=UTC))
    assert parse_time("2026-03-01", now=datetime(2026, 3, 1, tzinfo=UTC)) == datetime(2026, 3, 1, tzinfo=UTC)


def test_cli_refuses_a_bad_time(tmp_path: Path) -> None:
    """An unreadable --as-of is a one-line message and exit code 2, not a traceback."""
    result = runner.invoke(app, ["metrics", "--out", str(tmp_path), "--as-of", "last tuesday"])
    assert result.exit_code == 2
    assert "must be an ISO 8601 date or time" in result.output


def test_cli_on_an_empty_database(tmp_path: Path) -> None:
    """A fresh database: the summary says the rate is unknown; --json is the full report."""
    store = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
    store.migrate()
    store.dispose()
    summary = runner.invoke(app, ["metrics", "--out", str(tmp_path)])
    assert summary.exit_code == 0, summary.output
    assert "Arbiter false-accept rate: unknown" in summary.output
    as_json = runner.invoke(app, ["metrics", "--out", str(tmp_path), "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert data["audit"]["false_accept"] == {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    unknown = {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    assert data["audit"]["false_accept_by_semantic_checks"] == {
        "rules_only": unknown,
        "rules_and_model": unknown,
    }
    assert "False accept: rules only" in summary.output


def _review_everything(out: Path) -> dict[str, int]:
    """Reviews every packet of the demo as alice or bob (every third one corrected); counts by kind."""
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    kinds: dict[str, int] = {}
    try:
        for i in range(100):
            name = ("alice", "bob")[i % 2]
            packet = store.queue.claim_next(name) or store.queue.claim_next(("bob", "alice")[i % 2])
            if packet is None:
                break
            assert packet.claimed_by is not None
            shown = packet.final_classification or packet.primary_agent_classification or {}
            agrees = i % 3 != 0
            truth = dict(shown, dominant_type=shown.get("dominant_type") if agrees else "ADMINISTRATIVE")
            now = datetime.now(UTC)
            review = SMEReview(reviewer=packet.claimed_by, agrees_with_primary=agrees, confidence=0.8,
                               started_at=now - timedelta(seconds=40), submitted_at=now)  # fmt: skip
            store.reviews.submit(packet.packet_id, packet.claimed_by, review, truth, idempotency_key=f"k{i}")
            kinds[packet.packet_kind.value] = kinds.get(packet.packet_kind.value, 0) + 1
    finally:
        store.dispose()
    return kinds


def test_demo_then_reviews_then_html_report(tmp_path: Path) -> None:
    """After `arbiter demo` and a round of reviews, `arbiter metrics --html` writes a report whose first
    screen has the false-accept rate with its interval and n; --json agrees with it."""
    out = tmp_path / "out"
    demo = runner.invoke(app, ["demo", "--out", str(out)])
    assert demo.exit_code == 0, demo.output
    kinds = _review_everything(out)
    assert kinds.get("AUDIT", 0) >= 1
    report_file = tmp_path / "report.html"
    result = runner.invoke(app, ["metrics", "--out", str(out), "--html", str(report_file)])
    assert result.exit_code == 0, result.output
    headline = _headline(report_file.read_text(encoding="utf-8"))
    data = json.loads(runner.invoke(app, ["metrics", "--out", str(out), "--json"]).stdout)
    fa = data["audit"]["false_accept"]
    assert fa["n"] == kinds["AUDIT"]
    assert fa["n"] < 30  # the demo's few audits are too few for a rate (profile [metrics])
    assert data["audit"]["too_few"] is True
    assert data["audit"]["min_audits"] == 30
    assert data["audit"]["clean_audits_needed"] == clean_audits_needed(fa["k"], fa["n"], 0.05)
    assert "Too few audits" in headline
    assert f"n = {fa['n']} blind audit" in headline
    summary = " ".join(runner.invoke(app, ["metrics", "--out", str(out)]).output.split())  # rich wraps lines
    assert "Arbiter false-accept rate: too few audits to estimate (upper bound" in summary
    assert f"{data['audit']['clean_audits_needed']} more audits with no false accept" in summary
    assert data["totals"]["reviews"] == sum(kinds.values())
    split = data["audit"]["false_accept_by_semantic_checks"]  # the demo runs without a model
    assert (split["rules_only"]["n"], split["rules_and_model"]["n"]) == (kinds["AUDIT"], 0)
    assert split["rules_only"]["k"] == fa["k"]


labels = st.sampled_from(["LAB", "GEN", "PATH", "", "(none)", "<x>"])
predictions = st.builds(
    Prediction,
    dominant=labels,
    boundaries=st.frozensets(st.integers(1, 40), max_size=6),
    mixture=st.dictionaries(labels, st.floats(0, 1), max_size=5),
)
documents = st.builds(
    DocRun,
    doc_id=st.sampled_from(["a", "b", "c"]),
    run_id=st.sampled_from(["r1", "r2"]),
    decision=st.sampled_from(["AUTO_ACCEPT", "ESCALATE_TO_SME", "odd"]),
    reason=st.none() | st.sampled_from(["blocker_present", "no_progress"]),
    error=st.none() | st.just("pdf_empty"),
    reattempted=st.booleans(),
    first_decision=st.none() | st.sampled_from(["AUTO_RETRY", "AUTO_ACCEPT"]),
    stop_reason=st.none() | st.just("no_progress"),
)
reviewed = st.builds(
    Reviewed,
    packet_id=st.sampled_from(["p1", "p2", "p3", "p4"]),
    doc_id=st.sampled_from(["a", "b"]),
    run_id=st.sampled_from(["r1", "r3"]),
    kind=st.sampled_from(["ESCALATION", "AUDIT", "SECOND_REVIEW", "OTHER"]),
    reviewer=st.sampled_from(["alice", "bob"]),
    agrees=st.booleans(),
    label=st.none() | labels,
    accepted_label=st.none() | labels,
    pair_of=st.none() | st.sampled_from(["p1", "p2"]),
    codes=st.lists(st.sampled_from(["V1.A", "V3.B", "X"]), max_size=3).map(tuple),
    started_at=st.none() | st.datetimes(timezones=st.just(UTC)),
    submitted_at=st.none() | st.datetimes(timezones=st.just(UTC)),
    semantic_checks=st.none() | st.sampled_from(["rules_only", "rules_and_model", "odd"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gt=st.lists(
        st.builds(
            Labelled,
            doc_id=st.text(max_size=3),
            sme=st.booleans(),
            truth=predictions,
            primary=st.none() | predictions,
            production=st.none() | labels,
            run_id=st.none() | st.sampled_from(["r1", "r2"]),
        ),
        max_size=12,
    ),
    docs=st.lists(documents, max_size=12),
    reviews=st.lists(reviewed, max_size=12),
)
def test_no_dataset_crashes_the_metrics(
    gt: list[Labelled], docs: list[DocRun], reviews: list[Reviewed]
) -> None:
    """Any mix of documents, ground truth and reviews gives a report, JSON and HTML, with every rate in
    [0, 1] inside its interval."""
    report = build_report(gt, mark_latest(docs), reviews, [("r1", T0)])
    json.loads(report.to_json())
    assert "Arbiter false-accept rate" in render_html(report)
    rates = [report.audit.false_accept, report.audit.dominant_wrong, report.retry.success]
    rates += [m.accuracy for m in report.models] + [s.rate for s in report.decisions.decisions]
    for r in rates:
        assert 0 <= r.k <= r.n
        if r.rate is not None:
            assert r.low is not None
            assert r.high is not None
            assert 0.0 <= r.low <= r.rate <= r.high <= 1.0


def test_the_html_report_shows_the_guarantee_and_the_calibration() -> None:
    """The file carries what the Metrics page shows: the guarantee's sentence and table, the calibrated
    accepts' message, reliability diagram and bins (text escaped, never markup)."""
    report = _report([(True, "LAB")] * 3)
    report.guarantees = [
        Guarantee(scope="all", label="all", accepts=2000, audits=100, reviewed=100, false_accepts=3,
                  confidence=0.95, target=0.05, rate=0.03, low=0.006, high=0.087, bound=0.077,
                  further_audits=245),
        Guarantee(scope="type", label="LAB_REPORT", accepts=700, audits=30, reviewed=30, false_accepts=0,
                  confidence=0.95, target=0.05, rate=0.0, low=0.0, high=0.11, bound=0.095, further_audits=30),
    ]  # fmt: skip
    report.calibration = Calibration(
        status="fitted",
        message="Fitted on 40 audits <b>held out: 20</b>",
        audits=60,
        train_audits=40,
        holdout_audits=20,
        ece=0.031,
        bins=[
            ReliabilityBin(low=0.8, high=0.9, audits=20, predicted=0.86, observed=rate(17, 20), accepts=300)
        ],
    )
    html = render_html(report)
    guarantee = html[html.index("<h2>Guarantee</h2>") : html.index("<h2>Calibrated accepts</h2>")]
    assert "False-accept rate ≤ 7.7 % with 95 % confidence (all accepts;" in guarantee
    assert "245 further audits would bring it under the 5.0 % target" in guarantee
    assert guarantee.count("<tr>") == 3  # the header and one row per group
    calibration = html[html.index("<h2>Calibrated accepts</h2>") : html.index("<h2>Drift alarms</h2>")]
    assert "Fitted on 40 audits &lt;b&gt;held out: 20&lt;/b&gt;" in calibration
    assert "<b>" not in calibration
    assert "Reliability on 20 held-out audits (ECE 0.031)" in calibration
    assert "<svg" in calibration


def test_the_html_report_says_when_there_is_no_calibration_or_guarantee() -> None:
    """No accepts and no calibration asked for: both sections say so in words."""
    html = render_html(_report([]))
    assert "No accepts yet." in html[html.index("<h2>Guarantee</h2>") :]
    assert "No calibration asked for." in html
