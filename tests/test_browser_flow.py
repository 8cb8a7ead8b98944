"""Issue 12 items 1-3 in a real Chromium at 1366x768 (Playwright, Debian's browser), two reviewers and an
admin at once, each in a browser context of their own: Alt+A saves and the next packet's page is on screen
without the queue; Skip opens the next; the decision buttons sit inside the first screen; the page's body
text is at least 12 px; a thumbnail opens its page; zoom widens the page image."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle
from playwright.sync_api import ViewportSize
from review_helpers import PASSWORD, PDFS, Seeded

from arbiter.review.settings import AppSettings

VIEWPORT: ViewportSize = {"width": 1366, "height": 768}
SHOTS = Path(os.environ.get("ARBITER_TEST_SHOTS") or "/tmp/arbiter-shots/flow")
PAGE_IMAGE = ".st-key-page_view [data-testid='stImage'] img"
BODY_PT = 9.5  # the fixtures' body text, in PDF points; pages are rendered at 144 dpi (2 px a point)


pytestmark = pytest.mark.usefixtures("chromium_present")


@pytest.fixture(name="people")
def people_fixture(seeded: Seeded, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """alice, bob and root signed in at the same time, each in a context of their own, on the queue."""
    settings = AppSettings(db_url=seeded.url, docs_root=PDFS, output_root=seeded.out_dir)
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pages = {}
            for name in ("alice", "bob", "root"):
                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.set_default_timeout(30_000)
                page.goto(url)
                settle(page)
                page.get_by_label("User name").fill(name)
                page.get_by_role("textbox", name="Password").fill(PASSWORD)
                page.get_by_role("button", name="Sign in").click()
                settle(page)
                page.get_by_role("heading", name="Review queue").wait_for()
                pages[name] = page
            yield pages
        finally:
            browser.close()


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _heading(page: Any) -> str:
    return str(page.locator("h1").first.inner_text()).strip()


def _drawn(page: Any, before: str | None = None) -> dict[str, Any]:
    """Wait until the viewer's page image (another than `before`) is loaded; its shown and natural size."""
    page.wait_for_function(
        """before => { const i = document.querySelector(".st-key-page_view [data-testid='stImage'] img");
        return !!i && i.complete && i.naturalWidth > 0 && i.src !== before; }""",
        arg=before,
    )
    return dict(
        page.evaluate(
            """() => { const i = document.querySelector(".st-key-page_view [data-testid='stImage'] img");
            const r = i.getBoundingClientRect();
            return {src: i.src, width: r.width, natural: i.naturalWidth}; }"""
        )
    )


def _inside_first_screen(page: Any, name: str) -> None:
    box = page.get_by_role("button", name=name).first.bounding_box()
    assert box is not None, name
    assert box["y"] >= 0, (name, box)
    assert box["y"] + box["height"] <= VIEWPORT["height"], (name, box)
    assert box["x"] >= 0, (name, box)
    assert box["x"] + box["width"] <= VIEWPORT["width"], (name, box)


def test_agree_and_skip_move_on_with_the_decision_and_a_readable_page_on_the_first_screen(
    people: dict[str, Any], seeded: Seeded
) -> None:
    """Alt+A saves and opens the next packet's page without the queue; Skip opens the next; the buttons
    are on the first screen and the body text is at least 12 px."""
    alice, bob, root = people["alice"], people["bob"], people["root"]
    alice.get_by_role("button", name="Claim next").click()
    settle(alice)
    bob.get_by_role("button", name="Claim next").click()
    settle(bob)
    image = _drawn(alice)  # the packet's page is drawn: its heading is the packet's, not the queue's
    first = _heading(alice)
    _shot(alice, "alice-packet")
    for name in ("Agree and save", "Skip"):
        _inside_first_screen(alice, name)
    # 144 dpi: 2 image pixels a point; shown at width/natural of that.
    assert BODY_PT * 2 * image["width"] / image["natural"] >= 12.0

    alice.keyboard.press("Alt+a")
    _drawn(alice, image["src"])
    settle(alice)
    second = _heading(alice)
    assert second != first
    assert alice.get_by_role("heading", name="Review queue").count() == 0
    alice.get_by_text(f"Next: {second}.", exact=False).wait_for()
    assert seeded.store.queue.get(seeded.packet_id(first)).review_status == "COMPLETED"
    _shot(alice, "alice-next-packet")

    bob_image = _drawn(bob)
    held = _heading(bob)
    bob.get_by_role("button", name="Skip").click()
    _drawn(bob, bob_image["src"])
    settle(bob)
    assert _heading(bob) not in (held, second)
    assert seeded.store.queue.get(seeded.packet_id(held)).claimed_by is None

    root.get_by_role("link", name="Claims (admin)").click()
    settle(root)
    root.get_by_text(second, exact=False).first.wait_for(state="attached")  # a cell of the claims grid


def test_thumbnails_and_zoom_change_the_page_shown(people: dict[str, Any], seeded: Seeded) -> None:
    """On a two-page packet a thumbnail's button opens page 2, and 150 % zoom widens the page image."""
    alice = people["alice"]
    assert seeded.store.queue.claim(seeded.packet_id("note-injection-03"), "alice") is not None
    alice.get_by_role("link", name="Packet").click()
    settle(alice)
    alice.get_by_role("heading", name="note-injection-03").wait_for()
    page_one = _drawn(alice)
    alice.locator(".st-key-page_strip").get_by_role("button", name="2", exact=True).click()
    page_two = _drawn(alice, page_one["src"])
    alice.get_by_text("Page 2 of 2.", exact=False).wait_for()
    _shot(alice, "alice-page-two")

    alice.get_by_role("radio", name="150%").click()
    zoomed = _drawn(alice, page_two["src"])
    assert zoomed["width"] > page_two["width"] + 100
    assert round(zoomed["width"]) == 1224  # 150 % of a letter page's 816 CSS px
    _shot(alice, "alice-zoomed")


def test_the_agree_panel_says_what_agree_saves_and_save_and_stop_claims_nothing(
    people: dict[str, Any], seeded: Seeded
) -> None:
    """The Review tab names the answer Agree saves (type and pages) on the first screen under a whole title;
    Save and stop saves it and leaves the reviewer holding no packet."""
    from arbiter.review.answer_view import agree_line
    from arbiter.review.desk import machine_answer

    alice = people["alice"]
    alice.get_by_role("button", name="Claim next").click()
    settle(alice)
    # The packet's title replaces the queue's once the claim's rerun has drawn it.
    alice.wait_for_function(
        "ids => ids.includes((document.querySelector('h1')?.innerText || '').trim())",
        arg=sorted(r.doc_id for r in seeded.records),
    )
    doc_id = _heading(alice)
    packet_id = seeded.packet_id(doc_id)
    line = agree_line(machine_answer(seeded.store.queue.get(packet_id)))
    assert line.startswith("Agree saves: ")
    said = alice.get_by_text(line, exact=True)
    said.wait_for()
    box = said.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= VIEWPORT["height"]
    title = alice.locator("h1").first.bounding_box()
    header = alice.locator("[data-testid='stHeader']").bounding_box()
    assert title is not None
    assert header is not None
    assert title["y"] >= header["y"] + header["height"] - 1  # the title is not under the top bar
    _inside_first_screen(alice, "Save and stop")
    _shot(alice, "alice-agree-panel")

    alice.get_by_role("button", name="Save and stop").click()
    settle(alice)
    alice.get_by_text("No next packet was claimed.", exact=False).wait_for()
    assert seeded.store.queue.get(packet_id).review_status == "COMPLETED"
    assert seeded.store.queue.page(status="IN_REVIEW", claimed_by="alice") == []
