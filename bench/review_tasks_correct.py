"""Correction tasks of the review-flow benchmark (bench/review_flow.py runs them): each drives the packet page
in Chromium (Playwright, 1366x768) on a packet the reviewer holds and has open, saves the correction and
returns {"actions": n, "seconds": s}. An action is one click or one keystroke sequence a reviewer makes;
waiting for the page is not an action. Plain functions of (page, packet_doc_id) so the runner plugs them in.
"""

from __future__ import annotations

import time
from typing import Any

IDLE = "[data-test-script-state='notRunning']"
SAVED = "ground truth version"
SHORT = {"GENOMIC_REPORT": "GEN", "LAB_REPORT": "LAB", "PATHOLOGY_REPORT": "PATH", "CLINICAL_NOTE": "NOTE"}


def settle(page: Any, timeout_ms: float = 30_000) -> None:
    """Wait until the app's script has finished the rerun the last action started."""
    page.wait_for_timeout(150)
    page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)


class _Counter:
    def __init__(self, page: Any) -> None:
        self.page, self.actions, self.started = page, 0, time.perf_counter()

    def click(self, locator: Any) -> None:
        locator.click()
        self.actions += 1
        settle(self.page)

    def result(self) -> dict[str, Any]:
        return {"actions": self.actions, "seconds": round(time.perf_counter() - self.started, 3)}


def _open_correct(run: _Counter, packet_doc_id: str) -> None:
    run.page.get_by_role("heading", name=packet_doc_id).wait_for()
    run.click(run.page.get_by_text("Correct", exact=True).first)
    run.page.locator(".st-key-segment_card_0").wait_for()


def _save(run: _Counter) -> None:
    run.click(run.page.get_by_role("button", name="Save correction"))
    run.page.get_by_text(SAVED).first.wait_for()


def card(page: Any, index: int) -> Any:
    """Segment card `index` (0-based) of the Correct form."""
    return page.locator(f".st-key-segment_card_{index}")


def type_correction(
    page: Any, packet_doc_id: str, to_type: str = "ADMINISTRATIVE", segment: int = 0
) -> dict[str, Any]:
    """'Segment N is X' and save: Correct, the type's button on the segment card, Save (3 actions)."""
    run = _Counter(page)
    _open_correct(run, packet_doc_id)
    label = SHORT.get(to_type, "ADMIN" if to_type == "ADMINISTRATIVE" else to_type)
    run.click(card(page, segment).get_by_text(label, exact=True))
    page.get_by_text(f"Document: {to_type}").first.wait_for()
    _save(run)
    return run.result()


def boundary_correction(page: Any, packet_doc_id: str) -> dict[str, Any]:
    """Move a boundary: split the first multi-page segment at its second page (a page chip on its card),
    or merge the first two segments when every segment is one page; then save (3 actions)."""
    run = _Counter(page)
    _open_correct(run, packet_doc_id)
    chips = page.locator("[class*='st-key-split_chips_']")
    if chips.count():
        run.click(chips.first.locator("button").first)
    else:
        run.click(page.get_by_role("button", name="Merge with next").first)
    _save(run)
    return run.result()


def boundary_on_strip(page: Any, packet_doc_id: str) -> dict[str, Any]:
    """Move a boundary on the page strip: Correct, the first split or join mark under a thumbnail, Save
    (3 actions)."""
    run = _Counter(page)
    _open_correct(run, packet_doc_id)
    mark = page.locator(".st-key-page_strip [class*='st-key-strip_']").first
    mark.wait_for()
    mark.scroll_into_view_if_needed()
    run.click(mark.locator("button").first)
    _save(run)
    return run.result()


def evidence_edit(page: Any, packet_doc_id: str, line_index: int = 0) -> dict[str, Any]:
    """Add a line of the page as evidence of segment 1's type and save: Correct, open the evidence
    picker, click a line among the page's lines, Save (4 actions)."""
    run = _Counter(page)
    _open_correct(run, packet_doc_id)
    details = page.locator("details", has_text="Evidence: pick lines on the page").first
    details.wait_for()
    if not details.evaluate("d => d.open"):  # it stays open once the evidence was touched
        run.click(page.get_by_text("Evidence: pick lines on the page"))
    line = page.locator(".st-key-evidence_picker button").nth(line_index)
    line.scroll_into_view_if_needed()
    picked = line.inner_text().strip()
    run.click(line)
    _save(run)
    return {**run.result(), "picked": picked}


TASKS = {
    "type_correction": type_correction,
    "boundary_correction": boundary_correction,
    "boundary_on_strip": boundary_on_strip,
    "evidence_edit": evidence_edit,
}
