"""Drift alarms (record/drift.py, metrics/drift.py): per-producer CUSUMs on the escalation rate and the risk
mix, their alarm lines, and the audit boost while an alarm stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.contracts.sampling_profile import DriftPolicy, Sampling
from arbiter.record.drift import ESCALATION, RISK_MIX, UNKNOWN, DriftMonitor, alarm_line, step, stratum_of
from bench import drift as bench


@pytest.mark.parametrize(("documents", "least"), [(500, 0.80), (1_000, 0.90)])
def test_planted_new_producer_is_named_by_an_alarm(documents: int, least: float) -> None:
    """5 % of a batch from a new producer with 30 % wrong answers, beside producers with a track record: over
    100 seeded runs, an alarm names it within 500 documents in at least 80 % of them and within 1,000 in at
    least 90 % (bench/drift.py)."""
    delays = [bench.delay(bench.simulate(seed, documents, shifted=True)) for seed in range(100)]
    assert sum(d is not None and d <= documents for d in delays) >= least * 100


@pytest.mark.parametrize("history", [1_000, 0])
def test_unshifted_runs_raise_at_most_one_alarm_in_100(history: int) -> None:
    """100 seeded unshifted runs of 500 documents raise at most one alarm between them, with the producers'
    history and in a database's first run."""
    runs = [bench.simulate(seed, 500, shifted=False, history=history) for seed in range(100)]
    assert sum(bool(m.alarms()) for m in runs) <= 1


def test_a_new_producer_no_worse_than_the_others_rarely_raises_an_alarm() -> None:
    """The price of closer scrutiny: a new producer answering as well as the others raises an alarm in at
    most 8 of 100 runs."""
    runs = [bench.simulate(seed, 500, shifted=False, new_unshifted=True) for seed in range(100)]
    assert sum(any(a.stratum == bench.NEW for a in m.alarms()) for m in runs) <= 8


@pytest.mark.parametrize(
    ("own", "others", "threshold"),
    [
        (0, 0, 8.0),  # a database's first run: nobody has a track record
        (0, 500, 4.0),  # a new producer among known ones
        (99, 500, 4.0),
        (100, 500, 8.0),  # its own track record
        (100, 0, 8.0),
    ],
)
def test_a_new_producer_among_known_ones_gets_the_lower_threshold(
    own: int, others: int, threshold: float
) -> None:
    """The alarm threshold is `new_threshold` only for a producer short of `min_history` documents while the
    others have at least that many between them."""
    monitor = DriftMonitor(DriftPolicy(threshold=8.0, new_threshold=4.0, min_history=100))
    history = {("other", ESCALATION): (others, others // 10)} if others else {}
    if own:
        history[("p", ESCALATION)] = (own, own // 10)
    monitor.seed(history)
    assert monitor._threshold(("p", ESCALATION)) == threshold


def test_drift_history_counts_each_producer(tmp_path: Path) -> None:
    """The database's drift history is each producer's decisions and escalations, and its scored accepts and
    high-risk ones, under the test names the monitor uses; errors and unnamed producers are left out."""
    import dataclasses

    from store_fixtures import T0, accepted, escalated

    from arbiter.store import Store

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    rows = [
        (escalated("d1", "r1"), "m", None, None),
        (accepted("d2", "r1"), "m", 0.5, None),
        (accepted("d3", "r1"), "m", 0.01, None),
        (accepted("d4", "r1"), "m", None, None),
        (escalated("d5", "r1"), "m", None, "pdf_encrypted"),
        (accepted("d6", "r1"), None, 0.5, None),
    ]
    for record, producer, risk, error in rows:
        store.records.record(dataclasses.replace(record, producer=producer, risk=risk, error=error), now=T0)
    history = store.records.drift_history(0.1)
    store.dispose()
    assert history == {("m", ESCALATION): (4, 1), ("m", RISK_MIX): (2, 1)}


@pytest.mark.parametrize(
    ("classification", "stratum"),
    [
        ({"producer": {"name": "gemini-2.5", "version": "1"}}, "gemini-2.5"),
        ({"producer": {"name": "  "}}, UNKNOWN),
        ({"producer": "x"}, UNKNOWN),
        (None, UNKNOWN),
    ],
)
def test_stratum_is_the_producer_name(classification: object, stratum: str) -> None:
    """The stratum is the classification's producer name, or the unknown producer."""
    assert stratum_of(classification) == stratum


@pytest.mark.parametrize(("p0", "odds"), [(0.1, 4.0), (0.5, 2.0), (0.02, 3.0)])
def test_step_is_the_log_likelihood_ratio(p0: float, odds: float) -> None:
    """An event adds log(p1/p0) > 0 and a non-event log((1-p1)/(1-p0)) < 0, p1 having `odds` times the odds."""
    up, down = step(p0, odds)
    p1 = odds * p0 / (1 - p0 + odds * p0)
    assert up == pytest.approx(__import__("math").log(p1 / p0))
    assert up > 0 > down


def test_alarm_stands_boosts_audits_then_settles() -> None:
    """An alarm raises the producer's audit factor while it stands and is marked settled once the score is 0."""
    monitor = DriftMonitor(DriftPolicy(threshold=3.0))
    for _ in range(10):
        monitor.observe("p", escalated=True)
    assert monitor.standing("p")
    assert monitor.boost("p") == 3.0
    assert monitor.boost("q") == 1.0
    for _ in range(200):
        monitor.observe("p", escalated=False, risk=0.01)
    assert not monitor.standing("p")
    assert monitor.boost("p") == 1.0
    [alarm] = [a for a in monitor.alarms() if a.test == ESCALATION]
    assert not alarm.standing
    assert "producer p's escalation rate" in alarm_line(alarm)


def test_risk_mix_alarm_names_the_producer() -> None:
    """Accepts all at high risk raise a risk-mix alarm on their producer and no escalation alarm."""
    monitor = DriftMonitor(DriftPolicy(threshold=3.0))
    for _ in range(30):
        monitor.observe("risky", escalated=False, risk=0.5)
    assert {(a.stratum, a.test) for a in monitor.alarms()} == {("risky", RISK_MIX)}


def test_disabled_monitor_never_alarms() -> None:
    """With `[drift] enabled = false` nothing is followed and no audit is raised."""
    monitor = DriftMonitor(DriftPolicy(enabled=False, threshold=1.0))
    for _ in range(50):
        monitor.observe("p", escalated=True)
    assert monitor.alarms() == []
    assert monitor.boost("p") == 1.0


def test_history_becomes_the_producers_own_baseline() -> None:
    """After a run boundary a producer with enough history is compared with its own earlier rate, one standard
    error up."""
    monitor = DriftMonitor(DriftPolicy(min_history=10, threshold=50.0))
    for i in range(40):
        monitor.observe("p", escalated=i % 2 == 0)
    monitor.new_run("r2")
    rate = 20.5 / 41
    assert monitor._baseline(("p", ESCALATION)) == pytest.approx(rate + (rate * (1 - rate) / 40) ** 0.5)


def test_a_replayed_alarm_counts_documents_from_the_start_of_its_run() -> None:
    """Replayed (`arbiter metrics`), an alarm's document number is its place in its own run; alarms keep order."""
    monitor = DriftMonitor(DriftPolicy(threshold=3.0))
    monitor.new_run("r1")
    for i in range(50):
        monitor.observe("early", escalated=i >= 40)
    monitor.new_run("r2")
    for i in range(30):
        monitor.observe("late", escalated=i >= 20)
    found = [(a.stratum, a.run_id) for a in monitor.alarms()]
    assert found == [("early", "r1"), ("late", "r2")]
    late = next(a for a in monitor.alarms() if a.stratum == "late")
    assert 20 < late.raised_at <= 30
    assert monitor.documents == 80


@pytest.mark.parametrize(("boost", "expected"), [(1.0, 0.05), (3.0, 0.15), (100.0, 1.0)])
def test_boost_raises_the_recorded_inclusion_probability(boost: float, expected: float) -> None:
    """A standing alarm's factor multiplies the uniform inclusion probability, at most 1."""
    from store_fixtures import accepted

    from arbiter.record.risk import audit_draw

    draw = audit_draw(accepted("a").outcome, Sampling(), pages=1, production_differs=False, boost=boost)
    assert draw is not None
    assert draw.probability == pytest.approx(expected)


def test_metrics_replays_history_and_names_the_producer(tmp_path: Path) -> None:
    """`arbiter metrics` reads each document's producer back (migration 0010) and raises the drift alarm on
    the producer whose escalations rose in a later run, standing at the end."""
    import dataclasses

    from store_fixtures import T0, accepted, escalated

    from arbiter.metrics.drift import alarms
    from arbiter.store import Store

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    for i in range(120):  # run 1: producers steady, every fifth escalated
        record = escalated(f"d{i}", "run-1") if i % 10 == 0 else accepted(f"d{i}", "run-1")
        store.records.record(
            dataclasses.replace(record, producer="old" if i % 2 else "new-model", risk=0.01), now=T0
        )
    for i in range(40):  # run 2: new-model escalates everything
        record = escalated(f"e{i}", "run-2") if i % 2 == 0 else accepted(f"e{i}", "run-2")
        store.records.record(
            dataclasses.replace(record, producer="new-model" if i % 2 == 0 else "old", risk=0.01), now=T0
        )
    with store.read() as conn:
        found = alarms(conn, policy=DriftPolicy(threshold=4.0))
    store.dispose()
    assert [(a.stratum, a.test, a.run_id, a.standing) for a in found] == [
        ("new-model", ESCALATION, "run-2", True)
    ]


def test_a_run_starts_its_drift_monitor_from_the_database(tmp_path: Path) -> None:
    """`arbiter run` seeds its monitor with every earlier run's counts, so a producer with a track record is
    judged against its own rate from the run's first document."""
    import dataclasses
    from types import SimpleNamespace

    from store_fixtures import T0, accepted

    from arbiter.contracts.profile import load_profile
    from arbiter.run.job import seed_drift
    from arbiter.store import Store

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    for i in range(120):
        store.records.record(dataclasses.replace(accepted(f"d{i}", "r1"), producer="m", risk=0.01), now=T0)
    profile = load_profile()
    chain = SimpleNamespace(drift=DriftMonitor(profile.drift), profile=profile)
    seed_drift(chain, store)  # type: ignore[arg-type]
    store.dispose()
    assert chain.drift._threshold(("m", ESCALATION)) == profile.drift.threshold
    assert chain.drift._baseline(("m", ESCALATION)) < 0.02  # its own rate (none escalated), not the prior
