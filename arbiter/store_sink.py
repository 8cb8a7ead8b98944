"""A ResultStore that writes each document into the review database (the source of truth, one
transaction) and keeps DESIGN §4's JSON files as mirrors through FileStore."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from arbiter import atomic
from arbiter.contracts import GroundTruthRecord
from arbiter.outputs import DocumentRecord, FileStore
from arbiter.store import Store


class DatabaseResultStore:
    """ResultStore over a Store plus the file mirrors: the database decides, the files follow.

    The database row is committed first; the mirrors are then written from what the database kept (the
    re-based ground-truth version, the packet's live claim state). A crash between the two leaves stale
    mirrors only, which `arbiter export --mirrors` regenerates.
    """

    def __init__(self, store: Store, out_dir: Path) -> None:
        self.store = store
        self.files = FileStore(out_dir)

    @property
    def root(self) -> Path:
        """The mirror root (BatchRunner writes run summaries under it)."""
        return self.files.root

    def index_entry(self, doc_id: str) -> dict[str, Any] | None:
        return self.files.index_entry(doc_id)

    def completed_key(self, doc_id: str) -> str | None:
        return self.store.completed_key(doc_id)

    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None:
        return self.store.latest_ground_truth(doc_id)

    def bundle_path(self, doc_id: str) -> str:
        return self.files.bundle_path(doc_id)

    def save(self, record: DocumentRecord) -> None:
        result = self.store.record_document(record)
        packet = self.store.get_packet(result.packet_id) if result.packet_id else None
        mirrored = dataclasses.replace(record, packet=packet, ground_truth=result.ground_truth)
        self.files.save(mirrored)
        if record.ground_truth is not None and result.ground_truth is None:
            # Nothing new (same answer, or an SME's answer stands): the mirror shows the database's newest.
            latest = self.store.latest_ground_truth(record.doc_id)
            if latest is not None:
                atomic.write_json(self.files.ground_truth_path(record.doc_id), latest)
