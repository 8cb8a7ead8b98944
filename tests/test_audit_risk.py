"""Risk-weighted audit sampling (docs/design.md §9.1): the risk score of an accept, its inclusion probability
under each design, and that a real run records both with the decision and draws the audit with them."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from store_fixtures import accepted, escalated

from arbiter.classify import get_classifier
from arbiter.contracts import PacketKind
from arbiter.contracts.profile import RiskWeights, Sampling, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.record.packets import draw_point
from arbiter.record.risk import (
    RiskFeatures,
    inclusion_probability,
    lowest_confidence,
    risk_score,
)
from arbiter.record.samples import blind_samples
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLEAN = RiskFeatures(lowest_confidence=0.95, pages=2, rules_only=False)
RISK = Sampling(design="risk", audit_share=0.05, audit_floor=0.01, risk_reference=0.05)


@pytest.mark.parametrize(
    "riskier",
    [
        pytest.param(
            RiskFeatures(minor_findings=2, lowest_confidence=0.95, pages=2, rules_only=False), id="minor"
        ),
        pytest.param(
            RiskFeatures(fixes_applied=1, lowest_confidence=0.95, pages=2, rules_only=False), id="fixed"
        ),
        pytest.param(
            RiskFeatures(production_disagrees=True, lowest_confidence=0.95, pages=2, rules_only=False),
            id="production",
        ),
        pytest.param(RiskFeatures(lowest_confidence=0.6, pages=2, rules_only=False), id="low-confidence"),
        pytest.param(RiskFeatures(lowest_confidence=0.95, pages=40, rules_only=False), id="long"),
        pytest.param(RiskFeatures(lowest_confidence=0.95, pages=2, rules_only=True), id="rules-only"),
    ],
)
def test_each_risk_signal_raises_the_score(riskier: RiskFeatures) -> None:
    """Every signal the profile weighs (findings, fixes, production, confidence, pages, kind) adds risk."""
    weights = load_profile().sampling.risk
    assert risk_score(riskier, weights) > risk_score(CLEAN, weights)


@pytest.mark.parametrize(
    ("sampling", "risk", "expected"),
    [
        pytest.param(Sampling(audit_share=0.05), 0.9, 0.05, id="uniform-ignores-risk"),
        pytest.param(RISK, 0.05, 0.05, id="reference-risk-gets-the-share"),
        pytest.param(RISK, 0.2, 0.10, id="four-times-the-risk-twice-the-share"),
        pytest.param(RISK, 1e-6, 0.01, id="floor"),
        pytest.param(RISK.model_copy(update={"audit_share": 0.6}), 0.99, 1.0, id="capped-at-one"),
        pytest.param(RISK.model_copy(update={"audit_share": 0.0}), 0.99, 0.0, id="share-zero-audits-nothing"),
        pytest.param(RISK.model_copy(update={"audit_share": 1.0}), 1e-6, 1.0, id="share-one-audits-all"),
        pytest.param(
            RISK.model_copy(update={"audit_share": 0.005}), 1e-6, 0.005, id="floor-never-above-share"
        ),
    ],
)
def test_inclusion_probability_rules(sampling: Sampling, risk: float, expected: float) -> None:
    """Uniform gives the share; risk gives share × √(risk / reference) between the floor and 1."""
    assert inclusion_probability(risk, sampling) == pytest.approx(expected)


@settings(max_examples=200, deadline=None)
@given(
    minor=st.integers(-5, 10_000),
    fixes=st.integers(-5, 10_000),
    disagrees=st.booleans(),
    confidence=st.none() | st.floats(0, 1),
    pages=st.integers(-3, 100_000),
    rules_only=st.booleans(),
    share=st.floats(0, 1),
    floor=st.floats(1e-6, 1),
    reference=st.floats(1e-6, 0.999),
    weight=st.floats(-100, 100),
)
def test_no_accept_crashes_the_draw(**kw: Any) -> None:
    """Any features and any valid sampling give a risk in [0, 1] and a probability in [0, 1]."""
    features = RiskFeatures(
        kw["minor"], kw["fixes"], kw["disagrees"], kw["confidence"], kw["pages"], kw["rules_only"]
    )
    weights = RiskWeights(intercept=kw["weight"], pages=kw["weight"], low_confidence=kw["weight"])
    risk = risk_score(features, weights)
    assert 0.0 <= risk <= 1.0
    sampling = Sampling(
        design="risk", audit_share=kw["share"], audit_floor=kw["floor"], risk_reference=kw["reference"]
    )
    p = inclusion_probability(risk, sampling)
    assert 0.0 <= p <= 1.0
    assert math.isfinite(p)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_lowest_confidence_takes_any_json(value: Any) -> None:
    """Whatever the classification holds, the lowest confidence is None or a number in [0, 1]."""
    found = (
        lowest_confidence({"segments": value}) if not isinstance(value, dict) else lowest_confidence(value)
    )
    assert found is None or 0.0 <= found <= 1.0


def test_lowest_confidence_reads_each_segments_own_type() -> None:
    """The confidence of each segment's dominant type, the lowest of them; other types do not count."""

    def seg(doc_type: str, confidence: float) -> dict[str, Any]:
        other = {"document_type": "X", "confidence": 0.01}
        return {
            "dominant_type": doc_type,
            "types": [{"document_type": doc_type, "confidence": confidence}, other],
        }

    assert lowest_confidence({"segments": [seg("LAB_REPORT", 0.9), seg("CLINICAL_NOTE", 0.7)]}) == 0.7


def test_blind_samples_draws_an_audit_below_its_probability() -> None:
    """An accept is audited exactly when its draw point is under its recorded probability; an escalation
    carries no draw."""
    record = accepted("acc-1")
    share = draw_point(PacketKind.AUDIT, "acc-1", "a" * 64, "s")
    common: dict[str, Any] = {"pdf_path": "/d.pdf", "pdf_sha256": "a" * 64, "bundle_path": None, "total_pages": 3,
                                  "primary": None, "production": None, "run_id": "r"}  # fmt: skip
    for delta, audited in ((0.001, True), (-0.001, False)):
        sampling = Sampling(audit_share=min(1.0, max(0.0, share + delta)), salt="s")
        samples, draw = blind_samples(record.outcome, None, sampling, **common)
        assert draw is not None
        assert draw.probability == sampling.audit_share
        assert (len(samples) == 1) == audited
    esc = escalated("esc-1")
    assert blind_samples(esc.outcome, esc.packet, Sampling(salt="s"), **common)[1] is None


def test_a_run_records_risk_and_probability_with_the_accept(tmp_path: Path) -> None:
    """A real run stores each accept's risk and inclusion probability on its documents row (none for an
    escalation), and the audit is queued exactly when the draw point is under that probability."""
    (tmp_path / "cls").mkdir()
    doc_ids = ("gen-foundation-01", "note-injection-03")
    for doc_id in doc_ids:
        shutil.copy(FIXTURES / "demo" / f"{doc_id}.json", tmp_path / "cls" / f"{doc_id}.json")
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    pipeline = Pipeline(
        profile=load_profile(),
        classifier=get_classifier("file", classifications_dir=tmp_path / "cls"),
        store=DatabaseResultStore(store, tmp_path / "out"),
        run_id=new_run_id(),
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
    )
    for d in doc_ids:
        pipeline.process(FIXTURES / "pdfs" / f"{d}.pdf", d)
    with store.read() as conn:
        rows = {
            r.doc_id: r
            for r in conn.execute(sa.text("SELECT doc_id, pdf_sha256, risk, audit_p FROM documents"))
        }
    acc, esc = rows["gen-foundation-01"], rows["note-injection-03"]
    assert 0 < acc.risk < 1
    assert 0.01 <= acc.audit_p <= 1
    assert esc.risk is None
    assert esc.audit_p is None
    drawn = (
        draw_point(PacketKind.AUDIT, acc.doc_id, acc.pdf_sha256, load_profile().sampling.salt) < acc.audit_p
    )
    kinds = {(p.doc_id, p.kind) for p in store.queue.page(limit=10)}
    assert (("gen-foundation-01", "AUDIT") in kinds) == drawn
    store.dispose()
