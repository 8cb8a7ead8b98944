"""What a run decided, read back from its database: for tests that compare engines, databases and re-runs."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from arbiter.store import Store


def decisions(url: str) -> dict[str, tuple[Any, ...]]:
    """Per document (or item): what its newest run decided and why, attempt by attempt, and the final answer
    (no times, no paths)."""
    store = Store(url)
    try:
        with store.read() as conn:
            ids = [r[0] for r in conn.execute(sa.text("SELECT DISTINCT doc_id FROM documents"))]
        found = {}
        for doc_id in ids:
            record = store.records.document(doc_id)
            assert record is not None
            o = record.outcome
            found[doc_id] = (
                str(o.final_decision),
                o.escalation_reason,
                str(o.stop_reason),
                o.accepted_after_fixes,
                [sorted(i.code for r in a.verifier_results for i in r.issues) for a in o.attempts],
                o.final_classification,
                record.read_type,
            )
        return found
    finally:
        store.dispose()
