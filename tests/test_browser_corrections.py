"""Corrections in a few actions, in a real Chromium at 1366x768 (Playwright, Debian's chromium): a type change,
a boundary change and an evidence edit, each driven by the flow benchmark's own tasks
(bench/review_tasks_correct.py) and checked in the store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, running_app, settle
from review_helpers import PASSWORD, PDFS, Seeded, seed

from arbiter.review.desk import machine_answer
from arbiter.review.settings import AppSettings
from bench.review_tasks_correct import (
    boundary_correction,
    boundary_on_strip,
    card,
    evidence_edit,
    type_correction,
)

SHOTS = Path(os.environ.get("ARBITER_SHOTS", "")) if os.environ.get("ARBITER_SHOTS") else None


pytestmark = pytest.mark.usefixtures("chromium_present")


def _open(seeded: Seeded, tmp_path: Path) -> Iterator[Any]:
    settings = AppSettings(db_url=seeded.url, docs_root=PDFS, output_root=seeded.out_dir)
    with running_app(settings, tmp_path / "streamlit.log") as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.set_default_timeout(30_000)
            page.goto(url)
            settle(page)
            page.get_by_label("User name").fill("alice")
            page.get_by_role("textbox", name="Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            settle(page)
            page.get_by_role("button", name="Claim next").first.click()
            settle(page)
            yield page
        finally:
            browser.close()


def _machine_quotes(seeded: Seeded) -> list[Any]:
    answer = machine_answer(seeded.store.queue.get(seeded.packet_id("path-breast-02")))
    assert answer is not None
    return [e for s in answer["segments"] for t in s["types"] for e in t["evidence"]]


def _shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name))


@pytest.fixture(name="one_page")
def one_page_fixture(tmp_path: Path) -> Iterator[tuple[Seeded, Any]]:
    """admin-requisition-03 (one page, classified GENOMIC_REPORT; the truth is ADMINISTRATIVE), open."""
    data = seed(tmp_path, ("admin-requisition-03",))
    try:
        for page in _open(data, tmp_path):
            yield data, page
    finally:
        data.store.dispose()


@pytest.fixture(name="two_pages")
def two_pages_fixture(tmp_path: Path) -> Iterator[tuple[Seeded, Any]]:
    """path-breast-02 (two pages), open on the packet page."""
    data = seed(tmp_path, ("path-breast-02",))
    try:
        for page in _open(data, tmp_path):
            yield data, page
    finally:
        data.store.dispose()


def test_a_type_correction_takes_at_most_four_actions(one_page: tuple[Seeded, Any]) -> None:
    """'Segment 1 is ADMINISTRATIVE' in one click: saved as ground truth version 1 with that dominant type."""
    seeded, page = one_page
    _shot(page, "packet_1366.png")
    page.get_by_text("Correct", exact=True).first.click()
    settle(page)
    _shot(page, "correct_form_1366.png")
    # Save correction is on the first screen at 768 px, however long the form below it.
    save = page.get_by_role("button", name="Save correction").bounding_box()
    assert save is not None
    assert save["y"] + save["height"] <= 768
    # Every type of the segment is on screen at 1366 px, without scrolling sideways.
    for label in ("GEN", "LAB", "PATH", "NOTE", "ADMIN"):
        box = card(page, 0).get_by_text(label, exact=True).bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 1366
    page.get_by_role("tab", name="Classification").click()
    settle(page)
    page.get_by_text("Download as JSON").wait_for()
    assert page.locator("[data-testid='stJson']").count() == 0
    _shot(page, "classification_tab_1366.png")
    page.get_by_role("tab", name="Review").click()  # back to where a reviewer starts
    settle(page)
    page.get_by_text("Agree", exact=True).first.click()
    settle(page)
    result = type_correction(page, "admin-requisition-03", "ADMINISTRATIVE")
    print("TASK type_correction", result)
    assert result["actions"] <= 4
    [record] = seeded.store.ground_truth.history("admin-requisition-03")
    assert record.version == 1
    assert record.ground_truth_classification["dominant_type"] == "ADMINISTRATIVE"
    seg = record.ground_truth_classification["segments"][0]
    assert seg["dominant_type"] == "ADMINISTRATIVE"
    levels = {e["document_type"]: e["presence_level"] for e in seg["types"]}
    assert levels["ADMINISTRATIVE"] == "PRIMARY"
    assert levels["GENOMIC_REPORT"] == "NO_EVIDENCE"


def test_a_boundary_correction_moves_the_pages(two_pages: tuple[Seeded, Any]) -> None:
    """A page chip splits a two-page segment (or Merge joins two one-page ones) and the save keeps it."""
    seeded, page = two_pages
    before = seeded.store.queue.get(seeded.packet_id("path-breast-02"))
    machine = machine_answer(before)
    assert machine is not None
    count = len(machine["segments"])
    result = boundary_correction(page, "path-breast-02")
    print("TASK boundary_correction", result)
    _shot(page, "after_boundary.png")
    assert result["actions"] <= 4
    [record] = seeded.store.ground_truth.history("path-breast-02")
    spans = [(s["start_page"], s["end_page"]) for s in record.ground_truth_classification["segments"]]
    assert spans == ([(1, 1), (2, 2)] if count == 1 else [(1, 2)])


def test_a_click_on_the_page_strip_moves_a_boundary(two_pages: tuple[Seeded, Any]) -> None:
    """While correcting, the mark under page 2's thumbnail splits there (or joins there) and the save keeps it."""
    seeded, page = two_pages
    machine = machine_answer(seeded.store.queue.get(seeded.packet_id("path-breast-02")))
    assert machine is not None
    count = len(machine["segments"])
    result = boundary_on_strip(page, "path-breast-02")
    print("TASK boundary_on_strip", result)
    _shot(page, "after_strip.png")
    assert result["actions"] <= 3
    [record] = seeded.store.ground_truth.history("path-breast-02")
    spans = [(s["start_page"], s["end_page"]) for s in record.ground_truth_classification["segments"]]
    assert spans == ([(1, 1), (2, 2)] if count == 1 else [(1, 2)])


def test_evidence_is_added_from_the_page(two_pages: tuple[Seeded, Any]) -> None:
    """A line picked from the page's own lines is saved as evidence of the segment's type."""
    seeded, page = two_pages
    try:
        result = evidence_edit(page, "path-breast-02", line_index=0)
    finally:
        _shot(page, "after_evidence.png")
    print("TASK evidence_edit", result)
    assert result["actions"] <= 4
    [record] = seeded.store.ground_truth.history("path-breast-02")
    assert record.ground_truth_source == "SME_CORRECTED"
    bundle = seeded.store.queue.get(seeded.packet_id("path-breast-02"))
    assert bundle.review_status == "COMPLETED"
    quotes = [
        (e["page"], e["snippet"])
        for s in record.ground_truth_classification["segments"]
        for t in s["types"]
        for e in t["evidence"]
    ]
    assert (1, result["picked"]) in quotes
    assert (1, result["picked"]) not in [(e["page"], e["snippet"]) for e in _machine_quotes(seeded)]
    # The ground-truth page reads as tables and highlighted quotes, with a JSON download and no JSON tree.
    page.get_by_role("link", name="Ground truth").click()
    settle(page)
    page.get_by_text("Download as JSON").wait_for()
    assert page.locator("[data-testid='stJson']").count() == 0
    page.get_by_text(quotes[-1][1], exact=False).first.wait_for()
    page.get_by_text("Download as JSON").scroll_into_view_if_needed()
    _shot(page, "ground_truth_1366.png")
