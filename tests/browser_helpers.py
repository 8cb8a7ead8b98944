"""Helpers for the real-browser test: run `streamlit run` on a free localhost port and drive Debian's
Chromium with Playwright (never a downloaded browser)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from arbiter.review.settings import AppSettings
from arbiter.review_app.launch import streamlit_command

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IDLE = "[data-test-script-state='notRunning']"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_app(settings: AppSettings, log: Path, timeout_s: float = 60.0) -> Iterator[str]:
    """The app's URL while `streamlit run` serves it; the server is stopped (and waited for) on exit."""
    port = free_port()
    args, env = streamlit_command(replace(settings), port=port)
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited early:\n{log.read_text(errors='replace')}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log.read_text(errors='replace')}")
                time.sleep(0.25)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def settle(page: Any, timeout_ms: float = 30_000) -> None:
    """Wait until the script has finished its current rerun."""
    page.wait_for_timeout(150)  # let a rerun triggered by the last action start
    page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)


def edit_grid_cell(page: Any, grid: Any, column: int, keys: str | None) -> None:
    """Select row 1's cell in `column` (counted from the first page column) of a canvas grid (Streamlit's
    data editor) and type `keys`, or clear the cell when `keys` is None."""
    # In mid-screen: scrolled to the top edge, the first row would sit under Streamlit's fixed header bar
    # and the click would land on the header.
    grid.evaluate("element => element.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(200)
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 60, box["y"] + 35 + 17)  # first data row, "First page" column
    page.wait_for_timeout(500)
    for _ in range(column):
        page.keyboard.press("ArrowRight")
    if keys is None:
        page.keyboard.press("Delete")
    else:
        page.keyboard.type(keys)
        page.wait_for_timeout(700)  # the cell editor opens asynchronously (slower on a busy machine)
        page.keyboard.press("Enter")
    settle(page)


def open_sidebar(page: Any) -> None:
    """Expand the sidebar (it starts collapsed: the packet page needs the width) if it is collapsed."""
    toggle = page.locator("[data-testid='stExpandSidebarButton']")
    if toggle.count():
        toggle.first.click()
        page.wait_for_timeout(400)  # the sidebar slides in


def sign_in(page: Any, url: str, name: str, password: str) -> None:
    """Open the app and sign in through its form, waiting until the page has settled."""
    page.goto(url)
    settle(page)
    page.get_by_label("User name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    settle(page)
