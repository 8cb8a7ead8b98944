"""`--extractor documentai` from the command line, offline on the recorded responses in fixtures/documentai."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import DocumentBundle, VerificationOutcome
from tests.conftest import FIXTURES

runner = CliRunner()
REPLAY = FIXTURES / "documentai" / "replay"
RECORDED = ("lab-quest-01", "admin-priorauth-02", "gen-caris-04", "record-30p")
UNRECORDED = "lab-labcorp-02"


def inputs(tmp_path: Path) -> Path:
    """Copies of the recorded PDFs and one PDF with no recording."""
    folder = tmp_path / "in"
    folder.mkdir()
    for doc_id in (*RECORDED, UNRECORDED):
        shutil.copy(FIXTURES / "pdfs" / f"{doc_id}.pdf", folder)
    return folder


def run(folder: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    args = ["run", str(folder), "--classifications", str(FIXTURES / "classifications"), "--out", str(out)]
    result = runner.invoke(app, [*args, "--workers", "2", "--quiet", *extra], env=env)
    assert result.exit_code == 0, result.output
    (summary,) = (out / "runs").glob("*/summary.json")
    return json.loads(summary.read_text())


def decisions(out: Path) -> dict[str, tuple[str, str | None]]:
    (journal,) = (out / "runs").glob("*/results.jsonl")
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    return {row["doc_id"]: (row["final_decision"], row["escalation_reason"]) for row in rows}


def test_run_with_documentai_replay_decides_as_the_local_extractor(tmp_path: Path) -> None:
    """`arbiter run --extractor documentai --documentai-replay DIR` decides each recorded PDF as local
    ingestion does; the PDF without a recording escalates as an input failure and the batch goes on."""
    folder = inputs(tmp_path)
    docai_out, local_out = tmp_path / "docai", tmp_path / "local"
    summary = run(folder, docai_out, "--extractor", "documentai", "--documentai-replay", str(REPLAY))
    run(folder, local_out)
    assert summary["documents"] == 5
    assert summary["errors_by_reason"] == {"pdf_extractor_failed": 1}
    ours, theirs = decisions(docai_out), decisions(local_out)
    assert ours[UNRECORDED] == ("ESCALATE_TO_SME", "pdf_extractor_failed")
    assert {d: ours[d] for d in RECORDED} == {d: theirs[d] for d in RECORDED}
    for doc_id in RECORDED:
        bundle = DocumentBundle.model_validate_json((docai_out / "bundles" / f"{doc_id}.json").read_text())
        assert (bundle.extractor.name, bundle.extractor.version) == ("documentai", "v1+replay+map2")
    packet = json.loads((docai_out / "sme_packets" / f"sme_packet_{UNRECORDED}.json").read_text())
    assert "No recorded Document AI response" in json.dumps(packet)


def test_the_environment_selects_documentai_and_reruns_skip(tmp_path: Path) -> None:
    """ARBITER_EXTRACTOR and ARBITER_DOCUMENTAI_REPLAY_DIR work like the options; an unchanged rerun skips."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(FIXTURES / "pdfs" / "lab-quest-01.pdf", folder)
    env = {"ARBITER_EXTRACTOR": "documentai", "ARBITER_DOCUMENTAI_REPLAY_DIR": str(REPLAY)}
    first = run(folder, tmp_path / "out", env=env)
    assert first["accepted_first_time"] == 1
    shutil.rmtree(tmp_path / "out" / "runs")
    again = run(folder, tmp_path / "out", env=env)
    assert again["skipped_unchanged"] == 1
    shutil.rmtree(tmp_path / "out" / "runs")
    local = run(folder, tmp_path / "out")  # another extractor: not "unchanged"
    assert local["skipped_unchanged"] == 0


def test_verify_with_documentai_replay_prints_the_outcome() -> None:
    """`arbiter verify --extractor documentai --documentai-replay DIR --json` verifies from the recording."""
    result = runner.invoke(
        app,
        [
            "verify",
            "--pdf",
            str(FIXTURES / "pdfs" / "lab-quest-01.pdf"),
            "--classification",
            str(FIXTURES / "classifications" / "lab-quest-01.json"),
            "--extractor",
            "documentai",
            "--documentai-replay",
            str(REPLAY),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    outcome = VerificationOutcome.model_validate_json(result.stdout)
    assert outcome.final_decision == "AUTO_ACCEPT"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--extractor", "documentai"], "needs a processor"),
        (["--extractor", "textract"], "Unknown extractor 'textract'"),
        (["--extractor", "documentai", "--documentai-processor", "abc"], "not a processor resource name"),
        (["--extractor", "documentai", "--documentai-replay", "/nonexistent/recordings"], "does not exist"),
    ],
)
def test_documentai_usage_errors_exit_2(args: list[str], words: str, tmp_path: Path) -> None:
    """A missing or malformed Document AI setting is a one-line error with exit 2, for run and verify."""
    pdf, cls = FIXTURES / "pdfs" / "lab-quest-01.pdf", FIXTURES / "classifications" / "lab-quest-01.json"
    env = {"ARBITER_DOCUMENTAI_PROCESSOR": "", "ARBITER_DOCUMENTAI_REPLAY_DIR": "", "ARBITER_EXTRACTOR": ""}
    for command in (
        ["run", str(pdf), "--classifications", str(cls.parent), "--out", str(tmp_path)],
        ["verify", "--pdf", str(pdf), "--classification", str(cls)],
    ):
        result = runner.invoke(app, [*command, *args], env=env)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert words in " ".join(result.output.split())
