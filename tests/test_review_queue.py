"""Queue paging and rows, ground-truth rows, and the reviewer's desk over a real (SQLite) store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from review_helpers import PDFS, Seeded

from arbiter.contracts.profile import load_profile
from arbiter.review import documents
from arbiter.review.desk import AdminDesk, Desk, Outcome, machine_answer
from arbiter.review.forms import CorrectionDraft, segment_rows
from arbiter.review.gt_view import history_rows, latest_rows, version_caption
from arbiter.review.queue_view import (
    QueueFilters,
    clamp_page,
    lease_left,
    offset_of,
    page_count,
    queue_rows,
    reason_label,
)
from arbiter.store import PacketSummary

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("total", "pages"), [(0, 1), (1, 1), (25, 1), (26, 2), (100_000, 4000)])
def test_page_count(total: int, pages: int) -> None:
    """Pages of 25 rows; an empty queue still has one page."""
    assert page_count(total) == pages


@pytest.mark.parametrize(("page", "total", "expected"), [(0, 10, 1), (3, 10, 1), (3, 60, 3), (9, 60, 3)])
def test_clamp_page(page: int, total: int, expected: int) -> None:
    """A page number left over from a longer queue is pulled back into range."""
    assert clamp_page(page, total) == expected


def test_offset_of_a_page() -> None:
    """Page 3 starts after 50 rows."""
    assert offset_of(3) == 50


def test_filters_become_store_arguments() -> None:
    """Empty choices mean "any" (None) for the store; any status means any review status (never the
    operations lane of unreadable documents)."""
    assert QueueFilters(status=[], code="").query() == {
        "status": ["PENDING", "IN_REVIEW", "COMPLETED"],
        "reason": None,
        "code": None,
        "doc_type": None,
        "answer_kind": None,
    }


@pytest.mark.parametrize(
    ("expires", "shown"),
    [(NOW - timedelta(seconds=1), "expired"), (NOW + timedelta(minutes=29), "29 min"), (None, "")],
)
def test_lease_left(expires: datetime | None, shown: str) -> None:
    """Time left on a claim in words."""
    assert lease_left(expires, NOW) == shown


def test_queue_rows_are_plain_words() -> None:
    """Rows say priority, reason and status in words and carry no document text."""
    summary = PacketSummary(
        packet_id="p",
        doc_id="doc-1",
        priority=0,
        reason="non_fixable_major",
        status="IN_REVIEW",
        claimed_by="alice",
        claim_expires_at=NOW + timedelta(minutes=10),
        created_at=NOW - timedelta(hours=3),
        doc_type="LAB_REPORT",
        top_codes=["V4.SNIPPET_NOT_FOUND"],
    )
    [row] = queue_rows([summary], NOW)
    assert row == {
        "Priority": "Critical",
        "Document": "doc-1",
        "Kind": "Medical classification",
        "Type": "LAB_REPORT",
        "Why escalated": "Non fixable major",
        "Issue codes": "V4.SNIPPET_NOT_FOUND",
        "Status": "In review",
        "Claimed by": "alice",
        "Lease left": "10 min",
        "Waiting": "3 h",
    }
    assert reason_label("") == "Unspecified"
    assert reason_label("pdf_not_pdf") == "Not a PDF"


def test_claim_next_on_an_empty_queue(seeded: Seeded) -> None:
    """When nothing is waiting, claim next says so."""
    # Claim next hands a reviewer back their own open claim first, so the queue is drained by many reviewers.
    n = 0
    while Desk(seeded.store, f"r{n}").claim_next().ok:
        n += 1
    outcome = Desk(seeded.store, "alice").claim_next()
    assert not outcome.ok
    assert "queue is empty" in outcome.message


def test_claim_of_a_taken_packet_is_refused(seeded: Seeded) -> None:
    """A packet another reviewer holds cannot be claimed."""
    packet_id = seeded.packet_id("path-breast-02")
    assert Desk(seeded.store, "bob").claim(packet_id).ok
    outcome = Desk(seeded.store, "alice").claim(packet_id)
    assert not outcome.ok
    assert "Someone else" in outcome.message


def test_double_submit_saves_once(seeded: Seeded) -> None:
    """The same review attempt submitted twice creates one ground-truth version."""
    profile = load_profile()
    desk = Desk(seeded.store, "alice")
    packet = desk.claim(seeded.packet_id("note-injection-03")).packet
    assert packet is not None
    bundle = documents.bundle_of(packet, [PDFS, seeded.out_dir])
    assert bundle is not None

    def submit() -> Outcome:
        return desk.agree(
            packet, bundle, profile, notes="", confidence=0.8, reason_codes=[], started_at=NOW, token="t1"
        )

    first, second = submit(), submit()
    assert first.ok
    assert second.ok
    assert first.record == second.record
    assert len(seeded.store.ground_truth.history(packet.doc_id)) == 1


def test_agree_with_a_schema_breaking_answer_is_refused_on_submit(seeded: Seeded) -> None:
    """Agree on the confidence-1.3 packet writes nothing and sends the reviewer to correct it, the problem named."""
    profile = load_profile()
    desk = Desk(seeded.store, "alice")
    packet = desk.claim(seeded.packet_id("gen-guardant-02")).packet
    assert packet is not None
    bundle = documents.bundle_of(packet, [PDFS, seeded.out_dir])
    assert bundle is not None
    outcome = desk.agree(
        packet, bundle, profile, notes="", confidence=0.9, reason_codes=[], started_at=NOW, token="t"
    )
    assert not outcome.ok
    assert outcome.needs_correction
    assert "V1.CONFIDENCE_OUT_OF_RANGE" in {p.code for p in outcome.problems if p.blocking}
    assert seeded.store.ground_truth.history(packet.doc_id) == []
    assert seeded.store.queue.get(packet.packet_id).review_status == "IN_REVIEW"


def test_expired_claim_is_refused_with_the_draft_untouched(seeded: Seeded) -> None:
    """A correction submitted after the lease ran out is refused as a lost claim; nothing is written."""
    profile = load_profile()
    desk = Desk(seeded.store, "alice", lease=timedelta(seconds=-1))
    packet = desk.claim(seeded.packet_id("admin-requisition-03")).packet
    assert packet is not None
    bundle = documents.bundle_of(packet, [PDFS])
    assert bundle is not None
    rows = segment_rows(machine_answer(packet), profile)
    rows[0].update(dominant_type="ADMINISTRATIVE", ADMINISTRATIVE=1.0, GENOMIC_REPORT=0.0)
    draft = CorrectionDraft(rows)
    outcome = desk.correct(packet, bundle, profile, draft, started_at=NOW, token="t")
    assert outcome.claim_lost
    assert "expired" in outcome.message
    assert draft.segments[0]["dominant_type"] == "ADMINISTRATIVE"
    assert seeded.store.ground_truth.history(packet.doc_id) == []


def test_release_of_someone_elses_packet_changes_nothing(seeded: Seeded) -> None:
    """Skip only returns the reviewer's own claim."""
    packet_id = seeded.packet_id("path-breast-02")
    Desk(seeded.store, "bob").claim(packet_id)
    assert not Desk(seeded.store, "alice").release(packet_id).ok
    assert seeded.store.queue.get(packet_id).claimed_by == "bob"


def test_only_admins_release_and_reassign(seeded: Seeded) -> None:
    """A reviewer using the admin actions is refused in words; an admin's reassign is applied."""
    packet_id = seeded.packet_id("path-breast-02")
    refused = AdminDesk(seeded.store, "alice").reassign(packet_id, "bob")
    assert not refused.ok
    assert "only admins" in refused.message
    assert AdminDesk(seeded.store, "root").reassign(packet_id, "bob").ok
    assert seeded.store.queue.get(packet_id).claimed_by == "bob"


def test_ground_truth_rows(seeded: Seeded) -> None:
    """Automatic accepts appear as version 1 with a plain-English source."""
    [latest] = latest_rows(seeded.store.ground_truth.page())
    assert (latest["Document"], latest["Version"], latest["Source"]) == (
        "gen-foundation-01",
        1,
        "Accepted automatically",
    )
    history = seeded.store.ground_truth.history("gen-foundation-01")
    assert history_rows(history)[0]["Dominant type"] == "GENOMIC_REPORT"
    assert version_caption(history[0]).startswith("Version 1 · Accepted automatically · ")


def test_bundle_falls_back_to_reading_the_pdf(seeded: Seeded, tmp_path: Path) -> None:
    """Without its bundle file (or with one outside the roots) the PDF is read again."""
    packet = seeded.store.queue.get(seeded.packet_id("path-breast-02"))
    moved = packet.model_copy(update={"document_bundle_path": str(tmp_path / "nowhere.json")})
    bundle = documents.bundle_of(moved, [PDFS])
    assert bundle is not None
    assert bundle.file_sha256 == packet.pdf_sha256


def test_pdf_outside_the_documents_root_is_refused(seeded: Seeded) -> None:
    """A packet whose PDF is outside the documents root gets no file and no bundle."""
    packet = seeded.store.queue.get(seeded.packet_id("path-breast-02"))
    elsewhere = packet.model_copy(update={"pdf_path": "/etc/passwd", "document_bundle_path": None})
    with pytest.raises(documents.PathRefused):
        documents.pdf_of(elsewhere, PDFS)
    assert documents.bundle_of(elsewhere.model_copy(update={"pdf_sha256": "x"}), [PDFS]) is None


def test_kinds_in_words() -> None:
    """A kind's label comes from its registry name; the counts split by kind read as a sentence each."""
    from arbiter.review.queue_view import kind_counts, kind_help, kind_label

    assert kind_label("medical-classification") == "Medical classification"
    assert kind_label("grounded-answer") == "Grounded answer"
    assert kind_label("retired-kind") == "Retired kind"
    assert kind_counts({"grounded-answer": {"PENDING": 2, "IN_REVIEW": 1, "COMPLETED": 5, "open": 3}}) == [
        ("Grounded answer", "2 waiting, 1 in review, 5 done")
    ]
    assert kind_help(["grounded-answer"]).startswith(
        "Grounded answer: An answer composed from retrieved chunks"
    )
    assert QueueFilters(answer_kind=["grounded-answer"]).query()["answer_kind"] == ["grounded-answer"]
