"""Packets, ground-truth versions, the production file and atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbiter import atomic
from arbiter.classify.production import load_production
from arbiter.contracts import (
    ArbiterDecision,
    Attempt,
    Counts,
    Decision,
    FinalDecision,
    GroundTruthSource,
    Issue,
    ProductionClassification,
    Severity,
    StopReason,
    VerificationOutcome,
)
from arbiter.errors import InputError
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_packet, priority_of, production_differs, sort_issues


def issue(n: int, severity: Severity, verifier: str = "V2") -> Issue:
    return Issue(
        issue_id=f"{verifier}-{n:04d}",
        code=f"{verifier}.X",
        verifier=verifier,
        severity=severity,
        message="m",
    )


def outcome(
    final: FinalDecision, issues: list[Issue], classification: dict | None = None
) -> VerificationOutcome:
    decision = ArbiterDecision(
        decision=Decision(final.value),
        rule="clean" if final == "AUTO_ACCEPT" else "blocker_present",
        reason="r",
        counts=Counts(),
        policy_version="p1",
    )
    return VerificationOutcome(
        doc_id="doc-1",
        final_decision=final,
        escalation_reason=None if final == "AUTO_ACCEPT" else "blocker_present",
        stop_reason=StopReason.ACCEPTED if final == "AUTO_ACCEPT" else StopReason.ESCALATED_BY_POLICY,
        policy_version="p1",
        attempts=[Attempt(attempt=0, fingerprint="f0", verifier_results=[], decision=decision)],
        final_classification=classification,
        final_issues=issues,
    )


def test_issues_sorted_blocker_major_minor() -> None:
    """Reviewers see blockers first, then majors, then minors."""
    issues = [issue(1, Severity.MINOR), issue(2, Severity.BLOCKER), issue(3, Severity.MAJOR)]
    assert [i.severity for i in sort_issues(issues)] == [Severity.BLOCKER, Severity.MAJOR, Severity.MINOR]


@pytest.mark.parametrize(
    ("severities", "input_failed", "expected"),
    [
        ([Severity.MINOR], False, 2),
        ([Severity.MAJOR, Severity.MINOR], False, 1),
        ([Severity.BLOCKER], False, 0),
        ([], True, 0),
        ([], False, 2),
    ],
)
def test_priority(severities: list[Severity], input_failed: bool, expected: int) -> None:
    """Priority 0 for blockers or unreadable input, 1 for majors, 2 otherwise."""
    assert priority_of([issue(i, s) for i, s in enumerate(severities)], input_failed) == expected


@pytest.mark.parametrize(
    ("production", "primary", "expected"),
    [
        (None, {"dominant_type": "LAB_REPORT"}, None),
        ("LAB_REPORT", None, None),
        ("LAB_REPORT", {"dominant_type": "LAB_REPORT"}, False),
        ("LAB_REPORT", {"dominant_type": "GENOMIC_REPORT"}, True),
        ("LAB_REPORT", {"dominant_type": 3}, None),
    ],
)
def test_production_differs(production: str | None, primary: dict | None, expected: bool | None) -> None:
    """production_differs compares dominant types and is None when either side is unknown."""
    prod = ProductionClassification(doc_id="d", dominant_type=production) if production else None
    assert production_differs(prod, primary) is expected


def test_packet_only_for_escalations() -> None:
    """An accepted outcome has no packet (docs/design.md §3.5)."""
    with pytest.raises(ValueError, match="accepted"):
        build_packet(
            outcome(FinalDecision.AUTO_ACCEPT, []),
            pdf_path="a.pdf",
            pdf_sha256="x",
            bundle_path=None,
            total_pages=1,
            primary=None,
            production=None,
            run_id="r",
        )


def test_packet_fields() -> None:
    """A packet carries sorted issues, the retry log, production comparison and PENDING status."""
    out = outcome(FinalDecision.ESCALATE_TO_SME, [issue(1, Severity.MINOR), issue(2, Severity.BLOCKER)])
    packet = build_packet(
        out,
        pdf_path="/in/doc-1.pdf",
        pdf_sha256="abc",
        bundle_path="/o/b.json",
        total_pages=3,
        primary={"dominant_type": "LAB_REPORT"},
        production=ProductionClassification(doc_id="doc-1", dominant_type="GENOMIC_REPORT"),
        run_id="r1",
    )
    assert packet.pdf_filename == "doc-1.pdf"
    assert packet.issues_summary[0].severity == Severity.BLOCKER
    assert packet.total_issues == 2
    assert packet.production_differs is True
    assert packet.review_status == "PENDING"
    assert packet.priority == 0
    assert packet.retry_log[0].rule == "blocker_present"


def test_ground_truth_versions_append() -> None:
    """A changed classification adds version 2 superseding 1; an identical one adds nothing."""
    first = auto_accept_record(
        outcome(FinalDecision.AUTO_ACCEPT, [], {"a": 1}),
        None,
        primary={"a": 1},
        production=None,
        pdf_sha256="s",
        run_id="r1",
    )
    assert first is not None
    assert first.version == 1
    assert first.ground_truth_source == GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT
    same = auto_accept_record(
        outcome(FinalDecision.AUTO_ACCEPT, [], {"a": 1}),
        first,
        primary={"a": 1},
        production=None,
        pdf_sha256="s",
        run_id="r2",
    )
    assert same is None
    second = auto_accept_record(
        outcome(FinalDecision.AUTO_ACCEPT, [], {"a": 2}),
        first,
        primary={"a": 2},
        production=None,
        pdf_sha256="s",
        run_id="r3",
    )
    assert second is not None
    assert (second.version, second.supersedes) == (2, first.gt_id)


def test_ground_truth_refuses_escalations() -> None:
    """Only accepted outcomes become automatic ground truth."""
    with pytest.raises(ValueError, match="not accepted"):
        auto_accept_record(
            outcome(FinalDecision.ESCALATE_TO_SME, []),
            None,
            primary=None,
            production=None,
            pdf_sha256="s",
            run_id="r",
        )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("prod.csv", "doc_id,dominant_type\na,LAB_REPORT\nb,GENOMIC_REPORT\n"),
        (
            "prod.jsonl",
            '{"doc_id": "a", "dominant_type": "LAB_REPORT"}\n\n{"doc_id": "b", "dominant_type": "GENOMIC_REPORT"}\n',
        ),
    ],
)
def test_production_loads_csv_and_jsonl(tmp_path: Path, name: str, content: str) -> None:
    """--production accepts CSV with a header and JSONL."""
    path = tmp_path / name
    path.write_text(content)
    loaded = load_production(path)
    assert {k: v.dominant_type for k, v in loaded.items()} == {"a": "LAB_REPORT", "b": "GENOMIC_REPORT"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.csv", "id,type\na,b\n", "needs a header"),
        ("p.csv", "doc_id,dominant_type\na,\n", "line 2"),
        ("p.jsonl", "{not json}\n", "line 1 is not valid JSON"),
        ("p.jsonl", "[1, 2]\n", "line 1 must be a JSON object"),
    ],
)
def test_production_errors_name_the_line(tmp_path: Path, name: str, content: str, message: str) -> None:
    """A malformed production file is a clear error naming the problem."""
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_production(path)


def test_production_missing_file(tmp_path: Path) -> None:
    """A missing production file is an input error, not a traceback."""
    with pytest.raises(InputError, match="does not exist"):
        load_production(tmp_path / "nope.csv")


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    """An atomic write replaces the file and leaves no temporary behind."""
    target = tmp_path / "sub" / "x.json"
    atomic.write_json(target, {"a": 1})
    atomic.write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]
