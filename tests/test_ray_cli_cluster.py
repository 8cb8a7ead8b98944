"""Issue 32.2: a two-node Ray cluster on one machine started with the `ray start` commands the README gives (a
head and a worker node, one CPU each, each on its own loopback address), `arbiter run --engine ray` through it
deciding as the local engine, and both nodes stopped by the test (by their processes, never `ray stop`)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from arbiter.run.job import RunOptions, execute
from tests.conftest import FIXTURES, REPO

RAY = Path(sys.executable).with_name("ray")
HEAD_IP, NODE_IP = "127.0.0.2", "127.0.0.3"  # loopback addresses Ray does not rewrite (127.0.0.1 it does)
COUNTED = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def wait_started(log: Path, process: subprocess.Popen[bytes], limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"Ray could not start a node here: {log.read_text(errors='replace')[-800:]}")


@contextmanager
def two_nodes(root: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """`ray start --head` and `ray start --address` as documented, each --block so the test owns its process."""
    token = root / "token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {
        k: v for k, v in os.environ.items() if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_ADDRESS")
    }
    env |= {
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "PYTHONPATH": str(REPO),
        "RAY_enable_metrics_collection": "0",
    }
    address = f"{HEAD_IP}:{free_port()}"
    common = ["--block", "--num-cpus=1", "--object-store-memory=100000000", "--include-log-monitor=false"]
    head_args = [
        "--head", "--no-monitor", f"--node-ip-address={HEAD_IP}", f"--port={address.split(':')[1]}",
        "--include-dashboard=false", f"--ray-client-server-port={free_port()}", f"--temp-dir={root / 'ray'}",
    ]  # fmt: skip
    started: list[subprocess.Popen[bytes]] = []
    try:
        for args, name in (
            (head_args, "head"),
            ([f"--address={address}", f"--node-ip-address={NODE_IP}"], "node"),
        ):
            log = root / f"{name}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [str(RAY), "start", *args, *common], stdout=out, stderr=subprocess.STDOUT, env=env
                )
            started.append(process)
            wait_started(log, process)
        yield address, env
    finally:
        for process in reversed(started):  # the worker node first, then the head
            process.send_signal(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=60)
            if process.poll() is None:
                process.kill()


def test_two_nodes_started_with_ray_start_on_one_machine_run_a_batch(tmp_path: Path) -> None:
    """A head and a worker node from `ray start` on 127.0.0.2 / 127.0.0.3 with token auth: the CLI's Ray run
    uses both nodes, decides as the local engine, and no Ray process is left once the nodes are stopped."""
    assert RAY.exists(), "needs the `ray` command: run `make test` (it installs arbiter[ray])"
    root = Path(tempfile.mkdtemp(prefix="arb-rc-", dir="/tmp"))  # short: Ray's socket paths live in it
    try:
        with two_nodes(root) as (address, env):
            done = subprocess.run(
                [
                    sys.executable, "-m", "arbiter.cli.main", "run", str(FIXTURES / "pdfs"), "--classifications",
                    str(FIXTURES / "demo"), "--out", str(tmp_path / "ray"), "--engine", "ray", "--ray-address",
                    address, "--quiet",
                ],
                capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        import json

        on_ray = json.loads(next((tmp_path / "ray" / "runs").glob("*/summary.json")).read_text())
        assert on_ray["engine"]["nodes"] == 2
        local = execute(
            RunOptions(
                inputs=[str(FIXTURES / "pdfs")],
                classifications=str(FIXTURES / "demo"),
                out_dir=str(tmp_path / "local"),
            )
        )
        assert {k: on_ray[k] for k in COUNTED} == {k: local[k] for k in COUNTED}
        deadline = time.monotonic() + 30
        while processes_mentioning(str(root)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_mentioning(str(root)) == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
