"""The JSON mirrors of docs/design.md §4 (`FileStore`), written from what the database holds: per document by the
database sink (arbiter.record.sink) as a run goes, or all at once by `export_mirrors`. `ResultStore` is what a
pipeline needs of where its results go.

Every file is written atomically. A document's `index/{doc_id}.json` entry is written last: it is the
commit marker a resumed run trusts, so a run killed mid-document simply redoes that document, and
because every path is deterministic the redo replaces files instead of duplicating them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from arbiter import atomic
from arbiter.contracts import DocumentBundle, DocumentRecord, FinalDecision, GroundTruthRecord
from arbiter.outputs import Location, location

if TYPE_CHECKING:
    from arbiter.store import Store

# What a document's mirror holds: "all" the files of docs/design.md §4 (the default), or only "bundles" (its
# bundle and index entry; everything else is in the database, and `arbiter export --mirrors` writes the rest).
# A file costs an inode: 15–25 µs of kernel CPU in this project's VMs, up to 700 µs after many deletions nearby
# (ext4 without a journal skips recently freed inodes), so a batch that reads its results from the database can
# skip them.
MIRROR_MODES = ("all", "bundles")

VERIFIER_FILES = {
    "V1": "v1_schema_validation.json",
    "V2": "v2_consistency_check.json",
    "V3": "v3_trap_detection.json",
    "V4": "v4_evidence_quality.json",
}


def bundle_json(bundle: DocumentBundle) -> str:
    """A bundle mirror's text (and the bundle cache's): compact JSON. Programs read bundles (the review app, the
    what-if, re-verification), and a 30-page one indented was 650 KB and 5.5 ms to write out; compact it is
    390 KB and 3.4 ms. The decision, verifier, packet and ground-truth files stay indented for people."""
    return bundle.model_dump_json() + "\n"


class ResultStore(Protocol):
    def completed_key(self, doc_id: str) -> str | None: ...
    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None: ...
    def bundle_path(self, doc_id: str) -> str: ...
    def save(self, record: DocumentRecord) -> None: ...
    def repair(self, doc_id: str, restore_bundle: Callable[[], bool]) -> bool: ...


class FileStore:
    """The portable JSON files of docs/design.md §4 under one output root.

    `arbiter run` writes them only as mirrors of the database (arbiter.record.sink). Used on its own as a
    pipeline's ResultStore (fixture recorders, benchmarks, tests without a database) it answers
    completed_key from its index files; a batch run never does (BatchRunner needs a store that answers
    `decided` from the database)."""

    def __init__(self, root: Location | str, *, mirrors: str = "all", sync: bool = True) -> None:
        self.root: Location = location(root)
        self.mirrors = check_mirrors(mirrors)
        self.sync = sync  # False: a database's mirrors (arbiter.record.sink), not fsynced; see `save`

    def bundle_path(self, doc_id: str) -> str:
        return str(self.root / "bundles" / f"{doc_id}.json")

    def agent_dir(self, doc_id: str) -> Location:
        return self.root / "agent_outputs" / doc_id

    def packet_path(self, doc_id: str) -> Location:
        return self.root / "sme_packets" / f"sme_packet_{doc_id}.json"

    def ground_truth_path(self, doc_id: str) -> Location:
        return self.root / "ground_truth" / f"gt_{doc_id}.json"

    def history_path(self, record: GroundTruthRecord) -> Location:
        return self.root / "ground_truth" / "history" / record.doc_id / f"v{record.version:04d}.json"

    def index_path(self, doc_id: str) -> Location:
        return self.root / "index" / f"{doc_id}.json"

    def completed_key(self, doc_id: str) -> str | None:
        path = self.index_path(doc_id)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        key = entry.get("skip_key") if isinstance(entry, dict) else None
        return key if isinstance(key, str) else None

    def index_entry(self, doc_id: str) -> dict[str, Any] | None:
        """The mirror's index entry as the file says it (None when missing or unreadable)."""
        try:
            entry = json.loads(self.index_path(doc_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None:
        path = self.ground_truth_path(doc_id)
        if not path.is_file():
            return None
        try:
            return GroundTruthRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return None

    def present(self, files: list[Any], sizes: Any = None) -> bool:
        """Every listed file (relative to the root, as an index entry's `files`) is there, none of them empty,
        and each as long as the entry's `sizes` says where it says: a file a crash left empty or short (it was
        renamed into place before the kernel wrote it out) is missing."""
        return all(self.intact(f, sizes) for f in files)

    def intact(self, relative: Any, sizes: Any = None) -> bool:
        """One file (relative to the root) is there, not empty, and as long as `sizes` says where it says."""
        known = sizes.get(relative) if isinstance(sizes, dict) else None
        return isinstance(relative, str) and _inside(relative) and whole(self.root / relative, known)

    def save(self, record: DocumentRecord, *, history: bool = True) -> None:
        """Every file of the record; history=False leaves ground_truth/history/ alone (mirrors rebuilt from the
        database write every version there themselves). The index entry, written last, lists the files and the
        size of each it wrote. With mirrors="bundles" only the bundle and the index entry are written.

        Without `sync` no file is fsynced: the database commit before them is the durable record, and after a
        crash a file renamed into place but never written out is empty or short, which the sizes show a re-run
        (`present`), so it is rebuilt. The fsyncs cost a short document a sixth of its CPU (docs/design.md §4)."""
        doc = record.doc_id
        sizes: dict[str, int] = {}
        if record.bundle is not None:
            self._put(sizes, f"bundles/{doc}.json", bundle_json(record.bundle))
        if self.mirrors == "all":
            self._decision_files(record, sizes, history=history)
        files = mirror_files(record, self.mirrors)
        entry = index_entry_of(record) | {"files": files, "sizes": self._sizes(files, sizes)}
        if self.mirrors != "all":
            entry["mirrors"] = self.mirrors  # a later run asked for every file writes the rest
        atomic.write_json(self.index_path(doc), entry, sync=self.sync)

    def _sizes(self, files: list[str], written: dict[str, int]) -> dict[str, int]:
        """Each listed file's size, in the listing's order: as just written, else (a bundle its ingestion worker
        or a repair wrote) as a local folder has it now; the index entry itself has none."""
        sizes: dict[str, int] = {}
        for relative in files[:-1]:
            if relative in written:
                sizes[relative] = written[relative]
            elif isinstance(self.root, Path):
                with contextlib.suppress(OSError):
                    sizes[relative] = os.stat(self.root / relative).st_size
        return sizes

    def _put(self, sizes: dict[str, int], relative: str, data: Any) -> None:
        """Write one mirror file (text as it is, anything else as indented JSON) and note its size."""
        path = self.root / relative
        if isinstance(data, str):
            sizes[relative] = atomic.write_text(path, data, sync=self.sync)
        else:
            sizes[relative] = atomic.write_json(path, data, sync=self.sync)

    def _decision_files(self, record: DocumentRecord, sizes: dict[str, int], *, history: bool) -> None:
        doc = record.doc_id
        agent = f"agent_outputs/{doc}"
        if record.primary_raw is not None:
            self._put(sizes, f"{agent}/classification.json", record.primary_raw)
        if _fixed(record):
            self._put(sizes, f"{agent}/classification_fixed.json", record.outcome.final_classification)
        for name, filename in VERIFIER_FILES.items():
            attempts = [
                {"attempt": a.attempt, "fingerprint": a.fingerprint, "result": r.model_dump(mode="json")}
                for a in record.outcome.attempts
                for r in a.verifier_results
                if r.verifier == name
            ]
            if attempts:
                self._put(
                    sizes, f"{agent}/{filename}", {"doc_id": doc, "verifier": name, "attempts": attempts}
                )
        self._put(sizes, f"{agent}/arbiter_decision.json", record.outcome)
        if record.packet is not None:
            self._put(sizes, f"sme_packets/sme_packet_{doc}.json", record.packet)
        if record.ground_truth is not None:
            latest = f"ground_truth/gt_{doc}.json"
            if history:
                kept = self.history_path(record.ground_truth)
                written = atomic.write_json(kept, record.ground_truth, sync=self.sync)
                # The newest version is the same bytes: one more name for the history file (a hard link costs
                # no new file), put in place atomically; a copy where the two cannot share a file.
                if atomic.link_over(kept, self.root / latest):
                    sizes[latest] = written
                else:
                    self._put(sizes, latest, record.ground_truth)
            else:
                self._put(sizes, latest, record.ground_truth)

    def repair(self, doc_id: str, restore_bundle: Callable[[], bool]) -> bool:
        """Used as a pipeline's ResultStore without a database: the index entry's files are all there, or only
        the bundle was missing and `restore_bundle` wrote it again. False: a file only a re-run can write."""
        entry = self.index_entry(doc_id) or {}
        listed = entry.get("files")
        if not isinstance(listed, list):
            return False
        bundle = f"bundles/{doc_id}.json"
        if bundle in listed and not self.intact(bundle, entry.get("sizes")) and not restore_bundle():
            return False
        return self.present(listed, entry.get("sizes"))


def _fixed(record: DocumentRecord) -> bool:
    return record.outcome.final_classification is not None and len(record.outcome.attempts) > 1


def bundle_expected(record: DocumentRecord) -> bool:
    """Whether the document has a bundle mirror: it carries one, its escalation points at one, or it was
    accepted (an accepted document was read). A document that could not be read has none."""
    if record.bundle is not None:
        return True
    if record.packet is not None:
        return record.packet.document_bundle_path is not None
    return record.outcome.final_decision != FinalDecision.ESCALATE_TO_SME


def classification_expected(record: DocumentRecord) -> bool:
    """Whether the document has a classification.json: the primary answered (it was verified at least once)."""
    return record.primary_raw is not None or bool(record.outcome.attempts)


def check_mirrors(mirrors: str) -> str:
    """A mirror mode of MIRROR_MODES, or a ConfigError that names them."""
    if mirrors not in MIRROR_MODES:
        from arbiter.errors import ConfigError

        raise ConfigError(f"Unknown mirror mode {mirrors!r}; choose {' or '.join(MIRROR_MODES)}.")
    return mirrors


def mirror_files(record: DocumentRecord, mirrors: str = "all") -> list[str]:
    """The files `FileStore.save` writes for the record (ground-truth history aside), relative to the root,
    the index entry last: what a re-run checks before it counts the document as done."""
    doc = record.doc_id
    agent = f"agent_outputs/{doc}"
    files = [f"bundles/{doc}.json"] if bundle_expected(record) else []
    if mirrors == "bundles":
        return [*files, f"index/{doc}.json"]
    if record.primary_raw is not None:
        files.append(f"{agent}/classification.json")
    if _fixed(record):
        files.append(f"{agent}/classification_fixed.json")
    verifiers = {r.verifier for a in record.outcome.attempts for r in a.verifier_results}
    files += [f"{agent}/{name}" for v, name in VERIFIER_FILES.items() if v in verifiers]
    files.append(f"{agent}/arbiter_decision.json")
    if record.packet is not None:
        files.append(f"sme_packets/sme_packet_{doc}.json")
    if record.ground_truth is not None:
        files.append(f"ground_truth/gt_{doc}.json")
    return [*files, f"index/{doc}.json"]


def whole(path: Location, size: Any = None) -> bool:
    """A file is there (no folder), not empty, and `size` bytes long where a size is known."""
    try:
        got = path.stat()
    except (OSError, ValueError):
        return False
    return S_ISREG(got.st_mode) and got.st_size > 0 and (type(size) is not int or got.st_size == size)


def _inside(relative: str) -> bool:
    """A listed path that stays under the root (an index entry is a file: never trusted to point elsewhere)."""
    parts = relative.split("/")
    return bool(relative) and not relative.startswith("/") and ".." not in parts and "\\" not in relative


def index_entry_of(record: DocumentRecord) -> dict[str, Any]:
    """A document's index/{doc_id}.json entry: what its run decided, in brief."""
    return {
        "doc_id": record.doc_id,
        "skip_key": record.skip_key,
        "run_id": record.run_id,
        "pdf_path": record.pdf_path,
        "final_decision": str(record.outcome.final_decision),
        "escalation_reason": record.outcome.escalation_reason,
        "accepted_after_fixes": record.outcome.accepted_after_fixes,
        "semantic_checks": record.outcome.semantic_checks.value,
        "error": record.error,
    }


def export_mirrors(store: Store, out_dir: Location | str) -> dict[str, int]:
    """Regenerate the packet and ground-truth JSON files from the database (atomic writes):
    sme_packets/sme_packet_{doc}.json (the document's newest escalation packet; blind samples stay in the
    database), ground_truth/gt_{doc}.json (newest version), ground_truth/history/{doc}/v{n:04d}.json (every
    version), and each document's agent_outputs/{doc}/ decision files and index/{doc}.json from its newest
    recorded run (a document the database holds but whose files a crash never wrote gets them here)."""
    files = FileStore(out_dir)
    counts = {"packets": 0, "ground_truth_docs": 0, "ground_truth_versions": 0, "documents": 0}
    for packet in store.queue.newest_escalations():
        atomic.write_json(files.packet_path(packet.doc_id), packet)
        counts["packets"] += 1
    last: GroundTruthRecord | None = None
    for record in store.ground_truth.every_version():
        if last is not None and last.doc_id != record.doc_id:
            atomic.write_json(files.ground_truth_path(last.doc_id), last)
            counts["ground_truth_docs"] += 1
        atomic.write_json(files.history_path(record), record)
        counts["ground_truth_versions"] += 1
        last = record
    if last is not None:
        atomic.write_json(files.ground_truth_path(last.doc_id), last)
        counts["ground_truth_docs"] += 1
    for doc_id in store.records.doc_ids():
        stored = store.records.document(doc_id)
        if stored is not None:
            files.save(stored, history=False)
            counts["documents"] += 1
    return counts
