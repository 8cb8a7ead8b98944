"""The review app in a real browser: `streamlit run` on localhost, Debian's Chromium driven by Playwright.

Signs in, claims the most urgent packet, corrects it in the segment table (a canvas grid, edited with
the keyboard as a reviewer would), saves, and finds the new ground-truth version on its page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, edit_grid_cell, running_app, settle, sign_in
from review_helpers import PASSWORD, PDFS, Seeded

from arbiter.review.settings import AppSettings

pytestmark = pytest.mark.usefixtures("chromium_present")


# Columns of the segment editor, left to right: first page, last page, dominant type, then one share
# per taxonomy type in profile order.
DOMINANT, GENOMIC, ADMINISTRATIVE = 2, 3, 7


@pytest.fixture(name="page")
def page_fixture(seeded: Seeded, tmp_path: Path) -> Iterator[Any]:
    settings = AppSettings(db_url=seeded.url, docs_root=PDFS, output_root=seeded.out_dir)
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(30_000)
            page.goto(url)
            settle(page)
            yield page
        finally:
            browser.close()


def test_reviewer_corrects_a_packet_in_the_browser(page: Any, seeded: Seeded, tmp_path: Path) -> None:
    """Sign in, claim, correct the dominant type, save, and see version 1 on the ground-truth page."""
    page.get_by_label("User name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    settle(page)
    page.get_by_role("button", name="Claim next").click()
    settle(page)
    page.get_by_role("heading", name="admin-requisition-03").wait_for()
    page.get_by_role("heading", name="Issues (3)").wait_for()
    page.locator("[data-testid='stImage'] img").first.wait_for()
    settle(page)
    page.screenshot(path=str(tmp_path / "packet.png"))

    page.get_by_text("Correct", exact=True).click()
    settle(page)
    grid = page.locator("[data-testid='stDataFrame']:visible").first
    summary = page.get_by_text("Document: ADMINISTRATIVE")
    for _attempt in range(3):  # a keystroke can land before the grid's editor opens on a loaded machine
        edit_grid_cell(page, grid, DOMINANT, None)  # blank: the type with the largest share
        edit_grid_cell(page, grid, GENOMIC, "0")
        edit_grid_cell(page, grid, ADMINISTRATIVE, "1")
        try:
            summary.wait_for(timeout=10_000)
            break
        except playwright_api.TimeoutError:
            continue
    summary.wait_for()
    page.get_by_role("button", name="Save correction").click()
    settle(page)
    page.get_by_text("ground truth version 1").wait_for()

    packet_id = seeded.packet_id("admin-requisition-03")
    assert seeded.store.queue.get(packet_id).review_status == "COMPLETED"
    page.get_by_role("link", name="Ground truth").click()
    settle(page)
    page.get_by_text("admin-requisition-03: 1 version").wait_for()
    caption = page.get_by_text("Version 1 · Reviewer corrected · by alice")
    caption.wait_for()
    [record] = seeded.store.ground_truth.history("admin-requisition-03")
    assert record.ground_truth_classification["dominant_type"] == "ADMINISTRATIVE"

    # The Metrics page draws in the browser: the headline first (no blind audit yet: unknown, never 0 %),
    # the correction just saved counted, and the report's SVG charts rendered.
    page.get_by_role("link", name="Metrics").click()
    settle(page)
    page.get_by_role("heading", name="Metrics").wait_for()
    page.get_by_text("Arbiter false-accept rate").wait_for()
    page.get_by_text("Unknown").first.wait_for()
    charts = page.locator(
        "[data-testid='stImage'] img"
    )  # the report's SVG charts, drawn (not sanitised away)
    charts.nth(5).wait_for()
    assert all((charts.nth(i).bounding_box() or {}).get("height", 0) > 50 for i in range(6))
    page.screenshot(path=str(tmp_path / "metrics.png"), full_page=True)


def test_markdown_from_a_file_name_or_production_csv_is_shown_as_text(tmp_path: Path) -> None:
    """Issue 14.5 in Chromium: a production dominant_type `![p](http://127.0.0.1:PORT/x.png)` and a PDF file
    name written as Markdown are shown as written; the browser never fetches the image."""
    import http.server
    import threading

    from browser_helpers import free_port
    from review_helpers import HOSTILE_NAME, HOSTILE_TYPE, seed_hostile

    fetched: list[str] = []

    class Trap(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    port = free_port()
    trap = http.server.ThreadingHTTPServer(("127.0.0.1", port), Trap)
    threading.Thread(target=trap.serve_forever, daemon=True).start()
    data = seed_hostile(tmp_path, port)
    assert data.store.queue.claim(data.packet_id(HOSTILE_NAME), "alice") is not None
    settings = AppSettings(db_url=data.url, docs_root=data.docs, output_root=data.out_dir)
    try:
        with (
            running_app(settings, tmp_path / "streamlit.log") as url,
            playwright_api.sync_playwright() as pw,
        ):
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.set_default_timeout(30_000)
                sign_in(page, url, "alice", PASSWORD)
                page.get_by_role("button", name="Continue with my packet").click()
                settle(page)
                page.get_by_role("heading", name=HOSTILE_NAME).wait_for()
                page.get_by_text(f"{HOSTILE_NAME}.pdf", exact=False).first.wait_for()
                page.get_by_role("tab", name="Classification").click()
                settle(page)
                page.get_by_text(HOSTILE_TYPE.format(port=port), exact=False).first.wait_for()
                page.wait_for_timeout(1000)
                srcs = page.locator("img").evaluate_all("els => els.map(e => e.src)")
                links = page.locator("a").evaluate_all("els => els.map(e => e.href)")
                page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
            finally:
                browser.close()
    finally:
        trap.shutdown()
        trap.server_close()
        data.store.dispose()
    assert fetched == []
    assert not [s for s in srcs if f":{port}/" in s or s.endswith("/f.png")]
    assert not [h for h in links if h.endswith(("/l", "/f.png"))]
