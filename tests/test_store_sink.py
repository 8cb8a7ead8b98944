"""The database-backed ResultStore: a real pipeline run lands in the database and in the JSON mirrors,
a re-run skips from the database's record, and the mirrors follow what the database kept."""

from __future__ import annotations

import shutil
from pathlib import Path

from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    accepted,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
)

from arbiter.classify import get_classifier
from arbiter.contracts import GroundTruthRecord, SMEPacket
from arbiter.contracts.profile import load_profile
from arbiter.ingest import ingest_pdf
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _pipeline(root: Path, sink: DatabaseResultStore) -> Pipeline:
    return Pipeline(
        profile=load_profile(),
        classifier=get_classifier("file", classifications_dir=root / "cls"),
        store=sink,
        run_id=new_run_id(),
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
    )


def _inputs(tmp_path: Path, n: int) -> list[Path]:
    (tmp_path / "cls").mkdir()
    pdfs = sorted((FIXTURES / "pdfs").glob("*.pdf"))[:n]
    for pdf in pdfs:
        shutil.copy(FIXTURES / "demo" / f"{pdf.stem}.json", tmp_path / "cls" / f"{pdf.stem}.json")
    return pdfs


def test_pipeline_run_lands_in_database_and_mirrors(store: Store, tmp_path: Path) -> None:
    """Every document is recorded; escalations are queued and mirrored, accepts get ground truth v1."""
    pdfs = _inputs(tmp_path, 4)
    sink = DatabaseResultStore(store, tmp_path / "out")
    pipeline = _pipeline(tmp_path, sink)
    results = [pipeline.process(pdf, pdf.stem) for pdf in pdfs]
    for result in results:
        assert store.records.completed_key(result.doc_id) is not None
        if result.final_decision == "ESCALATE_TO_SME":
            mirror = SMEPacket.model_validate_json(sink.files.packet_path(result.doc_id).read_text())
            assert store.queue.get(mirror.packet_id) == mirror
        else:
            mirror_gt = GroundTruthRecord.model_validate_json(
                sink.files.ground_truth_path(result.doc_id).read_text()
            )
            assert store.ground_truth.latest(result.doc_id) == mirror_gt
            assert mirror_gt.version == 1
    assert {r.final_decision for r in results} <= {"ESCALATE_TO_SME", "AUTO_ACCEPT"}


def test_rerun_skips_from_the_database(store: Store, tmp_path: Path) -> None:
    """A second pipeline over unchanged inputs skips every document using the database's skip keys."""
    pdfs = _inputs(tmp_path, 2)
    sink = DatabaseResultStore(store, tmp_path / "out")
    for pdf in pdfs:
        _pipeline(tmp_path, sink).process(pdf, pdf.stem)
    again = [_pipeline(tmp_path, sink).process(pdf, pdf.stem) for pdf in pdfs]
    assert all(r.skipped for r in again)


def test_mirror_shows_the_database_packet_state(store: Store, tmp_path: Path) -> None:
    """A re-run's packet mirror is written from the database, so it reflects the live claim."""
    sink = DatabaseResultStore(store, tmp_path / "out")
    sink.save(escalated("d1", "run-1"))
    claimed = store.queue.claim_next("alice")
    assert claimed is not None
    sink.save(escalated("d1", "run-1"))  # the same run again: nothing new, mirror refreshed
    mirror = SMEPacket.model_validate_json(sink.files.packet_path("d1").read_text())
    assert mirror.claimed_by == "alice"


def test_ground_truth_mirror_keeps_the_sme_answer(store: Store, tmp_path: Path) -> None:
    """When an SME's answer outranks a later auto-accept, the mirror shows the SME's version."""
    sink = DatabaseResultStore(store, tmp_path / "out")
    sink.save(escalated("d1", "run-1"))
    packet = store.queue.claim_next("alice")
    assert packet is not None
    sme = store.reviews.submit(
        packet.packet_id, "alice", review("alice", agrees=False), CLASSIFICATION, idempotency_key="k"
    )
    sink.save(accepted("d1", "run-2", store=store, dominant="LAB_REPORT"))
    assert GroundTruthRecord.model_validate_json(sink.files.ground_truth_path("d1").read_text()) == sme


def test_a_new_document_costs_two_transactions(store: Store, tmp_path: Path) -> None:
    """Issue 32.1: a document decided for the first time is one read (its skip key) and one write transaction
    (document, outcome, packet or re-based ground truth, audit), each one pool checkout; the mirrors still say
    what the database holds."""
    from collections import Counter

    import sqlalchemy as sa

    pdfs = _inputs(tmp_path, 6)
    sink = DatabaseResultStore(store, tmp_path / "out")
    pipeline = _pipeline(tmp_path, sink)
    seen: Counter[str] = Counter()

    def begin(conn: sa.Connection) -> None:
        seen["transactions"] += 1

    def checkout(*_: object) -> None:
        seen["checkouts"] += 1

    sa.event.listen(store.engine, "begin", begin)
    sa.event.listen(store.engine.pool, "checkout", checkout)
    try:
        decided = [pipeline.process(pdf, pdf.stem).final_decision for pdf in pdfs]
    finally:
        sa.event.remove(store.engine, "begin", begin)
        sa.event.remove(store.engine.pool, "checkout", checkout)
    assert {"AUTO_ACCEPT", "ESCALATE_TO_SME"} <= set(decided)
    assert seen == Counter({"transactions": 2 * len(pdfs), "checkouts": 2 * len(pdfs)})
    for pdf in pdfs:
        packet_file = sink.files.packet_path(pdf.stem)
        if packet_file.is_file():
            mirror = SMEPacket.model_validate_json(packet_file.read_text())
            assert store.queue.get(mirror.packet_id) == mirror
