"""The CLI as a user types it: usage errors are one line with exit 2, runs and verifies work as documented."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import VerificationOutcome
from arbiter.contracts.schemas import SCHEMAS
from tests.conftest import FIXTURES

runner = CliRunner()


def test_schema_lists_contracts() -> None:
    """`arbiter schema` lists every contract name."""
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    for name in SCHEMAS:
        assert name in result.output


def test_schema_prints_json_schema() -> None:
    """`arbiter schema classification` prints the ClassificationOutput JSON Schema."""
    result = runner.invoke(app, ["schema", "classification"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["additionalProperties"] is False
    assert "segments" in schema["properties"]


def test_bad_profile_is_a_clear_error(tmp_path: Path) -> None:
    """A profile that fails validation names the problem."""
    bad = tmp_path / "p.toml"
    bad.write_text('name = "x"\n')
    result = runner.invoke(app, ["run", str(FIXTURES / "pdfs"), "--profile", str(bad)])
    assert result.exit_code == 2
    assert "invalid" in result.output


def test_run_with_classifications_writes_summary(tmp_path: Path) -> None:
    """`arbiter run DIR --classifications DIR` exits 0 and writes the run summary."""
    pdfs = sorted((FIXTURES / "pdfs").glob("*.pdf"))[:4]
    indir = tmp_path / "in"
    indir.mkdir()
    for pdf in pdfs:
        shutil.copy(pdf, indir)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "run",
            str(indir),
            "--classifications",
            str(FIXTURES / "demo"),
            "--out",
            str(out),
            "--workers",
            "2",
            "--production",
            str(FIXTURES / "production.csv"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "accepted first time" in result.output
    summaries = list((out / "runs").glob("*/summary.json"))
    assert len(summaries) == 1
    summary = json.loads(summaries[0].read_text())
    assert summary["documents"] == 4
    assert summary["classifier"] == "file"


def test_run_with_baseline_classifier(tmp_path: Path) -> None:
    """Without --classifications the offline baseline classifies; every document still gets a result."""
    indir = tmp_path / "in"
    indir.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:3]:
        shutil.copy(pdf, indir)
    result = runner.invoke(app, ["run", str(indir), "--out", str(tmp_path / "out"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "out" / "index").glob("*.json"))) == 3


def test_verify_json_prints_outcome() -> None:
    """`arbiter verify --json` prints a VerificationOutcome for the document."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    result = runner.invoke(
        app,
        [
            "verify",
            "--pdf",
            str(pdf),
            "--classification",
            str(FIXTURES / "classifications" / f"{pdf.stem}.json"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    outcome = VerificationOutcome.model_validate_json(result.stdout)
    assert outcome.doc_id == pdf.stem
    assert outcome.final_decision == "AUTO_ACCEPT"


def test_verify_human_output_names_rule() -> None:
    """`arbiter verify` without --json prints the decision, the rule that fired and the semantic checks."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    result = runner.invoke(
        app,
        [
            "verify",
            "--pdf",
            str(pdf),
            "--classification",
            str(FIXTURES / "classifications" / f"{pdf.stem}.json"),
        ],
    )
    assert result.exit_code == 0
    assert "AUTO_ACCEPT" in result.output
    assert "rule" in result.output
    assert "Semantic checks: rules only (no model)" in result.output


def test_verify_broken_json_escalates(tmp_path: Path) -> None:
    """A classification that is not JSON is escalated with V1.INVALID_JSON, not a crash."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    bad = tmp_path / "bad.json"
    bad.write_text('{"doc_id": "x", "segments": [')
    result = runner.invoke(app, ["verify", "--pdf", str(pdf), "--classification", str(bad), "--json"])
    assert result.exit_code == 0
    outcome = VerificationOutcome.model_validate_json(result.stdout)
    assert outcome.final_decision == "ESCALATE_TO_SME"
    assert "V1.INVALID_JSON" in {i.code for i in outcome.final_issues}


def test_demo_runs_on_fixtures(tmp_path: Path) -> None:
    """`arbiter demo` verifies every bundled fixture and shows accepts, fixes and escalations."""
    result = runner.invoke(app, ["demo", "--out", str(tmp_path / "out"), "--workers", "2"])
    assert result.exit_code == 0, result.output
    summary = json.loads(next((tmp_path / "out" / "runs").glob("*/summary.json")).read_text())
    assert summary["documents"] >= 30
    assert summary["accepted_first_time"] > 0
    assert summary["accepted_after_fixes"] > 0
    accepted = summary["accepted_first_time"] + summary["accepted_after_fixes"]
    assert summary["accepted_by_semantic_checks"] == {"rules_only": accepted, "rules_and_model": 0}
    assert f"Accepted on rules only: {accepted}; rules and a model: 0." in result.output
    assert summary["escalated"] > 0
    assert summary["errors_by_reason"] == {
        "pdf_encrypted": 1,
        "pdf_broken": 1,
        "pdf_not_pdf": 1,
        "pdf_empty": 1,
    }
