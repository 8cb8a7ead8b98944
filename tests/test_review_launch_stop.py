"""Stopping `arbiter review` stops the server it started (issue: a SIGTERM left Streamlit serving)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

PARENT = """
import sys
from arbiter.review_app.launch import run_child
child = [sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); time.sleep(120)"]
sys.exit(run_child(child))
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_launcher_stops_its_child(sig: signal.Signals) -> None:
    """A SIGTERM or Ctrl+C sent to the launcher alone terminates the server process it started."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env, start_new_session=True
    ) as parent:
        assert parent.stdout is not None
        child_pid = int(parent.stdout.readline())
        assert _alive(child_pid)
        os.kill(parent.pid, sig)  # the launcher only, as a service manager or `kill` would
        parent.wait(timeout=30)
    deadline = time.monotonic() + 15  # waiting for an outcome, not timing one
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid)
