"""The review app's Metrics page over the trust demo's database (`arbiter demo --trust`) in a real Chromium at
1366x768 (Playwright, Debian's chromium): the guarantee, the reliability diagram and the drift alarm on one
screen. With ARBITER_SHOTS=DIR (`make screenshots`) the demo runs at its full size, as the README prints it,
and the screen is saved as DIR/metrics_1366.png."""

from __future__ import annotations

import base64
import contextlib
import io
import os
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle, sign_in
from review_helpers import PASSWORD
from test_demo_trust import SMALL

from arbiter.cli.demo_trust import trust_demo
from arbiter.demo.trust import NEW
from arbiter.review.settings import AppSettings
from arbiter.store import Store

SHOTS = Path(os.environ.get("ARBITER_SHOTS", "")) if os.environ.get("ARBITER_SHOTS") else None
WIDTH, HEIGHT = 1366, 768
# The page scrolls inside Streamlit's main container: the guarantee's heading to the top, just under the bar.
SCROLL_TO = (
    "h => { h.scrollIntoView({block: 'start'}); let p = h.parentElement;"
    " while (p && p.scrollHeight <= p.clientHeight) p = p.parentElement;"
    " if (p) p.scrollBy(0, -80); }"
)

pytestmark = pytest.mark.usefixtures("chromium_present")


def _svg(image: Any) -> str:
    """The SVG markup of an st.image drawn from SVG (a base64 data URL)."""
    src = image.get_attribute("src") or ""
    head, _, data = src.partition(",")
    return base64.b64decode(data).decode("utf-8") if head.endswith(";base64") else ""


def _on_screen(locator: Any) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT


def test_the_metrics_page_shows_the_trust_figures_on_one_screen(tmp_path: Path) -> None:
    """Scrolled to the guarantee, one 1366x768 screen holds it, the reliability diagram and the drift alarm."""
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        trust_demo(out, **({} if SHOTS else SMALL))
    url = f"sqlite:///{out / 'arbiter.db'}"
    store = Store(url)
    store.users.add("admin", "admin", PASSWORD)
    store.dispose()
    settings = AppSettings(db_url=url, docs_root=out / "demo-trust", output_root=out)
    with running_app(settings, tmp_path / "streamlit.log") as app, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.set_default_timeout(60_000)
            sign_in(page, app, "admin", PASSWORD)
            page.get_by_role("link", name="Metrics").click()
            settle(page)
            page.locator("h3", has_text="Guarantee").first.evaluate(SCROLL_TO)
            page.wait_for_timeout(500)
            guarantee = page.get_by_text("False-accept rate ≤", exact=False).first
            alarm = page.get_by_text(f"Drift alarm: producer {NEW}'s escalation rate rose to").first
            images = page.locator("[data-testid='stImage'] img")
            diagram = next(
                images.nth(i) for i in range(images.count()) if "Reliability on" in _svg(images.nth(i))
            )
            for shown in (guarantee, page.locator("h3", has_text="Calibrated accepts").first, diagram, alarm):
                assert _on_screen(shown), shown
            if SHOTS is not None:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / "metrics_1366.png"))
        finally:
            browser.close()
