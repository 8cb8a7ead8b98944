"""The guarantee line (docs/design.md §9.3) from a real store on SQLite and PostgreSQL: accepts with their
recorded inclusion probabilities, audits reviewed or waiting, the Horvitz–Thompson estimate per group, and the
sentence `arbiter metrics` prints."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from store_fixtures import T0, accepted, pg_server_url_fixture, review, store_fixture, with_sample  # noqa: F401

from arbiter.contracts.profile import MetricsPolicy
from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.result import Guarantee
from arbiter.metrics.text import guarantee_rows, guarantee_sentence
from arbiter.store import Store

# doc → (type, probability, audited?, reviewed verdict: True wrong / False right / None waiting)
ACCEPTS = {
    "a1": ("CLINICAL_NOTE", 0.5, True, True),
    "a2": ("CLINICAL_NOTE", 0.25, True, False),
    "a3": ("CLINICAL_NOTE", 0.1, False, None),
    "a4": ("CLINICAL_NOTE", None, False, None),  # recorded before probabilities were: counts as the share
    "a5": ("LAB_REPORT", 0.5, True, False),
    "a6": ("LAB_REPORT", 0.2, True, None),
}


def _seed(store: Store) -> None:
    for n, (doc_id, (doc_type, p, audited, verdict)) in enumerate(ACCEPTS.items()):
        record = dataclasses.replace(
            accepted(doc_id, store=store, dominant=doc_type), risk=0.1, audit_probability=p
        )
        store.records.record(with_sample(record) if audited else record, now=T0)
        if verdict is None:
            continue
        packet_id = next(s.packet_id for s in with_sample(record).samples)
        at = T0 + timedelta(hours=1, minutes=n)
        assert store.queue.claim(packet_id, "alice", now=at - timedelta(seconds=30)) is not None
        answer = {
            **record.outcome.final_classification,
            "dominant_type": "GENOMIC_REPORT" if verdict else doc_type,
        }
        store.reviews.submit(packet_id, "alice", review("alice", agrees=not verdict, at=at), answer,
                             idempotency_key=f"k-{doc_id}", now=at)  # fmt: skip


def _by(report_guarantees: list[Guarantee]) -> dict[tuple[str, str], Guarantee]:
    return {(g.scope, g.label): g for g in report_guarantees}


def test_the_estimate_weights_each_audit_by_its_probability(store: Store) -> None:
    """All: 6 accepts, 4 audits of which 3 reviewed (a reviewed share of 3/4), one wrong at p = 0.5, so the
    estimate is 1 / (0.5 × 3/4) / 6; per type CLINICAL_NOTE 1 / 0.5 / 4 and LAB_REPORT 0; per kind all rules only."""
    _seed(store)
    report = compute_metrics(store, policy=MetricsPolicy(target_false_accept_rate=0.05))
    g = _by(report.guarantees)
    assert set(g) == {
        ("all", "all"),
        ("kind", "rules_only"),
        ("type", "CLINICAL_NOTE"),
        ("type", "LAB_REPORT"),
    }
    overall = g[("all", "all")]
    assert (overall.accepts, overall.audits, overall.reviewed, overall.false_accepts) == (6, 4, 3, 1)
    assert overall.rate == pytest.approx(1 / (0.5 * 0.75) / 6)
    assert g[("kind", "rules_only")].rate == overall.rate
    assert g[("type", "CLINICAL_NOTE")].rate == pytest.approx(1 / 0.5 / 4)
    assert g[("type", "LAB_REPORT")].rate == 0.0
    for one in g.values():
        assert one.bound is not None
        assert one.low is not None
        assert one.high is not None
        assert one.low <= (one.rate or 0) <= one.bound <= one.high
    assert report.guarantees[0].scope == "all"


def test_as_of_before_the_reviews_there_is_no_guarantee(store: Store) -> None:
    """Before any review the groups are listed with their accepts and waiting audits, and no figure."""
    _seed(store)
    report = compute_metrics(store, as_of=T0 + timedelta(minutes=30))
    overall = _by(report.guarantees)[("all", "all")]
    assert (overall.accepts, overall.audits, overall.reviewed, overall.rate, overall.bound) == (
        6,
        4,
        0,
        None,
        None,
    )
    assert "no reviewed audit yet" in guarantee_sentence(overall)


@pytest.mark.parametrize(
    ("guarantee", "says"),
    [
        pytest.param(
            Guarantee(
                scope="all",
                label="all",
                accepts=2000,
                audits=100,
                reviewed=100,
                false_accepts=3,
                confidence=0.95,
                target=0.05,
                rate=0.03,
                low=0.006,
                high=0.087,
                bound=0.077,
                further_audits=245,
            ),
            [
                "False-accept rate ≤ 7.7 % with 95 % confidence (all accepts;",
                "245 further audits would bring it under the 5.0 % target",
            ],
            id="further-audits",
        ),
        pytest.param(
            Guarantee(
                scope="kind",
                label="rules_and_model",
                accepts=900,
                audits=80,
                reviewed=80,
                false_accepts=0,
                confidence=0.95,
                target=0.05,
                rate=0.0,
                low=0.0,
                high=0.04,
                bound=0.03,
                further_audits=0,
            ),
            ["≤ 3.0 % with 95 % confidence (accepted by rules and a model;", "Under the 5.0 % target."],
            id="under-target",
        ),
        pytest.param(
            Guarantee(
                scope="type",
                label="LAB_REPORT",
                accepts=50,
                audits=10,
                reviewed=10,
                false_accepts=5,
                confidence=0.95,
                target=0.05,
                rate=0.5,
                low=0.2,
                high=0.8,
                bound=0.75,
                further_audits=None,
            ),
            ["(document type LAB_REPORT;", "No number of further audits would bring it under 5.0 %"],
            id="estimate-above-target",
        ),
    ],
)
def test_the_guarantee_sentence(guarantee: Guarantee, says: list[str]) -> None:
    """The line states the bound, its confidence, the group, and what further audits would do."""
    sentence = guarantee_sentence(guarantee)
    for part in says:
        assert part in sentence


def test_the_metrics_command_prints_the_guarantee(store: Store, tmp_path: object) -> None:
    """`arbiter metrics` on a seeded database prints the guarantee line first and one per kind and type."""
    from typer.testing import CliRunner

    from arbiter.cli.main import app

    _seed(store)
    result = CliRunner().invoke(app, ["metrics", "--db", store.url], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Guarantee: False-accept rate ≤" in result.output
    assert "document type LAB_REPORT" in result.output
    rows = guarantee_rows(compute_metrics(store))
    assert rows[0]["Accepts"] == "all accepts"
    assert rows[0]["Reviewed audits"] == 3
