"""Small statistics the metrics report needs: Wilson intervals for rates, Cohen's κ, confusion matrices,
means with a normal-approximation interval and linear-interpolation percentiles. Pure functions."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from arbiter.metrics.result import Confusion, Kappa, MeanEstimate, Rate

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials; None when n is 0 (no data, no interval)."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"successes {k} outside 0..{n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def rate(k: int, n: int) -> Rate:
    """k of n as a Rate with its Wilson 95 % interval; rate and interval are None when n is 0."""
    interval = wilson(k, n)
    if interval is None:
        return Rate(k=k, n=n)
    return Rate(k=k, n=n, rate=k / n, low=interval[0], high=interval[1])


def clean_audits_needed(k: int, n: int, target: float, z: float = Z95) -> int:
    """The smallest m >= 0 such that m more audits, none of them a false accept, bring the Wilson upper bound
    of k in n + m under `target` (the bound falls as the denominator grows with k fixed)."""
    if not 0 < target < 1:
        raise ValueError(f"target {target} outside (0, 1)")

    def under(m: int) -> bool:
        interval = wilson(k, n + m, z)
        return interval is not None and interval[1] < target

    if under(0):
        return 0
    low, high = 0, 1  # under(low) is False; grow high until under(high)
    while not under(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if under(middle) else (middle, high)
    return high


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0..1) by linear interpolation between order statistics (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def mean_estimate(
    total: float, total_sq: float, n: int, z: float = Z95, floor: float | None = None
) -> MeanEstimate:
    """Mean of n values from their sum and sum of squares, with mean ± z·sd/√n (sample sd); the interval is
    cut at `floor` when the values cannot go below it (an error is never negative)."""
    if n <= 0:
        return MeanEstimate(n=0)
    mean = total / n
    if n == 1:
        return MeanEstimate(n=1, mean=mean)
    var = max(0.0, (total_sq - n * mean * mean) / (n - 1))
    sd = math.sqrt(var)
    half = z * sd / math.sqrt(n)
    low = mean - half if floor is None else max(floor, mean - half)
    return MeanEstimate(n=n, mean=mean, sd=sd, low=low, high=mean + half)


def confusion(pairs: Counter[tuple[str, str]], order: Sequence[str] = ()) -> Confusion:
    """Rows are the truth, columns the prediction; labels in `order` first, then the rest sorted."""
    seen = {label for pair in pairs for label in pair}
    labels = [label for label in order if label in seen]
    labels += sorted(seen - set(labels))
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for (truth, predicted), n in pairs.items():
        counts[index[truth]][index[predicted]] += n
    return Confusion(labels=labels, counts=counts)


def cohen_kappa(pairs: Iterable[tuple[str, str]], z: float = Z95) -> Kappa:
    """Cohen's κ of two raters over the same items, with the raw agreement (Wilson) and Cohen's (1960)
    large-sample interval κ ± z·√(p_o(1−p_o)/(n(1−p_e)²)). κ is None when there are no pairs or when
    chance agreement is 1 (both raters always gave one and the same label: κ is undefined)."""
    table: Counter[tuple[str, str]] = Counter(pairs)
    n = sum(table.values())
    agree = sum(c for (a, b), c in table.items() if a == b)
    raw = rate(agree, n)
    matrix = confusion(table)
    if n == 0:
        return Kappa(n=0, agreement=raw, confusion=matrix)
    first: Counter[str] = Counter()
    second: Counter[str] = Counter()
    for (a, b), c in table.items():
        first[a] += c
        second[b] += c
    p_o = agree / n
    p_e = sum(first[label] * second[label] for label in first) / (n * n)
    if math.isclose(p_e, 1.0):
        return Kappa(n=n, agreement=raw, confusion=matrix, expected=p_e)
    kappa = (p_o - p_e) / (1 - p_e)
    se = math.sqrt(p_o * (1 - p_o) / (n * (1 - p_e) ** 2))
    return Kappa(
        n=n,
        kappa=kappa,
        low=max(-1.0, kappa - z * se),
        high=min(1.0, kappa + z * se),
        agreement=raw,
        expected=p_e,
        confusion=matrix,
    )
