"""Hand-built histories for the policy what-if tests: outcomes whose attempts, issues and decisions are
written out by hand (decided by the real policy under the profile that recorded them), stored through the
store's own API (records.record, queue.claim, reviews.submit)."""

from __future__ import annotations

import copy
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from arbiter.contracts import (
    Attempt,
    DocumentRecord,
    FinalDecision,
    Issue,
    IssueSource,
    PacketKind,
    Severity,
    SMEReview,
    StopReason,
    VerificationOutcome,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import Profile, Rule
from arbiter.decide.policy import decide
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_blind_packet, build_packet
from arbiter.store import Store

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
FIX = [{"op": "replace", "path": "/segments/0/segment_page_count", "value": 2}]


def classification(doc_id: str, dominant: str = "LAB_REPORT") -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "dominant_type": dominant,
        "segments": [
            {
                "segment_index": 1,
                "start_page": 1,
                "end_page": 2,
                "segment_page_count": 2,
                "dominant_type": dominant,
                "types": [
                    {"document_type": dominant, "presence_level": "PRIMARY", "share": 1.0, "confidence": 0.9}
                ],
            }
        ],
        "document_mixture": [{"document_type": dominant, "share": 1.0}],
    }


def issue(verifier: str, n: int, severity: str, *, fixable: bool = False, llm: bool = False) -> Issue:
    return Issue(
        issue_id=f"{verifier}-{n:04d}",
        code=f"{verifier}.TEST_{severity}",
        verifier=verifier,
        severity=Severity(severity),
        message="A hand-written finding.",
        auto_fixable=fixable,
        fix=FIX if fixable else None,
        source=IssueSource.LLM if llm else IssueSource.RULE,
    )


def attempt(index: int, issues: list[Issue], profile: Profile) -> Attempt:
    results = [
        VerifierResult(
            verifier=name,
            version="test",
            status=VerifierStatus.FAILED if mine else VerifierStatus.PASSED,
            issues=mine,
        )
        for name in ("V1", "V2", "V3", "V4")
        for mine in [[i for i in issues if i.verifier == name]]
    ]
    return Attempt(
        attempt=index, fingerprint=f"fp-{index}", verifier_results=results, decision=decide(results, profile)
    )


def outcome(
    doc_id: str, attempts: list[Attempt], stop: StopReason, primary: dict[str, Any]
) -> VerificationOutcome:
    accepted = stop == StopReason.ACCEPTED
    last = attempts[-1].decision
    return VerificationOutcome(
        doc_id=doc_id,
        final_decision=FinalDecision.AUTO_ACCEPT if accepted else FinalDecision.ESCALATE_TO_SME,
        escalation_reason=None
        if accepted
        else (last.rule if stop == StopReason.ESCALATED_BY_POLICY else stop.value),
        stop_reason=stop,
        policy_version="test",
        attempts=attempts,
        final_classification=copy.deepcopy(primary),
        final_issues=[i for r in attempts[-1].verifier_results for i in r.issues],
    )


def record(
    store: Store, out: VerificationOutcome, primary: dict[str, Any], *, audit: bool = False
) -> str | None:
    """Store one document's run (run-1) as a batch run would; returns its packet id (escalations) or the
    audit packet's id."""
    doc_id = out.doc_id
    pdf = f"/docs/{doc_id}.pdf"
    packet = gt = None
    if out.final_decision == FinalDecision.ESCALATE_TO_SME:
        packet = build_packet(
            out,
            pdf_path=pdf,
            pdf_sha256="a" * 64,
            bundle_path=None,
            total_pages=2,
            primary=primary,
            production=None,
            run_id="run-1",
            now=T0,
        )
    else:
        gt = auto_accept_record(
            out, None, primary=primary, production=None, pdf_sha256="a" * 64, run_id="run-1"
        )
    rec = DocumentRecord(
        doc_id=doc_id,
        run_id="run-1",
        skip_key="k",
        pdf_path=pdf,
        outcome=out,
        primary_raw=None,
        bundle=None,
        packet=packet,
        ground_truth=gt,
    )
    sample = None
    if audit:
        sample = build_blind_packet(
            PacketKind.AUDIT,
            out,
            pdf_path=pdf,
            pdf_sha256="a" * 64,
            bundle_path=None,
            total_pages=2,
            primary=primary,
            run_id="run-1",
            now=T0,
        )
        rec = dataclasses.replace(rec, samples=(sample,))
    store.records.record(rec, now=T0)
    return sample.packet_id if sample else (packet.packet_id if packet else None)


def review(
    store: Store, packet_id: str, truth: dict[str, Any], *, agrees: bool, reviewer: str = "sme"
) -> None:
    """An SME review through the store: claim, then submit `truth` as the ground truth."""
    if store.users.get(reviewer) is None:
        store.users.add(reviewer, "reviewer", None)
    now = datetime.now(UTC)
    assert store.queue.claim(packet_id, reviewer, now=now) is not None
    done = SMEReview(
        reviewer=reviewer,
        agrees_with_primary=agrees,
        confidence=0.9,
        started_at=now - timedelta(minutes=1),
        submitted_at=now,
    )
    store.reviews.submit(packet_id, reviewer, done, truth, idempotency_key=packet_id, now=now)


def with_rules(profile: Profile, rules: list[Rule], version: str = "candidate") -> Profile:
    policy = profile.arbiter.model_copy(update={"rules": rules, "policy_version": version})
    return profile.model_copy(update={"arbiter": policy})


def rule(profile: Profile, name: str) -> Rule:
    return next(r for r in profile.arbiter.rules if r.name == name)
