"""The first hour, round 2 (issue 29): hints that run as printed, a replay miss that says how to record, an
interrupted run's summary, `make reset` keeping output/README.md, and README examples that hold."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arbiter.cli.demo as demo_command
from arbiter.cli.main import app
from arbiter.cli.support import MODULE_COMMAND, command_name
from tests.conftest import FIXTURES, REPO

runner = CliRunner()
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
# The README and every page of the docs site: what a newcomer may copy and run.
EVERY_PAGE = "\n".join([README, *(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))])
ONE = "admin-facsimile-04"  # correct in fixtures/demo: accepted, so it writes ground truth


def _script(root: Path, relative: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


# (argv[0] as the process got it, the scripts that exist, where PATH's `arbiter` is (None: not on PATH),
#  how a hint must spell the command); "{root}" is the working folder, "{py}" the Python's folder
COMMAND_NAMES = [
    (".venv/bin/arbiter", [".venv/bin/arbiter"], None, ".venv/bin/arbiter"),
    (".venv/bin/arbiter", [".venv/bin/arbiter"], ".venv/bin/arbiter", "arbiter"),
    (".venv/bin/arbiter", [".venv/bin/arbiter", "other/arbiter"], "other/arbiter", ".venv/bin/arbiter"),
    ("{root}/.venv/bin/arbiter", [".venv/bin/arbiter"], None, ".venv/bin/arbiter"),
    ("arbiter", ["arbiter"], None, "./arbiter"),
    ("/elsewhere/venv/bin/arbiter", [], None, "/elsewhere/venv/bin/arbiter"),
    ("-m", ["py/arbiter"], None, "py/arbiter"),
    ("-m", ["other/arbiter"], "other/arbiter", "arbiter"),
    ("-m", [], None, "{python} " + MODULE_COMMAND),
]


@pytest.mark.parametrize(("argv0", "scripts", "on_path", "shown"), COMMAND_NAMES)
def test_hints_spell_the_command_as_it_runs_here(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv0: str,
    scripts: list[str],
    on_path: str | None,
    shown: str,
) -> None:
    """`arbiter` when PATH's arbiter is this program, else the script as run (relative inside the working
    folder), else `PYTHON -m arbiter.cli.main`: what `make demo`'s hints print is a command that runs."""
    for relative in scripts:
        _script(tmp_path, relative)
    python = tmp_path / "py" / "python"
    monkeypatch.setenv("PATH", str((tmp_path / on_path).parent) if on_path else str(tmp_path / "empty"))
    got = command_name(argv0.replace("{root}", str(tmp_path)), executable=str(python), cwd=tmp_path)
    assert got == shown.replace("{python}", str(python))


def test_the_demo_hint_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After `make demo` in a checkout (.venv/bin/arbiter, not on PATH) the demo's hint names that script."""
    monkeypatch.setattr(demo_command, "run", lambda **kwargs: None)
    monkeypatch.chdir(tmp_path)
    _script(tmp_path, ".venv/bin/arbiter")
    monkeypatch.setattr(sys, "argv", [".venv/bin/arbiter"])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = runner.invoke(app, ["demo", "--out", "o"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Review them in the browser: .venv/bin/arbiter users add NAME --role admin --out o" in flat
    assert "then .venv/bin/arbiter review --docs" in flat


def test_readme_command_blocks_run_from_a_checkout() -> None:
    """Every command line in the shell blocks of the README and the docs site starts with `.venv/bin/arbiter` (or is not Arbiter's):
    after `make demo` a bare `arbiter` is not on PATH."""
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", EVERY_PAGE, re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert lines
    assert [line for line in lines if line.startswith("arbiter ")] == []


def test_make_reset_keeps_the_tracked_readme(tmp_path: Path) -> None:
    """`make reset` deletes everything under output/ (the database too) but the tracked output/README.md."""
    assert shutil.which("make") is not None, "needs make (the README's two commands use it)"
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    (tmp_path / "output").mkdir()
    shutil.copy(REPO / "output" / "README.md", tmp_path / "output" / "README.md")
    (tmp_path / "output" / "arbiter.db").write_bytes(b"db")
    (tmp_path / "output" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "output" / ".hidden").write_text("x", encoding="utf-8")
    subprocess.run(["make", "-s", "reset"], cwd=tmp_path, check=True, capture_output=True)
    assert [p.name for p in (tmp_path / "output").iterdir()] == ["README.md"]
    subprocess.run(["make", "-s", "reset"], cwd=tmp_path, check=True, capture_output=True)  # again: fine


def test_a_replay_miss_says_how_to_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no recording for a request, `verify` shows the escalation with how to record one, and a run's
    summary says how many requests missed and the same."""
    replays = tmp_path / "replays"
    replays.mkdir()
    monkeypatch.setenv("ARBITER_REPLAY_DIR", str(replays))
    monkeypatch.delenv("ARBITER_LLM_RECORD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    pdf, classification = FIXTURES / "pdfs" / f"{ONE}.pdf", FIXTURES / "demo" / f"{ONE}.json"
    verified = runner.invoke(
        app, ["verify", "--pdf", str(pdf), "--classification", str(classification), "--llm", "replay"]
    )
    assert verified.exit_code == 0, verified.output
    flat = " ".join(verified.output.split())
    assert "no recorded answer exists" not in flat
    assert f"ARBITER_LLM_RECORD_DIR={replays}" in "".join(flat.split())  # the table wraps long paths
    assert "reason: verifier_errored" in flat
    single = tmp_path / "in"
    single.mkdir()
    shutil.copy(pdf, single / pdf.name)
    ran = runner.invoke(
        app,
        [
            "run",
            str(single),
            "--classifications",
            str(FIXTURES / "demo"),
            "--llm",
            "replay",
            "--out",
            "out",
            "--quiet",
            "--workers",
            "1",
        ],
    )
    assert ran.exit_code == 0, ran.output
    flat = " ".join(ran.output.split())
    assert f"3 request(s) had no recorded answer in {replays}" in flat
    assert f"ARBITER_LLM_RECORD_DIR={replays}" in flat
    assert "nothing spent (replay)" in flat or "cost unknown" in flat
    outcome = json.loads((tmp_path / "out" / "agent_outputs" / ONE / "arbiter_decision.json").read_text())
    assert "ARBITER_LLM_RECORD_DIR" in outcome["escalation_message"]


def test_an_interrupted_run_prints_its_summary(tmp_path: Path) -> None:
    """SIGTERM mid-batch: the summary of what was done is on screen, then the one line, exit 143."""
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arbiter.cli.main",
            "run",
            str(FIXTURES / "pdfs"),
            str(FIXTURES / "scanned" / "pdfs"),
            "--out",
            str(out),
            "--workers",
            "1",
            "--quiet",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ARBITER_DB_RETRY_S": "5"},
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.stat().st_size for p in out.glob("runs/*/results.jsonl")):
            break
        time.sleep(0.1)
    proc.terminate()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    flat = " ".join(stdout.split())
    assert "(interrupted: done so far)" in flat, stdout
    assert re.search(r"\d+ processed in [\d.]+ s", flat), stdout
    assert "run the same command again to resume" in stderr
    summary = json.loads(next(out.glob("runs/*/summary.json")).read_text())
    assert summary["interrupted"] is True
    assert f"{summary['processed']} processed in" in flat


def test_readme_names_the_pdfs_with_document_ai_recordings() -> None:
    """The Document AI page names exactly the fixture PDFs that have Document AI recordings, and how many do not."""
    replay = FIXTURES / "documentai" / "replay"
    keys = {p.name.split(".", 1)[0] for p in replay.glob("*.json")}
    pdfs = sorted((FIXTURES / "pdfs").glob("*.pdf"))
    recorded = sorted(p.stem for p in pdfs if hashlib.sha256(p.read_bytes()).hexdigest() in keys)
    assert len(recorded) == len(keys)  # every recording is of a fixture PDF
    section = (
        (DOCS / "models" / "documentai.md")
        .read_text(encoding="utf-8")
        .split("**Google Document AI**", 1)[1]
        .split("**Checked against real responses.**", 1)[0]
    )
    named = sorted(set(re.findall(r"`([a-z]+-[a-z0-9-]+-\d\d|record-30p)`", section)))
    assert named == recorded
    assert f"the other {len(pdfs) - len(recorded)} as `pdf_extractor_failed`" in " ".join(section.split())


def test_readme_export_example_exports_something(tmp_path: Path) -> None:
    """The export page's `export … --as-of` example, run as printed after a run, exports at least one document."""
    exports = (DOCS / "ground-truth" / "index.md").read_text(encoding="utf-8")
    line = next(line for line in exports.splitlines() if "export --format csv,jsonl --as-of" in line)
    single = tmp_path / "in"
    single.mkdir()
    shutil.copy(FIXTURES / "pdfs" / f"{ONE}.pdf", single)
    ran = runner.invoke(
        app,
        ["run", str(single), "--classifications", str(FIXTURES / "demo"), "--out", str(tmp_path / "output")],
    )
    assert ran.exit_code == 0, ran.output
    time.sleep(1.1)  # the example's time is to the second
    command = (
        line.split("#", 1)[0].strip().replace(".venv/bin/arbiter", f"{sys.executable} -m arbiter.cli.main")
    )
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    exported = re.search(r"Exported (\d+) documents", " ".join(done.stdout.split()))
    assert exported is not None, done.stdout
    assert int(exported.group(1)) >= 1, done.stdout


def test_an_export_before_any_truth_says_when_the_first_was_written(tmp_path: Path) -> None:
    """An export as of a time before the first ground-truth version says it is empty and when that was."""
    single = tmp_path / "in"
    single.mkdir()
    shutil.copy(FIXTURES / "pdfs" / f"{ONE}.pdf", single)
    out = str(tmp_path / "output")
    ran = runner.invoke(app, ["run", str(single), "--classifications", str(FIXTURES / "demo"), "--out", out])
    assert ran.exit_code == 0, ran.output
    result = runner.invoke(app, ["export", "--format", "csv", "--as-of", "2026-02-01", "--out", out])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Exported 0 documents" in flat
    assert "No ground truth was in force at 2026-02-01T00:00:00Z: the first version was written at" in flat
