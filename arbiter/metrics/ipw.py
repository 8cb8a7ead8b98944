"""The false-accept rate from audits drawn with unequal probabilities (docs/design.md §9.3).

Each accept i was audited with a known probability π_i (recorded with its decision). The Horvitz–Thompson
estimate of the rate over N accepts is Σ_audited y_i / (N π_i): unbiased whatever the design, because
each accept's chance of being counted is exactly offset by its weight. Its interval is the gamma interval
of Fay and Feuer (1997) for a weighted sum of counts, with the pseudo-event of Tiwari et al. (2006):

    weights w_i = 1 / (N π_i) of the audited accepts, estimate T = Σ w_i y_i,
    variance V = Σ w_i² y_i (1 − π_i) (the Poisson-design variance), w* = the mean weight of the audits;
    lower = Gamma⁻¹(α/2; shape T²/V, scale V/T),
    upper = Gamma⁻¹(1 − α/2; shape (T + w*)²/(V + w*²), scale (V + w*²)/(T + w*)).

With every π equal it is the exact Poisson (Garwood) interval; it stays valid when no false accept was
seen (the pseudo-event keeps the upper bound away from 0), which a normal or bootstrap interval does not.
`bench/audit_sampling.py` measures its coverage: 99 % of 1,000 simulated audit periods at 95 %.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Estimate:
    """A weighted false-accept rate: estimate, two-sided interval at the level, one-sided upper bound."""

    accepts: int
    audits: int
    false_accepts: int
    rate: float | None
    low: float | None
    high: float | None
    bound: float | None  # one-sided upper bound at the level: "≤ bound with that confidence"
    variance: float = 0.0  # V above
    pseudo: float = 0.0  # w* above
    level: float = 0.95


def _gamma_upper(total: float, variance: float, pseudo: float, q: float) -> float:
    a, b = total + pseudo, variance + pseudo * pseudo
    if b <= 0 or a <= 0:
        return 0.0
    return float(stats.gamma.ppf(q, a * a / b, scale=b / a))


def _gamma_lower(total: float, variance: float, q: float) -> float:
    if total <= 0 or variance <= 0:
        return 0.0
    return float(stats.gamma.ppf(q, total * total / variance, scale=variance / total))


def horvitz_thompson(
    wrong: Sequence[bool] | np.ndarray,
    probability: Sequence[float] | np.ndarray,
    accepts: int,
    level: float = 0.95,
) -> Estimate:
    """The rate of `wrong` over `accepts` accepts from the audited ones (`wrong[i]` the audit's verdict,
    `probability[i]` its inclusion probability, in (0, 1]); rate and interval None with no audit. The
    estimate is clipped to [0, 1] (an unlucky draw of heavy weights can pass 1 before clipping)."""
    y = np.asarray(wrong, dtype=bool)
    p = np.asarray(probability, dtype=float)
    if y.shape != p.shape or y.ndim != 1:
        raise ValueError("one inclusion probability per audit")
    if p.size and (not np.all(np.isfinite(p)) or p.min() <= 0 or p.max() > 1):
        raise ValueError("inclusion probabilities must lie in (0, 1]")
    if accepts < 0 or (p.size and accepts <= 0):
        raise ValueError("audits need accepts to come from")
    if not 0.5 <= level < 1:
        raise ValueError(f"level {level} outside [0.5, 1)")
    if p.size == 0:
        return Estimate(accepts, 0, 0, None, None, None, None)
    w = 1.0 / (accepts * p)
    total = float(np.sum(w * y))
    variance = float(np.sum(w * w * y * (1.0 - p)))
    pseudo = float(np.mean(w))
    alpha = 1.0 - level
    return Estimate(
        accepts=accepts,
        audits=int(p.size),
        false_accepts=int(y.sum()),
        rate=min(1.0, total),
        low=min(1.0, _gamma_lower(total, variance, alpha / 2)),
        high=min(1.0, _gamma_upper(total, variance, pseudo, 1 - alpha / 2)),
        bound=min(1.0, _gamma_upper(total, variance, pseudo, level)),
        variance=variance,
        pseudo=pseudo,
        level=level,
    )


def further_audits(estimate: Estimate, target: float, limit: int = 10**7) -> int | None:
    """How many more audits, drawn with the same design and finding false accepts at the estimated rate,
    would bring the one-sided upper bound under `target`: 0 when it already is; None when no number can
    (the estimate is at or above the target, or there is no audit to extrapolate from). With n + m audits
    instead of n every weight shrinks by f = n / (n + m) and there are 1 / f times as many false accepts:
    the estimate stays, the variance and the pseudo-event scale by f."""
    if not 0 < target < 1:
        raise ValueError(f"target {target} outside (0, 1)")
    if estimate.bound is None or estimate.rate is None or estimate.audits == 0:
        return None
    if estimate.bound < target:
        return 0
    if estimate.rate >= target:
        return None
    n = estimate.audits

    def under(m: int) -> bool:
        f = n / (n + m)
        return (
            _gamma_upper(estimate.rate or 0.0, estimate.variance * f, estimate.pseudo * f, estimate.level)
            < target
        )

    low, high = 0, 1
    while not under(high):
        low, high = high, high * 2
        if high > limit:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if under(middle) else (middle, high)
    return high
