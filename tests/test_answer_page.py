"""The answer desk under AppTest (issue 31): a grounded-answer packet opens on its own page (question,
statements beside their cited chunks, issues on statements and quotes), and each decision saves through the
store like a medical review — Agree, a statement unsupported, a citation fixed, an abstention — with the
answer kind and the statement verdicts on the ground-truth version; a failing correction saves nothing and
says why; the draft survives a reload; a blind second review shows no verdict; two answer reviews that
disagree go to adjudication, decided on the same page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from answer_helpers import (
    AGREEABLE,
    NO_EVIDENCE,
    UNSUPPORTED,
    WRONG_CITATION,
    packet_of,
    seed_answers,
)
from review_helpers import Seeded, app_pointed, app_test, sign_in

from arbiter.contracts import GroundTruthSource, PacketKind, SMEPacket
from arbiter.contracts.grounded import KIND, UnsupportedReason, Verdict, load_grounded_profile
from arbiter.review import answer_desk, answer_draft, answer_reading
from arbiter.review.desk import Desk


@pytest.fixture(name="answers")
def answers_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    data = seed_answers(tmp_path)
    try:
        with app_pointed(data, monkeypatch):
            yield data
    finally:
        data.store.dispose()


@pytest.fixture(name="double")
def double_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    """Every escalation also has a blind second review."""
    data = seed_answers(tmp_path, second_reviews=True)
    try:
        with app_pointed(data, monkeypatch):
            yield data
    finally:
        data.store.dispose()


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _open(
    data: Seeded, doc_id: str, user: str = "alice", kind: PacketKind = PacketKind.ESCALATION
) -> tuple[Any, SMEPacket]:
    packet = packet_of(data.store, doc_id, kind)
    assert data.store.queue.claim(packet.packet_id, user) is not None
    at = sign_in(app_test(), user)
    at.switch_page("views/packet.py").run()
    assert not at.exception, at.exception
    assert at.session_state["arbiter_packet_id"] == packet.packet_id
    return at, packet


def _history(data: Seeded, doc_id: str) -> list[Any]:
    return [r for r in data.store.ground_truth.history(doc_id) if r.sme_review is not None]


def test_the_answer_page_shows_the_question_statements_and_cited_chunks(answers: Seeded) -> None:
    at, _packet = _open(answers, UNSUPPORTED)
    shown = "\n".join(_texts(at.markdown))
    assert (
        "**Question:** Can a covered entity extend the time to act on a request for access, and how often?"
        in shown
    )
    assert "**1.** The covered entity may extend the time for such actions by no more than 30 days." in shown
    assert "**3.** The privacy official must personally approve every such decision in writing." in shown
    # the quote highlighted inside its chunk, the chunk named by source, section and score
    assert (
        ":orange-background[**the covered entity may extend the time for such actions by no more than 30 days**]"
        in shown
    )
    captions = "\n".join(_texts(at.caption))
    assert "REQ-001 in C02 · 45 CFR 164.524(b)(2)(ii) · Access of individuals" in captions
    assert "score 0.74" in captions
    # the issues point at the statement (on its card and in the issues frame)
    assert "V4.STATEMENT_UNSUPPORTED" in captions
    assert any("Statement 3 is not supported by its quotes" in t for t in _texts(at.markdown))
    assert not at.tabs  # none of the medical page's tabs
    assert at.button(key="answer_agree").disabled is False
    assert any("Agree cannot save this answer as it is" in c for c in _texts(at.caption))


def test_agree_saves_every_statement_supported_and_opens_the_next(answers: Seeded) -> None:
    at, packet = _open(answers, AGREEABLE[0])
    at.button(key="answer_agree").click().run()
    assert not at.exception
    assert answers.store.queue.get(packet.packet_id).review_status == "COMPLETED"
    [record] = _history(answers, AGREEABLE[0])
    assert record.answer_kind == KIND
    assert record.ground_truth_source == GroundTruthSource.SME_VALIDATED
    assert record.ground_truth_classification == packet.final_classification
    assert record.statement_verdicts is not None
    assert [v.verdict for v in record.statement_verdicts] == [Verdict.SUPPORTED]
    assert at.session_state["arbiter_packet_id"] != packet.packet_id  # the next packet is open
    assert any("Saved" in t and "Next:" in t for t in _texts(at.success))


def test_agree_on_an_unsupported_answer_saves_nothing_and_says_why(answers: Seeded) -> None:
    at, packet = _open(answers, UNSUPPORTED)
    at.button(key="answer_agree").click().run()
    assert not at.exception
    errors = _texts(at.error)
    assert any("cannot be saved as it is" in e for e in errors)
    assert any(e.startswith("Statement 3 is not supported by its quotes") for e in errors)
    assert _history(answers, UNSUPPORTED) == []
    assert answers.store.queue.get(packet.packet_id).review_status == "IN_REVIEW"


def test_a_statement_marked_unsupported_is_saved_with_its_reason(answers: Seeded) -> None:
    at, packet = _open(answers, UNSUPPORTED)
    at.selectbox(key=f"ans_verdict_{packet.packet_id}_2").select("changed_modal").run()
    assert not at.exception
    assert any("unsupported: changed modal" in t for t in _texts(at.markdown))
    at.button(key="answer_save").click().run()
    assert not at.exception
    [record] = _history(answers, UNSUPPORTED)
    assert record.ground_truth_source == GroundTruthSource.SME_CORRECTED
    assert record.answer_kind == KIND
    verdicts = record.statement_verdicts or []
    assert [(v.verdict, v.reason) for v in verdicts] == [
        (Verdict.SUPPORTED, None),
        (Verdict.SUPPORTED, None),
        (Verdict.UNSUPPORTED, UnsupportedReason.CHANGED_MODAL),
    ]
    assert len(record.ground_truth_classification["statements"]) == 2
    assert record.sme_review is not None
    assert record.sme_review.reason_codes == ["UNSUPPORTED_CHANGED_MODAL"]
    assert record.sme_review.corrections is not None
    assert record.sme_review.corrections.correction_notes == "Statement 3: unsupported (changed modal)"


def test_a_citation_is_fixed_by_picking_the_chunk(answers: Seeded) -> None:
    at, packet = _open(answers, WRONG_CITATION)
    at.selectbox(key=f"ans_chunk_{packet.packet_id}_0").select("C09").run()
    assert not at.exception
    # the quote picked from that chunk is offered among its sentences, and shown highlighted in C09
    picker = at.selectbox(key=f"ans_sentence_{packet.packet_id}_0")
    assert picker.value == 0
    assert picker.options[0].startswith("1. REQ-001: A covered entity must provide")
    assert any(c.startswith("REQ-001 in C09") for c in _texts(at.caption))
    at.button(key="answer_save").click().run()
    assert not at.exception
    [record] = _history(answers, WRONG_CITATION)
    [verdict] = record.statement_verdicts or []
    assert (verdict.verdict, verdict.cites) == (Verdict.CORRECTED, ["REQ-001"])
    assert [q["chunk_id"] for q in record.ground_truth_classification["quotes"]] == ["C09"]


def test_the_answer_is_replaced_with_an_abstention(answers: Seeded) -> None:
    at, packet = _open(answers, NO_EVIDENCE)
    at.toggle(key=f"ans_abstain_{packet.packet_id}").set_value(True).run()
    at.text_area(key=f"ans_missing_{packet.packet_id}").input("A rule that states the deadline").run()
    at.button(key="answer_save").click().run()
    assert not at.exception
    [record] = _history(answers, NO_EVIDENCE)
    answer = record.ground_truth_classification
    assert answer["abstained"] is True
    assert answer["missing_evidence"] == ["A rule that states the deadline"]
    assert {v.verdict for v in record.statement_verdicts or []} == {Verdict.UNSUPPORTED}


def test_a_statement_is_edited_and_the_ground_truth_page_shows_the_verdicts(answers: Seeded) -> None:
    at, packet = _open(answers, UNSUPPORTED)
    new = "The covered entity may extend the time for such actions by no more than 30 days."
    at.text_area(key=f"ans_text_{packet.packet_id}_2").input(new).run()
    assert any("corrected" in t for t in _texts(at.markdown))
    at.button(key="answer_save").click().run()
    assert not at.exception
    [record] = _history(answers, UNSUPPORTED)
    assert [v.verdict for v in record.statement_verdicts or []] == [
        Verdict.SUPPORTED,
        Verdict.SUPPORTED,
        Verdict.CORRECTED,
    ]
    assert record.ground_truth_classification["statements"][2]["text"] == new
    at.switch_page("views/ground_truth.py").run()
    at.selectbox(key="gt_doc").select(UNSUPPORTED).run()
    assert not at.exception
    [rows] = [d.value for d in at.dataframe if "Verdict" in d.value.columns]
    assert list(rows["Verdict"]) == [
        "supported, cites REQ-001",
        "supported, cites REQ-002",
        "corrected, cites REQ-001",
    ]


def test_a_correction_that_fails_says_why_and_saves_nothing(answers: Seeded) -> None:
    at, packet = _open(answers, UNSUPPORTED)
    at.selectbox(key=f"ans_verdict_{packet.packet_id}_0").select("not_in_source").run()
    assert any(e.startswith("Statement 3 is not supported") for e in _texts(at.error))  # said before saving
    assert at.button(key="answer_save").disabled
    # and on the submit path, whatever the page allowed
    item = answer_reading.item_of(packet)
    assert item is not None
    draft = answer_draft.mark_unsupported(
        answer_draft.AnswerDraft(), item, 0, UnsupportedReason.NOT_IN_SOURCE
    )
    now = datetime.now(UTC)
    outcome = answer_desk.correct(
        Desk(answers.store, "alice"), packet, load_grounded_profile(), draft, notes="", confidence=0.9,
        started_at=now, token="t",
    )  # fmt: skip
    assert not outcome.ok
    assert outcome.message == "The correction has problems to fix before it can be saved."
    assert any(p.message.startswith("Statement 3 is not supported") for p in outcome.blocking)
    assert _history(answers, UNSUPPORTED) == []
    assert answers.store.queue.get(packet.packet_id).review_status == "IN_REVIEW"


def test_the_draft_survives_a_reload(answers: Seeded) -> None:
    at, packet = _open(answers, UNSUPPORTED)
    at.selectbox(key=f"ans_verdict_{packet.packet_id}_2").select("changed_number").run()
    assert answers.store.drafts.get(packet.packet_id, "alice")
    again = sign_in(app_test())  # a new browser session: the claim and the draft are in the database
    again.switch_page("views/packet.py").run()
    assert not again.exception
    assert again.selectbox(key=f"ans_verdict_{packet.packet_id}_2").value == "changed_number"
    again.button(key="answer_save").click().run()
    [record] = _history(answers, UNSUPPORTED)
    assert (record.statement_verdicts or [])[2].reason == UnsupportedReason.CHANGED_NUMBER


def test_a_blind_second_review_shows_no_verdict(double: Seeded) -> None:
    at, packet = _open(double, UNSUPPORTED, "bob", PacketKind.SECOND_REVIEW)
    assert packet.blind
    shown = "\n".join(_texts(at.markdown) + _texts(at.caption) + _texts(at.subheader))
    assert "Blind review" in shown
    assert "V4." not in shown
    assert "V3." not in shown
    assert "Issues (" not in shown
    assert "**3.** The privacy official must personally approve every such decision in writing." in shown


def test_answer_reviews_that_disagree_are_adjudicated_on_the_answer_page(double: Seeded) -> None:
    profile = load_grounded_profile()
    now = datetime.now(UTC)
    first = packet_of(double.store, UNSUPPORTED)
    second = packet_of(double.store, UNSUPPORTED, PacketKind.SECOND_REVIEW)
    for user, packet, reason in (
        ("alice", first, UnsupportedReason.CHANGED_MODAL),
        ("bob", second, UnsupportedReason.NOT_IN_SOURCE),
    ):
        assert double.store.queue.claim(packet.packet_id, user) is not None
        item = answer_reading.item_of(packet)
        assert item is not None
        draft = answer_draft.mark_unsupported(answer_draft.AnswerDraft(), item, 2, reason)
        outcome = answer_desk.correct(
            Desk(double.store, user),
            packet,
            profile,
            draft,
            notes="",
            confidence=0.9,
            started_at=now,
            token=user,
        )
        assert outcome.ok, outcome.message
    case = packet_of(double.store, UNSUPPORTED, PacketKind.ADJUDICATION)
    assert case.adjudication is not None
    assert case.adjudication.differences == [
        "Statement 3: the first review says unsupported (not in source), the second unsupported (changed modal)."
    ] or case.adjudication.differences == [
        "Statement 3: the first review says unsupported (changed modal), the second unsupported (not in source)."
    ]
    at, _ = _open(double, UNSUPPORTED, "root", PacketKind.ADJUDICATION)
    assert [s.value for s in at.subheader][:1] == ["Adjudication"]
    rows = at.dataframe[0].value
    assert rows.iloc[0]["Differs"] == "yes"
    at.radio(key=f"adj_choice_{case.packet_id}").set_value("FIRST").run()
    at.button(key="save_adjudication").click().run()
    assert not at.exception
    newest = double.store.ground_truth.history(UNSUPPORTED)[-1]
    assert newest.ground_truth_source == GroundTruthSource.SME_ADJUDICATED
    assert newest.answer_kind == KIND
    kept = case.adjudication.first.statement_verdicts
    assert newest.statement_verdicts == kept
