"""The answer desk in a real Chromium at 1366x768 (Playwright, Debian's chromium; issue 31): the first
statement's cited quote is on the first screen; agreeing takes one keystroke; a statement marked unsupported,
a citation fixed and an abstention each take at most four actions, driven by the flow benchmark's own tasks
(bench/review_tasks_answer.py) and checked in the store. ARBITER_SHOTS=dir saves the screenshots
(docs/screenshots/answer-*.png)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from answer_helpers import AGREEABLE, NO_EVIDENCE, UNSUPPORTED, WRONG_CITATION, packet_of, seed_answers
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle, sign_in
from review_helpers import PASSWORD, Seeded

from arbiter.contracts import GroundTruthSource, ReviewStatus
from arbiter.contracts.grounded import UnsupportedReason, Verdict
from arbiter.review.settings import AppSettings
from bench.review_tasks_answer import abstain, agree_answer, fix_citation, mark_unsupported

SHOTS = Path(os.environ.get("ARBITER_SHOTS", "")) if os.environ.get("ARBITER_SHOTS") else None
VIEWPORT: Any = {"width": 1366, "height": 768}

pytestmark = pytest.mark.usefixtures("chromium_present")


def _shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name))


class Desk:
    """The app on a seeded store and a Chromium; `open(doc_id)` signs alice in with that packet open."""

    def __init__(self, data: Seeded, url: str, browser: Any) -> None:
        self.data, self.url, self.browser = data, url, browser
        self.page: Any = None

    def open(self, doc_id: str) -> tuple[Any, str]:
        if self.page is not None:
            self.page.context.close()
        store = self.data.store
        for held in store.queue.page(status=ReviewStatus.IN_REVIEW, claimed_by="alice", limit=50):
            store.queue.release(held.packet_id, "alice")  # what the last task opened next
        packet = packet_of(store, doc_id)
        assert store.queue.claim(packet.packet_id, "alice") is not None
        self.page = self.browser.new_context(viewport=VIEWPORT).new_page()
        self.page.set_default_timeout(30_000)
        sign_in(self.page, self.url, "alice", PASSWORD)
        self.page.get_by_role("link", name="Packet").click()
        self.page.get_by_role("heading", name=doc_id).wait_for()
        settle(self.page)
        return self.page, packet.packet_id


@pytest.fixture(name="desk", scope="module")
def desk_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    tmp = tmp_path_factory.mktemp("answers")
    data = seed_answers(tmp)
    settings = AppSettings(db_url=data.url, docs_root=data.docs, output_root=data.out_dir)
    try:
        with running_app(settings, tmp / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                yield Desk(data, url, browser)
            finally:
                browser.close()
    finally:
        data.store.dispose()


def _pick(page: Any, key: str, option: str) -> None:
    """Open a selectbox and pick an option (once more if the rerun before it closed the list)."""
    for attempt in range(2):
        page.locator(f".st-key-{key}").get_by_role("combobox").click()
        try:
            page.get_by_role("option").filter(has_text=option).first.click(timeout=5_000)
            break
        except playwright_api.TimeoutError:
            if attempt:
                raise
            settle(page)
    settle(page)


def _applied_shot(name: str) -> Any:
    """A screenshot with the typed text applied (Ctrl+Enter; the Save click applies it in the task itself)."""

    def shoot(page: Any) -> None:
        if SHOTS is not None:
            page.keyboard.press("Control+Enter")
            settle(page)
            _shot(page, name)

    return shoot


def _verdicts(data: Seeded, doc_id: str) -> list[Any]:
    [record] = [r for r in data.store.ground_truth.history(doc_id) if r.sme_review is not None]
    return record.statement_verdicts or []


def test_the_first_statements_quote_is_on_the_first_screen(desk: Desk) -> None:
    page, _packet_id = desk.open(UNSUPPORTED)
    quote = page.locator(".st-key-statement_0").get_by_text("the covered entity may extend the time").first
    box = quote.bounding_box()
    assert box is not None
    assert box["y"] >= 0
    assert box["y"] + box["height"] <= 768
    for name in ("Agree", "Save correction"):
        button = page.get_by_role("button", name=name).bounding_box()
        assert button is not None
        assert button["y"] + button["height"] <= 768
        assert button["x"] + button["width"] <= 1366
    _shot(page, "answer-packet.png")


def test_a_correction_that_fails_is_shown_before_saving(desk: Desk) -> None:
    """The wrong statement marked: the page says why the correction cannot be saved (screenshot)."""
    page, packet_id = desk.open(UNSUPPORTED)
    _pick(page, f"ans_verdict_{packet_id}_0", "Unsupported: not in source")
    page.get_by_text("Statement 3 is not supported by its quotes").first.wait_for()
    _shot(page, "answer-unsupported-refused.png")
    page.get_by_role("button", name="Undo").first.click()
    settle(page)
    _pick(page, f"ans_verdict_{packet_id}_2", "Unsupported: changed modal")
    page.get_by_text("unsupported: changed modal").first.wait_for()
    _shot(page, "answer-unsupported.png")


def test_agree_takes_one_keystroke(desk: Desk) -> None:
    page, _packet_id = desk.open(AGREEABLE[0])
    result = agree_answer(page, AGREEABLE[0], _packet_id)
    print("TASK answer_agree", result)
    assert result["actions"] == 1
    [verdict] = _verdicts(desk.data, AGREEABLE[0])
    assert verdict.verdict == Verdict.SUPPORTED
    _shot(page, "answer-after-agree.png")


def test_a_statement_is_marked_unsupported_in_three_actions(desk: Desk) -> None:
    page, packet_id = desk.open(UNSUPPORTED)
    page.locator(f".st-key-ans_verdict_{packet_id}_2").scroll_into_view_if_needed()
    result = mark_unsupported(page, UNSUPPORTED, packet_id, 2, "changed modal")
    print("TASK answer_unsupported", result)
    assert result["actions"] <= 4
    verdicts = _verdicts(desk.data, UNSUPPORTED)
    assert [(v.verdict, v.reason) for v in verdicts][2] == (
        Verdict.UNSUPPORTED,
        UnsupportedReason.CHANGED_MODAL,
    )


def test_a_citation_is_fixed_in_three_actions(desk: Desk) -> None:
    page, packet_id = desk.open(WRONG_CITATION)
    result = fix_citation(
        page, WRONG_CITATION, packet_id, 0, "C09", shot=lambda p: _shot(p, "answer-citation.png")
    )
    print("TASK answer_citation", result)
    assert result["actions"] <= 4
    [verdict] = _verdicts(desk.data, WRONG_CITATION)
    assert (verdict.verdict, verdict.cites) == (Verdict.CORRECTED, ["REQ-001"])


def test_the_answer_is_replaced_with_an_abstention_in_three_actions(desk: Desk) -> None:
    page, packet_id = desk.open(NO_EVIDENCE)
    result = abstain(page, NO_EVIDENCE, packet_id, shot=_applied_shot("answer-abstention.png"))
    print("TASK answer_abstention", result)
    assert result["actions"] <= 4
    [record] = [r for r in desk.data.store.ground_truth.history(NO_EVIDENCE) if r.sme_review is not None]
    assert record.ground_truth_source == GroundTruthSource.SME_CORRECTED
    assert record.ground_truth_classification["abstained"] is True
    assert record.ground_truth_classification["missing_evidence"] == ["A rule that states the deadline"]
