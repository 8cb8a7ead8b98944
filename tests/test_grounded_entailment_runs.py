"""The grounded-answer entailment phase end to end (issue 30, items 3 and 5): `arbiter demo`, `run` and `verify
--kind grounded-answer --llm replay` answered by the bundled sample answers with no miss; a replay miss is a
clear error that escalates, never a pass; what items runs cannot do with a model is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.demo.grounded.build import clean_item, planted
from arbiter.demo.grounded.questions import SPECS
from arbiter.kinds import GROUNDED
from tests.conftest import FIXTURES

runner = CliRunner()
BY_ID = {s.qid: s for s in SPECS}
ITEMS = FIXTURES / "grounded" / "items.jsonl"


def summary_of(out: Path) -> dict[str, Any]:
    newest = max((out / "runs").glob("*/summary.json"), key=lambda p: p.stat().st_mtime_ns)
    found: dict[str, Any] = json.loads(newest.read_text())
    return found


def decisions(out: Path) -> dict[str, dict[str, Any]]:
    return {
        path.parent.name: json.loads(path.read_text())
        for path in (out / "agent_outputs").glob("*/arbiter_decision.json")
    }


def v4_phase(decision: dict[str, Any]) -> str:
    results = decision["attempts"][-1]["verifier_results"]
    return str(next(r["llm_phase"] for r in results if r["verifier"] == "V4"))


def test_grounded_demo_runs_with_the_sample_replays_and_no_miss(tmp_path: Path) -> None:
    """`arbiter demo --kind grounded-answer --llm replay`: every entailment request is answered from the bundled
    sample answers (no error, no miss), the same planted faults escalate and correct answers are accepted, and
    the sample model's findings appear beside the rules'."""
    out = tmp_path / "out"
    result = runner.invoke(app, ["demo", "--kind", GROUNDED, "--llm", "replay", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Planted wrong answers escalated: 14 of 14" in text
    assert "accepted: 31 of 31" in text
    summary = summary_of(out)
    assert summary["llm"]["backend"] == "replay"
    assert summary["llm"]["errors"] == {}
    assert not summary["llm"].get("notes")
    assert summary["llm"]["calls"] > 0
    found = decisions(out)
    # V4 alone has a model phase in this kind: an accept whose V4 phase judged was checked by rules and a model
    # (an abstention asks the model nothing, so it stays rules only).
    accepted_judged = sum(
        d["final_decision"] == "AUTO_ACCEPT" and v4_phase(d) in ("PASSED", "FAILED") for d in found.values()
    )
    earned = summary["accepted_by_semantic_checks"]
    assert earned["rules_and_model"] == accepted_judged > 0, earned
    assert sum(earned.values()) == 31, earned
    judged = [d for d in found.values() if v4_phase(d) in ("PASSED", "FAILED")]
    assert len(judged) >= 35
    codes = [(i["code"], i["source"]) for d in found.values() for i in d["final_issues"]]
    assert ("V4.STATEMENT_NOT_ENTAILED", "llm") in codes
    assert not [c for c, _ in codes if c == "V4.ENTAILMENT_ERROR"]
    truth = {row["item_id"]: row for row in json.loads((out / "demo-grounded" / "truth.json").read_text())}
    flagged = {i for i, d in found.items() if any(x["source"] == "llm" for x in d["final_issues"])}
    assert all(truth[i]["expected"] == "ESCALATE_TO_SME" for i in flagged)


def test_a_replay_miss_is_a_clear_error_never_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no recorded answer, a correct item is escalated with an ERRORED V4 whose finding says how to record
    one, and the run's summary counts the miss; offline, the same item is accepted."""
    empty = tmp_path / "replays"
    empty.mkdir()
    monkeypatch.setenv("ARBITER_REPLAY_DIR", str(empty))
    one = tmp_path / "q01.json"
    one.write_text(json.dumps(clean_item(BY_ID["Q01"])))
    offline = runner.invoke(app, ["verify", "--kind", GROUNDED, "--item", str(one), "--json"])
    assert json.loads(offline.stdout)["final_decision"] == "AUTO_ACCEPT"
    missed = runner.invoke(
        app, ["verify", "--kind", GROUNDED, "--item", str(one), "--llm", "replay", "--json"]
    )
    assert missed.exit_code == 0, missed.output
    outcome = json.loads(missed.stdout)
    assert outcome["final_decision"] == "ESCALATE_TO_SME"
    assert v4_phase(outcome) == "ERRORED"
    (error,) = [i for i in outcome["final_issues"] if i["code"] == "V4.ENTAILMENT_ERROR"]
    assert "no recorded response" in error["message"].lower()
    assert "ARBITER_LLM_RECORD_DIR" in error["message"]
    out = tmp_path / "out"
    run = runner.invoke(app, ["run", str(one), "--kind", GROUNDED, "--llm", "replay", "--out", str(out)])
    assert run.exit_code == 0, run.output
    summary = summary_of(out)
    assert summary["llm"]["errors"] == {"replay_miss": 1}
    assert "had no recorded answer" in " ".join(summary["llm"]["notes"])
    assert decisions(out)["q01"]["final_decision"] == "ESCALATE_TO_SME"


def test_verify_and_run_take_the_model_options(tmp_path: Path) -> None:
    """`verify --llm replay` judges a changed number as contradicted by the sample model; `run --llm replay`
    after an offline run decides the items again (the model is part of the skip key) and a second replay run
    skips them all."""
    made = planted(BY_ID["Q01"], "number_changed")
    assert made is not None
    one = tmp_path / "q01n.json"
    one.write_text(json.dumps(made.item))
    verified = runner.invoke(
        app, ["verify", "--kind", GROUNDED, "--item", str(one), "--llm", "replay", "--json"]
    )
    assert verified.exit_code == 0, verified.output
    outcome = json.loads(verified.stdout)
    assert v4_phase(outcome) == "FAILED"
    (finding,) = [i for i in outcome["final_issues"] if i["code"] == "V4.STATEMENT_NOT_ENTAILED"]
    assert "contradicted by" in finding["message"]
    assert "30" in finding["message"]
    out = tmp_path / "out"
    first = runner.invoke(app, ["run", str(ITEMS), "--kind", GROUNDED, "--out", str(out), "--quiet"])
    assert first.exit_code == 0, first.output
    again = ["run", str(ITEMS), "--kind", GROUNDED, "--out", str(out), "--quiet", "--llm", "replay"]
    second = runner.invoke(app, again)
    assert second.exit_code == 0, second.output
    assert "unchanged" not in second.output
    assert summary_of(out)["llm"]["errors"] == {}
    third = runner.invoke(app, again)
    assert "45 unchanged" in " ".join(third.output.split())


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--llm", "gemini", "--llm-mode", "batch"], "--llm-mode batch"),
        (["--llm", "replay", "--engine", "ray"], "local engine only"),
        (["--resume-batch", "JOB"], "--resume-batch"),
    ],
    ids=["batch", "ray", "resume"],
)
def test_what_items_cannot_do_with_a_model_is_refused(tmp_path: Path, options: list[str], said: str) -> None:
    """Batch jobs, the Ray engine with a model and --resume-batch are refused in one line, before anything runs."""
    result = runner.invoke(app, ["run", str(ITEMS), "--kind", GROUNDED, "--out", str(tmp_path), *options])
    assert result.exit_code != 0
    assert said in " ".join(result.output.split()), result.output
    assert not (tmp_path / "arbiter.db").exists()
