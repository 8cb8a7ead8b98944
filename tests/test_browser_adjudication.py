"""Adjudication on the first screen (issue 27 item 9): in Chromium at 1366x768 the admin who claims an
adjudication sees both answers side by side and the decision controls without scrolling."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle, sign_in
from playwright.sync_api import ViewportSize
from review_helpers import PASSWORD, PDFS, Seeded

from arbiter.contracts import PacketKind, SMEReview
from arbiter.review.settings import AppSettings

DOC = "note-injection-03"
VIEWPORT: ViewportSize = {"width": 1366, "height": 768}
SHOT = Path(os.environ.get("ARBITER_TEST_SHOTS") or "/tmp") / "adjudication.png"


pytestmark = [pytest.mark.usefixtures("chromium_present"), pytest.mark.seed(doc_ids=(DOC,), sample_all=True)]


def _packet(data: Seeded, kind: PacketKind) -> str:
    [found] = [p.packet_id for p in data.store.queue.page(limit=100, status=None) if p.kind == kind]
    return found


def _review(data: Seeded, kind: PacketKind, who: str, answer: dict[str, Any]) -> None:
    packet_id = _packet(data, kind)
    assert data.store.queue.claim(packet_id, who) is not None
    now = datetime.now(UTC)
    saved = SMEReview(
        reviewer=who, agrees_with_primary=False, confidence=0.9, started_at=now, submitted_at=now
    )
    data.store.reviews.submit(packet_id, who, saved, answer, idempotency_key=f"{packet_id}-{who}")


@pytest.fixture(autouse=True)
def _reviews_disagree(seeded: Seeded) -> None:
    """One document sampled for a blind second review (the module's seed mark); alice (two segments) and bob
    (one) disagree."""
    packet = seeded.store.queue.get(_packet(seeded, PacketKind.ESCALATION))
    machine = packet.final_classification or packet.primary_agent_classification
    assert machine is not None
    [segment] = machine["segments"]  # alice splits the two pages into two documents of another type
    split = [{**segment, "start_page": n, "end_page": n, "dominant_type": "LAB_REPORT"} for n in (1, 2)]
    _review(
        seeded, PacketKind.ESCALATION, "alice", {**machine, "dominant_type": "LAB_REPORT", "segments": split}
    )
    _review(seeded, PacketKind.SECOND_REVIEW, "bob", machine)


def _within_first_screen(page: Any, locator: Any, name: str) -> None:
    box = locator.bounding_box()
    assert box is not None, name
    assert box["y"] >= 0, (name, box)
    assert box["y"] + box["height"] <= VIEWPORT["height"], (name, box)
    assert box["x"] >= 0, (name, box)
    assert box["x"] + box["width"] <= VIEWPORT["width"], (name, box)


def test_both_answers_and_the_decision_are_on_the_first_screen(seeded: Seeded, tmp_path: Path) -> None:
    """root claims the adjudication: both answers, the choices and Save decision lie inside 1366x768 unscrolled."""
    settings = AppSettings(db_url=seeded.url, docs_root=PDFS, output_root=seeded.out_dir)
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(30_000)
            sign_in(page, url, "root", PASSWORD)
            page.get_by_role("button", name="Claim next").click()
            settle(page)
            page.get_by_role("heading", name="Second review: bob").wait_for()
            page.locator(".st-key-page_view [data-testid='stImage'] img").first.wait_for()
            settle(page)
            assert seeded.store.queue.get(_packet(seeded, PacketKind.ADJUDICATION)).claimed_by == "root"
            page.screenshot(path=str(SHOT))
            assert page.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollTop ?? 0") == 0
            _within_first_screen(page, page.locator(".st-key-adj_first_answer"), "first answer")
            _within_first_screen(page, page.locator(".st-key-adj_second_answer"), "second answer")
            first = page.locator(".st-key-adj_first_answer").bounding_box()
            second = page.locator(".st-key-adj_second_answer").bounding_box()
            assert first is not None
            assert second is not None
            assert first["x"] + first["width"] <= second["x"]  # side by side
            for label in ("Keep alice's answer", "Keep bob's answer", "Give a corrected answer"):
                _within_first_screen(page, page.get_by_text(label).first, label)
            _within_first_screen(page, page.get_by_role("button", name="Save decision"), "Save decision")
        finally:
            browser.close()
