"""Blind review and adjudication in a real browser (issue 11.3, 11.4): two reviewers and an admin at once, each
in their own Chromium context at 1366×768, on one document sampled for a blind second review.

alice reviews the escalation; bob, holding the blind second review, and root, who could still be handed it,
find neither alice's packet in the queue nor her answer on the Ground truth page, also after bob skips the
blind packet (issue 27: Skip opened it to him); bob disagrees; the admin adjudicates, and the document's
history shows the adjudicated version.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, edit_grid_cell, running_app, settle
from review_helpers import PASSWORD, PDFS, Seeded

from arbiter.contracts import GroundTruthSource, PacketKind
from arbiter.review.settings import AppSettings

DOC = "note-injection-03"
SHOTS = Path("/tmp/me/shots/blind")
# Columns of the segment editor, left to right: first page, last page, dominant type, then one share per
# taxonomy type in profile order.
DOMINANT, CLINICAL_NOTE, ADMINISTRATIVE = 2, 6, 7


pytestmark = [pytest.mark.usefixtures("chromium_present"), pytest.mark.seed(doc_ids=(DOC,), sample_all=True)]


@pytest.fixture(name="browsers")
def browsers_fixture(seeded: Seeded, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """One signed-in page per person (alice, bob, root), each in its own browser context."""
    settings = AppSettings(db_url=seeded.url, docs_root=PDFS, output_root=seeded.out_dir)
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pages = {}
            for name in ("alice", "bob", "root"):
                page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
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


def _go(page: Any, link: str) -> None:
    page.get_by_role("link", name=link).click()
    settle(page)


def _shot(page: Any, name: str, at: Any = None) -> None:
    """A screenshot for a person to look at (outside the repository), scrolled to `at` when given."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if at is not None:
        at.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _correct_to_administrative(page: Any) -> None:
    page.get_by_text("Correct", exact=True).click()
    settle(page)
    grid = page.locator("[data-testid='stDataFrame']:visible").first
    summary = page.get_by_text("Document: ADMINISTRATIVE")
    for _attempt in range(3):  # a keystroke can land before the grid's editor opens on a loaded machine
        edit_grid_cell(page, grid, DOMINANT, None)  # blank: the type with the largest share
        edit_grid_cell(page, grid, CLINICAL_NOTE, "0")
        edit_grid_cell(page, grid, ADMINISTRATIVE, "1")
        try:
            summary.wait_for(timeout=10_000)
            break
        except playwright_api.TimeoutError:
            continue
    summary.wait_for()
    page.get_by_role("button", name="Save correction").click()
    settle(page)


def _packets(seeded: Seeded, kind: PacketKind) -> list[str]:
    return [p.packet_id for p in seeded.store.queue.page(status=None, limit=20) if p.kind == kind]


def test_blind_second_review_stays_blind_and_a_disagreement_is_adjudicated(
    browsers: dict[str, Any], seeded: Seeded
) -> None:
    """bob (holding the blind second review, then skipping it) and root (who may still be handed it) see
    neither alice's packet nor her answer; bob's disagreeing answer becomes no version; root keeps bob's
    answer and the history shows version 2, adjudicated."""
    alice, bob, root = browsers["alice"], browsers["bob"], browsers["root"]
    [escalation] = _packets(seeded, PacketKind.ESCALATION)
    assert seeded.store.queue.claim(escalation, "alice") is not None  # alice is on the escalation

    bob.get_by_role("button", name="Claim next").click()
    settle(bob)
    bob.get_by_role("heading", name=DOC).wait_for()
    bob.get_by_role("heading", name="Blind review").wait_for()
    [second] = _packets(seeded, PacketKind.SECOND_REVIEW)
    assert seeded.store.queue.get(second).claimed_by == "bob"

    # The queue: alice sees both packets of the document; bob and root only the blind row (root could
    # still be handed it, so alice's escalation row, "Claimed by alice", is not shown to him either).
    _go(alice, "Queue")
    alice.get_by_text("2 packets match; showing 2.").wait_for()
    _go(root, "Queue")
    root.get_by_text("1 packets match; showing 1.").wait_for()
    assert root.get_by_text("alice").count() == 0
    _go(bob, "Queue")
    bob.get_by_text("1 packets match; showing 1.").wait_for()
    in_review = bob.locator("[data-testid='stMetric']").filter(has_text="In review")
    assert in_review.inner_text().split() == ["In", "review", "1"]  # the counts agree with the list
    _shot(bob, "bob-queue-while-blind")

    # alice agrees with the machine: version 1.
    _go(alice, "Queue")
    alice.get_by_role("button", name="Continue with my packet").click()
    settle(alice)
    alice.get_by_role("button", name="Agree and save").click()
    settle(alice)
    alice.get_by_text(f"Saved: {DOC} ground truth version 1").wait_for()

    # bob skips the blind packet (Alt+K): nothing else waits, so it comes straight back to him, still blind.
    _go(bob, "Packet")
    bob.get_by_role("heading", name="Blind review").wait_for()
    bob.get_by_role("button", name="Skip").click()
    settle(bob)
    bob.get_by_role("heading", name="Blind review").wait_for()

    # The Ground truth page: alice sees her version; bob (after his skip) and root find nothing.
    for page in (alice, root, bob):
        _go(page, "Ground truth")
        page.get_by_placeholder("document id").fill(DOC)
        page.keyboard.press("Enter")
        settle(page)
    alice.get_by_text(f"{DOC}: 1 version").wait_for()
    alice.get_by_text("Version 1 · Reviewer agreed · by alice").wait_for()
    for page in (bob, root):
        page.get_by_text(
            "A document whose blind review you may still be asked to give is not listed"
        ).wait_for()
        assert page.get_by_text(f"{DOC}: ").count() == 0
        assert page.get_by_text("by alice").count() == 0
    _shot(bob, "bob-ground-truth-while-blind")
    _go(bob, "Queue")
    bob.get_by_text("1 packets match; showing 1.").wait_for()
    assert bob.get_by_text("alice").count() == 0
    assert seeded.store.audit.events(action="answer.seen", actor="bob") == []

    # bob disagrees: his answer is saved, but no version is written; an adjudication waits.
    _go(bob, "Packet")
    bob.get_by_role("heading", name="Blind review").wait_for()
    _correct_to_administrative(bob)
    bob.get_by_text(f"Saved your review of {DOC}.").wait_for()
    assert [h.version for h in seeded.store.ground_truth.history(DOC)] == [1]
    [adjudication] = _packets(seeded, PacketKind.ADJUDICATION)

    # root adjudicates: both answers side by side, keeps bob's.
    _go(root, "Queue")
    root.get_by_role("button", name="Claim next").click()
    settle(root)
    root.get_by_role("heading", name="Adjudication").wait_for()
    root.get_by_role("heading", name="First review: alice").wait_for()
    root.get_by_role("heading", name="Second review: bob").wait_for()
    root.get_by_text("Document type: ADMINISTRATIVE").wait_for()
    root.get_by_text("Document type: CLINICAL_NOTE").wait_for()
    _shot(root, "root-adjudication")
    _shot(root, "root-adjudication-answers", root.get_by_role("button", name="Save decision"))
    root.get_by_text("Keep bob's answer (second review)").click()
    settle(root)
    root.get_by_role("button", name="Save decision").click()
    settle(root)
    root.get_by_text(f"Saved: {DOC} ground truth version 2 (SME_ADJUDICATED)").wait_for()
    assert seeded.store.queue.status(adjudication) == "COMPLETED"

    _go(root, "Ground truth")
    root.get_by_placeholder("document id").fill(DOC)
    root.keyboard.press("Enter")
    settle(root)
    root.get_by_text(f"{DOC}: 2 versions").wait_for()
    root.get_by_text("Version 2 · Adjudicated · by root").wait_for()
    _shot(root, "root-ground-truth-adjudicated")
    history = seeded.store.ground_truth.history(DOC)
    assert [h.ground_truth_source for h in history] == [
        GroundTruthSource.SME_VALIDATED,
        GroundTruthSource.SME_ADJUDICATED,
    ]
    assert history[-1].ground_truth_classification["dominant_type"] == "ADMINISTRATIVE"
    assert all(h.production_classification is not None for h in history)
