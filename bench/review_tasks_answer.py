"""Answer-desk tasks of the review-flow benchmark (bench/review_flow.py runs them; tests/test_browser_answers.py
checks them): each drives a grounded-answer packet page in Chromium (Playwright, 1366x768) that the reviewer
holds and has open, makes one decision, saves it and waits until the next packet is on screen. Returns
{"actions": n, "seconds": s}: an action is one click, one keystroke or one typed text a reviewer makes; waiting
for the page is not one. Plain functions of (page, packet_doc_id, packet_id, ...).
"""

from __future__ import annotations

import time
from typing import Any

from bench.review_tasks_correct import settle


class _Counter:
    def __init__(self, page: Any) -> None:
        self.page, self.actions, self.started = page, 0, time.perf_counter()

    def click(self, locator: Any) -> None:
        locator.click()
        self.actions += 1
        settle(self.page)

    def press(self, keys: str) -> None:
        self.page.keyboard.press(keys)
        self.actions += 1
        settle(self.page)

    def fill(self, locator: Any, text: str) -> None:
        locator.fill(text)
        self.actions += 1

    def result(self) -> dict[str, Any]:
        return {"actions": self.actions, "seconds": round(time.perf_counter() - self.started, 3)}


def heading(page: Any) -> str:
    return str(page.locator("h1").first.inner_text()).strip()


def _moved_on(page: Any, doc_id: str, timeout_ms: float = 30_000) -> None:
    """Wait until the saved packet's page gave way to the next one (or to the end of the queue)."""
    page.wait_for_function(
        "doc => { const h = document.querySelector('h1'); return !!h && h.innerText.trim() !== doc; }",
        arg=doc_id,
        timeout=timeout_ms,
    )
    settle(page)


def _pick(run: _Counter, key: str, option: str) -> None:
    """Open the selectbox with widget key `key` and click the option whose label starts with `option`."""
    run.click(run.page.locator(f".st-key-{key}").get_by_role("combobox"))
    choice = run.page.get_by_role("option").filter(has_text=option).first
    try:
        choice.wait_for(timeout=5_000)
    except Exception:  # a rerun closed the list first: open it again (not a reviewer action)
        settle(run.page)
        run.page.locator(f".st-key-{key}").get_by_role("combobox").click()
    run.click(choice)


def _save(run: _Counter, doc_id: str) -> None:
    run.click(run.page.get_by_role("button", name="Save correction"))
    _moved_on(run.page, doc_id)


def agree_answer(page: Any, doc_id: str, packet_id: str) -> dict[str, Any]:
    """Alt+A: the answer saved as it is, the next packet open (1 action)."""
    page.get_by_role("heading", name=doc_id).wait_for()
    run = _Counter(page)
    run.press("Alt+a")
    _moved_on(page, doc_id)
    return run.result()


def mark_unsupported(
    page: Any, doc_id: str, packet_id: str, statement: int = 2, reason: str = "changed modal"
) -> dict[str, Any]:
    """Statement N unsupported for a reason, saved: the card's verdict box, the reason, Save (3 actions)."""
    page.get_by_role("heading", name=doc_id).wait_for()
    run = _Counter(page)
    _pick(run, f"ans_verdict_{packet_id}_{statement}", f"Unsupported: {reason}")
    page.get_by_text(f"unsupported: {reason}").first.wait_for()
    _save(run, doc_id)
    return run.result()


def fix_citation(
    page: Any, doc_id: str, packet_id: str, statement: int = 0, chunk_id: str = "C09", shot: Any = None
) -> dict[str, Any]:
    """Statement N cites chunk C instead (its passage that supports the statement), saved: the card's
    citation box, the chunk, Save (3 actions). `shot(page)` is called before saving."""
    page.get_by_role("heading", name=doc_id).wait_for()
    run = _Counter(page)
    _pick(run, f"ans_chunk_{packet_id}_{statement}", chunk_id)
    page.locator(f".st-key-ans_sentence_{packet_id}_{statement}").wait_for()
    if shot is not None:
        shot(page)
    _save(run, doc_id)
    return run.result()


def abstain(
    page: Any, doc_id: str, packet_id: str, missing: str = "A rule that states the deadline", shot: Any = None
) -> dict[str, Any]:
    """The answer replaced with an abstention listing the missing evidence, saved: the switch, the missing
    evidence typed, Save (3 actions). `shot(page)` is called before saving."""
    page.get_by_role("heading", name=doc_id).wait_for()
    run = _Counter(page)
    run.click(
        page.locator(f".st-key-ans_abstain_{packet_id}").get_by_text("Replace the answer with an abstention")
    )
    run.fill(page.get_by_label("Missing evidence (one item per line)"), missing)
    if shot is not None:
        shot(page)
    _save(run, doc_id)
    return run.result()


TASKS = {
    "answer_agree": agree_answer,
    "answer_unsupported": mark_unsupported,
    "answer_citation": fix_citation,
    "answer_abstention": abstain,
}
