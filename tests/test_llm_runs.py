"""Batch runs with the LLM layer on: replayed sample answers, zero-cost re-runs, budgets and batch mode."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.net import switch as network
from arbiter.run.job import RunOptions, execute, resume
from tests.conftest import FIXTURES
from tests.gemini_fakes import FakeBatches, FakeGenaiClient

runner = CliRunner()


def some_pdfs(tmp_path: Path, n: int) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:n]:
        shutil.copy(pdf, folder / pdf.name)
    return folder


def summary_of(out: Path) -> dict[str, Any]:
    newest = max((out / "runs").glob("*/summary.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(newest.read_text())


def test_replay_demo_answers_every_llm_request(tmp_path: Path) -> None:
    """`arbiter run --llm replay` on the fixtures finds a sample answer for every request: no LLM errors."""
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "run",
            str(FIXTURES / "pdfs"),
            "--classifications",
            str(FIXTURES / "demo"),
            "--llm",
            "replay",
            "--out",
            str(out),
            "--workers",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = summary_of(out)
    assert summary["llm"]["backend"] == "replay"
    assert summary["llm"]["errors"] == {}
    assert summary["llm"]["calls"] > 0
    assert summary["documents"] == summary["processed"]
    accepted = summary["accepted_first_time"] + summary["accepted_after_fixes"]
    assert summary["accepted_by_semantic_checks"] == {"rules_only": 0, "rules_and_model": accepted}
    assert f"rules and a model: {accepted}" in result.output
    llm_issues = [
        issue["code"]
        for decision in out.glob("agent_outputs/*/arbiter_decision.json")
        for issue in json.loads(decision.read_text())["final_issues"]
        if issue["source"] == "llm"
    ]
    assert "V3.LLM_TRAP" in llm_issues
    assert not [code for code in llm_issues if code.endswith("LLM_ERROR")]


def test_replayed_gemini_classifier_classifies_every_fixture(tmp_path: Path) -> None:
    """`--classifier gemini --llm replay` classifies each fixture from the samples and verifies it."""
    out = tmp_path / "out"
    folder = some_pdfs(tmp_path, 6)
    result = runner.invoke(
        app,
        [
            "run",
            str(folder),
            "--classifier",
            "gemini",
            "--llm",
            "replay",
            "--out",
            str(out),
            "--workers",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = summary_of(out)
    assert summary["errors"] == 0
    assert summary["accepted_first_time"] >= 5


def test_second_run_costs_zero_calls(tmp_path: Path) -> None:
    """Re-running with --force answers every LLM request from the disk cache: 0 calls, $0."""
    out = tmp_path / "out"
    folder = some_pdfs(tmp_path, 4)
    args = [
        "run",
        str(folder),
        "--classifications",
        str(FIXTURES / "demo"),
        "--llm",
        "replay",
        "--out",
        str(out),
    ]
    assert runner.invoke(app, args).exit_code == 0
    first = summary_of(out)["llm"]
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    second = summary_of(out)["llm"]
    assert first["calls"] > 0
    assert second["calls"] == 0
    assert second["cost_usd"] == 0
    assert second["cache_hits"] >= first["calls"]


def test_no_cache_calls_again(tmp_path: Path) -> None:
    """--no-cache bypasses the cache: the same run makes its calls again."""
    out = tmp_path / "out"
    folder = some_pdfs(tmp_path, 2)
    args = [
        "run",
        str(folder),
        "--classifications",
        str(FIXTURES / "demo"),
        "--llm",
        "replay",
        "--out",
        str(out),
    ]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, [*args, "--force", "--no-cache"]).exit_code == 0
    assert summary_of(out)["llm"]["calls"] > 0


def test_tiny_document_budget_escalates_with_budget_exhausted(tmp_path: Path) -> None:
    """A per-document token budget too small for the semantic checks escalates with budget_exhausted."""
    out = tmp_path / "out"
    folder = some_pdfs(tmp_path, 2)
    result = runner.invoke(
        app,
        [
            "run",
            str(folder),
            "--classifications",
            str(FIXTURES / "demo"),
            "--llm",
            "replay",
            "--out",
            str(out),
            "--doc-token-budget",
            "50",
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = summary_of(out)
    assert summary["escalated_by_reason"].get("budget_exhausted") == summary["documents"]
    assert summary["accepted_first_time"] + summary["accepted_after_fixes"] == 0


def test_llm_choice_changes_the_skip_key(tmp_path: Path) -> None:
    """A document verified without an LLM is redone when the next run turns the LLM on."""
    out = tmp_path / "out"
    folder = some_pdfs(tmp_path, 2)
    base = ["run", str(folder), "--classifications", str(FIXTURES / "demo"), "--out", str(out)]
    assert runner.invoke(app, base).exit_code == 0
    assert runner.invoke(app, [*base, "--llm", "replay"]).exit_code == 0
    assert summary_of(out)["processed"] == 2


def test_batch_mode_submits_then_resume_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch mode queues the LLM requests as one job; resuming stores the answers and decides every document."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)  # the fake client below is the only "service"
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-real")
    fake = FakeGenaiClient(batches=FakeBatches(states=["JOB_STATE_SUCCEEDED"]))
    out = tmp_path / "out"
    options = RunOptions(
        inputs=[str(some_pdfs(tmp_path, 3))],
        classifications=str(FIXTURES / "classifications"),
        out_dir=str(out),
        workers=1,
        llm={"backend": "gemini", "mode": "batch"},
    )
    first = execute(options, genai_client=fake)
    assert first["pending_llm_batch"] == 3
    assert first["processed"] == 0
    job = first["llm_batch_job"]
    assert job["requests"] == 9  # V2, V3 and V4 for each document
    saved, collected = resume(job["id"], out, genai_client=fake)
    assert collected.status == "succeeded"
    assert len(collected.stored) == 9
    second = execute(saved, genai_client=fake)
    assert second["pending_llm_batch"] == 0
    assert second["accepted_first_time"] == 3
    assert "llm_batch_job" not in second
    assert second["llm"]["calls"] == 0


def test_resume_unknown_job_is_a_clear_error(tmp_path: Path) -> None:
    """--resume-batch with a job this output folder never submitted is a one-line usage error."""
    result = runner.invoke(app, ["run", "--resume-batch", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "No batch job nope" in result.output


def test_run_without_inputs_is_a_usage_error() -> None:
    """`arbiter run` with neither inputs nor --resume-batch says what is missing."""
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 2
    assert "Give the PDFs" in result.output


def test_verify_with_replayed_llm_runs_the_semantic_phases() -> None:
    """`arbiter verify --llm replay` runs V2–V4's semantic phases from the samples and reports their use."""
    pdf = FIXTURES / "pdfs" / "note-injection-03.pdf"
    result = runner.invoke(
        app,
        [
            "verify",
            "--pdf",
            str(pdf),
            "--classification",
            str(FIXTURES / "demo" / "note-injection-03.json"),
            "--llm",
            "replay",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)
    phases = {r["verifier"]: r["llm_phase"] for r in outcome["attempts"][0]["verifier_results"]}
    assert phases["V3"] in ("PASSED", "FAILED")
    assert "V3.LLM_TRAP" in {i["code"] for i in outcome["final_issues"]}
