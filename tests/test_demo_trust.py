"""`arbiter demo --trust` (issue 33, "Trust you can measure"): the trust demo at a small size through the real
run, review desk and metrics — the guarantee line, the calibration measured on held-out audits, the drift alarm
naming the new producer — and its generator's batches, which are the same on every call."""

from __future__ import annotations

import contextlib
import csv
import io
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from arbiter.cli.demo_trust import TrustResult, trust_demo
from arbiter.cli.main import app
from arbiter.contracts.profile import load_profile
from arbiter.demo.trust import KNOWN, NEW, NEW_SHARE, NEW_WRONG, RIGHT, make_batch
from arbiter.demo.trust_review import REVIEWERS, same_answer
from arbiter.store import Store
from arbiter.store.models import packets, reviews

# The smallest size that keeps the demo's conditions: 100 history documents per known producer (the profile's
# [drift] min_history) and enough audits to calibrate; the shifted batch is cut from 500 to 240 documents.
SMALL = {"history": 300, "shifted": 240}


@pytest.fixture(scope="module", name="demo")
def demo_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrustResult, Path, str]:
    """One small trust demo for the module: its result, its output folder and what it printed."""
    out = tmp_path_factory.mktemp("trust") / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = trust_demo(out, **SMALL)
    return result, out, printed.getvalue()


def test_the_guarantee_line_is_printed(demo: tuple[TrustResult, Path, str]) -> None:
    """The guarantee over all accepts is a bound with its confidence, from the reviewed audits."""
    result, _, printed = demo
    assert result.guarantee.startswith("False-accept rate ≤ ")
    assert "with 95 % confidence (all accepts; risk-weighted estimate" in result.guarantee
    assert f"from {result.audits} reviewed audits" in result.guarantee
    assert f"Guarantee: {result.guarantee}" in " ".join(printed.split())


def test_the_calibration_is_fitted_and_measured_on_held_out_audits(
    demo: tuple[TrustResult, Path, str],
) -> None:
    """`metrics calibrate` fits on at least 40 audits, and the metrics give its ECE on held-out ones."""
    result, out, printed = demo
    calibration = result.report.calibration
    assert calibration.status == "fitted"
    assert calibration.train_audits >= 40
    assert calibration.holdout_audits > 0
    assert result.ece is not None
    assert (out / "calibration.json").is_file()
    assert f"Expected calibration error {result.ece:.3f} on {calibration.holdout_audits} held-out audits" in (
        result.calibration
    )
    assert "Calibrated accepts: Of " in printed


def test_the_drift_alarm_names_the_new_producer_within_500_documents(
    demo: tuple[TrustResult, Path, str],
) -> None:
    """The run's monitor and the metrics' replay alarm on the new producer only, within 500 documents."""
    result, _, printed = demo
    assert {a["stratum"] for a in result.run_alarms} == {NEW}
    assert all(a["raised_at"] <= 500 for a in result.run_alarms)
    assert result.alarms
    assert all(
        line.startswith(f"Drift alarm: producer {NEW}'s escalation rate rose to") for line in result.alarms
    )
    flat = " ".join(printed.split())
    assert flat.count(f"Drift alarm: producer {NEW}'s") == 2  # the run's summary, then `arbiter metrics`


def test_every_audit_was_reviewed_by_the_simulated_reviewers(demo: tuple[TrustResult, Path, str]) -> None:
    """Demo reviewers completed every audit, correcting exactly the planted wrong ones, and it says so."""
    result, out, printed = demo
    assert "Simulated reviews, not a person's" in printed
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        with store.engine.connect() as conn:
            audits = conn.execute(
                sa.select(packets.c.doc_id, packets.c.status).where(packets.c.kind == "AUDIT")
            ).all()
            reviewers = conn.execute(sa.select(reviews.c.reviewer)).scalars().all()
    finally:
        store.dispose()
    assert {status for _, status in audits} == {"COMPLETED"}
    assert len(audits) == result.audits == len(reviewers)
    assert set(reviewers) == set(REVIEWERS)
    planted = {}
    for path in (out / "demo-trust").glob("*/planted.csv"):
        with path.open(encoding="utf-8") as handle:
            planted.update({row["doc_id"]: row["planted"] for row in csv.DictReader(handle)})
    assert result.corrected == sum(planted[doc_id] != RIGHT for doc_id, _ in audits) > 0


def test_a_second_trust_demo_into_the_same_folder_is_refused(demo: tuple[TrustResult, Path, str]) -> None:
    """The figures need a database of their own: an --out that holds one is refused in one line."""
    _, out, _ = demo
    result = CliRunner().invoke(app, ["demo", "--trust", "--out", str(out)])
    assert result.exit_code == 2
    assert "already exists" in result.output


def test_trust_is_the_medical_demo_offline() -> None:
    """--trust with --kind or --llm is refused before anything runs."""
    result = CliRunner().invoke(app, ["demo", "--trust", "--kind", "grounded-answer"])
    assert result.exit_code == 2
    assert "leave out --kind and --llm" in result.output


def test_the_batches_are_the_same_on_every_call() -> None:
    """Same name and size, same batch; each producer's wrong answers are its share, and only they differ."""
    first, again = make_batch("shifted", 120, NEW_SHARE), make_batch("shifted", 120, NEW_SHARE)
    assert [(d.doc_id, d.pdf, d.answer, d.production) for d in first] == [
        (d.doc_id, d.pdf, d.answer, d.production) for d in again
    ]
    for producer, share in {**KNOWN, NEW: NEW_WRONG}.items():
        mine = [d for d in first if d.producer == producer]
        assert sum(d.wrong for d in mine) == round(len(mine) * share)
    assert sum(d.producer == NEW for d in first) == round(120 * NEW_SHARE)
    assert all(d.answer["producer"]["name"] == d.producer for d in first)
    profile = load_profile()
    assert all(same_answer(d.answer, d.truth, profile) is not d.wrong for d in first)
