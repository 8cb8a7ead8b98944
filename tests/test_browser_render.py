"""Issue 11, items 5 and 9 in a real Chromium at 1366×768 (Playwright, Debian's browser), on the queue
`arbiter demo` leaves, two reviewers at once: the prompt-injection packet's page image carries the pink
issue mark its legend promises, and Agree on the packet escalated for a confidence of 1.3 saves nothing and
opens the correction editor with the problem listed."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle
from PIL import Image
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import PacketKind
from arbiter.review.render import COLOURS, MarkKind
from arbiter.review.settings import AppSettings
from arbiter.store import Store

PASSWORD = "correct-horse-9"
VIEWPORT = {"width": 1366, "height": 768}
SHOTS = Path(os.environ["ARBITER_TEST_SHOTS"]) if os.environ.get("ARBITER_TEST_SHOTS") else None
INJECTION, OVERCONFIDENT = "note-injection-03", "gen-guardant-02"


pytestmark = pytest.mark.usefixtures("chromium_present")


@pytest.fixture(name="demo")
def demo_fixture(tmp_path: Path) -> Path:
    """`arbiter demo`, two reviewers; alice holds the injection packet, bob the confidence-1.3 one."""
    out = tmp_path / "out"
    runner = CliRunner()
    made = runner.invoke(app, ["demo", "--out", str(out), "--workers", "2"])
    assert made.exit_code == 0, made.output
    for name in ("alice", "bob"):
        added = runner.invoke(
            app, ["users", "add", name, "--role", "reviewer", "--password", PASSWORD, "--out", str(out)]
        )
        assert added.exit_code == 0, added.output
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        packets = {p.doc_id: p.packet_id for p in store.queue.newest_escalations()}
        assert store.queue.claim(packets[INJECTION], "alice") is not None
        assert store.queue.claim(packets[OVERCONFIDENT], "bob") is not None
        assert all(p.packet_kind == PacketKind.ESCALATION for p in store.queue.newest_escalations())
    finally:
        store.dispose()
    return out


def _open_claim(context: Any, url: str, name: str) -> Any:
    """Sign in and Claim next, which hands the reviewer back the packet they hold."""
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    settle(page)
    page.get_by_label("User name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    settle(page)
    page.get_by_role("button", name="Claim next").click()
    settle(page)
    page.get_by_role("button", name="Skip").wait_for()
    return page


def _pink_pixels(page: Any) -> int:
    """Pixels of the page image in the issue mark's colours: its outline, or its translucent fill over white
    paper (yellow evidence marks have less blue than green; pink ones more)."""
    image = page.locator(".st-key-page_view [data-testid='stImage'] img").first  # not a thumbnail
    image.wait_for()
    data = Image.open(io.BytesIO(image.screenshot())).convert("RGB").tobytes()
    outline, fill = COLOURS[MarkKind.ISSUE]
    a = fill[3] / 255
    paper = tuple(round(255 * (1 - a) + c * a) for c in fill[:3])
    count = 0
    for i in range(0, len(data), 3):
        pixel = data[i : i + 3]
        if any(
            all(abs(p - c) < 12 for p, c in zip(pixel, colour, strict=False)) for colour in (outline, paper)
        ):
            count += 1
    return count


def _shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_pink_issue_mark_and_agree_refused_into_the_correction_editor(demo: Path, tmp_path: Path) -> None:
    """alice sees the injection sentence marked pink on the page; bob's Agree on confidence 1.3 opens Correct."""
    settings = AppSettings(
        db_url=f"sqlite:///{demo / 'arbiter.db'}", docs_root=demo / "demo", output_root=demo
    )
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            alice = _open_claim(browser.new_context(viewport=VIEWPORT), url, "alice")
            bob = _open_claim(browser.new_context(viewport=VIEWPORT), url, "bob")
            assert INJECTION in alice.locator("h1").first.inner_text()
            assert OVERCONFIDENT in bob.locator("h1").first.inner_text()

            pink = _pink_pixels(alice)
            _shot(alice, "injection-page")

            bob.get_by_role("button", name="Agree and save").click()
            settle(bob)
            bob.get_by_text("Agree was not saved", exact=False).wait_for()
            bob.get_by_text("1.3", exact=False).first.wait_for(state="attached")
            chosen = bob.get_by_role("radio", name="Correct")
            # A rerun's faded copy of the page can linger a moment beside the new one (seen once under load).
            playwright_api.expect(chosen).to_have_count(1, timeout=15_000)
            _shot(bob, "agree-refused")
            assert chosen.is_checked()
        finally:
            browser.close()

    assert pink > 50, pink
    store = Store(f"sqlite:///{demo / 'arbiter.db'}")
    try:
        assert store.ground_truth.history(OVERCONFIDENT) == []
    finally:
        store.dispose()
