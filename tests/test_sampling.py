"""Blind review samples (docs/design.md §9.1): which documents are sampled, what a blind packet carries, how the
store queues it, and that no reviewer is handed both halves of a double review."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    T0,
    accepted,
    escalated,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.classify import get_classifier
from arbiter.contracts import PacketKind
from arbiter.contracts.profile import Sampling, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.record.mirrors import export_mirrors
from arbiter.record.packets import BLIND_REASON, build_blind_packet, sampled
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import NotIndependent, Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SALT = "test-salt"


@pytest.mark.parametrize(
    ("share", "expected_low", "expected_high"),
    [(0.0, 0, 0), (1.0, 10_000, 10_000), (0.05, 420, 580), (0.5, 4_850, 5_150)],
)
def test_sample_share_is_honoured(share: float, expected_low: int, expected_high: int) -> None:
    """Over 10,000 documents the sample holds about share × 10,000 (exactly none at 0, all at 1)."""
    hits = sum(sampled(PacketKind.AUDIT, f"doc-{i}", "a" * 64, share, SALT) for i in range(10_000))
    assert expected_low <= hits <= expected_high


def test_sampling_is_reproducible_and_depends_on_kind_salt_and_content() -> None:
    """The same document, kind and salt always give the same answer; another salt or kind reshuffles."""
    ids = [f"doc-{i}" for i in range(2_000)]

    def pick(kind: PacketKind, salt: str, sha: str = "a" * 64) -> set[str]:
        return {d for d in ids if sampled(kind, d, sha, 0.2, salt)}

    base = pick(PacketKind.AUDIT, SALT)
    assert base == pick(PacketKind.AUDIT, SALT)
    assert base != pick(PacketKind.AUDIT, "other")
    assert base != pick(PacketKind.SECOND_REVIEW, SALT)
    assert base != pick(PacketKind.AUDIT, SALT, "b" * 64)


@pytest.mark.parametrize("kind", [PacketKind.AUDIT, PacketKind.SECOND_REVIEW])
def test_blind_packet_reveals_no_decision(kind: PacketKind) -> None:
    """A blind packet carries the classification but no decision, issue, retry log or production answer."""
    source = escalated("doc-1") if kind == PacketKind.SECOND_REVIEW else accepted("doc-1")
    packet = with_sample(source).samples[0]
    assert packet.packet_kind == kind
    assert packet.blind
    assert packet.v5_decision is None
    assert packet.issues_summary == []
    assert packet.retry_log == []
    assert packet.total_issues == 0
    assert packet.production_classification is None
    assert packet.production_differs is None
    assert packet.escalation_reason == BLIND_REASON
    assert packet.final_classification == CLASSIFICATION
    body = packet.model_dump_json()
    for revealing in (
        "AUTO_ACCEPT",
        "ESCALATE",
        "non_fixable_major",
        "V2.UNCOVERED_PAGES",
        "accepted",
    ):
        assert revealing not in body


@pytest.mark.parametrize(
    ("kind", "message"),
    [(PacketKind.SECOND_REVIEW, "pair_of"), (PacketKind.ESCALATION, "not a blind")],
)
def test_blind_packet_refuses_what_it_cannot_be(kind: PacketKind, message: str) -> None:
    """A second review without the packet it doubles is refused; an escalation is not a blind kind."""
    with pytest.raises(ValueError, match=message):
        build_blind_packet(
            kind,
            escalated("doc-1").outcome,
            pdf_path="/d.pdf",
            pdf_sha256="a" * 64,
            bundle_path=None,
            total_pages=1,
            primary=None,
            run_id="r",
        )


def test_samples_are_queued_with_their_kind(store: Store) -> None:
    """An audit and a second review are stored as open packets of their kind, the second linked to its pair."""
    store.records.record(with_sample(accepted("acc-1", store=store)))
    esc = with_sample(escalated("esc-1"))
    store.records.record(esc)
    assert esc.packet is not None
    rows = {p.doc_id + ":" + p.kind: p for p in store.queue.page(limit=10)}
    assert set(rows) == {"acc-1:AUDIT", "esc-1:ESCALATION", "esc-1:SECOND_REVIEW"}
    second = store.queue.get(rows["esc-1:SECOND_REVIEW"].packet_id)
    assert second.pair_of == esc.packet.packet_id
    assert second.packet_kind == PacketKind.SECOND_REVIEW
    audit = store.queue.get(rows["acc-1:AUDIT"].packet_id)
    assert audit.blind
    assert audit.v5_decision is None
    assert (
        store.ground_truth.latest("acc-1") is not None
    )  # the auto-accept stands until someone says otherwise


def test_no_reviewer_gets_both_halves_of_a_double_review(store: Store) -> None:
    """claim_next never hands a reviewer the other half of a pair they hold or reviewed; someone else gets it."""
    esc = with_sample(escalated("esc-1"))
    store.records.record(esc)
    first = store.queue.claim_next("alice", now=T0)
    assert first is not None
    again = store.queue.claim_next("alice", now=T0)  # her own open claim comes back first, never her pair
    assert again is not None
    assert again.packet_id == first.packet_id
    other = store.queue.claim_next("bob", now=T0)
    assert other is not None
    assert {first.packet_kind, other.packet_kind} == {PacketKind.ESCALATION, PacketKind.SECOND_REVIEW}
    with pytest.raises(NotIndependent):  # nor by a direct claim
        store.queue.claim(other.packet_id, "alice", now=T0)


def test_reviewed_pair_stays_barred_after_completion(store: Store) -> None:
    """After alice completes one half, the other half still goes to someone else."""
    store.records.record(with_sample(escalated("esc-1")))
    mine = store.queue.claim_next("alice", now=T0)
    assert mine is not None
    store.reviews.submit(
        mine.packet_id, "alice", review("alice", at=T0), dict(CLASSIFICATION), idempotency_key="k1", now=T0
    )
    assert store.queue.claim_next("alice", now=T0) is None
    assert store.queue.claim_next("bob", now=T0) is not None


def test_a_new_audit_replaces_only_the_old_pending_audit(store: Store) -> None:
    """A later run's audit supersedes the pending audit of the same document, never an escalation."""
    store.records.record(with_sample(accepted("doc-1", "run-1", store=store)))
    store.records.record(escalated("doc-2", "run-1"))
    store.records.record(with_sample(accepted("doc-1", "run-2", store=store)))
    open_kinds = sorted((p.doc_id, p.kind, p.packet_id) for p in store.queue.page(status="PENDING", limit=10))
    assert [(d, k) for d, k, _ in open_kinds] == [("doc-1", "AUDIT"), ("doc-2", "ESCALATION")]


def test_a_new_escalation_retires_the_old_pending_second_review(store: Store) -> None:
    """When a later run escalates the document again, the old escalation's pending second review leaves too."""
    store.records.record(with_sample(escalated("doc-1", "run-1")))
    new = escalated("doc-1", "run-2", sha="b" * 64)
    store.records.record(new)
    pending = store.queue.page(status="PENDING", limit=10)
    assert [(p.kind, p.packet_id) for p in pending] == [
        ("ESCALATION", new.packet.packet_id if new.packet else "")
    ]


def test_mirrors_hold_escalations_only(store: Store, tmp_path: Path) -> None:
    """export --mirrors writes the escalation packet; blind samples stay in the database."""
    store.records.record(with_sample(accepted("acc-1", store=store)))
    store.records.record(with_sample(escalated("esc-1")))
    counts = export_mirrors(store, tmp_path)
    assert counts["packets"] == 1
    assert [p.name for p in (tmp_path / "sme_packets").iterdir()] == ["sme_packet_esc-1.json"]


@pytest.mark.parametrize(
    ("audit", "second", "expect_audit", "expect_second"),
    [(0.0, 0.0, False, False), (1.0, 0.0, True, False), (0.0, 1.0, False, True), (1.0, 1.0, True, True)],
)
def test_pipeline_samples_by_the_profile_shares(
    tmp_path: Path, audit: float, second: float, expect_audit: bool, expect_second: bool
) -> None:
    """A real run queues audits of accepts and second reviews of escalations at the profile's shares."""
    (tmp_path / "cls").mkdir()
    doc_ids = ("gen-foundation-01", "note-injection-03")  # one accepted, one escalated by the demo answers
    for doc_id in doc_ids:
        shutil.copy(FIXTURES / "demo" / f"{doc_id}.json", tmp_path / "cls" / f"{doc_id}.json")
    profile = load_profile()
    profile = profile.model_copy(
        update={"sampling": Sampling(audit_share=audit, second_review_share=second, salt=SALT)}
    )
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    pipeline = Pipeline(
        profile=profile,
        classifier=get_classifier("file", classifications_dir=tmp_path / "cls"),
        store=DatabaseResultStore(store, tmp_path / "out"),
        run_id=new_run_id(),
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
    )
    decisions = {d: pipeline.process(FIXTURES / "pdfs" / f"{d}.pdf", d).final_decision for d in doc_ids}
    assert decisions == {"gen-foundation-01": "AUTO_ACCEPT", "note-injection-03": "ESCALATE_TO_SME"}
    kinds = {(p.doc_id, p.kind) for p in store.queue.page(limit=10)}
    assert (("gen-foundation-01", "AUDIT") in kinds) == expect_audit
    assert (("note-injection-03", "SECOND_REVIEW") in kinds) == expect_second
    assert ("note-injection-03", "ESCALATION") in kinds
    store.dispose()


def test_default_profile_samples_five_and_ten_percent() -> None:
    """The bundled profile audits about 5% of accepts, weighted by risk with a 1% floor, and double-reviews
    10% of escalations."""
    sampling = load_profile().sampling
    assert (sampling.audit_share, sampling.second_review_share, sampling.salt) == (
        0.05,
        0.10,
        "arbiter-sample-1",
    )
    assert (sampling.design, sampling.audit_floor) == ("risk", 0.01)
    assert Sampling().design == "uniform"
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Sampling(audit_share=1.5)


def test_cli_shares_override_the_profile_without_forcing_a_rerun(tmp_path: Path) -> None:
    """`arbiter run --audit-share 1` audits every accept; the shares are not part of the skip key."""
    from typer.testing import CliRunner

    from arbiter.cli.main import app

    indir = tmp_path / "in"
    indir.mkdir()
    for doc_id in ("gen-foundation-01", "note-injection-03"):
        shutil.copy(FIXTURES / "pdfs" / f"{doc_id}.pdf", indir)
    args = ["run", str(indir), "--classifications", str(FIXTURES / "demo"), "--out", str(tmp_path / "out")]
    runner = CliRunner()
    first = runner.invoke(app, [*args, "--audit-share", "1", "--second-review-share", "0"])
    assert first.exit_code == 0, first.output
    assert "1 audit(s) of accepted documents, 0 second review(s)" in " ".join(first.output.split())
    summary = json.loads(next((tmp_path / "out" / "runs").glob("*/summary.json")).read_text())
    assert summary["blind_samples"] == {"AUDIT": 1, "SECOND_REVIEW": 0}
    store = Store(f"sqlite:///{(tmp_path / 'out' / 'arbiter.db').resolve()}")
    kinds = sorted((p.doc_id, p.kind) for p in store.queue.page(limit=10))
    assert kinds == [("gen-foundation-01", "AUDIT"), ("note-injection-03", "ESCALATION")]
    again = runner.invoke(app, [*args, "--audit-share", "0"])
    assert again.exit_code == 0, again.output
    assert "skipped" in again.output.lower()
    assert sorted((p.doc_id, p.kind) for p in store.queue.page(limit=10)) == kinds
    store.dispose()
    bad = runner.invoke(app, [*args, "--audit-share", "1.5"])
    assert bad.exit_code == 2
