"""The risk-weighted false-accept estimate (arbiter/metrics/ipw.py): unbiased by construction, the exact
Poisson bound when every probability is equal, the further audits that bring the bound under a target, and no
input that crashes it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from arbiter.metrics.ipw import _gamma_upper, further_audits, horvitz_thompson


@pytest.mark.parametrize(
    ("wrong", "probability"),
    [
        ([1, 0, 0, 1, 0, 0], [0.9, 0.1, 0.2, 0.05, 0.5, 1.0]),
        ([0, 0, 0, 0, 0, 1], [0.3, 0.3, 0.3, 0.3, 0.3, 0.01]),
        ([1, 1, 1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    ],
)
def test_horvitz_thompson_is_exactly_unbiased(wrong: list[int], probability: list[float]) -> None:
    """Over every possible audit sample, weighted by its probability, the mean estimate is the true rate."""
    y, p = np.array(wrong, bool), np.array(probability)
    expected = 0.0
    for chosen in itertools.product((False, True), repeat=len(y)):
        mask = np.array(chosen)
        chance = float(np.prod(np.where(mask, p, 1 - p)))
        if chance:
            expected += chance * float(np.sum(y[mask] / p[mask]) / len(y))  # the unclipped estimate
            rate = horvitz_thompson(y[mask], p[mask], len(y)).rate
            assert rate is None or rate == pytest.approx(min(1.0, float(np.sum(y[mask] / p[mask]) / len(y))))
    assert expected == pytest.approx(y.mean())


@pytest.mark.parametrize(("k", "n"), [(0, 74), (0, 500), (3, 100), (10, 400)])
def test_equal_probabilities_give_the_exact_poisson_bound(k: int, n: int) -> None:
    """With one probability for all, the one-sided 95 % bound is Garwood's exact Poisson bound (k + 1 events
    at the 95th percentile of χ² with 2(k + 1) degrees), up to the finite-population factor of the variance."""
    share = 0.05
    est = horvitz_thompson([True] * k + [False] * (n - k), [share] * n, round(n / share))
    garwood = stats.chi2.ppf(0.95, 2 * (k + 1)) / 2 / n
    assert est.bound == pytest.approx(garwood, rel=0.03 if k else 1e-9)
    assert est.low is not None
    assert est.high is not None
    assert est.low <= (est.rate or 0) <= est.high


def test_no_false_accept_in_74_audits_bounds_at_4_percent() -> None:
    """The issue's example: 0 wrong in 74 uniform 5 % audits is "≤ 4.0 % with 95 % confidence" (one-sided),
    and 76 further clean audits bring that under 2 %."""
    est = horvitz_thompson([False] * 74, [0.05] * 74, 1480)
    assert est.bound == pytest.approx(0.0405, abs=5e-4)
    assert further_audits(est, 0.02) == 76


@pytest.mark.parametrize(
    ("wrong", "n", "target", "expected"),
    [(0, 200, 0.05, 0), (3, 100, 0.05, "some"), (10, 100, 0.05, None), (5, 100, 0.05, None)],
)
def test_further_audits_are_the_least_that_reach_the_target(
    wrong: int, n: int, target: float, expected: int | str | None
) -> None:
    """0 when already under; None when the estimate itself is not under the target; otherwise the least m
    whose scaled bound is under the target (and m − 1 is not)."""
    est = horvitz_thompson([True] * wrong + [False] * (n - wrong), [0.05] * n, n * 20)
    m = further_audits(est, target)
    if expected != "some":
        assert m == expected
        return
    assert m is not None
    assert m > 0

    def f(extra: int) -> float:
        return n / (n + extra)

    assert _gamma_upper(est.rate or 0, est.variance * f(m), est.pseudo * f(m), 0.95) < target
    assert _gamma_upper(est.rate or 0, est.variance * f(m - 1), est.pseudo * f(m - 1), 0.95) >= target


@pytest.mark.parametrize(
    ("wrong", "probability", "accepts"),
    [
        ([True], [0.0], 10),
        ([True], [1.5], 10),
        ([True], [float("nan")], 10),
        ([True, False], [0.5], 10),
        ([True], [0.5], 0),
    ],
)
def test_impossible_inputs_are_refused(wrong: list[bool], probability: list[float], accepts: int) -> None:
    """A probability outside (0, 1], a count mismatch or audits without accepts raise ValueError."""
    with pytest.raises(ValueError, match=r"probabilit|accepts"):
        horvitz_thompson(wrong, probability, accepts)


def test_no_audit_gives_no_figure() -> None:
    """Without an audit the rate, interval and bound are None, never 0."""
    est = horvitz_thompson([], [], 100)
    assert (est.rate, est.low, est.high, est.bound) == (None, None, None, None)
    assert further_audits(est, 0.05) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.floats(1e-6, 1.0)), min_size=0, max_size=60),
    st.integers(1, 10**6),
    st.floats(1e-4, 0.999),
)
def test_no_audit_sample_crashes_the_estimate(
    audits: list[tuple[bool, float]], accepts: int, target: float
) -> None:
    """Any audits, probabilities and target give an ordered interval inside [0, 1] and a count or None."""
    est = horvitz_thompson([w for w, _ in audits], [p for _, p in audits], max(accepts, len(audits)))
    if est.rate is not None:
        assert est.low is not None
        assert est.high is not None
        assert est.bound is not None
        assert 0 <= est.low <= 1
        assert 0 <= est.high <= 1
        assert 0 <= est.bound <= est.high + 1e-12
        assert est.low <= min(est.rate, est.high) + 1e-12
    m = further_audits(est, target)
    assert m is None or m >= 0
