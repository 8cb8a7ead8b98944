"""Synthetic data for the metrics: ground truth from `seed_ground_truth` spread over several runs, plus
the documents, outcomes, packets and reviews that would have produced it. Bulk inserts, deterministic.

Per document (version 1 decides the story): an automatic version 1 is an accepted document; a later SME
version of it is the review of a blind AUDIT packet. An SME version 1 is an escalated document whose
ESCALATION packet was reviewed; a later SME version is the blind SECOND_REVIEW of it, by someone else.
A third version has no review row (as if imported). A share of the accepted documents that were never
audited has an audit packet still waiting in the queue.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import StopReason
from arbiter.record.packets import BLIND_REASON
from arbiter.store import Store
from arbiter.store.models import documents, ground_truth, outcomes, packet_codes, packets, reviews, runs
from arbiter.store.packet_rows import COMPLETED, PENDING
from testing.ground_truth import REVIEWERS, seed_ground_truth
from testing.seeding import issue, priority_of
from testing.vocabulary import RETRY_RULE, RULE_REASONS

_CHUNK = 2_000
_AUTO = "PRIMARY_AGENT_AUTO_ACCEPT"


@dataclass
class Seeded:
    """What seed_metrics wrote, by table."""

    documents: int = 0
    ground_truth_docs: int = 0
    packets: dict[str, int] = field(default_factory=dict)
    reviews: int = 0
    runs: list[str] = field(default_factory=list)


def _outcome(
    doc_id: str, summary: dict[str, Any], classification: dict[str, Any], policy: str
) -> dict[str, Any]:
    """A VerificationOutcome-shaped dict with the attempts, decisions and issues the summary names: a policy
    escalation ends on its rule's decision; a loop stopped for another reason (max_retries, no_progress) ends
    on a retry and is escalated under the stop's name, as the governor does."""
    accepted = summary["final_decision"] == "AUTO_ACCEPT"
    by_policy = summary["stop_reason"] in (StopReason.ACCEPTED, StopReason.ESCALATED_BY_POLICY)
    issues = [issue(i, c) for i, c in enumerate(summary["issue_codes"], 1)]
    n = max(1, int(summary["attempts"]))
    attempts = []
    for a in range(n):
        last = a == n - 1
        if last and by_policy:
            decision, rule = ("AUTO_ACCEPT" if accepted else "ESCALATE_TO_SME"), summary["rule"]
        else:
            decision, rule = "AUTO_RETRY", RETRY_RULE
        results = [
            {
                "verifier": v,
                "version": "1",
                "status": "FAILED" if any(i["verifier"] == v for i in issues) else "PASSED",
                "issues": [i for i in issues if i["verifier"] == v],
                "score": 0.8,
                "duration_ms": 1.5,
            }
            for v in ("V1", "V2", "V3", "V4")
        ]
        attempts.append(
            {
                "attempt": a,
                "fingerprint": hashlib.sha256(f"{doc_id}|{a}".encode()).hexdigest(),
                "verifier_results": results,
                "decision": {
                    "decision": decision,
                    "rule": rule,
                    "reason": RULE_REASONS[rule],
                    "counts": {"major": len(issues), "total": len(issues)},
                    "policy_version": policy,
                },
                "fixes_applied": [],
            }
        )
    reason = None if accepted else (summary["rule"] if by_policy else summary["stop_reason"])
    return {
        "doc_id": doc_id,
        "final_decision": "AUTO_ACCEPT" if accepted else "ESCALATE_TO_SME",
        "escalation_reason": reason,
        "escalation_message": None if accepted else RULE_REASONS.get(reason or "", "Escalated for review."),
        "stop_reason": summary["stop_reason"],
        "policy_version": policy,
        "attempts": attempts,
        "final_classification": classification,
        "final_issues": issues,
    }


def _packet(
    packet_id: str,
    kind: str,
    doc_id: str,
    run_id: str,
    reason: str,
    issues: list[dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    created: datetime = extra["created_at"]
    body = {
        "packet_id": packet_id,
        "doc_id": doc_id,
        "pdf_filename": f"{doc_id}.pdf",
        "pdf_path": f"/docs/{doc_id}.pdf",
        "pdf_sha256": hashlib.sha256(doc_id.encode()).hexdigest(),
        "document_bundle_path": None,
        "total_pages": 4,
        "primary_agent_classification": extra["primary"],
        "final_classification": extra["primary"],
        "v5_decision": None,
        "escalation_reason": reason,
        "escalation_message": RULE_REASONS.get(reason, "Selected for a blind review."),
        "total_issues": len(issues),
        "issues_summary": issues,
        "retry_log": [],
        "priority": priority_of([i["code"] for i in issues]) if issues else 1,
        "created_at": created.isoformat(),
        "updated_at": created.isoformat(),
        "run_id": run_id,
        "policy_version": extra["policy"],
        "packet_kind": kind,
        "pair_of": extra.get("pair_of"),
    }
    return {
        "packet_id": packet_id,
        "doc_id": doc_id,
        "run_id": run_id,
        "priority": body["priority"],
        "escalation_reason": reason,
        "doc_type": extra["primary"].get("dominant_type"),
        "top_codes": ",".join(i["code"] for i in issues[:3]),
        "status": extra["status"],
        "claimed_by": extra.get("reviewer"),
        "kind": kind,
        "pair_of": extra.get("pair_of"),
        "created_at": created,
        "updated_at": created,
        "payload": body,
    }


class _Batch:
    """Rows per table, written in chunks of a few thousand (FK order: runs, packets before their rows)."""

    ORDER = (documents, outcomes, packets, packet_codes, reviews)

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in self.ORDER}

    def add(self, table: sa.Table, row: dict[str, Any]) -> None:
        self.rows[table.name].append(row)
        if len(self.rows[documents.name]) >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        with self.store.write() as conn:
            for table in self.ORDER:
                if self.rows[table.name]:
                    conn.execute(sa.insert(table), self.rows[table.name])
                    self.rows[table.name] = []


def _review(
    packet_id: str, doc_id: str, gt: Any, reviewer: str, review: dict[str, Any], at: datetime
) -> dict[str, Any]:
    return {
        "packet_id": packet_id,
        "doc_id": doc_id,
        "reviewer": reviewer,
        "idempotency_key": f"{packet_id}-{reviewer}",
        "gt_id": gt.gt_id,
        "payload": {**review, "reviewer": reviewer},
        "created_at": at,
    }


def _other_reviewer(name: str) -> str:
    return REVIEWERS[(REVIEWERS.index(name) + 1) % len(REVIEWERS)] if name in REVIEWERS else REVIEWERS[0]


def _document(
    batch: _Batch, seeded: Seeded, versions: list[Any], rng: random.Random, open_audit: float
) -> None:
    first = versions[0]
    p = first.payload
    doc_id, run_id, summary, primary = (
        first.doc_id,
        p["run_id"],
        p["verification_summary"],
        p["primary_agent_classification"],
    )
    accepted = first.source == _AUTO
    decided = first.created_at - timedelta(minutes=5)
    outcome = _outcome(
        doc_id, summary, p["ground_truth_classification"] if accepted else primary, p["policy_version"]
    )
    batch.add(
        documents,
        {
            "doc_id": doc_id,
            "run_id": run_id,
            "skip_key": f"key-{doc_id}",
            "pdf_path": f"/docs/{doc_id}.pdf",
            "pdf_sha256": p["pdf_sha256"],
            "final_decision": outcome["final_decision"],
            "escalation_reason": outcome["escalation_reason"],
            "doc_type": (outcome["final_classification"] or {}).get("dominant_type"),
            "error": None,
            "created_at": decided,
        },
    )
    batch.add(outcomes, {"doc_id": doc_id, "run_id": run_id, "outcome": outcome})
    seeded.documents += 1
    seeded.ground_truth_docs += 1

    def packet(kind: str, status: str, reviewer: str | None = None, pair_of: str | None = None) -> str:
        packet_id = f"pkt-{kind[:3].lower()}-{doc_id}"
        issues = outcome["final_issues"] if kind == "ESCALATION" else []
        reason = outcome["escalation_reason"] if kind == "ESCALATION" else BLIND_REASON
        row = _packet(
            packet_id,
            kind,
            doc_id,
            run_id,
            reason,
            issues,
            created_at=decided,
            primary=primary,
            policy=p["policy_version"],
            status=status,
            reviewer=reviewer,
            pair_of=pair_of,
        )
        batch.add(packets, row)
        for code in dict.fromkeys(i["code"] for i in issues):
            batch.add(packet_codes, {"packet_id": packet_id, "code": code})
        seeded.packets[kind] = seeded.packets.get(kind, 0) + 1
        return packet_id

    def reviewed(packet_id: str, gt: Any, reviewer: str) -> None:
        batch.add(reviews, _review(packet_id, doc_id, gt, reviewer, gt.payload["sme_review"], gt.created_at))
        seeded.reviews += 1

    if accepted:
        if len(versions) > 1:
            audit = versions[1]
            name = audit.payload["sme_review"]["reviewer"]
            reviewed(packet("AUDIT", COMPLETED, name), audit, name)
        elif rng.random() < open_audit:
            packet("AUDIT", PENDING)
        return
    name = first.payload["sme_review"]["reviewer"]
    escalation = packet("ESCALATION", COMPLETED, name)
    reviewed(escalation, first, name)
    if len(versions) > 1:
        second = _other_reviewer(name)
        reviewed(packet("SECOND_REVIEW", COMPLETED, second, pair_of=escalation), versions[1], second)


def seed_metrics(
    store: Store,
    n: int,
    *,
    n_runs: int = 4,
    prefix: str = "m",
    seed: int = 0,
    revised: float = 0.08,
    open_audit: float = 0.01,
    start: datetime | None = None,
) -> Seeded:
    """Ground truth for n documents in n_runs runs (seed_ground_truth) and the rows around it; see the
    module docstring for the story each document tells."""
    t0 = start or datetime(2026, 1, 1, tzinfo=UTC)
    rng = random.Random(seed)
    seeded = Seeded()
    per_run = [n // n_runs + (1 if j < n % n_runs else 0) for j in range(n_runs)]
    for j, count in enumerate(per_run):
        run_id = f"{prefix}-run-{j + 1:02d}"
        when = t0 + timedelta(days=14 * j)
        with store.write() as conn:
            conn.execute(sa.insert(runs).values(run_id=run_id, created_at=when - timedelta(hours=1)))
        seed_ground_truth(
            store, count, prefix=f"{prefix}{j}", seed=seed + j, start=when, run_id=run_id, revised=revised
        )
        seeded.runs.append(run_id)
    batch = _Batch(store)
    g = ground_truth.c
    query = (
        sa.select(g.doc_id, g.version, g.gt_id, g.source, g.created_at, g.payload)
        .where(g.doc_id.startswith(prefix, autoescape=True))
        .order_by(g.doc_id, g.version)
    )
    with store.read() as conn:
        current: list[Any] = []
        for row in conn.execute(query.execution_options(yield_per=_CHUNK)):
            if current and current[0].doc_id != row.doc_id:
                _document(batch, seeded, current, rng, open_audit)
                current = []
            current.append(row)
        if current:
            _document(batch, seeded, current, rng, open_audit)
    batch.flush()
    if store.dialect == "postgresql":
        with store.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "ANALYZE documents, outcomes, packets, packet_codes, reviews, ground_truth"
            )
    return seeded
