"""Every user mistake or missing service is one plain line, fast, and exit 2, never a traceback (issues 18, 29)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts.bundle import FAILURE_KINDS
from arbiter.ingest import isolated
from arbiter.ingest.ocr import announce, set_budget_hook
from tests.conftest import FIXTURES, REPO

runner = CliRunner()
UNREACHABLE = "postgresql://arbiter:secret@127.0.0.1:9/arbiter"  # port 9 (discard): nothing listens
NO_KEY_ENV = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "ARBITER_LLM",
    "ARBITER_LLM_MODEL",
    "ARBITER_OPENAI_BASE_URL",
    "ARBITER_REPLAY_DIR",
    "DATABASE_URL",
    "ARBITER_DB_RETRY_S",
)
FAST_S = 20  # a mistake is answered well before the database retry budget (60 s) could run out


@pytest.fixture(scope="module")
def one_account(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """work/arbiter.db with one account, made once by `arbiter db migrate` and `arbiter users add`."""
    root = tmp_path_factory.mktemp("one-account")
    made = runner.invoke(app, ["db", "migrate", "--out", str(root / "work")])
    assert made.exit_code == 0, made.output
    assert "Created the Arbiter database at" in made.output
    added = runner.invoke(
        app, ["users", "add", "ann", "--password", "long-enough", "--out", str(root / "work")]
    )
    assert added.exit_code == 0, added.output
    return root / "work"


@pytest.fixture
def workspace(one_account: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with its own copy of work/arbiter.db (one account), no LLM key or database URL in the
    environment (the database retry budget at its default, 60 s), and `arbiter` run as a checkout's
    `.venv/bin/arbiter` that is not on PATH."""
    for name in NO_KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(one_account, tmp_path / "work")
    script = tmp_path / ".venv" / "bin" / "arbiter"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [".venv/bin/arbiter"])
    path = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and shutil.which("arbiter", path=d) is None
    ]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


ONE_PDF = str(sorted((FIXTURES / "pdfs").glob("*.pdf"))[0])
ONE_JSON = str(FIXTURES / "demo" / f"{Path(ONE_PDF).stem}.json")
VERIFY_ONE = ["verify", "--pdf", ONE_PDF, "--classification", ONE_JSON]

# (arguments, what the one line must say); "{port}" is a port something already listens on; a leading
# NAME=value sets that variable for the row, as a shell would.
MISTAKES: list[tuple[list[str], str]] = [
    # issue 29: 1 `verify` with a live model and no key, 2 a refused database for a write command, 3 a mistyped
    # --kind, 4 a replay folder that is not there (how to record), 5 a write command at a mistyped --out,
    # 8 the command a message suggests runs as the user ran this one
    ([*VERIFY_ONE, "--llm", "gemini"], "set GOOGLE_API_KEY"),
    ([*VERIFY_ONE, "--llm", "openai"], "set ARBITER_OPENAI_BASE_URL"),
    (
        ["ARBITER_OPENAI_BASE_URL=http://127.0.0.1:9/v1", "llm", "check", "--llm", "openai"],
        "ARBITER_LLM_MODEL",
    ),
    (["users", "add", "erin", "--password", "long-enough", "--db", UNREACHABLE], "Connection refused"),
    (["ops", "list", "--kind", "encrpted", "--out", "work"], "choose one of encrypted, broken"),
    (["ARBITER_REPLAY_DIR=no/replays", *VERIFY_ONE, "--llm", "replay"], "ARBITER_LLM_RECORD_DIR=DIR"),
    (["users", "add", "dave", "--password", "long-enough", "--out", "outptu"], "No Arbiter database at"),
    (["users", "unlock", "ann", "--by", "ann", "--out", "outptu"], "`.venv/bin/arbiter db migrate`"),
    (["ops", "dismiss", "d", "--by", "ann", "--reason", "not-medical", "--out", "outptu"], "No Arbiter"),
    (["metrics", "--out", "typo"], "run `.venv/bin/arbiter run` first"),
    (["users", "add", "ann", "--password", "long-enough", "--out", "work"], "already exists"),
    (["users", "add", "bo", "--password", "short", "--out", "work"], "at least 8 characters"),
    (["users", "list", "--out", "typo"], "No Arbiter database at"),
    (["export", "--format", "csv", "--out", "typo"], "run `.venv/bin/arbiter run` first or pass --db"),
    (["export", "--mirrors", "--out", "typo"], "No Arbiter database at"),
    (["metrics", "--out", "typo"], "No Arbiter database at"),
    (["review", "--out", "typo"], "No Arbiter database at"),
    (["review", "--out", "work", "--port", "{port}"], "is not available"),
    (["users", "list", "--db", UNREACHABLE], "Connection refused"),
    (["users", "add", "cy", "--no-password", "--db", UNREACHABLE], "Connection refused"),
    (["metrics", "--db", UNREACHABLE], "Connection refused"),
    (["run", ONE_PDF, "--out", "work", "--db", UNREACHABLE], "Connection refused"),
    (["users", "list", "--db", "nosuchdb://x"], "Not a database URL"),
    # the key check (or, in tests, the network switch) stops a batch-mode run before anything is queued
    (["run", ONE_PDF, "--out", "work", "--llm", "gemini", "--llm-mode", "batch"], "gemini"),
    (["run", ONE_PDF, "--out", "work", "--llm", "chatgpt"], "Unknown LLM backend"),
    (["run", ONE_PDF, "--out", "work", "--extractor", "documentai"], "ARBITER_DOCUMENTAI_PROCESSOR"),
    (["run", "/nonexistent/dir"], "Input /nonexistent/dir does not exist"),
    (["run", ".", "--classifier", "file"], "needs --classifications DIR"),
    (["run", ".", "--classifier", "gpt9"], "Unknown classifier 'gpt9'"),
    (["run", ".", "--profile", "/nonexistent.toml"], "Profile file /nonexistent.toml does not exist"),
    (["run", ".", "--classifications", "/nonexistent"], "--classifications /nonexistent is not a directory"),
    (["verify", "--pdf", ONE_PDF, "--classification", "nothing.json"], "does not exist"),
    (
        ["verify", "--pdf", "/nonexistent.pdf", "--classification", "/x.json"],
        "PDF /nonexistent.pdf does not exist",
    ),
    (["schema", "nonsense"], "nonsense"),
    (["export", "--format", "xlsx", "--out", "work"], "xlsx"),
    (["metrics", "--as-of", "yesterday-ish", "--out", "work"], "yesterday-ish"),
]


@pytest.mark.parametrize(
    ("args", "message"), MISTAKES, ids=[" ".join(a[:2]) + f" {i}" for i, (a, _) in enumerate(MISTAKES)]
)
def test_mistakes_are_one_line_and_exit_2(
    workspace: Path, busy_port: int, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    """The CLI mistake table: each is exit 2 and a single `error:` line naming the problem, no traceback,
    within seconds."""
    while args and "=" in args[0] and args[0].split("=", 1)[0].isupper():
        name, value = args[0].split("=", 1)
        monkeypatch.setenv(name, value)
        args = args[1:]
    started = time.monotonic()
    result = runner.invoke(app, [a.replace("{port}", str(busy_port)) for a in args])
    took = time.monotonic() - started
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert took < FAST_S, f"{took:.0f} s: {result.output}"
    assert "trying again" not in result.output  # no retry warnings before the one line
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit), result.exception  # a clean exit, not a crash
    assert [line for line in lines if line.startswith("error:")] == lines[-1:], result.output
    assert message.lower() in lines[-1].lower(), result.output
    assert "secret" not in result.output  # a database password is never printed


@pytest.mark.parametrize(
    "args",
    [
        ["users", "list"],
        ["metrics"],
        ["export", "--format", "csv"],
        ["review"],
        ["users", "add", "dave", "--password", "long-enough"],
        ["users", "unlock", "ann", "--by", "ann"],
        ["ops", "list"],
        ["ops", "dismiss", "d", "--by", "ann", "--reason", "not-medical"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_commands_on_a_database_create_none(workspace: Path, args: list[str]) -> None:
    """A command that reads or writes an existing database, pointed at a mistyped --out, leaves nothing
    behind (`arbiter users add dave --out outptu` made outptu/arbiter.db)."""
    result = runner.invoke(app, [*args, "--out", "typo"])
    assert result.exit_code == 2, result.output
    assert not (workspace / "typo").exists()


@pytest.mark.parametrize("kind", FAILURE_KINDS)
def test_every_failure_kind_is_an_ops_kind(workspace: Path, kind: str) -> None:
    """`arbiter ops list --kind` takes every kind a PDF can fail with, `extractor_failed` (Document AI) too."""
    result = runner.invoke(app, ["ops", "list", "--kind", kind, "--out", "work"])
    assert result.exit_code == 0, result.output
    assert "Nothing is waiting" in result.output


def test_port_in_use_is_said_before_any_url(workspace: Path, busy_port: int) -> None:
    """A port in use stops `arbiter review` before it announces http://… (the app never starts)."""
    result = runner.invoke(app, ["review", "--out", "work", "--port", str(busy_port)])
    assert "http://" not in result.output
    assert f"Port {busy_port} on 127.0.0.1 is not available" in result.output


def _arbiter(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arbiter.cli.main", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_subprocess_mistake_has_no_traceback(tmp_path: Path) -> None:
    """As a shell runs it: an unreachable --db is one line on stderr, exit 2."""
    proc = _arbiter("users", "list", "--db", UNREACHABLE, env={**os.environ, "ARBITER_DB_RETRY_S": "0"})
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert stderr.strip().startswith("error: "), stderr
    assert "Connection refused" in stderr
    assert len(stderr.strip().splitlines()) == 1


def _started(out: Path, proc: subprocess.Popen[str], seconds: float = 90) -> None:
    """Wait until the run has finished a document (its workers are busy with the next ones)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.stat().st_size for p in out.glob("runs/*/results.jsonl")):
            return
        time.sleep(0.1)
    pytest.fail("the run finished no document in time")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_run_prints_no_traceback(tmp_path: Path, sig: signal.Signals) -> None:
    """A run stopped by TERM (or KILL) mid-batch: no BrokenPipeError or other traceback from any process."""
    out = tmp_path / "out"
    proc = _arbiter(
        "run",
        str(FIXTURES / "pdfs"),
        str(FIXTURES / "scanned" / "pdfs"),
        "--out",
        str(out),
        "--workers",
        "2",
        "--quiet",
    )
    _started(out, proc)
    proc.send_signal(sig)
    # stderr reaches EOF only when every ingestion worker (which inherited it) has ended too
    _, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr
    assert "BrokenPipeError" not in stderr, stderr
    if sig == signal.SIGTERM:
        assert proc.returncode == 143, stderr
        assert "run the same command again to resume" in stderr


def test_worker_ends_quietly_when_its_parent_is_gone(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingestion worker whose pipe broke (parent killed) returns without raising or logging an error."""
    monkeypatch.setattr(isolated.ocr_pass, "_quiet", False)  # the worker loop sets it for its process

    class BrokenConn:
        def __init__(self) -> None:
            self.jobs: list[Any] = [(Path("a.pdf"), {"doc_id": "a"})]

        def send(self, _obj: object) -> None:
            if not self.jobs:  # "ready" went through; the result finds the parent gone
                raise BrokenPipeError(32, "Broken pipe")

        def recv(self) -> object:
            return self.jobs.pop() if self.jobs else None

    def target(path: Path, **_kwargs: object) -> Any:
        announce(5.0)  # the OCR budget message is the first to hit the broken pipe
        raise AssertionError("not reached")

    previous = signal.getsignal(signal.SIGINT)
    try:
        isolated._worker_main(BrokenConn(), target, None)  # type: ignore[arg-type]
    finally:
        signal.signal(signal.SIGINT, previous)
        set_budget_hook(None)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
