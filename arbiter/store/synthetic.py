"""Synthetic packets inserted in bulk, for the stress test, the benchmark and load experiments.

They go straight into the tables (executemany, thousands a transaction) rather than through
record_document, so seeding 100k packets takes seconds; the rows look like the batch run's.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.store.models import packet_codes, packets, runs
from arbiter.store.queue import PENDING
from arbiter.store.store import Store

REASONS = ("major_non_fixable", "blocker_present", "retry_limit", "pdf_unreadable", "evidence_missing")
DOC_TYPES = ("discharge_summary", "lab_report", "radiology_report", "progress_note", "operative_note")
CODES = (
    "V2_PAGE_COUNT",
    "V2_MIXTURE_SUM",
    "V3_TRAP_HEADER",
    "V4_SNIPPET_NOT_FOUND",
    "V1_SCHEMA",
    "V3_FAX_COVER",
)
_CHUNK = 2_000


def _payload(
    packet_id: str, doc_id: str, priority: int, reason: str, created: str, run_id: str
) -> dict[str, Any]:
    return {
        "packet_id": packet_id,
        "doc_id": doc_id,
        "pdf_filename": f"{doc_id}.pdf",
        "pdf_path": f"/docs/{doc_id}.pdf",
        "pdf_sha256": "0" * 64,
        "document_bundle_path": None,
        "total_pages": 4,
        "primary_agent_classification": {
            "dominant_type": "lab_report",
            "segments": [],
            "document_mixture": [],
        },
        "final_classification": None,
        "v5_decision": None,
        "escalation_reason": reason,
        "escalation_message": "Escalated for review.",
        "total_issues": 0,
        "issues_summary": [],
        "retry_log": [],
        "priority": priority,
        "created_at": created,
        "updated_at": created,
        "run_id": run_id,
        "policy_version": "synthetic",
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
    """Insert n PENDING packets with varied priority, age, reason, type and codes; returns their ids."""
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
            priority, reason = rng.choice((0, 1, 1, 2, 2, 2)), rng.choice(REASONS)
            codes = rng.sample(CODES, rng.randint(1, 3))
            rows.append(
                {
                    "packet_id": packet_id,
                    "doc_id": doc_id,
                    "run_id": run_id,
                    "priority": priority,
                    "escalation_reason": reason,
                    "doc_type": rng.choice(DOC_TYPES),
                    "top_codes": ",".join(codes),
                    "status": PENDING,
                    "created_at": created,
                    "updated_at": created,
                    "payload": _payload(packet_id, doc_id, priority, reason, created.isoformat(), run_id),
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
