"""The grounded-answer kind measured (issue 30.5), offline and with the sample replay model: planted faults
escalated, by kind; correct answers accepted; meaning-preserving slips fixed and accepted; every decision
naming its rule.

    .venv/bin/python bench/grounded.py            # prints one JSON object

The corpus is generated (arbiter/demo/grounded): every question's correct item, every applicable wrong
answer and every fixable slip. Because the same author wrote the checks and the corpus, about a third of the
questions are held out by a hash of their id (arbiter.demo.grounded.build.held_out) and nothing was tuned on
them (their failures were read and fixed in the checks' second revision, so they are no longer clean). A
second, fresh held-out set of ten questions over paragraphs the first corpus does not use
(arbiter/demo/grounded/fresh.py) was committed before it was first measured; its figures come first. Targets: >= 95 % of planted faults escalated, <= 5 % of clean answers
escalated.

`sample_replay_model` runs the same items again as `--llm replay` does: V4's entailment phase on, answered by
the bundled sample answers (arbiter/demo/llm_replays/, written by fixtures/llm_samples_grounded.py's scripted
sample model from what the generator planted: not a real model, so its figures show the phase's wiring and that
it only adds findings, not a model's accuracy). `side_by_side` sets its figures against the offline ones.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.demo.grounded.build import Planted, bench_items, held_out
from arbiter.demo.grounded.fault import FIXABLE, WRONG
from arbiter.demo.grounded.fresh import FRESH_SPECS
from arbiter.demo.grounded.questions import SPECS
from arbiter.kinds import GROUNDED, kind
from arbiter.llm.config import LLMSettings
from arbiter.run.compose import llm_client
from arbiter.run.items import verify_item

FAULTS_TARGET = 0.95
CLEAN_TARGET = 0.05


def _rate(hit: int, n: int) -> float | None:
    return round(hit / n, 4) if n else None


def tally(rows: list[tuple[Planted, Any]]) -> dict[str, Any]:
    by_fault: dict[str, Counter[str]] = {}
    missed: list[str] = []
    false_escalations: list[str] = []
    for planted, outcome in rows:
        counts = by_fault.setdefault(planted.planted, Counter())
        counts["n"] += 1
        escalated = outcome.final_decision == "ESCALATE_TO_SME"
        counts["escalated" if escalated else "accepted"] += 1
        if planted.planted in FIXABLE and not escalated and len(outcome.attempts) > 1:
            counts["accepted_after_fixes"] += 1
        if planted.planted in WRONG and not escalated:
            missed.append(planted.item["item_id"])
        if planted.planted not in WRONG and escalated:
            false_escalations.append(planted.item["item_id"])
    wrong = [c for f, c in by_fault.items() if f in WRONG]
    right = [c for f, c in by_fault.items() if f not in WRONG]
    n_wrong, n_right = sum(c["n"] for c in wrong), sum(c["n"] for c in right)
    caught, false_esc = sum(c["escalated"] for c in wrong), sum(c["escalated"] for c in right)
    faults_rate, clean_rate = _rate(caught, n_wrong), _rate(false_esc, n_right)
    return {
        "faults_planted": n_wrong,
        "faults_escalated": caught,
        "faults_escalated_rate": faults_rate,
        "correct_items": n_right,
        "correct_escalated": false_esc,
        "correct_escalated_rate": clean_rate,
        "met": {
            "faults_escalated_ge_95pct": faults_rate is not None and faults_rate >= FAULTS_TARGET,
            "correct_escalated_le_5pct": clean_rate is not None and clean_rate <= CLEAN_TARGET,
        },
        "by_kind": {
            f: {"n": c["n"], "escalated": c["escalated"], "rate": _rate(c["escalated"], c["n"])}
            | ({"accepted_after_fixes": c["accepted_after_fixes"]} if f in FIXABLE else {})
            for f, c in sorted(by_fault.items())
        },
        "missed_faults": missed,
        "correct_but_escalated": false_escalations,
    }


Rows = list[tuple[Planted, Any]]


def splits(rows: Rows, fresh: Rows) -> dict[str, dict[str, Any]]:
    return {
        "fresh_held_out": tally(fresh),
        "held_out": tally([r for r in rows if held_out(r[0].qid)]),
        "development": tally([r for r in rows if not held_out(r[0].qid)]),
        "all": tally(rows),
    }


def sample_model_run(spec: Any, profile: Any) -> tuple[Rows, Rows, dict[str, Any]]:
    """The same items with the entailment phase answered by the bundled sample answers (as `--llm replay`
    with no ARBITER_REPLAY_DIR); no cache, so every request is answered from its replay file or missed."""
    settings = LLMSettings(backend="replay", use_cache=False, rpm=0)
    client, _ = llm_client(settings, disk_cache=False, batch=False)

    def run(specs: Any) -> Rows:
        return [(p, verify_item(spec, json.dumps(p.item), profile, llm=client)) for p in bench_items(specs)]

    rows, fresh = run(SPECS), run(FRESH_SPECS)
    totals = client.totals() if client is not None else {}
    return rows, fresh, {k: totals.get(k) for k in ("backend", "model", "calls", "errors", "notes")}


def side_by_side(offline: dict[str, Any], sample: dict[str, Any]) -> dict[str, Any]:
    """Planted faults and correct answers escalated, offline and with the sample model, split by split and
    (over all items) fault kind by fault kind."""
    out: dict[str, Any] = {}
    for split in offline:
        a, b = offline[split], sample[split]
        out[split] = {
            "faults_escalated": {
                "offline": f"{a['faults_escalated']} of {a['faults_planted']}",
                "sample_model": f"{b['faults_escalated']} of {b['faults_planted']}",
            },
            "correct_escalated": {
                "offline": f"{a['correct_escalated']} of {a['correct_items']}",
                "sample_model": f"{b['correct_escalated']} of {b['correct_items']}",
            },
        }
    out["by_kind"] = {
        fault: {
            "n": counts["n"],
            "offline": counts["escalated"],
            "sample_model": sample["all"]["by_kind"][fault]["escalated"],
        }
        for fault, counts in offline["all"]["by_kind"].items()
    }
    return out


def model_findings(rows: Rows) -> dict[str, int]:
    """Items the sample model's entailment phase added a V4.STATEMENT_NOT_ENTAILED finding to, by fault."""
    found: Counter[str] = Counter()
    for planted, outcome in rows:
        if any(i.code == "V4.STATEMENT_NOT_ENTAILED" for i in outcome.final_issues):
            found[planted.planted] += 1
    return dict(sorted(found.items()))


def main() -> dict[str, Any]:
    spec = kind(GROUNDED)
    profile = spec.load_profile()
    started = time.perf_counter()
    rows = [(p, verify_item(spec, json.dumps(p.item), profile)) for p in bench_items()]
    seconds = time.perf_counter() - started
    fresh = [(p, verify_item(spec, json.dumps(p.item), profile)) for p in bench_items(FRESH_SPECS)]
    rules = Counter(a.decision.rule for _, o in rows for a in o.attempts)
    unnamed = sum(1 for _, o in rows for a in o.attempts if not a.decision.rule)
    offline = splits(rows, fresh)
    started = time.perf_counter()
    sample_rows, sample_fresh, llm = sample_model_run(spec, profile)
    sample_seconds = time.perf_counter() - started
    sample = splits(sample_rows, sample_fresh)
    n_sample = len(sample_rows) + len(sample_fresh)
    return {
        "benchmark": "grounded-answer, offline (rules only, no model) and with the sample replay model",
        **offline,
        "held_out_questions": sorted({p.qid for p, _ in rows if held_out(p.qid)}),
        "fresh_held_out_questions": [s.qid for s in FRESH_SPECS],
        "items": len(rows),
        "decisions_naming_their_rule": f"{sum(rules.values()) - unnamed} of {sum(rules.values())}",
        "rules_fired": dict(rules.most_common()),
        "items_per_second": round(len(rows) / seconds, 1) if seconds else None,
        "sample_replay_model": {
            "what": "the same items with --llm replay: V4's entailment phase answered by the bundled scripted "
            "sample model (fixtures/llm_samples_grounded.py), not a real model",
            **sample,
            "items_with_not_entailed_finding": model_findings(sample_rows + sample_fresh),
            "llm": llm,
            "items_per_second": round(n_sample / sample_seconds, 1) if sample_seconds else None,
        },
        "side_by_side": side_by_side(offline, sample),
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
