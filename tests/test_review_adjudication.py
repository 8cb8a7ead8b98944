"""The review app keeps blind reviews blind (issue 11.3) and lets a third person adjudicate two reviews that
disagree (11.4), headless with AppTest over the fixture documents, every document sampled."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from review_helpers import Seeded, app_on, app_test, sign_in

from arbiter.contracts import GroundTruthSource, PacketKind, SMEReview
from arbiter.store import NotIndependent

# Agreeing with its machine answer raises no V1/V2/V4 problem (only V3 escalated it).
DOC = "note-injection-03"


@pytest.fixture(name="sampled")
def sampled_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    with app_on(tmp_path, monkeypatch, sample_all=True) as data:
        yield data


def packet_of(data: Seeded, kind: PacketKind, doc_id: str = DOC) -> str:
    found = [
        p for p in data.store.queue.page(limit=100, status=None) if p.doc_id == doc_id and p.kind == kind
    ]
    assert len(found) == 1
    return found[0].packet_id


def machine(data: Seeded) -> dict[str, Any]:
    packet = data.store.queue.get(packet_of(data, PacketKind.ESCALATION))
    answer = packet.final_classification or packet.primary_agent_classification
    assert answer is not None
    return answer


def review(data: Seeded, kind: PacketKind, who: str, answer: dict[str, Any]) -> None:
    """`who` claims the document's packet of `kind` and saves `answer` through the store."""
    packet_id = packet_of(data, kind)
    assert data.store.queue.claim(packet_id, who) is not None
    now = datetime.now(UTC)
    agrees = answer == machine(data)
    saved = SMEReview(
        reviewer=who, agrees_with_primary=agrees, confidence=0.9, started_at=now, submitted_at=now
    )
    data.store.reviews.submit(packet_id, who, saved, answer, idempotency_key=f"{packet_id}-{who}")


def relabelled(answer: dict[str, Any], dominant: str) -> dict[str, Any]:
    return {**answer, "dominant_type": dominant}


def shown_documents(at: Any) -> list[str]:
    return [str(d) for table in at.dataframe for d in table.value.get("Document", [])]


def test_the_queue_hides_the_other_packets_of_a_document_held_blind(sampled: Seeded) -> None:
    """bob holds the blind second review while alice reviews the escalation: bob's queue lists the document
    once (his blind row, unmarked as to its kind); alice's lists both packets."""
    assert sampled.store.queue.claim(packet_of(sampled, PacketKind.ESCALATION), "alice") is not None
    assert sampled.store.queue.claim(packet_of(sampled, PacketKind.SECOND_REVIEW), "bob") is not None
    bob = sign_in(app_test(), "bob")
    assert shown_documents(bob).count(DOC) == 1
    row = next(r for _, r in bob.dataframe[0].value.iterrows() if r["Document"] == DOC)
    assert row["Claimed by"] == "bob"
    assert "second" not in " ".join(map(str, row.values)).lower()
    alice = sign_in(app_test(), "alice")
    assert shown_documents(alice).count(DOC) == 2


def test_the_ground_truth_page_hides_a_document_held_blind(sampled: Seeded) -> None:
    """After alice's review, bob (holding the blind second review) finds no version of the document, even
    by searching for it; nor does root, who could still be handed it; alice sees her own version."""
    review(sampled, PacketKind.ESCALATION, "alice", relabelled(machine(sampled), "LAB_REPORT"))
    assert sampled.store.queue.claim(packet_of(sampled, PacketKind.SECOND_REVIEW), "bob") is not None
    bob = sign_in(app_test(), "bob")
    bob.switch_page("views/ground_truth.py").run()
    assert DOC not in shown_documents(bob)
    bob.text_input(key="gt_search").input(DOC).run()
    assert not bob.exception
    assert shown_documents(bob) == []
    assert DOC not in bob.selectbox(key="gt_doc").options
    assert not any("alice" in str(c.value) for c in bob.caption)
    root = sign_in(app_test(), "root")
    root.switch_page("views/ground_truth.py").run()
    root.text_input(key="gt_search").input(DOC).run()
    assert shown_documents(root) == []
    alice = sign_in(app_test(), "alice")
    alice.switch_page("views/ground_truth.py").run()
    alice.text_input(key="gt_search").input(DOC).run()
    assert shown_documents(alice) == [DOC]


def test_a_blind_submit_says_nothing_of_the_version_in_force(sampled: Seeded) -> None:
    """bob's blind second review disagrees with alice's: the confirmation names only his own review."""
    review(sampled, PacketKind.ESCALATION, "alice", relabelled(machine(sampled), "LAB_REPORT"))
    assert sampled.store.queue.claim(packet_of(sampled, PacketKind.SECOND_REVIEW), "bob") is not None
    bob = sign_in(app_test(), "bob")
    bob.switch_page("views/packet.py").run()
    bob.button(key=next(b.key for b in bob.button if b.label == "Agree and save")).click().run()
    assert not bob.exception
    said = " ".join(str(s.value) for s in bob.success)
    assert "Saved your review of" in said
    assert "version" not in said
    assert sampled.store.queue.status(packet_of(sampled, PacketKind.ADJUDICATION)) == "PENDING"


def test_the_adjudicator_sees_both_answers_as_tables_and_decides(sampled: Seeded) -> None:
    """root claims the adjudication: both answers are tables side by side (no JSON), the differences are
    listed, and keeping the second answer saves it as an SME_ADJUDICATED version."""
    review(sampled, PacketKind.ESCALATION, "alice", relabelled(machine(sampled), "LAB_REPORT"))
    review(sampled, PacketKind.SECOND_REVIEW, "bob", machine(sampled))
    adjudication = packet_of(sampled, PacketKind.ADJUDICATION)
    with pytest.raises(NotIndependent):
        sampled.store.queue.claim(adjudication, "alice")
    assert sampled.store.queue.claim(adjudication, "root") is not None
    at = sign_in(app_test(), "root")
    at.switch_page("views/ground_truth.py").run()
    table = at.dataframe[0].value
    assert list(table.loc[table["Document"] == DOC, "Settled"]) == ["awaiting adjudication"]
    at.switch_page("views/packet.py").run()
    assert not at.exception
    assert [s.value.replace("\\", "") for s in at.subheader][:3] == [
        "Adjudication",
        "First review: alice",
        "Second review: bob",
    ]
    assert len(at.json) == 0
    tables = [t.value for t in at.dataframe]
    assert len(tables) == 2
    assert all(list(t.columns) == ["Pages", "Type", "Types present"] and len(t) for t in tables)
    assert any("Document type" in str(t.value) for t in at.text)
    at.radio(key=f"adj_choice_{adjudication}").set_value("SECOND").run()
    at.button(key="save_adjudication").click().run()
    assert not at.exception
    history = sampled.store.ground_truth.history(DOC)
    assert [h.ground_truth_source for h in history] == [
        GroundTruthSource.SME_CORRECTED,
        GroundTruthSource.SME_ADJUDICATED,
    ]
    assert history[-1].ground_truth_classification == machine(sampled)
    assert sampled.store.queue.status(adjudication) == "COMPLETED"


def test_a_corrected_decision_is_checked_like_any_correction(sampled: Seeded) -> None:
    """A corrected answer with an unreadable page is refused and saves nothing; a valid one becomes the
    SME_ADJUDICATED version with its corrections and the choice recorded."""
    from arbiter.contracts import AdjudicationChoice
    from arbiter.contracts.profile import load_profile
    from arbiter.review.adjudication import adjudicate
    from arbiter.review.desk import Desk
    from arbiter.review.forms import CorrectionDraft, segment_rows

    review(sampled, PacketKind.ESCALATION, "alice", relabelled(machine(sampled), "LAB_REPORT"))
    review(sampled, PacketKind.SECOND_REVIEW, "bob", machine(sampled))
    adjudication = packet_of(sampled, PacketKind.ADJUDICATION)
    packet = sampled.store.queue.claim(adjudication, "root")
    assert packet is not None
    bundle = next(r.bundle for r in sampled.records if r.doc_id == DOC)
    assert bundle is not None
    profile = load_profile()
    [row] = segment_rows(machine(sampled), profile)
    desk = Desk(sampled.store, "root")
    now = datetime.now(UTC)

    def decide(draft_row: dict[str, Any], token: str) -> Any:
        draft = CorrectionDraft(segments=[draft_row])
        choice = AdjudicationChoice.CORRECTED
        return adjudicate(desk, packet, choice, bundle, profile, draft=draft, started_at=now, token=token)

    refused = decide({**row, "start_page": "one"}, "t1")
    assert not refused.ok
    assert refused.problems
    assert len(sampled.store.ground_truth.history(DOC)) == 1
    saved = decide({**row, "dominant_type": None, "CLINICAL_NOTE": 0.0, "ADMINISTRATIVE": 1.0}, "t2")
    assert saved.ok, saved.message
    newest = sampled.store.ground_truth.history(DOC)[-1]
    assert newest.ground_truth_source == GroundTruthSource.SME_ADJUDICATED
    assert newest.ground_truth_classification["dominant_type"] == "ADMINISTRATIVE"
    assert newest.sme_review is not None
    assert newest.sme_review.adjudication == AdjudicationChoice.CORRECTED
    assert newest.sme_review.corrections is not None


def test_the_packet_page_refuses_another_packet_of_a_document_held_blind(sampled: Seeded) -> None:
    """bob holds the blind second review; the escalation's packet, opened by id in his session, is refused by
    the store and shows nothing of it."""
    from arbiter.store.blind import HIDDEN_MESSAGE

    review(sampled, PacketKind.ESCALATION, "alice", relabelled(machine(sampled), "LAB_REPORT"))
    assert sampled.store.queue.claim(packet_of(sampled, PacketKind.SECOND_REVIEW), "bob") is not None
    bob = sign_in(app_test(), "bob")
    bob.session_state["arbiter_packet_id"] = packet_of(sampled, PacketKind.ESCALATION)
    bob.switch_page("views/packet.py").run()
    assert not bob.exception
    assert [e.value.replace("\\", "") for e in bob.error] == [HIDDEN_MESSAGE]
    assert len(bob.image) == 0
    assert not any("Issues" in str(s.value) for s in bob.subheader)


def test_an_escalation_review_saved_into_a_disagreement_names_no_version(sampled: Seeded) -> None:
    """bob's blind second review came first; alice's differing escalation review writes no version, and
    her confirmation does not present bob's version as hers."""
    from arbiter.contracts.profile import load_profile
    from arbiter.review.desk import Desk

    review(sampled, PacketKind.SECOND_REVIEW, "bob", relabelled(machine(sampled), "LAB_REPORT"))
    packet = sampled.store.queue.claim(packet_of(sampled, PacketKind.ESCALATION), "alice")
    assert packet is not None
    bundle = next(r.bundle for r in sampled.records if r.doc_id == DOC)
    assert bundle is not None
    now = datetime.now(UTC)
    outcome = Desk(sampled.store, "alice").agree(
        packet, bundle, load_profile(), notes="", confidence=0.9, reason_codes=[], started_at=now, token="t"
    )
    assert outcome.ok
    assert outcome.message == f"Saved your review of {DOC}."
    assert len(sampled.store.ground_truth.history(DOC)) == 1
