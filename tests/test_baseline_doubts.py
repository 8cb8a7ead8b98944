"""The baseline's boundary doubts (issue 26): where its own reading of the pages leaves a boundary uncertain,
the segment's confidence is held at the floor so the answer is escalated, with the reason in words."""

from __future__ import annotations

from arbiter.classify.baseline_doubts import boundary_doubts
from arbiter.classify.baseline_pages import PageScore, Segment, says_continued
from arbiter.contracts import Page


def page(num: int, text: str, **kw: object) -> PageScore:
    return PageScore(page=Page(page_num=num, text=text), readable=True, **kw)  # type: ignore[arg-type]


def seg(pages: list[PageScore], page_type: str) -> Segment:
    return Segment(pages[0].page.page_num, pages[-1].page.page_num, pages, page_type)


def test_a_layout_restart_under_a_running_header_is_doubted() -> None:
    first = page(1, "PROGRESS NOTE\nVitals: stable\n")
    second = page(2, "PROGRESS NOTE\nLabs reviewed\n", restart=True, weak_restart=True)
    doubts = boundary_doubts([seg([first], "NOTE"), seg([second], "NOTE")], 1)
    assert len(doubts) == 1
    assert "same line as the page before" in doubts[0]
    assert "running header" in doubts[0]


def test_a_strong_restart_is_not_doubted() -> None:
    first = page(1, "PROGRESS NOTE\nVitals: stable\n")
    second = page(2, "DISCHARGE SUMMARY\nAdmitted 3 days\n", restart=True)
    assert boundary_doubts([seg([first], "NOTE"), seg([second], "NOTE")], 1) == []


def test_a_later_page_with_its_own_patient_block_is_doubted() -> None:
    first = page(1, "Clinic note\nChief complaint: cough\n")
    second = page(2, "OUTPATIENT VISIT NOTE\nPatient: Carolyn  Age: 34\n")
    doubts = boundary_doubts([seg([first, second], "NOTE")], 0)
    assert len(doubts) == 1
    assert "page 2 opens on a title or patient block of its own" in doubts[0]


def test_a_repeated_letterhead_or_section_heading_is_no_doubt() -> None:
    first = page(1, "MERIDIAN LABORATORY\nPatient: Hartwell, Donna\nResults\n")
    repeated = page(2, "MERIDIAN LABORATORY\nPatient: Hartwell, Donna\nMethods\n")
    heading = page(3, "Assessment\nStable on current therapy.\n")
    assert boundary_doubts([seg([first, repeated, heading], "NOTE")], 0) == []


def test_a_one_page_type_switch_mid_run_is_doubted() -> None:
    before = page(1, "CONSULT NOTE\nReason for referral\n")
    switch = page(2, "hemoglobin 13.2 g/dl normal\n")
    after = page(3, "assessment and plan continue\n")
    segments = [seg([before], "NOTE"), seg([switch], "LAB_REPORT"), seg([after], "NOTE")]
    doubts = boundary_doubts(segments, 1)
    assert len(doubts) == 1
    assert "reads as LAB_REPORT between pages of another type" in doubts[0]
    # With a title of its own, the one page is a document of its own.
    titled = page(2, "LABORATORY RESULTS\nhemoglobin 13.2 g/dl\n")
    assert boundary_doubts([segments[0], seg([titled], "LAB_REPORT"), segments[2]], 1) == []


def test_top_lines_that_say_continued() -> None:
    assert says_continued(Page(page_num=2, text="LAB\nHartwell, Donna (continued)\nMethods\n"))
    assert says_continued(Page(page_num=2, text="Cancer Centre\nRe: Mrs T, DOB 1/1/70 (page 2)\n"))
    assert not says_continued(Page(page_num=2, text="Cancer Centre\nRe: Mrs T\nDear Dr Smith\n"))
