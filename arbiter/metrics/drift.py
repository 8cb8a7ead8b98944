"""Drift alarms across runs (docs/design.md §9.5): every recorded decision replayed, in the order it was
recorded, through the per-producer CUSUMs of `record/drift.py`; at each run boundary what came before becomes
each producer's own baseline. Documents that could not be verified (an error) and those recorded before the
producer was (migration 0010) are left out: they say nothing of a producer's answers. Those recorded before
their read type was (migration 0015) are left out of the type mix only."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

from arbiter.contracts.sampling_profile import DriftPolicy
from arbiter.metrics.result import DriftAlarm
from arbiter.metrics.sql import cut, of_kind, stream
from arbiter.record.drift import DriftMonitor


def alarms(
    conn: Connection, as_of: datetime | None = None, policy: DriftPolicy | None = None
) -> list[DriftAlarm]:
    """Every drift alarm of the recorded history as of the time, standing ones marked."""
    monitor = DriftMonitor(policy)
    if not monitor.policy.enabled:
        return []
    sql = (
        "SELECT d.run_id, d.producer, d.final_decision, d.risk, d.read_type "
        "FROM documents d JOIN runs r ON r.run_id = d.run_id "
        f"WHERE d.error IS NULL AND d.producer IS NOT NULL AND {of_kind('d.answer_kind')} "
        f"AND {cut('d.created_at', as_of)} "
        "ORDER BY r.created_at, d.run_id, d.created_at, d.id"
    )
    current: str | None = None
    for run_id, producer, decision, risk, read_type in stream(conn, sql, as_of):
        if run_id != current:
            monitor.new_run(run_id)
            current = run_id
        escalated = decision != "AUTO_ACCEPT"
        monitor.observe(
            producer,
            escalated=escalated,
            risk=None if escalated or risk is None else float(risk),
            read_type=read_type,
        )
    return [DriftAlarm(**a.to_dict()) for a in monitor.alarms()]
