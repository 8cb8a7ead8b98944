"""Gemini batch jobs' records: output/llm_batches/<job id>.json says what was submitted (request keys, purposes,
documents, schemas; never prompt text) and the job's last known state. Read and written by llm/batch.py.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from arbiter.atomic import write_json

log = logging.getLogger(__name__)

DEFAULT_RECORDS_DIR = Path("output/llm_batches")

JobStatus = Literal["pending", "succeeded", "failed"]
_SUCCEEDED = {"JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED"}
_FAILED = {"JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class BatchJobRecord:
    """output/llm_batches/<job id>.json: what was submitted (keys, purposes, documents, schemas), never prompts."""

    name: str
    model: str
    state: str
    created_at: str
    updated_at: str
    requests: list[dict[str, Any]] = field(default_factory=list)  # key, purpose, doc_id, schema (schema id)
    schemas: dict[str, Any] = field(default_factory=dict)  # schema id -> response schema, to validate answers
    counts: dict[str, int] = field(default_factory=dict)  # requests per purpose
    documents: int = 0
    error: str | None = None
    collected: dict[str, Any] | None = None  # summary of the last collect()

    @property
    def status(self) -> JobStatus:
        return job_status(self.state)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchJobRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def job_status(state: str) -> JobStatus:
    """pending for queued/running/paused/unknown states, succeeded (also partially), failed otherwise."""
    if state in _SUCCEEDED:
        return "succeeded"
    if state in _FAILED:
        return "failed"
    return "pending"


def record_path(job_name: str, records_dir: Path | None = None) -> Path:
    """Where a job's record lives: the last part of its name ("batches/abc" -> abc.json)."""
    job_id = _UNSAFE.sub("_", job_name.rstrip("/").rsplit("/", 1)[-1]).lstrip(".") or "job"
    return (records_dir or DEFAULT_RECORDS_DIR) / f"{job_id}.json"


def load_record(job_name: str, records_dir: Path | None = None) -> BatchJobRecord | None:
    path = record_path(job_name, records_dir)
    try:
        return BatchJobRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        log.warning("batch job record %s unreadable (%s)", path.name, type(exc).__name__)
        return None


def resolve_job_name(job: str, records_dir: Path | None = None) -> str:
    """Accept a full job name ("batches/abc") or the id of a recorded job ("abc")."""
    if "/" in job:
        return job
    record = load_record(job, records_dir)
    return record.name if record is not None else f"batches/{job}"


def refresh_record(job_name: str, job: Any, records_dir: Path | None) -> BatchJobRecord:
    name = job.name or job_name
    record = load_record(name, records_dir)
    if record is None:
        now = utc_now()
        model = str(job.model or "").removeprefix("models/")
        record = BatchJobRecord(name=name, model=model, state="", created_at=now, updated_at=now)
    record.state = job_state(job)
    record.updated_at = utc_now()
    error = getattr(job, "error", None)
    record.error = f"code {error.code}" if error is not None and error.code is not None else None
    return record


def save_record(record: BatchJobRecord, records_dir: Path | None) -> Path:
    path = record_path(record.name, records_dir)
    write_json(path, asdict(record))
    return path


def job_state(job: Any) -> str:
    state = getattr(job, "state", None)
    return str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
