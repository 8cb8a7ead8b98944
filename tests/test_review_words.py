"""The desk's small texts: a fix's JSON Patch in words, the admin's claim picker naming each packet once, and
the line saying what Agree saves."""

from __future__ import annotations

from datetime import UTC, datetime

from arbiter.review.answer_view import agree_line
from arbiter.review.packet_view import patch_words
from arbiter.review.queue_view import claim_labels
from arbiter.store import PacketSummary


def _summary(packet_id: str, doc_id: str, kind: str, claimed_by: str | None = None) -> PacketSummary:
    return PacketSummary(
        packet_id=packet_id,
        doc_id=doc_id,
        priority=1,
        reason="x",
        status="PENDING",
        claimed_by=claimed_by,
        claim_expires_at=None,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        doc_type=None,
        top_codes=[],
        kind=kind,
    )


def test_a_fix_patch_reads_as_words_not_json() -> None:
    """Replace, remove, add and move operations read as sentences, with segments counted from 1."""
    patch = [
        {"op": "replace", "path": "/segments/0/end_page", "value": 3},
        {"op": "remove", "path": "/segments/1"},
        {"op": "add", "path": "/document_mixture/-", "value": {"document_type": "LAB_REPORT", "share": 0.5}},
        {"op": "move", "from": "/segments/2", "path": "/segments/0"},
    ]
    said = patch_words(patch)
    assert said == (
        "Set segment 1 › end_page to 3; remove segment 2; add "
        '{"document_type": "LAB_REPORT", "share": 0.5} at document_mixture › the end; '
        "move segment 3 to segment 1"
    )
    assert '{"op"' not in said


def test_the_claims_picker_names_each_packet_once() -> None:
    """Two unclaimed packets of one document read apart by kind; two alike also by packet id."""
    labels = claim_labels(
        [
            _summary("p1", "gen-guardant-02", "ESCALATION"),
            _summary("p2", "gen-guardant-02", "SECOND_REVIEW"),
            _summary("p3", "gen-guardant-02", "ESCALATION"),
            _summary("p4", "other", "ESCALATION", "bob"),
        ]
    )
    assert len(set(labels.values())) == 4
    assert labels["p2"] == "gen-guardant-02 · blind review (unclaimed)"
    assert labels["p1"] == "gen-guardant-02 · escalation (unclaimed) · p1"
    assert labels["p4"] == "other · escalation (bob)"


def test_the_agree_line_names_the_type_and_pages_it_saves() -> None:
    """'Agree saves: <dominant> · pages a–b TYPE; page c TYPE'."""
    answer = {
        "dominant_type": "LAB_REPORT",
        "segments": [
            {"start_page": 1, "end_page": 2, "dominant_type": "LAB_REPORT"},
            {"start_page": 3, "end_page": 3, "dominant_type": "ADMINISTRATIVE"},
        ],
    }
    assert agree_line(answer) == "Agree saves: LAB_REPORT · pages 1–2 LAB_REPORT; page 3 ADMINISTRATIVE"
