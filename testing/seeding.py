"""Synthetic review packets inserted in bulk, for stress tests, benchmarks and load experiments (ground truth:
testing.ground_truth).

They go straight into the tables (executemany, thousands a transaction) rather than through
store.records.record, so seeding 100k packets takes seconds; the rows look like the batch run's and the
review's, in Arbiter's own words (testing.vocabulary): the default profile's document types, issue codes from
verifiers/codes.py with their severities, escalation reasons and rules from the profile, real stop reasons.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.contracts import Severity
from arbiter.store import Store
from arbiter.store.models import packet_codes, packets, runs
from arbiter.store.packet_rows import PENDING
from testing.vocabulary import (
    CATALOGUE,
    DOC_TYPES,
    ESCALATIONS,
    POLICY_VERSION,
    REASONS,
    RULE_REASONS,
    Escalation,
)

# The codes seeded packets carry: every escalation story's findings (a filter on one of them selects a share
# of the queue, as on a real one).
CODES: tuple[str, ...] = tuple(dict.fromkeys(c for e in ESCALATIONS for c in e.codes))
_INPUT_FAILURE = REASONS[-1]  # pdf_encrypted: no findings, most urgent
_CHUNK = 2_000


def issue(i: int, code: str) -> dict[str, Any]:
    """An Issue as a verifier reports it: the catalogue's severity and fixability (a fixable one with its fix)."""
    spec = CATALOGUE[code]
    verifier = code.split(".", 1)[0]
    return {
        "issue_id": f"{verifier}-{i:04d}",
        "code": code,
        "verifier": verifier,
        "severity": spec.severity.value,
        "message": spec.meaning,
        "auto_fixable": spec.auto_fixable,
        "fix": [{"op": "replace", "path": "/segments/0/segment_page_count", "value": 1}]
        if spec.auto_fixable
        else None,
        "location": {"segment_index": 1, "document_type": None, "page": 1, "path": "/segments/0"},
        "source": "rule",
        "highlight": None,
    }


def priority_of(codes: list[str], input_failed: bool = False) -> int:
    """As arbiter.record.packets.priority_of: 0 for a blocker (or an unreadable PDF), 1 for a major, else 2."""
    severities = {CATALOGUE[c].severity for c in codes}
    if input_failed or Severity.BLOCKER in severities:
        return 0
    return 1 if Severity.MAJOR in severities else 2


def _packet_story(rng: random.Random) -> tuple[str, list[str]]:
    """An escalation reason and its codes (worst first): one of the stories, sometimes with one more finding;
    now and then a PDF that could not be read (no findings)."""
    if rng.random() < 0.05:
        return _INPUT_FAILURE, []
    story: Escalation = rng.choice(ESCALATIONS)
    codes = list(story.codes)
    if rng.random() < 0.5:
        extra = rng.choice(CODES)
        if extra not in codes:
            codes.append(extra)
    order = {Severity.BLOCKER: 0, Severity.MAJOR: 1, Severity.MINOR: 2}
    return story.reason, sorted(codes, key=lambda c: order[CATALOGUE[c].severity])


def _payload(
    packet_id: str,
    doc_id: str,
    priority: int,
    reason: str,
    codes: list[str],
    doc_type: str,
    created: str,
    run_id: str,
) -> dict[str, Any]:
    issues = [issue(i, c) for i, c in enumerate(codes, 1)]
    return {
        "packet_id": packet_id,
        "doc_id": doc_id,
        "pdf_filename": f"{doc_id}.pdf",
        "pdf_path": f"/docs/{doc_id}.pdf",
        "pdf_sha256": "0" * 64,
        "document_bundle_path": None,
        "total_pages": 4,
        "primary_agent_classification": {
            "dominant_type": doc_type,
            "segments": [],
            "document_mixture": [],
        },
        "final_classification": None,
        "v5_decision": None,
        "escalation_reason": reason,
        "escalation_message": RULE_REASONS.get(reason, "The PDF could not be read."),
        "total_issues": len(issues),
        "issues_summary": issues,
        "retry_log": [],
        "priority": priority,
        "created_at": created,
        "updated_at": created,
        "run_id": run_id,
        "policy_version": POLICY_VERSION,
    }


def seed_packets(
    store: Store,
    n: int,
    *,
    run_id: str = "synthetic",
    prefix: str = "syn",
    seed: int = 0,
    start: datetime | None = None,
) -> list[str]:
    """Insert n PENDING escalation packets with varied age, reason, type and codes (priority follows the
    codes' severities, as in a run); returns their ids."""
    rng = random.Random(seed)
    t0 = start or datetime(2026, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    with store.write() as conn:
        conn.execute(sa.insert(runs).values(run_id=run_id, created_at=t0))
    for lo in range(0, n, _CHUNK):
        rows: list[dict[str, Any]] = []
        code_rows: list[dict[str, str]] = []
        for i in range(lo, min(n, lo + _CHUNK)):
            packet_id, doc_id = f"{prefix}-{i:07d}", f"{prefix}-doc-{i:07d}"
            created = t0 + timedelta(seconds=rng.randrange(0, 90 * 86_400))
            reason, codes = _packet_story(rng)
            priority = priority_of(codes, input_failed=reason == _INPUT_FAILURE)
            doc_type = rng.choice(DOC_TYPES)
            rows.append(
                {
                    "packet_id": packet_id,
                    "doc_id": doc_id,
                    "run_id": run_id,
                    "priority": priority,
                    "escalation_reason": reason,
                    "doc_type": doc_type,
                    "top_codes": ",".join(codes[:3]),
                    "status": PENDING,
                    "created_at": created,
                    "updated_at": created,
                    "payload": _payload(
                        packet_id, doc_id, priority, reason, codes, doc_type, created.isoformat(), run_id
                    ),
                }
            )
            code_rows.extend({"packet_id": packet_id, "code": c} for c in codes)
            ids.append(packet_id)
        with store.write() as conn:
            conn.execute(sa.insert(packets), rows)
            conn.execute(sa.insert(packet_codes), code_rows)
    if store.dialect == "postgresql":
        with store.engine.connect() as conn:  # fresh statistics, as autovacuum would have after a real run
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "ANALYZE packets, packet_codes"
            )
    return ids
