"""The arbiter's and the reviewers' figures on small hand-computed cases: decision mix, auto-fix success,
false-accept rate, issue precision, reviewer throughput, Cohen's κ on second reviews, trends by run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arbiter.metrics.arbiter_side import (
    ACCEPTED_FIRST,
    ACCEPTED_FIXED,
    ESCALATED,
    UNREADABLE,
    audit_stats,
    decision_label,
    decision_mix,
    precision,
    retry_stats,
    verifier_of,
)
from arbiter.metrics.compute import build_report, mark_latest
from arbiter.metrics.model import Labelled, Prediction
from arbiter.metrics.reviewers import agreement, reviewer_stats
from arbiter.metrics.rows import DocRun, Reviewed

ACCEPT, ESCALATE, RETRY = "AUTO_ACCEPT", "ESCALATE_TO_SME", "AUTO_RETRY"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _doc(decision: str, **kw: Any) -> DocRun:
    return DocRun(
        doc_id=str(kw.pop("doc_id", "d")), run_id=str(kw.pop("run_id", "r1")), decision=decision, **kw
    )


def _review(packet_id: str, kind: str = "ESCALATION", *, agrees: bool = True, **kw: Any) -> Reviewed:
    fields: dict[str, Any] = {"doc_id": f"doc-{packet_id}", "run_id": "r1", "reviewer": "alice", **kw}
    return Reviewed(packet_id=packet_id, kind=kind, agrees=agrees, **fields)


@pytest.mark.parametrize(
    ("doc", "label"),
    [
        (_doc(ACCEPT), ACCEPTED_FIRST),
        (_doc(ACCEPT, reattempted=True), ACCEPTED_FIXED),
        (_doc(ESCALATE, reason="blocker_present"), ESCALATED),
        (_doc(ESCALATE, reason="pdf_empty", error="pdf_empty"), UNREADABLE),
        (_doc(ACCEPT, error="pdf_broken"), UNREADABLE),  # an input error wins over any decision
        (_doc("SOMETHING_NEW"), "SOMETHING_NEW"),  # an unknown decision is shown as it is
    ],
)
def test_decision_labels(doc: DocRun, label: str) -> None:
    """Each document falls in exactly one decision category."""
    assert decision_label(doc) == label


def test_decision_mix_and_escalation_reasons() -> None:
    """Shares of all documents (grouped rows weigh by their count); reasons are shares of the escalated."""
    docs = [
        _doc(ACCEPT, count=3),
        _doc(ACCEPT, reattempted=True),
        _doc(ESCALATE, reason="blocker_present"),
        _doc(ESCALATE, reason="blocker_present"),
        _doc(ESCALATE, reason="pdf_empty", error="pdf_empty"),
    ]
    mix = decision_mix(docs)
    assert mix.docs == 7
    assert [(s.label, s.rate.k, s.rate.n) for s in mix.decisions] == [
        (ACCEPTED_FIRST, 3, 7),
        (ACCEPTED_FIXED, 1, 7),
        (ESCALATED, 2, 7),
        (UNREADABLE, 1, 7),
    ]
    assert [(s.label, s.rate.k, s.rate.n) for s in mix.escalation_reasons] == [
        ("blocker_present", 2, 3),
        ("pdf_empty", 1, 3),
    ]


def test_retry_success_and_why_the_rest_stopped() -> None:
    """Of the documents sent to auto-fix, the accepted share; the others by stop reason."""
    docs = [
        _doc(ACCEPT, reattempted=True, first_decision=RETRY, stop_reason="accepted"),
        _doc(ESCALATE, first_decision=RETRY, stop_reason="conflicting_patches"),
        _doc(ESCALATE, reattempted=True, first_decision=RETRY, stop_reason="no_progress"),
        _doc(ACCEPT, first_decision=ACCEPT),  # never retried
        _doc(ESCALATE, first_decision=ESCALATE, stop_reason="escalated_by_policy"),  # never retried
    ]
    retry = retry_stats(docs)
    assert (retry.success.k, retry.success.n) == (1, 3)
    assert [(s.label, s.rate.k, s.rate.n) for s in retry.stop_reasons] == [
        ("conflicting_patches", 1, 2),
        ("no_progress", 1, 2),
    ]


def test_false_accept_rate_from_blind_audits() -> None:
    """Corrected audits over reviewed audits; the stricter rate compares dominant types where both are known."""
    reviews = [
        _review("a1", "AUDIT", agrees=True, label="LAB", accepted_label="LAB"),
        _review("a2", "AUDIT", agrees=False, label="GEN", accepted_label="LAB"),
        _review("a3", "AUDIT", agrees=False, label="LAB", accepted_label="LAB"),  # segments corrected only
        _review(
            "a4", "AUDIT", agrees=True, label=None, accepted_label="LAB"
        ),  # no label: not in the strict rate
        _review("e1", "ESCALATION", agrees=False),  # not an audit
    ]
    audit = audit_stats(reviews, open_audits=5)
    assert (audit.false_accept.k, audit.false_accept.n) == (2, 4)
    assert (audit.dominant_wrong.k, audit.dominant_wrong.n) == (1, 3)
    assert audit.open == 5


@pytest.mark.parametrize(
    ("earned", "expected"),
    [
        pytest.param(
            [("rules_only", False), ("rules_only", True), ("rules_and_model", True)],
            {"rules_only": (1, 2), "rules_and_model": (0, 1)},
            id="both",
        ),
        pytest.param(
            [("rules_and_model", False)], {"rules_only": (0, 0), "rules_and_model": (1, 1)}, id="model-only"
        ),
        pytest.param(
            [(None, False)], {"rules_only": (0, 0), "rules_and_model": (0, 0)}, id="unknown-in-neither"
        ),
    ],
)
def test_false_accept_rate_split_by_semantic_checks(
    earned: list[tuple[str | None, bool]], expected: dict[str, tuple[int, int]]
) -> None:
    """Each audit counts in the split of how its accept was earned; both splits always present, n = 0 unknown."""
    reviews = [
        _review(f"a{i}", "AUDIT", agrees=agrees, semantic_checks=how)
        for i, (how, agrees) in enumerate(earned)
    ]
    reviews.append(_review("e1", "ESCALATION", agrees=False, semantic_checks="rules_only"))  # not an audit
    split = audit_stats(reviews).false_accept_by_semantic_checks
    assert {key: (r.k, r.n) for key, r in split.items()} == expected
    assert all((r.rate is None) == (r.n == 0) for r in split.values())


def test_no_audits_means_an_unknown_rate() -> None:
    """Without reviewed audits the false-accept rate is None (unknown), never 0."""
    audit = audit_stats([_review("e1")])
    assert audit.false_accept.n == 0
    assert audit.false_accept.rate is None


@pytest.mark.parametrize(
    ("code", "verifier"),
    [
        ("V3.PROMPT_INJECTION", "V3"),
        ("V2_PAGE_COUNT", "V2"),
        ("V12.NEW", "V12"),
        ("SITE.RULE", "SITE"),
        ("X", "X"),
    ],
)
def test_verifier_of_a_code(code: str, verifier: str) -> None:
    """A code's verifier is its V<n> prefix, else the part before the first dot."""
    assert verifier_of(code) == verifier


def test_issue_precision_per_code_and_per_verifier() -> None:
    """A code on a corrected escalation is a true positive, on a validated one a false positive; a
    verifier counts once per packet however many of its codes the packet carries."""
    reviews = [
        _review("p1", agrees=False, codes=("V2.A", "V2.B")),
        _review("p2", agrees=True, codes=("V2.A", "V3.C")),
        _review("p3", agrees=False, codes=()),
        _review("p4", "AUDIT", agrees=False, codes=("V1.X",)),  # audits carry no issues: ignored
    ]
    p = precision(reviews)
    assert (p.escalations.k, p.escalations.n) == (2, 3)
    assert [(c.code, c.verifier, c.precision.k, c.precision.n) for c in p.by_code] == [
        ("V2.A", "V2", 1, 2),
        ("V2.B", "V2", 1, 1),
        ("V3.C", "V3", 0, 1),
    ]
    assert [(v.verifier, v.precision.k, v.precision.n) for v in p.by_verifier] == [("V2", 1, 2), ("V3", 0, 1)]


def test_reviewer_throughput_and_time_per_packet() -> None:
    """Median and p90 of started→submitted, distinct clock hours with a submission, reviews per such hour."""

    def at(minutes: int) -> datetime:
        return T0 + timedelta(minutes=minutes)

    reviews = [
        _review("1", reviewer="alice", started_at=at(9), submitted_at=at(10)),  # 60 s, hour 9
        _review("2", reviewer="alice", agrees=False, started_at=at(48), submitted_at=at(50)),  # 120 s, hour 9
        _review("3", reviewer="alice", started_at=at(120), submitted_at=at(125)),  # 300 s, hour 11
        _review("4", reviewer="bob", submitted_at=at(5)),  # no start time: counted, not timed
    ]
    alice, bob = reviewer_stats(reviews)
    assert (alice.reviewer, alice.reviews, alice.corrected.k) == ("alice", 3, 1)
    assert alice.median_s == pytest.approx(120.0)
    assert alice.p90_s == pytest.approx(264.0)
    assert (alice.active_hours, alice.per_active_hour) == (2, pytest.approx(1.5))
    assert (bob.reviews, bob.median_s, bob.active_hours, bob.per_active_hour) == (1, None, 1, 1.0)


def test_kappa_pairs_each_escalation_with_its_second_review() -> None:
    """Pairs by pair_of; a pair without a label is skipped; disagreements are listed for adjudication."""
    reviews = [
        _review("e1", label="LAB"),
        _review("s1", "SECOND_REVIEW", pair_of="e1", label="LAB", reviewer="bob"),
        _review("e2", label="GEN", doc_id="doc-2"),
        _review("s2", "SECOND_REVIEW", pair_of="e2", label="LAB", reviewer="bob", doc_id="doc-2"),
        _review("e3", label=None),
        _review("s3", "SECOND_REVIEW", pair_of="e3", label="LAB", reviewer="bob"),
        _review("s4", "SECOND_REVIEW", pair_of="not-reviewed-yet", label="LAB"),
        _review("e5", label="GEN"),  # never double-reviewed
    ]
    result = agreement(reviews)
    assert result.kappa.n == 2
    assert (result.kappa.agreement.k, result.kappa.agreement.n) == (1, 2)
    assert result.kappa.kappa == pytest.approx(0.0)  # p_o = 0.5 = p_e
    assert result.skipped == 1
    assert [(d.doc_id, d.first, d.second) for d in result.disagreements] == [("doc-2", "GEN", "LAB")]


def test_mark_latest_keeps_each_documents_newest_run() -> None:
    """Rows given oldest first: only each document's last row is its newest run."""
    rows = mark_latest(
        [
            _doc(ESCALATE, doc_id="x", run_id="r1"),
            _doc(ACCEPT, doc_id="y"),
            _doc(ACCEPT, doc_id="x", run_id="r2"),
        ]
    )
    assert [r.latest for r in rows] == [False, True, True]


def test_report_uses_newest_runs_for_the_mix_and_every_run_for_trends() -> None:
    """A document escalated in run 1 and accepted in run 2 counts once (accepted) in the mix and in both
    runs' trends; audits and SME accuracy land in their runs."""
    docs = mark_latest(
        [
            _doc(ESCALATE, doc_id="x", run_id="r1", reason="blocker_present"),
            _doc(ACCEPT, doc_id="x", run_id="r2"),
            _doc(ACCEPT, doc_id="y", run_id="r2"),
        ]
    )
    truth = Prediction("LAB")
    ground_truth = [
        Labelled("x", True, truth, Prediction("LAB"), "LAB", run_id="r1"),
        Labelled("y", True, truth, Prediction("GEN"), None, run_id="r2"),
        Labelled("z", False, truth, Prediction("LAB"), None, run_id="r2"),  # automatic: not in SME accuracy
    ]
    reviews = [_review("a", "AUDIT", agrees=False, run_id="r2", label="GEN", accepted_label="LAB")]
    runs = [("r1", T0), ("r2", T0 + timedelta(days=1))]
    report = build_report(ground_truth, docs, reviews, runs)
    assert report.totals.documents == 2
    assert report.totals.ground_truth_docs == 3
    assert report.totals.sme_ground_truth_docs == 2
    assert [(s.label, s.rate.k) for s in report.decisions.decisions] == [(ACCEPTED_FIRST, 2)]
    r1, r2 = report.runs
    assert (r1.run_id, r1.docs, r1.escalated.k, r1.accepted.k) == ("r1", 1, 1, 0)
    assert (r2.run_id, r2.docs, r2.accepted.k) == ("r2", 2, 2)
    assert (r1.primary_accuracy_sme.k, r1.primary_accuracy_sme.n) == (1, 1)
    assert (r2.primary_accuracy_sme.k, r2.primary_accuracy_sme.n) == (0, 1)
    assert (r2.false_accept.k, r2.false_accept.n) == (1, 1)
    assert r1.false_accept.rate is None
    assert (report.audit.false_accept.k, report.audit.false_accept.n) == (1, 1)


def test_empty_report_has_every_rate_undefined() -> None:
    """An empty store gives a report of unknowns: no division by zero, no 0 % that means nothing."""
    report = build_report([], [], [])
    assert report.audit.false_accept.rate is None
    assert report.retry.success.rate is None
    assert report.agreement.kappa.kappa is None
    assert report.decisions.docs == 0
    assert report.runs == []
    assert report.reviewers == []
