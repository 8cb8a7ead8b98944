"""`arbiter run --engine ray` set-up, without a cluster of the test's own: one-line errors for a bad engine or
Ray address, SQLite refused across machines, a node on another Arbiter version, and the CLI starting (and
stopping) a local Ray instance when no address is given."""

from __future__ import annotations

import os

# Before Ray is imported anywhere: every node on 127.0.0.1, no usage report (see ENGINEERING_NOTES, Ray).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.errors import ConfigError
from arbiter.llm.config import LLMSettings
from arbiter.run.ray_engine import check_database
from arbiter.run.ray_worker import WorkerSpec, process_document
from tests.conftest import FIXTURES, REPO


def test_a_node_with_another_arbiter_version_refuses_the_run(tmp_path: Path) -> None:
    """A worker whose Arbiter differs from the driver's refuses its documents (its skip keys would differ)."""
    spec = WorkerSpec(
        run_id="r-1",
        db_url=f"sqlite:///{tmp_path / 'a.db'}",
        out_dir=str(tmp_path),
        settings=LLMSettings(),
        code_version="0.0.0-elsewhere",
    )
    with pytest.raises(ConfigError, match=r"runs Arbiter .* and the driver 0\.0\.0-elsewhere"):
        process_document(spec, str(FIXTURES / "pdfs" / "x.pdf"), "x", False)


class FakeRay:
    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses

    def nodes(self) -> list[dict[str, Any]]:
        return [{"NodeManagerAddress": a, "Alive": True} for a in self.addresses]


@pytest.mark.parametrize(
    ("url", "addresses", "refused"),
    [
        ("sqlite:////tmp/a.db", ("127.0.0.1", "127.0.0.1"), False),
        ("sqlite:////tmp/a.db", ("127.0.0.2", "127.0.0.3"), False),
        ("sqlite:////tmp/a.db", ("10.0.0.1", "10.0.0.2"), True),
        ("postgresql+psycopg://db/arbiter", ("10.0.0.1", "10.0.0.2"), False),
    ],
)
def test_sqlite_only_when_every_node_is_this_machine(
    url: str, addresses: tuple[str, ...], refused: bool
) -> None:
    """A cluster of several machines must use a shared database; SQLite is fine on one machine."""
    if refused:
        with pytest.raises(Exception, match="needs a shared database"):
            check_database(url, FakeRay(*addresses))
    else:
        check_database(url, FakeRay(*addresses))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "ray", "--ray-address", "not an address"], "is not auto, HOST:PORT or ray://HOST:PORT"),
        (["--engine", "ray", "--ray-address", "ray://127.0.0.1:1"], "Cannot reach the Ray cluster at"),
        (["--engine", "ray", "--ray-address", "127.0.0.1:1"], "Cannot reach the Ray cluster at"),
        (["--ray-address", "auto"], "--ray-address needs --engine ray"),
        (["--engine", "spark"], "Unknown engine 'spark'"),
    ],
)
def test_a_bad_ray_address_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    """A wrong engine or Ray address stops the run with one `error:` line and exit code 2, no traceback."""
    result = CliRunner().invoke(
        app, ["run", str(FIXTURES / "pdfs"), "--out", str(tmp_path), "--quiet", *args]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error:"), result.output
    assert message in lines[0], result.output


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_cli_engine_ray_without_an_address_starts_and_stops_a_local_instance(tmp_path: Path) -> None:
    """`arbiter run … --engine ray` with no address runs on a Ray instance of its own, prints the summary, and
    leaves no Ray process behind."""
    ray_tmp = Path(tempfile.mkdtemp(prefix="arb-ray-", dir="/tmp"))  # short: Ray's socket paths live in it
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_TMPDIR": str(ray_tmp)}
    try:
        done = subprocess.run(
            [
                sys.executable, "-m", "arbiter.cli.main", "run", str(FIXTURES / "pdfs"),
                "--classifications", str(FIXTURES / "demo"), "--out", str(tmp_path), "--engine", "ray",
                "--workers", "2",
            ],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert "31 processed" in done.stdout
        assert "accepted first time" in done.stdout
        assert any(ray_tmp.iterdir())  # the instance was this run's own
        deadline = time.monotonic() + 30
        while processes_mentioning(str(ray_tmp)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_mentioning(str(ray_tmp)) == []
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


def test_a_ray_client_whose_server_fails_to_start_in_time_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transient "Initialization failure from server" of Ray Client (its per-client server is slow to start
    on a busy head) is retried; the run connects on a later try instead of failing."""
    import socket

    import ray

    from arbiter.run import ray_engine

    calls: list[str] = []

    def init(address: str, **_: Any) -> None:
        calls.append(address)
        if len(calls) < 3:
            raise ConnectionError("Initialization failure from server:\nTraceback (most recent call last): …")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(ray_engine, "CLIENT_RETRY_WAIT_S", 0.0)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"ray://127.0.0.1:{listener.getsockname()[1]}"
        with ray_engine.ray_session(address, cpus=None):
            pass
    assert calls == [address] * 3
