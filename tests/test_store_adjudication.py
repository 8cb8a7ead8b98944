"""Double reviews that disagree go to adjudication (issue 11.4), blind packets keep the production answer
(11.6), and reads made for a user holding a blind packet show nothing else of its document (11.3); on SQLite
and PostgreSQL."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from store_fixtures import T0, issue, outcome, pg_server_url_fixture, store_fixture  # noqa: F401 (fixtures)

from arbiter.contracts import (
    AdjudicationChoice,
    DocumentRecord,
    GroundTruthSource,
    PacketKind,
    ProductionClassification,
    SMEReview,
)
from arbiter.contracts.agreement import differences
from arbiter.metrics.collect import compute_metrics
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_blind_packet, build_packet
from arbiter.store import NotIndependent, Store, UnknownPacket
from arbiter.store.exports import iter_in_force

TYPES = ("GENOMIC_REPORT", "LAB_REPORT", "PATHOLOGY_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE")
SHA = "b" * 64


def answer(dominant: str, pages: tuple[tuple[int, int], ...] = ((1, 6),), **shares: float) -> dict[str, Any]:
    """A classification: one segment per page range, all of type `dominant` unless `shares` say otherwise."""
    mix = shares or {dominant: 1.0}
    segments = [
        {
            "segment_index": i,
            "start_page": start,
            "end_page": end,
            "segment_page_count": end - start + 1,
            "dominant_type": dominant,
            "classification_reasoning": "",
            "types": [
                {
                    "document_type": t,
                    "presence_level": "PRIMARY"
                    if t == dominant
                    else ("SECONDARY" if mix.get(t) else "NO_EVIDENCE"),
                    "share": mix.get(t, 0.0),
                    "confidence": 0.9,
                    "evidence": [],
                }
                for t in TYPES
            ],
        }
        for i, (start, end) in enumerate(pages, 1)
    ]
    return {"doc_id": "d", "dominant_type": dominant, "segments": segments,
            "document_mixture": [{"document_type": t, "share": mix.get(t, 0.0)} for t in TYPES]}  # fmt: skip


MACHINE = answer("CLINICAL_NOTE")
PRODUCTION = ProductionClassification(doc_id="esc", dominant_type="LAB_REPORT")


def double_reviewed(doc_id: str = "esc") -> DocumentRecord:
    """An escalated document with a production answer and a blind second review."""
    out = outcome(doc_id, issues=[issue()]).model_copy(update={"final_classification": MACHINE})
    common: dict[str, Any] = {"pdf_path": f"/docs/{doc_id}.pdf", "pdf_sha256": SHA, "bundle_path": None,
                              "total_pages": 6, "primary": MACHINE, "run_id": "run-1", "now": T0}  # fmt: skip
    packet = build_packet(out, production=PRODUCTION.model_copy(update={"doc_id": doc_id}), **common)
    second = build_blind_packet(PacketKind.SECOND_REVIEW, out, pair_of=packet.packet_id, **common)
    return DocumentRecord(doc_id=doc_id, run_id="run-1", skip_key="k", pdf_path=f"/docs/{doc_id}.pdf",
                          outcome=out, primary_raw=None, bundle=None, packet=packet, ground_truth=None,
                          samples=(second,))  # fmt: skip


def audited(doc_id: str = "acc") -> DocumentRecord:
    """An accepted document with a production answer and a blind audit."""
    out = outcome(doc_id, accept=True).model_copy(update={"final_classification": MACHINE})
    production = PRODUCTION.model_copy(update={"doc_id": doc_id})
    gt = auto_accept_record(out, None, primary=MACHINE, production=production, pdf_sha256=SHA, run_id="run-1")
    audit = build_blind_packet(PacketKind.AUDIT, out, pdf_path=f"/docs/{doc_id}.pdf", pdf_sha256=SHA,
                               bundle_path=None, total_pages=6, primary=MACHINE, run_id="run-1", now=T0)  # fmt: skip
    return DocumentRecord(doc_id=doc_id, run_id="run-1", skip_key="k", pdf_path=f"/docs/{doc_id}.pdf",
                          outcome=out, primary_raw=None, bundle=None, packet=None, ground_truth=gt,
                          samples=(audit,))  # fmt: skip


def packet_of(store: Store, doc_id: str, kind: PacketKind) -> str:
    return next(
        p.packet_id for p in store.queue.page(limit=100, status=None) if p.doc_id == doc_id and p.kind == kind
    )


def submit(store: Store, packet_id: str, who: str, truth: dict[str, Any], minute: int, **extra: Any) -> Any:
    at = T0 + timedelta(hours=1, minutes=minute)
    assert store.queue.claim(packet_id, who, now=at - timedelta(minutes=1)) is not None
    review = SMEReview(reviewer=who, agrees_with_primary=truth == MACHINE, confidence=0.8,
                       started_at=at - timedelta(minutes=1), submitted_at=at, **extra)  # fmt: skip
    return store.reviews.submit(packet_id, who, review, truth, idempotency_key=f"{packet_id}-{who}", now=at)


@pytest.fixture(name="paired")
def paired_fixture(store: Store) -> Store:
    for name, role in (("alice", "reviewer"), ("bob", "reviewer"), ("carol", "reviewer"), ("root", "admin")):
        store.users.add(name, role, None)
    store.records.record(double_reviewed(), now=T0)
    return store


# Table: (first answer, second answer, do they disagree)
SAME_MEANING = [
    pytest.param(answer("LAB_REPORT"), answer("LAB_REPORT"), False, id="identical"),
    pytest.param(
        answer("LAB_REPORT", LAB_REPORT=0.7, GENOMIC_REPORT=0.3),
        answer("LAB_REPORT", LAB_REPORT=0.6, GENOMIC_REPORT=0.4),
        False,
        id="shares-differ-a-little",
    ),
    pytest.param(
        {**answer("LAB_REPORT"), "producer": {"name": "sme-review"}, "vendor_signals": ["Quest"]},
        answer("LAB_REPORT"),
        False,
        id="notes-and-producer-ignored",
    ),
    pytest.param(answer("LAB_REPORT"), answer("GENOMIC_REPORT"), True, id="document-type"),
    pytest.param(answer("LAB_REPORT"), answer("LAB_REPORT", ((1, 2), (3, 6))), True, id="segment-pages"),
    pytest.param(
        answer("LAB_REPORT"),
        answer("LAB_REPORT", LAB_REPORT=0.8, ADMINISTRATIVE=0.2),
        True,
        id="type-present",
    ),
]


@pytest.mark.parametrize(("first", "second", "split"), SAME_MEANING)
def test_disagreement_is_about_meaning(first: dict[str, Any], second: dict[str, Any], split: bool) -> None:
    """Pages, document and segment types and the types present make a disagreement; shares and notes do not."""
    assert bool(differences(first, second)) is split


def test_a_disagreeing_second_review_opens_an_adjudication(paired: Store) -> None:
    """The second review is saved and counted, but writes no version: the first stays in force and an
    ADJUDICATION packet holding both answers is queued (audited)."""
    first = submit(paired, packet_of(paired, "esc", PacketKind.ESCALATION), "alice", answer("LAB_REPORT"), 1)
    kept = submit(
        paired, packet_of(paired, "esc", PacketKind.SECOND_REVIEW), "bob", answer("GENOMIC_REPORT"), 2
    )
    assert kept.gt_id == first.gt_id
    history = paired.ground_truth.history("esc")
    assert [(h.version, h.ground_truth_source) for h in history] == [(1, GroundTruthSource.SME_CORRECTED)]
    adjudication = paired.queue.get(packet_of(paired, "esc", PacketKind.ADJUDICATION))
    assert adjudication.review_status == "PENDING"
    assert adjudication.adjudication is not None
    case = adjudication.adjudication
    assert (case.first.reviewer, case.second.reviewer) == ("alice", "bob")
    assert case.first.classification["dominant_type"] == "LAB_REPORT"
    assert case.second.classification["dominant_type"] == "GENOMIC_REPORT"
    assert any("Document type" in d for d in case.differences)
    assert [e.action for e in paired.audit.events(target=adjudication.packet_id)] == ["adjudication.open"]


def test_an_agreeing_second_review_needs_no_adjudication(paired: Store) -> None:
    """Two reviews that mean the same thing settle the document: a second version, no ADJUDICATION packet."""
    submit(
        paired,
        packet_of(paired, "esc", PacketKind.ESCALATION),
        "alice",
        answer("LAB_REPORT", LAB_REPORT=0.7, GENOMIC_REPORT=0.3),
        1,
    )
    submit(paired, packet_of(paired, "esc", PacketKind.SECOND_REVIEW), "bob", answer("LAB_REPORT", LAB_REPORT=0.6, GENOMIC_REPORT=0.4), 2)  # fmt: skip
    assert len(paired.ground_truth.history("esc")) == 2
    assert all(p.kind != PacketKind.ADJUDICATION for p in paired.queue.page(status=None, limit=50))


def test_the_second_review_saved_first_is_compared_all_the_same(paired: Store) -> None:
    """When the blind second review is saved before the escalation's review, the later one still opens the
    adjudication, with the escalation's review as the first answer."""
    submit(paired, packet_of(paired, "esc", PacketKind.SECOND_REVIEW), "bob", answer("GENOMIC_REPORT"), 1)
    submit(paired, packet_of(paired, "esc", PacketKind.ESCALATION), "alice", answer("LAB_REPORT"), 2)
    assert [h.ground_truth_classification["dominant_type"] for h in paired.ground_truth.history("esc")] == [
        "GENOMIC_REPORT"
    ]
    case = paired.queue.get(packet_of(paired, "esc", PacketKind.ADJUDICATION)).adjudication
    assert case is not None
    assert (case.first.reviewer, case.second.reviewer) == ("alice", "bob")


@pytest.fixture(name="split")
def split_fixture(paired: Store) -> str:
    """alice and bob disagree on "esc"; returns the ADJUDICATION packet's id."""
    submit(paired, packet_of(paired, "esc", PacketKind.ESCALATION), "alice", answer("LAB_REPORT"), 1)
    submit(paired, packet_of(paired, "esc", PacketKind.SECOND_REVIEW), "bob", answer("GENOMIC_REPORT"), 2)
    return packet_of(paired, "esc", PacketKind.ADJUDICATION)


@pytest.mark.parametrize(
    ("who", "allowed"), [("alice", False), ("bob", False), ("carol", True), ("root", True)]
)
def test_only_a_third_reviewer_or_an_admin_adjudicates(
    paired: Store, split: str, who: str, allowed: bool
) -> None:
    """Neither of the two reviewers can claim the adjudication, directly (refused, saying why) or with claim next."""
    if allowed:
        assert paired.queue.claim(split, who) is not None
        return
    with pytest.raises(NotIndependent, match="the adjudication of it needs a different reviewer"):
        paired.queue.claim(split, who)
    assert paired.queue.claim_next(who) is None


def test_only_the_adjudicated_decision_becomes_a_version(paired: Store, split: str) -> None:
    """The adjudicator's pick (here the second answer) is version 2, SME_ADJUDICATED, with production kept."""
    record = submit(
        paired, split, "carol", answer("GENOMIC_REPORT"), 3, adjudication=AdjudicationChoice.SECOND
    )
    assert (record.version, record.ground_truth_source) == (2, GroundTruthSource.SME_ADJUDICATED)
    assert record.ground_truth_classification["dominant_type"] == "GENOMIC_REPORT"
    assert record.production_classification is not None
    assert record.sme_review is not None
    assert record.sme_review.adjudication == AdjudicationChoice.SECOND
    assert paired.queue.status(split) == "COMPLETED"
    assert "packet.submit" in [e.action for e in paired.audit.events(target=split)]


def test_exports_and_metrics_leave_an_unsettled_document_out(paired: Store, split: str) -> None:
    """Until the adjudication is decided the document is in no export and no model score; agreement still
    counts the two blind answers. After the decision the adjudicated version is what is exported."""

    def exported() -> dict[str, str]:
        with paired.read() as conn:
            rows = [p for _, batch in iter_in_force(conn) for p in batch]
        import json

        return {r["doc_id"]: r["ground_truth_source"] for r in map(json.loads, rows)}

    assert "esc" not in exported()
    report = compute_metrics(paired, parallel=False)
    assert report.model_scores("primary", "all").docs == 0
    assert report.agreement.kappa.n == 1
    assert [(d.first, d.second) for d in report.agreement.disagreements] == [("LAB_REPORT", "GENOMIC_REPORT")]
    submit(paired, split, "carol", answer("LAB_REPORT"), 3, adjudication=AdjudicationChoice.FIRST)
    assert exported() == {"esc": "SME_ADJUDICATED"}
    report = compute_metrics(paired, parallel=False)
    assert report.model_scores("primary", "sme").docs == 1
    assert report.agreement.kappa.n == 1


def test_blind_reviews_keep_the_production_answer(paired: Store) -> None:
    """Versions written by a blind audit and a blind second review carry production's answer, so production
    accuracy counts every reviewed document."""
    paired.records.record(audited(), now=T0)
    submit(paired, packet_of(paired, "acc", PacketKind.AUDIT), "alice", answer("LAB_REPORT"), 1)
    submit(paired, packet_of(paired, "esc", PacketKind.SECOND_REVIEW), "bob", answer("LAB_REPORT"), 2)
    for doc_id in ("acc", "esc"):
        newest = paired.ground_truth.latest(doc_id)
        assert newest is not None
        assert newest.production_classification == PRODUCTION.model_copy(update={"doc_id": doc_id})
    production = compute_metrics(paired, parallel=False).model_scores("production", "sme")
    assert (production.docs, production.missing) == (2, 0)
    assert (production.accuracy.k, production.accuracy.n) == (2, 2)


def test_a_blind_holder_sees_nothing_else_of_the_document(paired: Store) -> None:
    """While bob holds the blind second review, the store's reads made for him leave out the escalation
    packet and every ground-truth version of the document; so they do for carol, who may still be handed
    it; alice, its first reviewer, sees them; after bob's submit everyone does."""
    paired.records.record(double_reviewed("other"), now=T0)
    escalation = packet_of(paired, "esc", PacketKind.ESCALATION)
    submit(paired, escalation, "alice", answer("LAB_REPORT"), 1)
    second = packet_of(paired, "esc", PacketKind.SECOND_REVIEW)
    assert paired.queue.claim(second, "bob", now=T0 + timedelta(hours=1, minutes=5)) is not None
    mine = paired.queue.page(viewer="bob", status=None, limit=50)
    # "other" has an open second review bob may still give: its escalation row is left out too.
    assert {(p.doc_id, p.kind) for p in mine} == {("esc", "SECOND_REVIEW"), ("other", "SECOND_REVIEW")}
    assert paired.queue.count(viewer="bob", status=None) == 2
    assert paired.queue.count(viewer="carol", status=None) == 2
    assert paired.queue.count(viewer="alice", status=None) == 3
    assert paired.queue.counts(viewer="bob")["by_status"] == {"PENDING": 1, "IN_REVIEW": 1, "COMPLETED": 0}
    assert paired.queue.counts(viewer="alice")["by_status"] == {"PENDING": 1, "IN_REVIEW": 1, "COMPLETED": 1}
    assert [r["doc_id"] for r in paired.ground_truth.page(viewer="bob")] == []
    assert paired.ground_truth.history("esc", viewer="bob") == []
    assert [r["doc_id"] for r in paired.ground_truth.page(viewer="carol")] == []
    assert [r["doc_id"] for r in paired.ground_truth.page(viewer="alice")] == ["esc"]
    with pytest.raises(UnknownPacket):
        paired.queue.get(escalation, viewer="bob")
    assert paired.queue.get(second, viewer="bob").packet_id == second
    submit(paired, second, "bob", answer("LAB_REPORT"), 6)
    assert len(paired.ground_truth.history("esc", viewer="bob")) == 2
    assert paired.queue.get(escalation, viewer="bob").packet_id == escalation
    assert [r["doc_id"] for r in paired.ground_truth.page(viewer="carol")] == ["esc"]


def test_nobody_is_handed_a_packet_of_a_document_they_hold_blind(paired: Store) -> None:
    """alice holds the blind audit of "acc" when a later run escalates it: her direct claim of that
    escalation is refused (the pages would hide it from her), carol's is not."""
    paired.records.record(audited(), now=T0)
    assert paired.queue.claim(packet_of(paired, "acc", PacketKind.AUDIT), "alice") is not None
    later = double_reviewed("acc")
    assert later.packet is not None
    packet = later.packet.model_copy(update={"packet_id": "pkt-acc-run-2", "run_id": "run-2"})
    paired.records.record(dataclasses.replace(later, run_id="run-2", packet=packet, samples=()), now=T0)
    with pytest.raises(NotIndependent, match="alice holds a blind audit of acc"):
        paired.queue.claim("pkt-acc-run-2", "alice")
    assert paired.queue.claim("pkt-acc-run-2", "carol") is not None


def test_the_export_manifest_counts_documents_awaiting_adjudication(
    paired: Store, split: str, tmp_path: Any
) -> None:
    """The export leaves the unsettled document out and says how many were left out."""
    from arbiter.export.writer import export_ground_truth

    manifest = export_ground_truth(paired, ["jsonl"], tmp_path / "out")
    assert (manifest["records"], manifest["awaiting_adjudication"]) == (0, 1)
    submit(paired, split, "root", answer("LAB_REPORT"), 3, adjudication=AdjudicationChoice.FIRST)
    manifest = export_ground_truth(paired, ["jsonl"], tmp_path / "out")
    assert (manifest["records"], manifest["awaiting_adjudication"]) == (1, 0)


def test_the_metrics_pages_leave_out_a_document_held_blind(paired: Store, split: str) -> None:
    """A user who may still give a blind review of a document finds it in no per-document row of the metrics
    (here the list of disagreements); the counts stay; its earlier reviewers see it."""
    from arbiter.review.blind import for_viewer

    paired.records.record(audited("esc-later"), now=T0)
    with paired.write() as conn:  # the audit of a later run of "esc", as far as the claim goes
        conn.exec_driver_sql("UPDATE packets SET doc_id = 'esc' WHERE doc_id = 'esc-later'")
    assert paired.queue.claim(packet_of(paired, "esc", PacketKind.AUDIT), "carol") is not None
    report = compute_metrics(paired, parallel=False)
    assert [d.doc_id for d in report.agreement.disagreements] == ["esc"]
    carol = for_viewer(report, paired.blind.hidden_docs("carol"))
    assert carol.agreement.disagreements == []
    assert carol.agreement.kappa == report.agreement.kappa
    alice = for_viewer(report, paired.blind.hidden_docs("alice"))
    assert [d.doc_id for d in alice.agreement.disagreements] == ["esc"]


def test_the_policy_what_if_compares_only_with_settled_truth(paired: Store, split: str) -> None:
    """The what-if's SME truths leave out a document awaiting adjudication and take its decision after."""
    from arbiter.whatif.history import truths

    with paired.read() as conn:
        assert "esc" not in truths(conn, None)
    submit(paired, split, "root", answer("GENOMIC_REPORT"), 3, adjudication=AdjudicationChoice.SECOND)
    with paired.read() as conn:
        assert truths(conn, None)["esc"].source == "SME_ADJUDICATED"
