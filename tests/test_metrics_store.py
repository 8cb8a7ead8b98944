"""Metrics read from the review store on SQLite and PostgreSQL: a small history written through the real
store calls (runs, escalations, blind audits and second reviews, SME submissions), every figure checked
against hand computation, the as-of cut, and the fast reader against the naive contract-model reading."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from store_fixtures import T0, pg_server_url_fixture, store_fixture  # noqa: F401 (fixtures)

from arbiter.contracts import (
    ArbiterDecision,
    Attempt,
    Counts,
    Decision,
    DocumentRecord,
    FinalDecision,
    Issue,
    PacketKind,
    PhaseStatus,
    Severity,
    SMEReview,
    StopReason,
    VerificationOutcome,
    VerifierResult,
    VerifierStatus,
)
from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.result import MetricsReport
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_blind_packet, build_packet
from arbiter.store import Store
from testing.metrics_reference import comparable, naive_report

RUN = "run-m1"
SHA = "b" * 64


def cls(
    doc_id: str, dominant: str, starts: Sequence[int] = (1,), pages: int = 6, types: int = 2
) -> dict[str, Any]:
    """A classification whose segments start at `starts`, all of type `dominant`, with a `types`-entry mixture."""
    ends = [s - 1 for s in starts[1:]] + [pages]
    segments = [
        {"segment_index": i, "start_page": s, "end_page": e, "segment_page_count": e - s + 1, "dominant_type": dominant,
         "classification_reasoning": "", "types": []}
        for i, (s, e) in enumerate(zip(starts, ends, strict=True), 1)
    ]  # fmt: skip
    mixture = [{"document_type": dominant, "share": 1.0}] + [
        {"document_type": f"OTHER_{i}", "share": 0.0} for i in range(types - 1)
    ]
    return {
        "doc_id": doc_id,
        "producer": {"name": "test", "version": "1"},
        "number_of_segments": len(segments),
        "dominant_type": dominant,
        "segments": segments,
        "document_mixture": mixture,
    }


def _attempt(n: int, decision: Decision, phases: dict[str, PhaseStatus] | None = None) -> Attempt:
    """An attempt; `phases` gives it clean V2..V4 results with these LLM phase states (none: no results)."""
    verdict = ArbiterDecision(decision=decision, rule="r", reason="", counts=Counts(), policy_version="t")
    results = [
        VerifierResult(verifier=name, version="t", status=VerifierStatus.PASSED, llm_phase=phase)
        for name, phase in (phases or {}).items()
    ]
    return Attempt(attempt=n, fingerprint=f"f{n}", verifier_results=results, decision=verdict)


def _outcome(doc_id: str, final: dict[str, Any], *, accept: bool, retried: bool = False, reason: str | None = None,
             codes: Sequence[str] = (), stop: StopReason | None = None,
             phases: dict[str, PhaseStatus] | None = None) -> VerificationOutcome:  # fmt: skip
    last = Decision.AUTO_ACCEPT if accept else Decision.ESCALATE_TO_SME
    attempts = (
        [_attempt(0, Decision.AUTO_RETRY), _attempt(1, last, phases)]
        if retried
        else [_attempt(0, last, phases)]
    )
    issues = [
        Issue(issue_id=f"{c[:2]}-{i:04d}", code=c, verifier=c[:2], severity=Severity.MAJOR, message="m")
        for i, c in enumerate(codes, 1)
    ]
    return VerificationOutcome(
        doc_id=doc_id,
        final_decision=FinalDecision.AUTO_ACCEPT if accept else FinalDecision.ESCALATE_TO_SME,
        escalation_reason=None if accept else reason,
        stop_reason=stop or (StopReason.ACCEPTED if accept else StopReason.ESCALATED_BY_POLICY),
        policy_version="t",
        attempts=attempts,
        final_classification=final,
        final_issues=issues,
    )


def _record(
    outcome: VerificationOutcome, primary: dict[str, Any], sample: PacketKind | None = None
) -> DocumentRecord:
    doc_id = outcome.doc_id
    common: dict[str, Any] = {"pdf_path": f"/docs/{doc_id}.pdf", "pdf_sha256": SHA, "bundle_path": None,
                              "total_pages": 6, "primary": primary, "run_id": RUN, "now": T0}  # fmt: skip
    packet = gt = None
    if outcome.final_decision == FinalDecision.ESCALATE_TO_SME:
        packet = build_packet(outcome, production=None, **common)
    else:
        gt = auto_accept_record(outcome, None, primary=primary, production=None, pdf_sha256=SHA, run_id=RUN)
        assert gt is not None
        gt = gt.model_copy(update={"created_at": T0})
    samples = ()
    if sample is not None:
        pair = packet.packet_id if packet is not None else None
        samples = (build_blind_packet(sample, outcome, pair_of=pair, **common),)
    return DocumentRecord(
        doc_id=doc_id, run_id=RUN, skip_key="k", pdf_path=f"/docs/{doc_id}.pdf", outcome=outcome, primary_raw=None,
        bundle=None, packet=packet, ground_truth=gt, samples=samples,
    )  # fmt: skip


def _packet_id(store: Store, doc_id: str, kind: PacketKind) -> str:
    return next(
        p.packet_id for p in store.queue.page(limit=100) if p.doc_id == doc_id and p.kind == kind.value
    )


def _review(
    store: Store,
    doc_id: str,
    kind: PacketKind,
    reviewer: str,
    truth: dict[str, Any],
    agrees: bool,
    minute: int,
) -> None:
    at = T0 + timedelta(hours=2, minutes=minute)
    packet_id = _packet_id(store, doc_id, kind)
    assert store.queue.claim(packet_id, reviewer, now=at - timedelta(seconds=90)) is not None
    review = SMEReview(reviewer=reviewer, agrees_with_primary=agrees, confidence=0.9,
                       started_at=at - timedelta(seconds=60 * (minute + 1)), submitted_at=at)  # fmt: skip
    store.reviews.submit(
        packet_id, reviewer, review, truth, idempotency_key=f"{packet_id}-{reviewer}", now=at
    )


MODEL_RAN = {"V2": PhaseStatus.PASSED, "V3": PhaseStatus.FAILED, "V4": PhaseStatus.PASSED}


def _forget_semantic_checks(store: Store, doc_id: str) -> None:
    """Make the document's stored outcome look as it did before semantic_checks was recorded."""
    removed = (
        "outcome - 'semantic_checks'"
        if store.dialect == "postgresql"
        else "json_remove(outcome, '$.semantic_checks')"
    )
    with store.write() as conn:
        conn.execute(sa.text(f"UPDATE outcomes SET outcome = {removed} WHERE doc_id = :d"), {"d": doc_id})


def seed_history(store: Store) -> None:
    """Seven documents in one run and five SME reviews (see the expected figures in the tests below)."""
    lab, lab_long = (
        cls("acc-1", "LAB_REPORT", (1, 4)),
        cls("acc-4", "LAB_REPORT", tuple(range(1, 10)), 12, types=8),
    )
    clinical = cls("esc-2", "CLINICAL_NOTE")
    records = [
        _record(_outcome("acc-1", lab, accept=True), lab, PacketKind.AUDIT),
        _record(_outcome("acc-2", cls("acc-2", "LAB_REPORT"), accept=True, retried=True, phases=MODEL_RAN),
                cls("acc-2", "LAB_REPORT"), PacketKind.AUDIT),
        _record(_outcome("acc-3", cls("acc-3", "LAB_REPORT"), accept=True), cls("acc-3", "LAB_REPORT"), PacketKind.AUDIT),
        _record(_outcome("acc-4", lab_long, accept=True), lab_long),  # more segments and types than read by index
        _record(_outcome("esc-1", cls("esc-1", "LAB_REPORT"), accept=False, reason="non_fixable_major",
                         codes=["V2.MIXTURE_SHARES_SUM"]), cls("esc-1", "LAB_REPORT")),
        _record(_outcome("esc-2", clinical, accept=False, reason="blocker_present",
                         codes=["V3.PROMPT_INJECTION", "V3.ADMIN_TITLE_AS_REPORT"]), clinical, PacketKind.SECOND_REVIEW),
        _record(_outcome("esc-3", cls("esc-3", "LAB_REPORT"), accept=False, retried=True, reason="no_progress",
                         codes=["V4.SNIPPET_NOT_FOUND"], stop=StopReason.NO_PROGRESS), cls("esc-3", "LAB_REPORT")),
    ]  # fmt: skip
    for record in records:
        assert store.records.record(record, now=T0).recorded
    # acc-2's accept was earned with a model and stored before semantic_checks was kept.
    _forget_semantic_checks(store, "acc-2")
    _review(store, "acc-1", PacketKind.AUDIT, "alice", cls("acc-1", "PATHOLOGY_REPORT", (1, 4)), False, 1)
    _review(store, "acc-2", PacketKind.AUDIT, "bob", cls("acc-2", "LAB_REPORT"), True, 2)
    _review(store, "esc-1", PacketKind.ESCALATION, "alice", cls("esc-1", "GENOMIC_REPORT", (1, 3)), False, 3)
    _review(store, "esc-2", PacketKind.ESCALATION, "alice", clinical, True, 4)
    _review(store, "esc-2", PacketKind.SECOND_REVIEW, "bob", cls("esc-2", "LAB_REPORT"), False, 5)


@pytest.fixture(name="report")
def report_fixture(store: Store) -> MetricsReport:
    seed_history(store)
    return compute_metrics(store)


def _kn(rate: Any) -> tuple[int, int]:
    return rate.k, rate.n


def test_false_accept_rate_from_the_audits(report: MetricsReport) -> None:
    """acc-1's audit was corrected (to another type), acc-2's validated; acc-3's audit is still open."""
    assert _kn(report.audit.false_accept) == (1, 2)
    assert _kn(report.audit.dominant_wrong) == (1, 2)
    assert report.audit.open == 1


def test_false_accept_rate_by_semantic_checks(report: MetricsReport) -> None:
    """acc-1 was accepted on rules only and corrected; acc-2 on rules and a model (worked out from its stored
    attempts: the outcome predates the field) and validated. Each split carries k, n and its interval."""
    split = report.audit.false_accept_by_semantic_checks
    assert {key: _kn(r) for key, r in split.items()} == {"rules_only": (1, 1), "rules_and_model": (0, 1)}
    assert all(r.low is not None and r.high is not None for r in split.values())
    assert "rules_and_model" in report.to_json()


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        pytest.param(MODEL_RAN, "rules_and_model", id="every-phase-judged"),
        pytest.param({**MODEL_RAN, "V4": PhaseStatus.SKIPPED}, "rules_only", id="one-skipped"),
        pytest.param({**MODEL_RAN, "V3": PhaseStatus.BUDGET_EXHAUSTED}, "rules_only", id="budget"),
        pytest.param({}, "rules_only", id="no-results"),
    ],
)
def test_an_old_outcome_is_split_as_its_attempts_say(
    store: Store, phases: dict[str, PhaseStatus], expected: str
) -> None:
    """For an audited accept stored without semantic_checks, the database reads it from the final attempt
    exactly as the contract does (the naive contract reading agrees)."""
    final = cls("old-1", "LAB_REPORT")
    assert store.records.record(_record(_outcome("old-1", final, accept=True, phases=phases), final,
                                         PacketKind.AUDIT), now=T0).recorded  # fmt: skip
    _forget_semantic_checks(store, "old-1")
    _review(store, "old-1", PacketKind.AUDIT, "alice", final, False, 1)
    report = compute_metrics(store)
    assert {key: r.n for key, r in report.audit.false_accept_by_semantic_checks.items()} == {
        "rules_only": int(expected == "rules_only"),
        "rules_and_model": int(expected == "rules_and_model"),
    }
    assert comparable(report) == comparable(naive_report(store))


def test_decision_mix_and_auto_fix(report: MetricsReport) -> None:
    """3 accepted first time, 1 after a fix, 3 escalated; of the 2 retried, acc-2 ended accepted."""
    assert [(s.label, *_kn(s.rate)) for s in report.decisions.decisions] == [
        ("accepted first time", 3, 7),
        ("accepted after fixes", 1, 7),
        ("escalated to an SME", 3, 7),
    ]
    assert sorted((s.label, *_kn(s.rate)) for s in report.decisions.escalation_reasons) == [
        ("blocker_present", 1, 3),
        ("no_progress", 1, 3),
        ("non_fixable_major", 1, 3),
    ]
    assert _kn(report.retry.success) == (1, 2)
    assert [(s.label, *_kn(s.rate)) for s in report.retry.stop_reasons] == [("no_progress", 1, 1)]


def test_issue_precision_against_the_reviews(report: MetricsReport) -> None:
    """esc-1 (V2) was corrected, esc-2 (two V3 codes) validated; esc-3 is not reviewed."""
    p = report.precision
    assert _kn(p.escalations) == (1, 2)
    assert {c.code: _kn(c.precision) for c in p.by_code} == {
        "V2.MIXTURE_SHARES_SUM": (1, 1),
        "V3.ADMIN_TITLE_AS_REPORT": (0, 1),
        "V3.PROMPT_INJECTION": (0, 1),
    }
    assert {v.verifier: _kn(v.precision) for v in p.by_verifier} == {"V2": (1, 1), "V3": (0, 1)}


def test_kappa_on_the_second_review(report: MetricsReport) -> None:
    """alice kept CLINICAL_NOTE, bob (blind) said LAB_REPORT: one pair, no agreement, listed for adjudication."""
    kappa = report.agreement.kappa
    assert (kappa.n, _kn(kappa.agreement)) == (1, (0, 1))
    assert kappa.kappa == pytest.approx(0.0)
    assert [(d.doc_id, d.first, d.second) for d in report.agreement.disagreements] == [
        ("esc-2", "CLINICAL_NOTE", "LAB_REPORT")
    ]


def test_model_scores_from_the_newest_ground_truth(report: MetricsReport) -> None:
    """SME scope: acc-1, acc-2, esc-1 (esc-2's two reviews disagree: it awaits adjudication and is in no
    score); only acc-2's primary was right."""
    sme, everything = report.model_scores("primary", "sme"), report.model_scores("primary", "all")
    assert (sme.docs, *_kn(sme.accuracy)) == (3, 1, 3)
    assert (everything.docs, *_kn(everything.accuracy)) == (5, 3, 5)
    assert sme.boundaries is not None
    assert everything.boundaries is not None
    assert (sme.boundaries.tp, sme.boundaries.fp, sme.boundaries.fn) == (
        1,
        0,
        1,
    )  # acc-1 page 4; esc-1 missed 3
    assert everything.boundaries.tp == 1 + 8  # acc-4's eight boundaries, read past the indexed segments
    production = report.model_scores("production", "all")
    assert (production.docs, production.missing) == (5, 5)


def test_reviewers_and_totals(report: MetricsReport) -> None:
    """alice reviewed three packets, bob two; one run of seven documents."""
    assert [(r.reviewer, r.reviews) for r in report.reviewers] == [("alice", 3), ("bob", 2)]
    assert report.totals.reviews_by_kind == {"AUDIT": 2, "ESCALATION": 2, "SECOND_REVIEW": 1}
    assert (report.totals.documents, report.totals.runs, report.totals.ground_truth_docs) == (7, 1, 5)
    (run,) = report.runs
    assert (run.run_id, run.docs, *_kn(run.false_accept)) == (RUN, 7, 1, 2)


def test_as_of_before_the_reviews(store: Store) -> None:
    """As of the run (before any review): no audit reviewed, so the rate is unknown; only automatic truth."""
    seed_history(store)
    report = compute_metrics(store, as_of=T0 + timedelta(hours=1))
    assert report.audit.false_accept.rate is None
    assert report.audit.open == 3
    assert report.totals.reviews == 0
    assert (report.totals.ground_truth_docs, report.totals.sme_ground_truth_docs) == (4, 0)
    assert report.totals.documents == 7


def test_as_of_before_anything(store: Store) -> None:
    """As of a time before the first run, the report is empty and every rate unknown."""
    seed_history(store)
    report = compute_metrics(store, as_of=datetime(2020, 1, 1, tzinfo=T0.tzinfo))
    assert (report.totals.documents, report.totals.ground_truth_docs, report.totals.runs) == (0, 0, 0)
    assert report.audit.false_accept.rate is None


def test_parallel_serial_and_naive_readings_agree(store: Store) -> None:
    """The threaded reader, the one-transaction reader and the contract-model reading give one report."""
    seed_history(store)
    parallel = comparable(compute_metrics(store))
    assert comparable(compute_metrics(store, parallel=False)) == parallel
    assert comparable(naive_report(store)) == parallel
    as_of = T0 + timedelta(hours=2, minutes=3, seconds=30)
    assert comparable(compute_metrics(store, as_of)) == comparable(naive_report(store, as_of))


def test_synthetic_store_agrees_with_the_naive_reading(store: Store) -> None:
    """On seeded data spread over four runs (more chunks than one), both readings give the same report."""
    from arbiter.metrics import gt_reader
    from testing.seeding_metrics import seed_metrics

    seeded = seed_metrics(store, 300)
    assert seeded.ground_truth_docs == 300
    fast = compute_metrics(store)
    assert fast.totals.ground_truth_docs == 300
    assert comparable(fast) == comparable(naive_report(store))
    with store.read() as conn:
        assert len(gt_reader.chunk_bounds(conn, size=70)) == 4  # 300 documents in chunks of 70: five chunks
        texts = list(gt_reader.chunks(conn, size=70))
    assert len(texts) == 5


def test_empty_store(store: Store) -> None:
    """A migrated, empty store gives a report of unknowns."""
    report = compute_metrics(store)
    assert report.totals.documents == 0
    assert report.audit.false_accept.rate is None
    assert report.runs == []


ODD_PRIMARY: dict[str, Any] = {
    "dominant_type": 5,
    "segments": [{"start_page": "3"}, "x", {"start_page": 4.0}, {"start_page": True}, {"start_page": 7}],
    "document_mixture": [
        {"document_type": "A", "share": 0.2},
        {"document_type": "A", "share": 0.3},
        {"document_type": "B", "share": True},
        "junk",
    ],
}


@pytest.mark.parametrize(
    ("primary", "truth"),
    [
        (ODD_PRIMARY, cls("odd", "A", (1, 7))),
        ({}, cls("odd", "A", (1, 7))),
        (ODD_PRIMARY, {"dominant_type": ["not", "a", "string"], "segments": {"0": {"start_page": 2}}}),
    ],
)
def test_malformed_classifications_read_alike(
    store: Store, primary: dict[str, Any], truth: dict[str, Any]
) -> None:
    """Odd JSON in stored classifications (wrong types, junk entries) is read by the database the way the
    Python rules read it: the fast reader and the contract-model reading agree."""
    outcome = _outcome("odd", truth, accept=True)
    assert store.records.record(_record(outcome, primary), now=T0).recorded
    fast = compute_metrics(store)
    assert comparable(fast) == comparable(naive_report(store))
    assert fast.model_scores("primary", "all").accuracy.n == 1
