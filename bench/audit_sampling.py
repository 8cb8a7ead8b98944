"""Audit sampling simulation: risk-weighted audits against today's uniform 5 % in one run. Prints one JSON.

    .venv/bin/python bench/audit_sampling.py [--accepts 10000] [--reps 1000] [--seed 33]

Each repetition makes a population of accepts: a risky stratum (5 %) whose answers are wrong 40 % of the
time and the rest wrong 0.2 % of the time (about 2.2 % overall, most of it in the risky stratum). Each
accept has a risk score, a noisy reading of its chance of being wrong (that chance × a log-normal factor,
σ = 0.7: the score ranks accepts, it is not a calibrated probability). Then:

- uniform: every accept audited with probability 5 % (about 500 audits);
- risk: an accept audited with probability c·√risk, at least the floor (1 %), at most 1, with c set so the
  expected number of audits is the budget — Arbiter's `design = "risk"` (arbiter/record/risk.py) with its
  share chosen for the budget; budgets of 150–500 audits.

Both are estimated with Arbiter's own estimator (arbiter.metrics.ipw.horvitz_thompson: Horvitz–Thompson,
gamma 95 % interval); uniform is also given today's Wilson interval. Reported per design: the share of
repetitions whose interval covers the population's true rate, the mean interval width, the mean error
(bias) of the estimate and the mean number of audits; and `audits_to_match_uniform`: the smallest
risk-weighted budget whose mean width is at most uniform's, as a share of uniform's audits (goal: ≤ 0.5,
with coverage ≥ 94 %).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from arbiter.metrics.ipw import horvitz_thompson
from arbiter.metrics.stats import wilson

RISKY_SHARE, RISKY_RATE, SAFE_RATE, NOISE = 0.05, 0.40, 0.002, 0.7
UNIFORM_SHARE, FLOOR = 0.05, 0.01
BUDGETS = (150, 200, 250, 300, 400, 500)
CHUNK = 50  # repetitions generated at once (CHUNK × accepts numbers per array)


def population(rng: np.random.Generator, reps: int, accepts: int) -> tuple[np.ndarray, np.ndarray]:
    """(wrong, risk) arrays of shape (reps, accepts)."""
    chance = np.where(rng.random((reps, accepts)) < RISKY_SHARE, RISKY_RATE, SAFE_RATE)
    risk = np.clip(chance * np.exp(rng.normal(0.0, NOISE, chance.shape)), 1e-4, 0.99)
    return rng.random(chance.shape) < chance, risk


def risk_probabilities(risk: np.ndarray, budget: float, floor: float = FLOOR) -> np.ndarray:
    """clip(c·√risk, floor, 1) per row, with c found by bisection so each row's probabilities sum to the
    budget (the sum grows with c)."""
    root = np.sqrt(risk)
    low, high = np.zeros(risk.shape[0]), np.full(risk.shape[0], 1.0 / root.min())
    for _ in range(50):
        middle = (low + high) / 2
        over = np.clip(middle[:, None] * root, floor, 1.0).sum(axis=1) > budget
        high, low = np.where(over, middle, high), np.where(over, low, middle)
    probabilities: np.ndarray = np.clip(low[:, None] * root, floor, 1.0)
    return probabilities


def _tally(rows: list[tuple[float, float, float, float, int]]) -> dict[str, Any]:
    a = np.asarray(rows, dtype=float)  # truth, estimate, low, high, audits
    covered = (a[:, 2] <= a[:, 0]) & (a[:, 0] <= a[:, 3])
    return {
        "coverage": round(float(covered.mean()), 4),
        "mean_width": round(float((a[:, 3] - a[:, 2]).mean()), 5),
        "bias": round(float((a[:, 1] - a[:, 0]).mean()), 6),
        "mean_audits": round(float(a[:, 4].mean()), 1),
    }


def run(
    accepts: int = 10_000, reps: int = 1_000, seed: int = 33, budgets: tuple[int, ...] = BUDGETS
) -> dict[str, Any]:
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    uniform_budget = UNIFORM_SHARE * accepts
    plans = {"uniform": None, **{f"risk_{b}": b * accepts / 10_000 for b in budgets}}
    rows: dict[str, list[tuple[float, float, float, float, int]]] = {name: [] for name in plans}
    wilson_rows: list[tuple[float, float, float, float, int]] = []
    truths: list[float] = []
    for start in range(0, reps, CHUNK):
        n = min(CHUNK, reps - start)
        wrong, risk = population(rng, n, accepts)
        truth = wrong.mean(axis=1)
        truths.extend(truth.tolist())
        for name, budget in plans.items():
            p = np.full(wrong.shape, UNIFORM_SHARE) if budget is None else risk_probabilities(risk, budget)
            audited = rng.random(wrong.shape) < p
            for r in range(n):
                chosen = audited[r]
                est = horvitz_thompson(wrong[r][chosen], p[r][chosen], accepts)
                rows[name].append((truth[r], est.rate or 0.0, est.low or 0.0, est.high or 1.0, est.audits))
                if budget is None:
                    k, m = int(wrong[r][chosen].sum()), int(chosen.sum())
                    low, high = wilson(k, m) or (0.0, 1.0)
                    wilson_rows.append((truth[r], k / m if m else 0.0, low, high, m))
    results = {name: _tally(found) for name, found in rows.items()}
    uniform = results["uniform"]
    matching = [b for b in budgets if results[f"risk_{b}"]["mean_width"] <= uniform["mean_width"]]
    half = results.get(f"risk_{int(uniform_budget / 2)}") if accepts == 10_000 else None
    return {
        "benchmark": "audit_sampling",
        "accepts": accepts,
        "repetitions": reps,
        "seed": seed,
        "population": {
            "risky_share": RISKY_SHARE,
            "risky_false_accept_rate": RISKY_RATE,
            "other_false_accept_rate": SAFE_RATE,
            "risk_score_noise_sigma": NOISE,
            "mean_true_rate": round(float(np.mean(truths)), 5),
        },
        "design": {"uniform_share": UNIFORM_SHARE, "risk_floor": FLOOR, "risk_budgets": list(budgets)},
        "results": results,
        "uniform_wilson": _tally(wilson_rows),
        "audits_to_match_uniform": min(matching) if matching else None,
        "audit_ratio_to_match_uniform": round(min(matching) / uniform_budget, 3) if matching else None,
        "targets": {"coverage": 0.94, "audit_ratio": 0.5},
        "met": bool(
            matching
            and min(matching) <= uniform_budget / 2
            and all(results[f"risk_{b}"]["coverage"] >= 0.94 for b in budgets)
            and (half is None or half["coverage"] >= 0.94)
        ),
        "seconds": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accepts", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.accepts, args.reps, args.seed), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
