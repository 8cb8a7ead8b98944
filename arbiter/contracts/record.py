"""What one document produced in one run: the unit the run hands to the store and the mirrors write out."""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.contracts.bundle import DocumentBundle
from arbiter.contracts.review import DEFAULT_KIND, GroundTruthRecord, SMEPacket
from arbiter.contracts.verification import VerificationOutcome


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
    risk: float | None = None  # an accept's audit risk score (record/risk.py); None for an escalation
    audit_probability: float | None = None  # the accept's inclusion probability in the audit sample
    producer: str | None = None  # who classified it (record/drift.py's stratum), for drift alarms across runs
    read_type: str | None = None  # the type the content check's page reader reads it as (drift's type mix)
    answer_kind: str = DEFAULT_KIND  # arbiter/kinds: what kind of answer the document's run checked
