"""Smoke test of the audit-sampling simulation at a tiny size: the JSON has the documented shape and both
designs are estimated in one run. The figures are measured by bench/audit_sampling.py, not asserted here."""

from __future__ import annotations

import numpy as np

from bench import audit_sampling


def test_audit_sampling_bench_shape() -> None:
    """A small run reports coverage, width, bias and audits per design, and the audits to match uniform."""
    result = audit_sampling.run(accepts=2_000, reps=20, seed=1, budgets=(50, 100))
    assert set(result["results"]) == {"uniform", "risk_50", "risk_100"}
    for figures in result["results"].values():
        assert {"coverage", "mean_width", "bias", "mean_audits"} == set(figures)
        assert 0 <= figures["coverage"] <= 1
    assert {"uniform_wilson", "audits_to_match_uniform", "met", "seconds", "population"} <= set(result)


def test_risk_probabilities_meet_the_budget_and_the_floor() -> None:
    """Each row's probabilities sum to the budget, none under the floor or over 1, and grow with √risk."""
    risk = np.random.default_rng(0).uniform(1e-4, 0.9, (3, 1_000))
    p = audit_sampling.risk_probabilities(risk, 100.0)
    assert np.allclose(p.sum(axis=1), 100.0, rtol=1e-6)
    assert p.min() >= audit_sampling.FLOOR
    assert p.max() <= 1.0
    order = np.argsort(risk[0])
    assert np.all(np.diff(p[0][order]) >= -1e-12)
