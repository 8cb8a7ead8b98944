"""Drift alarm simulation: Arbiter's per-producer CUSUMs (arbiter/record/drift.py) on simulated runs. Prints one JSON.

    .venv/bin/python bench/drift.py [--runs 200] [--documents 500] [--seed 33]

A simulated run is `documents` decided documents from three known producers (shares 1/2, 1/4, 1/4), each
escalated with probability 10 %; an accept's risk score is Beta(1, 20) (about 12 % at or above the profile's
`high_risk` of 0.1); each document reads as one of five types (`MIX`: 40 % lab reports down to 6 % genomic
reports), drawn apart from the rest. The known producers have `history` documents each in earlier runs (drawn
the same way; a run seeds its monitor from the database's history as `arbiter run` does); `--history 0` is a
database's first run, where every producer is new.

Escalation scenario: a shifted run also has a new producer from its first document, 5 % of the batch, with
30 % wrong answers: a wrong answer is escalated, a right one at the base rate (37 % escalated). Reported, with
the profile's default `[drift]` settings: the share of shifted runs whose new producer raises an escalation or
risk-mix alarm within the run (`detected_within`), the detection delay in batch documents (median and 90th
percentile of the detected), the share of unshifted runs with any alarm (`false_alarm_rate`, goal ≤ 1 %), and
the price of scrutinising new producers more closely: the share of runs in which a new producer that is no
worse than the others raises an alarm (`new_producer_false_alarm_rate`).

Type-mix scenario (`type_mix`): from a run's first document, one known producer's batch reads as
GENOMIC_REPORT five times as often as in its history (6 % → 30 %, the other types in proportion). Reported: the
share of runs whose type-mix alarm names that producer and type within the run, its delay, and the share of
unshifted runs with any type-mix alarm (goal ≤ 1 %), with the producers' history and in a first run.
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
from arbiter.record.drift import ESCALATION, RISK_MIX, TYPE_MIX, DriftMonitor

BASE_ESCALATION, NEW_SHARE, NEW_WRONG = 0.10, 0.05, 0.30
KNOWN = ("producer-a", "producer-a", "producer-b", "producer-c")
NEW = "producer-new"
MIX = {
    "LAB_REPORT": 0.40,
    "CLINICAL_NOTE": 0.25,
    "PATHOLOGY_REPORT": 0.15,
    "ADMINISTRATIVE": 0.14,
    "GENOMIC_REPORT": 0.06,
}
SHIFTED, RISEN, RISEN_SHARE = "producer-b", "GENOMIC_REPORT", 0.30  # the type-mix scenario: 5x its share


def shifted_mix() -> dict[str, float]:
    """The shifted producer's mix: RISEN at RISEN_SHARE, the other types scaled down in proportion."""
    rest = (1 - RISEN_SHARE) / (1 - MIX[RISEN])
    return {t: RISEN_SHARE if t == RISEN else share * rest for t, share in MIX.items()}


def draw_type(rng: random.Random, mix: dict[str, float]) -> str:
    return rng.choices(list(mix), weights=list(mix.values()))[0]


def simulate(
    seed: int,
    documents: int,
    *,
    shifted: bool,
    policy: DriftPolicy | None = None,
    history: int = 1_000,
    new_unshifted: bool = False,
    type_shift: bool = False,
) -> DriftMonitor:
    """One simulated run fed to a monitor seeded with the known producers' `history`; stops at the new
    producer's first escalation or risk-mix alarm when shifted, at SHIFTED's type-mix alarm on RISEN when
    `type_shift`. `new_unshifted`: the new producer joins, answering as well as the others. The types are
    drawn from a random stream of their own, so the other draws are those of a run without them."""
    rng, types = random.Random(seed), random.Random(f"types-{seed}")
    policy = policy or DriftPolicy()
    monitor = DriftMonitor(policy, run_id=f"sim-{seed}")
    seeded: dict[tuple[str, ...], tuple[int, int]] = {}
    for stratum in sorted(set(KNOWN)) if history else ():
        escalations = sum(rng.random() < BASE_ESCALATION for _ in range(history))
        accepts = history - escalations
        risky = sum(rng.betavariate(1, 20) >= policy.high_risk for _ in range(accepts))
        seeded[(stratum, ESCALATION)] = (history, escalations)
        seeded[(stratum, RISK_MIX)] = (accepts, risky)
        read = [draw_type(types, MIX) for _ in range(history)]
        for doc_type in MIX:
            seeded[(stratum, TYPE_MIX, doc_type)] = (history, read.count(doc_type))
    monitor.seed(seeded)
    moved = shifted_mix()
    for _ in range(documents):
        if (shifted or new_unshifted) and rng.random() < NEW_SHARE:
            stratum = NEW
            escalated = (shifted and rng.random() < NEW_WRONG) or rng.random() < BASE_ESCALATION
        else:
            stratum = rng.choice(KNOWN)
            escalated = rng.random() < BASE_ESCALATION
        risk = None if escalated else rng.betavariate(1, 20)
        read_type = draw_type(types, moved if type_shift and stratum == SHIFTED else MIX)
        monitor.observe(stratum, escalated=escalated, risk=risk, read_type=read_type)
        if (shifted and delay(monitor) is not None) or (type_shift and type_delay(monitor) is not None):
            break
    return monitor


def delay(monitor: DriftMonitor) -> int | None:
    """The batch document at which the new producer's first escalation or risk-mix alarm was raised, or None."""
    raised = [a.raised_at for a in monitor.alarms() if a.stratum == NEW and a.test != TYPE_MIX]
    return min(raised) if raised else None


def type_delay(monitor: DriftMonitor) -> int | None:
    """The batch document at which the type-mix alarm on SHIFTED's RISEN share was raised, or None."""
    raised = [
        a.raised_at
        for a in monitor.alarms()
        if (a.stratum, a.test, a.read_type) == (SHIFTED, TYPE_MIX, RISEN)
    ]
    return min(raised) if raised else None


def type_alarmed(monitor: DriftMonitor) -> bool:
    return any(a.test == TYPE_MIX for a in monitor.alarms())


def quantiles(delays: list[int | None]) -> dict[str, int | None]:
    detected = sorted(d for d in delays if d is not None)

    def at(q: float) -> int | None:
        return detected[min(len(detected) - 1, int(q * len(detected)))] if detected else None

    return {"delay_median": at(0.5), "delay_p90": at(0.9)}


def run(runs: int = 200, documents: int = 500, seed: int = 33, history: int = 1_000) -> dict[str, Any]:
    started = time.perf_counter()
    delays = [delay(simulate(seed + i, documents, shifted=True, history=history)) for i in range(runs)]
    unshifted = [simulate(seed + runs + i, documents, shifted=False, history=history) for i in range(runs)]
    new_false = sum(
        any(
            a.stratum == NEW
            for a in simulate(
                seed + 2 * runs + i, documents, shifted=False, history=history, new_unshifted=True
            ).alarms()
        )
        for i in range(runs)
    )
    type_delays = [
        type_delay(simulate(seed + 3 * runs + i, documents, shifted=False, history=history, type_shift=True))
        for i in range(runs)
    ]
    first_runs = [simulate(seed + 4 * runs + i, documents, shifted=False, history=0) for i in range(runs)]
    return {
        "runs": runs,
        "documents": documents,
        "history_per_known_producer": history,
        "policy": DriftPolicy().model_dump(),
        "scenario": {
            "base_escalation": BASE_ESCALATION,
            "new_producer_share": NEW_SHARE,
            "new_producer_wrong": NEW_WRONG,
            "type_mix": MIX,
        },
        "detected_within": round(sum(d is not None for d in delays) / runs, 4),
        **quantiles(delays),
        "false_alarm_rate": round(sum(bool(m.alarms()) for m in unshifted) / runs, 4),
        "new_producer_false_alarm_rate": round(new_false / runs, 4),
        "type_mix": {
            "shifted_producer": SHIFTED,
            "type": RISEN,
            "usual_share": MIX[RISEN],
            "shifted_share": RISEN_SHARE,
            "detected_within": round(sum(d is not None for d in type_delays) / runs, 4),
            **quantiles(type_delays),
            "false_alarm_rate": round(sum(type_alarmed(m) for m in unshifted) / runs, 4),
            "false_alarm_rate_first_run": round(sum(type_alarmed(m) for m in first_runs) / runs, 4),
        },
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
