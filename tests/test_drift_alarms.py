"""Drift alarms (record/drift.py, metrics/drift.py): per-producer CUSUMs on the escalation rate and the risk
mix, their alarm lines, and the audit boost while an alarm stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.contracts.sampling_profile import DriftPolicy, Sampling
from arbiter.record.drift import ESCALATION, RISK_MIX, UNKNOWN, DriftMonitor, alarm_line, step, stratum_of
from bench import drift as bench


@pytest.mark.parametrize(("documents", "least"), [(500, 0.30), (1_000, 0.75)])
def test_planted_new_producer_is_named_by_an_alarm(documents: int, least: float) -> None:
    """5 % of a batch from a new producer with 30 % wrong answers: over 100 seeded runs, an alarm names it
    within 500 documents in at least 30 % of them and within 1,000 in at least 75 % (bench/drift.py)."""
    delays = [bench.delay(bench.simulate(seed, documents, shifted=True)) for seed in range(100)]
    assert sum(d is not None and d <= documents for d in delays) >= least * 100


def test_unshifted_runs_raise_at_most_one_alarm_in_100() -> None:
    """100 seeded unshifted runs of 500 documents: at most one raises any alarm."""
    assert sum(bool(bench.simulate(seed, 500, shifted=False).alarms()) for seed in range(100)) <= 1


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
    """After a run boundary a producer with enough history is compared with its own earlier rate."""
    monitor = DriftMonitor(DriftPolicy(min_history=10, threshold=50.0))
    for i in range(40):
        monitor.observe("p", escalated=i % 2 == 0)
    monitor.new_run("r2")
    assert monitor._baseline(("p", ESCALATION)) == pytest.approx(20.5 / 41)


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
