"""The review store: one object the batch run, the CLI and the review app share (docs/design.md §8.1)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from arbiter import atomic
from arbiter.contracts import GroundTruthRecord, PacketKind
from arbiter.store.audit import AuditMixin
from arbiter.store.db import retried
from arbiter.store.models import ground_truth, packets
from arbiter.store.queue import SUPERSEDED, packet_from_row
from arbiter.store.records import RecordsMixin

_BATCH = 500


class Store(RecordsMixin, AuditMixin):
    """Store(url=None): url, else env DATABASE_URL, else sqlite:///output/arbiter.db.

    Call migrate() once before use (idempotent). Thread-safe: every method opens its own transaction.
    """

    def export_mirrors(self, out_dir: Path | str) -> dict[str, int]:
        """Regenerate docs/design.md §4's packet and ground-truth JSON files from the database (atomic writes):
        sme_packets/sme_packet_{doc}.json (the document's newest escalation packet; blind samples stay in the
        database), ground_truth/gt_{doc}.json
        (newest version), ground_truth/history/{doc}/v{n:04d}.json (every version), and each document's
        agent_outputs/{doc}/ decision files and index/{doc}.json from its newest recorded run."""
        from arbiter.record.mirrors import FileStore

        files = FileStore(Path(out_dir))
        counts = {"packets": 0, "ground_truth_docs": 0, "ground_truth_versions": 0}
        with self.read() as conn:
            newest: dict[str, Any] = {}
            query = (
                sa.select(packets)
                .where(packets.c.status != SUPERSEDED, packets.c.kind == PacketKind.ESCALATION.value)
                .order_by(packets.c.doc_id, packets.c.created_at)
            )
            for row in conn.execute(query.execution_options(yield_per=_BATCH)):
                newest[row._mapping["doc_id"]] = row
            for doc_id, row in newest.items():
                atomic.write_json(files.packet_path(doc_id), packet_from_row(row))
                counts["packets"] += 1
            last: GroundTruthRecord | None = None
            gt_query = sa.select(ground_truth.c.payload).order_by(
                ground_truth.c.doc_id, ground_truth.c.version
            )
            for payload in conn.execute(gt_query.execution_options(yield_per=_BATCH)).scalars():
                record = GroundTruthRecord.model_validate(payload)
                if last is not None and last.doc_id != record.doc_id:
                    atomic.write_json(files.ground_truth_path(last.doc_id), last)
                    counts["ground_truth_docs"] += 1
                atomic.write_json(files.history_path(record), record)
                counts["ground_truth_versions"] += 1
                last = record
            if last is not None:
                atomic.write_json(files.ground_truth_path(last.doc_id), last)
                counts["ground_truth_docs"] += 1
        # Every document's decision files and index entry, from its newest recorded run (a document the
        # database holds but whose files a crash never wrote gets them here).
        counts["documents"] = 0
        for doc_id in self.recorded_doc_ids():
            stored = self.document_record(doc_id)
            if stored is not None:
                files.save(stored, history=False)
                counts["documents"] += 1
        return counts


# Every public operation runs through Database.with_retries: a transient fault (connection lost, server
# restarting, SQLite locked) is tried again on a fresh connection, then DatabaseUnavailable.
_NOT_RETRIED = frozenset(
    {"write", "read", "dispose", "alembic_config", "migrate", "downgrade", "with_retries"}
    | {"unavailable_message", "where"}
)


def _retry_operations(cls: type) -> None:
    for name in dir(cls):
        if name.startswith("_") or name in _NOT_RETRIED:
            continue
        attr = inspect.getattr_static(cls, name)
        if inspect.isfunction(attr):
            setattr(cls, name, retried(attr))


_retry_operations(Store)
