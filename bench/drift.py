"""Drift alarm simulation: Arbiter's per-producer CUSUMs (arbiter/record/drift.py) on simulated runs. Prints one JSON.

    .venv/bin/python bench/drift.py [--runs 200] [--documents 500] [--seed 33]

A simulated run is `documents` decided documents from three known producers (shares 1/2, 1/4, 1/4), each
escalated with probability 10 %; an accept's risk score is Beta(1, 20) (about 12 % at or above the profile's
`high_risk` of 0.1). The known producers have `history` documents each in earlier runs (drawn the same way;
a run seeds its monitor from the database's history as `arbiter run` does); `--history 0` is a database's
first run, where every producer is new. A shifted run also has a new producer from its first document, 5 % of
the batch, with 30 % wrong answers: a wrong answer is escalated, a right one at the base rate (37 %
escalated). Reported, with the profile's default `[drift]` settings: the share of shifted runs whose new
producer raises an alarm within the run (`detected_within`), the detection delay in batch documents (median
and 90th percentile of the detected), the share of unshifted runs with any alarm (`false_alarm_rate`, goal
≤ 1 %), and the price of scrutinising new producers more closely: the share of runs in which a new producer
that is no worse than the others raises an alarm (`new_producer_false_alarm_rate`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.contracts.sampling_profile import DriftPolicy
from arbiter.record.drift import ESCALATION, RISK_MIX, DriftMonitor

BASE_ESCALATION, NEW_SHARE, NEW_WRONG = 0.10, 0.05, 0.30
KNOWN = ("producer-a", "producer-a", "producer-b", "producer-c")
NEW = "producer-new"


def simulate(
    seed: int,
    documents: int,
    *,
    shifted: bool,
    policy: DriftPolicy | None = None,
    history: int = 1_000,
    new_unshifted: bool = False,
) -> DriftMonitor:
    """One simulated run fed to a monitor seeded with the known producers' `history`; stops at the new
    producer's first alarm when shifted. `new_unshifted`: the new producer joins, answering as well as the
    others."""
    rng = random.Random(seed)
    policy = policy or DriftPolicy()
    monitor = DriftMonitor(policy, run_id=f"sim-{seed}")
    seeded: dict[tuple[str, str], tuple[int, int]] = {}
    for stratum in sorted(set(KNOWN)) if history else ():
        escalations = sum(rng.random() < BASE_ESCALATION for _ in range(history))
        accepts = history - escalations
        risky = sum(rng.betavariate(1, 20) >= policy.high_risk for _ in range(accepts))
        seeded[(stratum, ESCALATION)] = (history, escalations)
        seeded[(stratum, RISK_MIX)] = (accepts, risky)
    monitor.seed(seeded)
    for _ in range(documents):
        if (shifted or new_unshifted) and rng.random() < NEW_SHARE:
            stratum = NEW
            escalated = (shifted and rng.random() < NEW_WRONG) or rng.random() < BASE_ESCALATION
        else:
            stratum = rng.choice(KNOWN)
            escalated = rng.random() < BASE_ESCALATION
        risk = None if escalated else rng.betavariate(1, 20)
        monitor.observe(stratum, escalated=escalated, risk=risk)
        if shifted and monitor.standing(NEW):
            break
    return monitor


def delay(monitor: DriftMonitor) -> int | None:
    """The batch document at which the new producer's first alarm was raised, or None."""
    raised = [a.raised_at for a in monitor.alarms() if a.stratum == NEW]
    return min(raised) if raised else None


def run(runs: int = 200, documents: int = 500, seed: int = 33, history: int = 1_000) -> dict[str, Any]:
    started = time.perf_counter()
    delays = [delay(simulate(seed + i, documents, shifted=True, history=history)) for i in range(runs)]
    detected = sorted(d for d in delays if d is not None)
    false_runs = sum(
        bool(simulate(seed + runs + i, documents, shifted=False, history=history).alarms())
        for i in range(runs)
    )
    new_false = sum(
        any(
            a.stratum == NEW
            for a in simulate(
                seed + 2 * runs + i, documents, shifted=False, history=history, new_unshifted=True
            ).alarms()
        )
        for i in range(runs)
    )

    def quantile(q: float) -> int | None:
        return detected[min(len(detected) - 1, int(q * len(detected)))] if detected else None

    return {
        "runs": runs,
        "documents": documents,
        "history_per_known_producer": history,
        "policy": DriftPolicy().model_dump(),
        "scenario": {
            "base_escalation": BASE_ESCALATION,
            "new_producer_share": NEW_SHARE,
            "new_producer_wrong": NEW_WRONG,
        },
        "detected_within": round(len(detected) / runs, 4),
        "delay_median": quantile(0.5),
        "delay_p90": quantile(0.9),
        "false_alarm_rate": round(false_runs / runs, 4),
        "new_producer_false_alarm_rate": round(new_false / runs, 4),
        "seconds": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument(
        "--history", type=int, default=1_000, help="each known producer's documents in earlier runs (0: none)"
    )
    args = parser.parse_args(argv)
    print(json.dumps(run(args.runs, args.documents, args.seed, args.history), indent=2))


if __name__ == "__main__":
    main()
