"""Where results go (docs/design.md §4). `ResultStore` is the seam: the file mirror below today, the database later.

Every file is written atomically. A document's `index/{doc_id}.json` entry is written last: it is the
commit marker a resumed run trusts, so a run killed mid-document simply redoes that document, and
because every path is deterministic the redo replaces files instead of duplicating them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from arbiter import atomic
from arbiter.contracts import DocumentBundle, GroundTruthRecord, SMEPacket, VerificationOutcome

VERIFIER_FILES = {
    "V1": "v1_schema_validation.json",
    "V2": "v2_consistency_check.json",
    "V3": "v3_trap_detection.json",
    "V4": "v4_evidence_quality.json",
}


@dataclass(frozen=True)
class DocumentRecord:
    """Everything one document produced in one run."""

    doc_id: str
    run_id: str
    skip_key: str
    pdf_path: str
    outcome: VerificationOutcome
    primary_raw: str | None
    bundle: DocumentBundle | None
    packet: SMEPacket | None
    ground_truth: GroundTruthRecord | None
    error: str | None = None
    samples: tuple[SMEPacket, ...] = ()  # blind audit / second-review packets (database only, no mirror)


class ResultStore(Protocol):
    def completed_key(self, doc_id: str) -> str | None: ...
    def latest_ground_truth(self, doc_id: str) -> GroundTruthRecord | None: ...
    def bundle_path(self, doc_id: str) -> str: ...
    def save(self, record: DocumentRecord) -> None: ...


class FileStore:
    """The portable JSON files of docs/design.md §4 under one output root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def bundle_path(self, doc_id: str) -> str:
        return str(self.root / "bundles" / f"{doc_id}.json")

    def agent_dir(self, doc_id: str) -> Path:
        return self.root / "agent_outputs" / doc_id

    def packet_path(self, doc_id: str) -> Path:
        return self.root / "sme_packets" / f"sme_packet_{doc_id}.json"

    def ground_truth_path(self, doc_id: str) -> Path:
        return self.root / "ground_truth" / f"gt_{doc_id}.json"

    def history_path(self, record: GroundTruthRecord) -> Path:
        return self.root / "ground_truth" / "history" / record.doc_id / f"v{record.version:04d}.json"

    def index_path(self, doc_id: str) -> Path:
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

    def save(self, record: DocumentRecord, *, history: bool = True) -> None:
        """Every file of the record; history=False leaves ground_truth/history/ alone (mirrors rebuilt from the
        database write every version there themselves)."""
        doc = record.doc_id
        if record.bundle is not None:
            atomic.write_json(Path(self.bundle_path(doc)), record.bundle)
        agent = self.agent_dir(doc)
        if record.primary_raw is not None:
            atomic.write_text(agent / "classification.json", record.primary_raw)
        if record.outcome.final_classification is not None and len(record.outcome.attempts) > 1:
            atomic.write_json(agent / "classification_fixed.json", record.outcome.final_classification)
        for name, filename in VERIFIER_FILES.items():
            attempts = [
                {"attempt": a.attempt, "fingerprint": a.fingerprint, "result": r.model_dump(mode="json")}
                for a in record.outcome.attempts
                for r in a.verifier_results
                if r.verifier == name
            ]
            if attempts:
                atomic.write_json(agent / filename, {"doc_id": doc, "verifier": name, "attempts": attempts})
        atomic.write_json(agent / "arbiter_decision.json", record.outcome)
        if record.packet is not None:
            atomic.write_json(self.packet_path(doc), record.packet)
        if record.ground_truth is not None:
            if history:
                atomic.write_json(self.history_path(record.ground_truth), record.ground_truth)
            atomic.write_json(self.ground_truth_path(doc), record.ground_truth)
        atomic.write_json(
            self.index_path(doc),
            {
                "doc_id": doc,
                "skip_key": record.skip_key,
                "run_id": record.run_id,
                "pdf_path": record.pdf_path,
                "final_decision": str(record.outcome.final_decision),
                "escalation_reason": record.outcome.escalation_reason,
                "accepted_after_fixes": record.outcome.accepted_after_fixes,
                "semantic_checks": record.outcome.semantic_checks.value,
                "error": record.error,
            },
        )
