"""A ResultStore that writes each document into the review database (the source of truth, one
transaction) and keeps docs/design.md §4's JSON files as mirrors through FileStore."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from arbiter import atomic
from arbiter.contracts import DocumentRecord, GroundTruthRecord
from arbiter.outputs import Location
from arbiter.record.mirrors import FileStore, bundle_expected, classification_expected, index_entry_of, whole
from arbiter.store import Store
from arbiter.store.records import RecordedRun


class DatabaseResultStore:
    """ResultStore over a Store plus the file mirrors: the database decides, the files follow.

    The database row is committed first; the mirrors are then written from what the database kept (the
    re-based ground-truth version, the packet's live claim state), the index entry last, listing them. A crash
    between the two leaves missing or stale files only: a re-run repairs them before it counts the document as
    done (`repair`), and `arbiter export --mirrors` regenerates all but the bundles.
    """

    def __init__(self, store: Store, out_dir: Location | str, *, mirrors: str = "all") -> None:
        self.store = store
        self.files = FileStore(out_dir, mirrors=mirrors, sync=False)  # the database is the durable record
        self._runs: dict[str, RecordedRun] = {}

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
        """The database's skip key (None after an internal or infrastructure error: redo it)."""
        run = self.store.records.latest_run(doc_id)
        if run is not None:
            self._runs[doc_id] = run  # repair() reads it next: one statement per skipped document, not two
        return None if run is None else run.completed_key

    def repair(self, doc_id: str, restore_bundle: Callable[[], bool]) -> bool:
        """Make a recorded document's files say what the database says; True when they are all there, so it
        counts as done. Its index entry names the database's newest run and lists files that are all present:
        nothing to do. Otherwise (a kill between the commit and the files, a lost node, a deleted folder) the
        decision, verifier, packet and ground-truth files and classification.json are rewritten from the
        database, and the bundle by `restore_bundle` (from the bundle cache or the PDF). False when a file
        cannot be rebuilt (the PDF no longer reads; a classification recorded before the database kept it):
        the document is then decided again, never counted as done with files missing."""
        run = self._runs.pop(doc_id, None) or self.store.records.latest_run(doc_id)
        if run is None:
            return False
        entry = self.files.index_entry(doc_id) or {}
        listed = entry.get("files")
        if (
            entry.get("run_id") == run.run_id
            and entry.get("skip_key") == run.skip_key
            and isinstance(listed, list)
            and (self.files.mirrors != "all" or entry.get("mirrors", "all") == "all")
            and self.files.present(listed, entry.get("sizes"))
        ):
            return True
        record = self.store.records.document(doc_id)
        if record is None:
            return False
        bundle = f"bundles/{doc_id}.json"
        if (
            bundle_expected(record)
            and not self.files.intact(bundle, entry.get("sizes"))
            and not restore_bundle()
        ):
            return False
        classification = self.files.agent_dir(doc_id) / "classification.json"
        full = self.files.mirrors == "all"
        if (
            full
            and classification_expected(record)
            and record.primary_raw is None
            and not classification.is_file()
        ):
            return False
        self.files.save(record, history=False)
        for version in self.store.ground_truth.history(doc_id) if full else ():
            path = self.files.history_path(version)
            if not whole(path):  # there and not empty (a crash can leave one renamed but never written)
                atomic.write_json(path, version, sync=False)
        return True

    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None:
        """None: the pipeline's automatic version is re-based on the newest stored one inside the document's
        own write transaction (Records.record), so reading it here first would be a transaction for nothing."""
        return None

    def bundle_path(self, doc_id: str) -> str:
        return self.files.bundle_path(doc_id)

    def save(self, record: DocumentRecord) -> None:
        self._runs.pop(record.doc_id, None)
        result = self.store.records.record(record)
        packet = record.packet
        if result.packet_id and not (
            result.recorded and packet is not None and packet.packet_id == result.packet_id
        ):
            # Not the packet this transaction just queued (a re-sent document): its live claim state is read.
            packet = self.store.queue.get(result.packet_id)
        truth = result.ground_truth
        if record.ground_truth is not None and truth is None:
            # Nothing new (same answer, or an SME's answer stands): the mirror shows the database's newest.
            truth = self.store.ground_truth.latest(record.doc_id)
        mirrored = dataclasses.replace(record, packet=packet, ground_truth=truth)
        self.files.save(mirrored, history=result.ground_truth is not None)
