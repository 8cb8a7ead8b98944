"""Calibrated accepts (issue 33 item 3, docs/design.md §9.6): the isotonic fit of "the accept was right" on the
risk score over reviewed audits, its JSON file, the reliability bins and the held-out ECE in the report, and a
plain refusal with too few audits; on SQLite and PostgreSQL (also as the application role)."""

from __future__ import annotations

import dataclasses
import json
import random
from datetime import timedelta
from pathlib import Path

import pytest
from store_fixtures import (  # noqa: F401 (fixtures)
    T0,
    accepted,
    pg_app_role_urls_fixture,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts.profile import CalibrationPolicy
from arbiter.metrics import calibration as cal
from arbiter.metrics.collect import compute_metrics
from arbiter.store import Store

POLICY = CalibrationPolicy(min_audits=30, holdout_share=0.3, bins=5)


def synthetic(n: int, seed: int = 7) -> list[cal.AuditedAccept]:
    """n audits whose accept is right with probability 1 − risk."""
    rng = random.Random(seed)
    return [
        cal.AuditedAccept(risk=r, right=rng.random() > r, pdf_sha256=f"{i:064x}")
        for i, r in enumerate(rng.random() for _ in range(n))
    ]


def test_the_fit_is_decreasing_in_risk_and_close_to_the_truth() -> None:
    """On 2,000 audits the curve never rises with risk and is within 0.1 of 1 − risk in the middle."""
    curve = cal.fit(synthetic(2000), POLICY)
    assert curve is not None
    assert all(b <= a for a, b in zip(curve.p_right, curve.p_right[1:], strict=False))
    assert curve([0.25, 0.5, 0.75]) == pytest.approx([0.75, 0.5, 0.25], abs=0.1)


def test_the_file_round_trips_as_plain_arrays() -> None:
    """The file holds the knots as JSON arrays, and reading it back gives the same curve."""
    curve = cal.fit(synthetic(200), POLICY)
    assert curve is not None
    text = cal.dumps(curve, POLICY, None, "sqlite x")
    data = json.loads(text)
    assert isinstance(data["risk"], list)
    assert isinstance(data["p_right"], list)
    assert cal.loads(text).p_right == curve.p_right


# Table: (file text, the reason it is refused)
BAD_FILES = [
    pytest.param("{", "not JSON", id="not-json"),
    pytest.param('{"format": "other"}', "not an Arbiter calibration file", id="other-format"),
    pytest.param('{"format": "arbiter.calibration/1", "risk": [0.1], "p_right": []}', "same", id="lengths"),
    pytest.param(
        '{"format": "arbiter.calibration/1", "risk": [0.5, 0.1], "p_right": [1, 1]}', "increase", id="order"
    ),
    pytest.param(
        '{"format": "arbiter.calibration/1", "risk": [0.1], "p_right": [2]}', "increase", id="range"
    ),
]


@pytest.mark.parametrize(("text", "reason"), BAD_FILES)
def test_a_bad_file_is_refused_in_words(text: str, reason: str) -> None:
    """Each malformed calibration file is a ValueError naming what is wrong."""
    with pytest.raises(ValueError, match=reason):
        cal.loads(text)


def test_too_few_audits_fit_nothing_and_say_so() -> None:
    """Below min_audits (outside the held-out share) there is no curve and the report says how many."""
    audits = synthetic(20)
    assert cal.fit(audits, POLICY) is None
    found = cal.summarise(audits, [0.1, 0.2], None, POLICY, file="c.json")
    assert found.status == "too_few"
    assert found.message.startswith("Too few audits to calibrate:")
    assert "30 needed" in found.message


def test_the_split_is_by_document_hash() -> None:
    """The same PDF is always on the same side; about the held-out share of documents is held out."""
    shas = [f"{i:064x}" for i in range(4000)]
    held = [cal.held_out(s, 0.3) for s in shas]
    assert held == [cal.held_out(s, 0.3) for s in shas]
    assert 0.27 < sum(held) / len(held) < 0.33


def seed_audits(store: Store, n: int) -> None:
    """n accepts, each audited and reviewed: right with probability 1 − risk."""
    rng = random.Random(3)
    for i in range(n):
        risk = (i + 0.5) / n
        record = dataclasses.replace(
            accepted(f"c{i:03d}", store=store, sha=f"{i:064x}"), risk=risk, audit_probability=1.0
        )
        sampled = with_sample(record)
        store.records.record(sampled, now=T0)
        packet_id = sampled.samples[0].packet_id
        at = T0 + timedelta(hours=1, minutes=i)
        assert store.queue.claim(packet_id, "alice", now=at - timedelta(seconds=30)) is not None
        right = rng.random() > risk
        answer = dict(record.outcome.final_classification)
        if not right:
            answer["dominant_type"] = "GENOMIC_REPORT"
        store.reviews.submit(packet_id, "alice", review("alice", agrees=right, at=at), answer,
                             idempotency_key=f"k-{i}", now=at)  # fmt: skip


def test_the_report_measures_the_fitted_curve_on_held_out_audits(store: Store, tmp_path: Path) -> None:
    """Fit, write, read back: the report gives the accepts' mean probability, bins covering every held-out
    audit and every accept, and an ECE; without a file it says none is fitted yet."""
    seed_audits(store, 120)
    file = str(tmp_path / "calibration.json")
    empty = compute_metrics(store, calibration_file=file, calibration_policy=POLICY).calibration
    assert empty is not None
    assert (empty.status, empty.audits) == ("none", 120)
    with store.engine.connect() as conn:
        curve = cal.fit(cal.read_audits(conn), POLICY)
    assert curve is not None
    Path(file).write_text(cal.dumps(curve, POLICY, None, "test"), encoding="utf-8")
    found = compute_metrics(store, calibration_file=file, calibration_policy=POLICY).calibration
    assert found is not None
    assert found.status == "fitted"
    assert found.train_audits + found.holdout_audits == 120
    assert sum(b.audits for b in found.bins) == found.holdout_audits > 0
    assert sum(b.accepts for b in found.bins) == found.accepts == 120
    assert found.mean_probability == pytest.approx(0.5, abs=0.15)
    assert found.ece is not None
    assert 0 <= found.ece < 0.25
    assert "held-out audits" in found.message


def test_the_command_refuses_with_too_few_and_writes_with_enough(tmp_path: Path) -> None:
    """`arbiter metrics calibrate` says plainly that there are too few audits, then writes the file."""
    store = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
    store.migrate()
    seed_audits(store, 20)
    runner = CliRunner()
    few = runner.invoke(app, ["metrics", "calibrate", "--out", str(tmp_path)])
    assert few.exit_code == 2
    assert "Too few audits to calibrate" in few.output
    store.dispose()
    store = Store(f"sqlite:///{tmp_path / 'more.db'}")
    store.migrate()
    seed_audits(store, 120)
    store.dispose()
    db = f"sqlite:///{tmp_path / 'more.db'}"
    done = runner.invoke(app, ["metrics", "calibrate", "--out", str(tmp_path), "--db", db])
    assert done.exit_code == 0, done.output
    assert cal.loads((tmp_path / "calibration.json").read_text(encoding="utf-8")).train_audits > 0
    shown = runner.invoke(app, ["metrics", "--json", "--out", str(tmp_path), "--db", db])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["calibration"]["status"] == "fitted"
