"""Start the review app: `streamlit run review_app/app.py` with settings passed in the environment.

Usage statistics are off and the server is headless whatever the user's own Streamlit config says.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import FrameType

from arbiter.outputs import is_url
from arbiter.review.auth import trusted_headers_option
from arbiter.review.settings import AppSettings

APP = Path(__file__).resolve().parent / "app.py"


def streamlit_command(
    settings: AppSettings, *, port: int = 8501, address: str = "127.0.0.1"
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run the app with these settings."""
    args = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--global.developmentMode",
        "false",
        "--client.showErrorDetails",
        "none",  # an exception message could quote document text
        "--client.toolbarMode",
        "viewer",
        "--runner.magicEnabled",
        "false",  # the repository's .streamlit/config.toml says so too, but only in the checkout's folder
    ]
    if settings.auth == "proxy":
        args += ["--server.trustedUserHeaders", trusted_headers_option(settings.user_header)]
    env = {**os.environ, **settings.to_env()}
    return args, env


def launch(
    port: int = 8501,
    docs_root: Path | str = ".",
    db_url: str | None = None,
    *,
    output_root: Path | str | None = None,
    auth: str = "local",
    user_header: str | None = None,
    address: str = "127.0.0.1",
    lease_minutes: int = 30,
) -> int:
    """Run the review app in the foreground until it stops; returns Streamlit's exit code.

    The database is migrated first, so the app starts on an up-to-date schema.
    """
    from arbiter.run.compose import open_store

    if auth not in ("local", "proxy"):
        raise ValueError(f"auth must be local or proxy, not {auth!r}.")
    settings = AppSettings(
        db_url=db_url,
        docs_root=Path(docs_root).resolve(),
        output_root=Path(output_root).resolve() if output_root and not is_url(output_root) else None,
        output_url=str(output_root) if output_root and is_url(output_root) else None,
        auth="proxy" if auth == "proxy" else "local",
        lease_minutes=lease_minutes,
    )
    if user_header:
        settings = replace(settings, user_header=user_header)
    open_store(db_url).dispose()
    args, env = streamlit_command(settings, port=port, address=address)
    return run_child(args, env)


STOP_GRACE_S = 10.0


def run_child(args: list[str], env: dict[str, str] | None = None) -> int:
    """Run `args` in the foreground and stop it with this process: Ctrl+C or SIGTERM (or any error here)
    terminates the child, waits for it, and kills it if it has not stopped after STOP_GRACE_S seconds, so
    no server is left serving after `arbiter review` has gone."""
    child = subprocess.Popen(args, env=env)

    def forward(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        return child.wait()
    except KeyboardInterrupt:
        return _stop(child)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if child.poll() is None:
            _stop(child)


def _stop(child: subprocess.Popen[bytes]) -> int:
    if child.poll() is None:
        child.terminate()
    try:
        return child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()
