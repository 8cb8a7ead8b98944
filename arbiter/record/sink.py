"""A ResultStore that writes each document into the review database (the source of truth, one
transaction) and keeps docs/design.md §4's JSON files as mirrors through FileStore."""

from __future__ import annotations

import dataclasses
from typing import Any

from arbiter import atomic
from arbiter.contracts import DocumentRecord, GroundTruthRecord
from arbiter.outputs import Location
from arbiter.record.mirrors import FileStore, index_entry_of
from arbiter.store import Store


class DatabaseResultStore:
    """ResultStore over a Store plus the file mirrors: the database decides, the files follow.

    The database row is committed first; the mirrors are then written from what the database kept (the
    re-based ground-truth version, the packet's live claim state). A crash between the two leaves stale
    mirrors only, which `arbiter export --mirrors` regenerates.
    """

    def __init__(self, store: Store, out_dir: Location | str) -> None:
        self.store = store
        self.files = FileStore(out_dir)

    @property
    def root(self) -> Location:
        """The mirror root (BatchRunner writes run summaries under it)."""
        return self.files.root

    def decided(self, doc_id: str) -> dict[str, Any] | None:
        """What the newest recorded run decided, from the database, as its index entry (summaries count a
        skipped document from this, never from a mirror a crash may have left stale or unwritten)."""
        record = self.store.records.document(doc_id)
        return None if record is None else index_entry_of(record)

    def completed_key(self, doc_id: str) -> str | None:
        """The database's skip key (None after an internal or infrastructure error: redo it). A document the
        database holds whose mirror files are missing or stale (a kill between the commit and the files, so
        the index still names an earlier run) gets them rewritten from the database here, so a resumed run
        that skips it leaves the files saying what the database says."""
        run = self.store.records.latest_run(doc_id)
        key = None if run is None else run.completed_key
        if run is not None and key is not None and not self._mirrored(run.run_id, key, doc_id):
            record = self.store.records.document(doc_id)
            if record is not None:
                self.files.save(record, history=False)
                for version in self.store.ground_truth.history(doc_id):
                    path = self.files.history_path(version)
                    if not path.is_file():
                        atomic.write_json(path, version)
        return key

    def _mirrored(self, run_id: str, key: str, doc_id: str) -> bool:
        """The mirror's index entry names the database's newest run and its decision file is there."""
        entry = self.files.index_entry(doc_id) or {}
        decision = self.files.agent_dir(doc_id) / "arbiter_decision.json"
        return entry.get("run_id") == run_id and entry.get("skip_key") == key and decision.is_file()

    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None:
        return self.store.ground_truth.latest(doc_id)

    def bundle_path(self, doc_id: str) -> str:
        return self.files.bundle_path(doc_id)

    def save(self, record: DocumentRecord) -> None:
        result = self.store.records.record(record)
        packet = self.store.queue.get(result.packet_id) if result.packet_id else None
        mirrored = dataclasses.replace(record, packet=packet, ground_truth=result.ground_truth)
        self.files.save(mirrored)
        if record.ground_truth is not None and result.ground_truth is None:
            # Nothing new (same answer, or an SME's answer stands): the mirror shows the database's newest.
            latest = self.store.ground_truth.latest(record.doc_id)
            if latest is not None:
                atomic.write_json(self.files.ground_truth_path(record.doc_id), latest)
