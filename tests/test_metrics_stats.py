"""Statistics behind the metrics: Wilson intervals, Cohen's κ, percentiles, means and confusion matrices,
checked against published values and hand computation."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.metrics.stats import (
    clean_audits_needed,
    cohen_kappa,
    confusion,
    mean_estimate,
    percentile,
    rate,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (Wilson score, no correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # the brief's small cases
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    """The Wilson 95 % interval equals the published bounds to four decimals."""
    got = wilson(k, n)
    assert got is not None
    assert got == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_wilson_over_nothing_is_undefined() -> None:
    """n = 0 has no interval and the rate is None, never 0."""
    assert wilson(0, 0) is None
    r = rate(0, 0)
    assert (r.k, r.n, r.rate, r.low, r.high) == (0, 0, None, None, None)


def test_wilson_refuses_impossible_counts() -> None:
    """More successes than trials is a programming error, not a rate."""
    with pytest.raises(ValueError, match="outside"):
        wilson(3, 2)


@given(st.integers(min_value=1, max_value=10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_brackets_the_rate(kn: tuple[int, int]) -> None:
    """For any k of n the interval lies in [0, 1] and contains k/n."""
    k, n = kn
    r = rate(k, n)
    assert r.low is not None
    assert r.high is not None
    assert r.rate is not None
    assert 0.0 <= r.low <= r.rate <= r.high <= 1.0


@pytest.mark.parametrize(
    ("table", "kappa", "p_e"),
    [
        # Wikipedia "Cohen's kappa", worked examples (yes/yes, yes/no, no/yes, no/no)
        ((20, 5, 10, 15), 0.4, 0.5),
        ((45, 15, 25, 15), 0.1304, 0.54),
        ((25, 35, 5, 35), 0.2593, 0.46),
    ],
)
def test_kappa_matches_textbook_examples(table: tuple[int, int, int, int], kappa: float, p_e: float) -> None:
    """κ and chance agreement equal the worked examples."""
    yy, yn, ny, nn = table
    pairs = [("yes", "yes")] * yy + [("yes", "no")] * yn + [("no", "yes")] * ny + [("no", "no")] * nn
    k = cohen_kappa(pairs)
    assert k.kappa == pytest.approx(kappa, abs=5e-5)
    assert k.expected == pytest.approx(p_e)
    assert k.n == sum(table)
    assert k.agreement.k == yy + nn


def test_kappa_interval_is_cohens_large_sample_formula() -> None:
    """κ ± 1.96·√(p_o(1−p_o)/(n(1−p_e)²)): 0.4 ± 0.2540 for the first textbook example."""
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    k = cohen_kappa(pairs)
    assert (k.low, k.high) == (pytest.approx(0.1460, abs=1e-4), pytest.approx(0.6540, abs=1e-4))


@pytest.mark.parametrize(
    ("pairs", "kappa"),
    [
        ([], None),  # no pairs
        ([("A", "A")] * 4, None),  # one label throughout: chance agreement 1, κ undefined
        ([("A", "A"), ("B", "B")], 1.0),  # perfect agreement
        ([("A", "B"), ("B", "A")], -1.0),  # perfect disagreement over two balanced labels
    ],
)
def test_kappa_edge_cases(pairs: list[tuple[str, str]], kappa: float | None) -> None:
    """Undefined cases give None; perfect agreement 1 and perfect disagreement −1."""
    assert cohen_kappa(pairs).kappa == (None if kappa is None else pytest.approx(kappa))


def test_kappa_confusion_counts_the_pairs() -> None:
    """The reviewers' confusion matrix has the first reviewer in rows, the second in columns."""
    k = cohen_kappa([("A", "B"), ("A", "A"), ("B", "B"), ("A", "B")])
    assert k.confusion.labels == ["A", "B"]
    assert k.confusion.counts == [[1, 2], [0, 1]]


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 0.5, None),
        ([7.0], 0.9, 7.0),
        ([1, 2, 3, 4], 0.5, 2.5),
        ([1, 2, 3, 4], 0.9, 3.7),
        ([4, 1, 3, 2], 0.0, 1),
    ],
)
def test_percentile_interpolates_linearly(values: list[float], q: float, expected: float | None) -> None:
    """Quantiles interpolate between order statistics (numpy's default); an empty list has none."""
    assert percentile(values, q) == (None if expected is None else pytest.approx(expected))


def test_mean_estimate_from_sums() -> None:
    """Mean, sample sd and mean ± 1.96·sd/√n from the sum and sum of squares of 1, 2, 3, 4."""
    m = mean_estimate(10.0, 30.0, 4)
    assert (m.mean, m.sd) == (pytest.approx(2.5), pytest.approx(1.2910, abs=1e-4))
    assert (m.low, m.high) == (pytest.approx(2.5 - 1.2652, abs=1e-4), pytest.approx(2.5 + 1.2652, abs=1e-4))


@pytest.mark.parametrize(("n", "has_interval"), [(0, False), (1, False), (2, True)])
def test_mean_estimate_needs_two_values_for_an_interval(n: int, has_interval: bool) -> None:
    """No values: no mean; one value: a mean without an interval."""
    m = mean_estimate(0.2 * n, 0.04 * n, n)
    assert (m.mean is not None) == (n > 0)
    assert (m.low is not None) == has_interval


def test_mean_estimate_floor_cuts_the_interval() -> None:
    """An error cannot be negative, so its interval stops at the floor."""
    m = mean_estimate(0.1, 0.01, 2, floor=0.0)
    assert m.low == 0.0


def test_confusion_puts_known_labels_first() -> None:
    """Labels in the given order come first, the rest sorted after; rows are truth, columns prediction."""
    matrix = confusion(
        Counter({("LAB", "LAB"): 3, ("GEN", "LAB"): 1, ("ZED", "GEN"): 2}), order=["LAB", "GEN", "X"]
    )
    assert matrix.labels == ["LAB", "GEN", "ZED"]
    assert matrix.counts == [[3, 0, 0], [1, 0, 0], [0, 2, 0]]


def _needed_by_counting(k: int, n: int, target: float) -> int:
    """The definition, one audit at a time: the first m whose upper bound of k in n + m is under target."""
    m = 0
    while True:
        interval = wilson(k, n + m)
        if interval is not None and interval[1] < target:
            return m
        m += 1


@pytest.mark.parametrize(
    ("k", "n", "target", "needed"),
    [
        # k = 0: the upper bound is z²/(N + z²), under 5 % from N = 73 (z² = 3.8415; 3.8415 × 19 = 72.99)
        (0, 0, 0.05, 73),
        (0, 1, 0.05, 72),
        (0, 72, 0.05, 1),
        (0, 73, 0.05, 0),
        (0, 200, 0.05, 0),
        (0, 1, 0.10, 34),  # 3.8415 × 9 = 34.57: N = 35
        (1, 1, 0.05, None),
        (3, 40, 0.05, None),
        (10, 10, 0.01, None),
    ],
)
def test_clean_audits_needed_is_the_smallest_count(k: int, n: int, target: float, needed: int | None) -> None:
    """The clean audits still needed is the smallest m whose Wilson upper bound of k in n + m is under target."""
    got = clean_audits_needed(k, n, target)
    assert got == _needed_by_counting(k, n, target)
    if needed is not None:
        assert got == needed
    if got:
        high = wilson(k, n + got - 1)
        assert high is None or high[1] >= target


@given(st.integers(0, 30), st.integers(0, 300), st.sampled_from([0.01, 0.05, 0.1, 0.3]))
def test_clean_audits_needed_matches_counting(k: int, extra: int, target: float) -> None:
    """For any counts, the search agrees with counting audits one at a time."""
    assert clean_audits_needed(k, k + extra, target) == _needed_by_counting(k, k + extra, target)
