"""Sessions and drafts in a real Chromium at 1366×768: a reload keeps the reviewer signed in with the draft
in place (the session in an app cookie, none in the address), a copied link opens the sign-in page, sign-out
clears the cookie and ends the token, and a second reviewer and an admin, signed in at the same time in
their own browser contexts, never see the first reviewer's draft."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, edit_grid_cell, open_sidebar, running_app, settle
from review_helpers import PASSWORD, PDFS, Seeded, seed

from arbiter.review.settings import AppSettings

VIEWPORT = {"width": 1366, "height": 768}
NOTE = "alice-draft-note-7"
SHOTS = Path(os.environ.get("ARBITER_SHOTS", "")) if os.environ.get("ARBITER_SHOTS") else None
GENOMIC, ADMINISTRATIVE = 3, 7  # columns of the segment editor, counted from "First page"


pytestmark = pytest.mark.usefixtures("chromium_present")


@pytest.fixture(name="app")
def app_fixture(tmp_path: Path) -> Iterator[tuple[Seeded, str, Any]]:
    """The seeded app served by `streamlit run`, and a Chromium to open contexts in."""
    data = seed(tmp_path)
    settings = AppSettings(db_url=data.url, docs_root=PDFS, output_root=data.out_dir)
    try:
        with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                yield data, url, browser
            finally:
                browser.close()
    finally:
        data.store.dispose()


def _open(browser: Any, url: str) -> Any:
    """A page in a browser context of its own (its own cookies and storage: another person's browser)."""
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    settle(page)
    return page


def _sign_in(page: Any, name: str) -> None:
    page.get_by_label("User name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    settle(page)
    page.get_by_text(f"Signed in as {name}").wait_for()


def _shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))


def _correct_as_administrative(page: Any) -> None:
    page.get_by_text("Correct", exact=True).click()
    settle(page)
    grid = page.locator("[data-testid='stDataFrame']:visible").first
    summary = page.get_by_text("Document: ADMINISTRATIVE")
    for _attempt in range(3):  # a keystroke can land before the grid's editor opens on a loaded machine
        edit_grid_cell(page, grid, GENOMIC, "0")
        edit_grid_cell(page, grid, ADMINISTRATIVE, "1")
        try:
            summary.wait_for(timeout=10_000)
            break
        except playwright_api.TimeoutError:
            continue
    summary.wait_for()


def _type_note(page: Any, label: str, text: str) -> None:
    box = page.get_by_label(label)
    box.click()
    box.fill(text)
    page.keyboard.press("Tab")  # leaving the box sends its value: a rerun, and the draft is written
    settle(page)


def test_reload_keeps_sign_in_and_draft_and_others_never_see_it(app: tuple[Seeded, str, Any]) -> None:
    """Alice edits a segment and a note, reloads: still signed in, draft in place; Bob and an admin, signed
    in at once in other contexts, see none of it, even with her packet reassigned to Bob; after Alice signs
    out, her old URL asks for sign-in."""
    seeded, url, browser = app
    alice = _open(browser, url)
    _sign_in(alice, "alice")
    alice.get_by_role("button", name="Claim next").click()
    settle(alice)
    alice.get_by_role("heading", name="admin-requisition-03").wait_for()
    packet_id = seeded.packet_id("admin-requisition-03")
    _correct_as_administrative(alice)
    _type_note(alice, "Correction notes", NOTE)
    draft = seeded.store.drafts.get(packet_id, "alice")
    assert draft is not None
    assert draft["correct_notes"] == NOTE
    signed_in_url = alice.url
    assert "session=" not in signed_in_url  # nothing in the address signs anyone in
    cookie = next(c for c in alice.context.cookies() if c["name"] == "arbiter_session")
    assert (cookie["sameSite"], cookie["path"], cookie["httpOnly"]) == ("Strict", "/", False)
    assert seeded.store.sessions.check(cookie["value"]) is not None
    pasted = _open(browser, signed_in_url)  # the address pasted into another browser
    pasted.get_by_role("button", name="Sign in").wait_for()
    assert pasted.get_by_text("Signed in as alice").count() == 0
    pasted.context.close()

    alice.reload()
    settle(alice)
    alice.get_by_text("Signed in as alice").wait_for()
    alice.get_by_role("heading", name="admin-requisition-03").wait_for()
    playwright_api.expect(alice.get_by_label("Correction notes")).to_have_value(NOTE)
    alice.get_by_text("Document: ADMINISTRATIVE").wait_for()
    _shot(alice, "alice-after-reload")

    # Bob and the admin at the same time, each in a browser context of their own.
    bob, admin = _open(browser, url), _open(browser, url)
    _sign_in(bob, "bob")
    _sign_in(admin, "root")
    admin.get_by_role("link", name="Claims (admin)").click()
    settle(admin)
    admin.get_by_role("heading", name="Claims").wait_for()
    seeded.store.queue.reassign(packet_id, "bob", "root")  # what the admin's Reassign button does
    bob.get_by_role("link", name="Packet").click()
    settle(bob)
    bob.get_by_role("heading", name="admin-requisition-03").wait_for()
    bob.get_by_label("Notes (optional)").wait_for()  # Bob's form starts at Agree, empty
    assert bob.get_by_label("Notes (optional)").input_value() == ""
    bob.get_by_text("Correct", exact=True).click()
    settle(bob)
    assert bob.get_by_label("Correction notes").input_value() == ""
    assert bob.get_by_text("Document: ADMINISTRATIVE").count() == 0
    admin.reload()
    settle(admin)
    admin.get_by_text("Signed in as root").wait_for()
    _shot(bob, "bob-clean-form")
    _shot(admin, "admin-claims")
    for page in (bob, admin):
        assert NOTE not in page.content()

    open_sidebar(alice)  # the sidebar starts collapsed
    alice.get_by_role("button", name="Sign out").click()
    settle(alice)
    alice.get_by_role("button", name="Sign in").wait_for()
    assert [c for c in alice.context.cookies() if c["name"] == "arbiter_session"] == []  # cleared
    assert seeded.store.sessions.check(cookie["value"]) is None  # and revoked on the server
    alice.goto(signed_in_url)
    settle(alice)
    alice.get_by_role("button", name="Sign in").wait_for()
    assert alice.get_by_text("Signed in as alice").count() == 0
    assert alice.get_by_text("Page not found").count() == 0  # the packet's address asks for sign-in too
    _shot(alice, "alice-old-url-after-sign-out")
    stolen = browser.new_context(viewport=VIEWPORT)  # a copy of the cookie taken before the sign-out
    stolen.add_cookies([{k: cookie[k] for k in ("name", "value", "domain", "path", "sameSite")}])
    thief = stolen.new_page()
    thief.goto(signed_in_url)
    settle(thief)
    thief.get_by_text("Your session has ended").wait_for()
    assert thief.get_by_text("Signed in as alice").count() == 0
