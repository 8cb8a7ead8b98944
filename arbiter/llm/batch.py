"""Batch mode for nightly runs, as a cache filler: DeferringBackend queues every request a run makes, submit()
sends them as one Gemini Batch API job (half price), collect() stores the answers in the disk cache by request
key, so re-running the pipeline answers from the cache with no online calls. Job records (batch_records.py) hold
no prompt text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.genai import types

from arbiter.contracts import TokenUsage
from arbiter.llm.batch_records import (
    BatchJobRecord,
    JobStatus,
    job_state,
    job_status,
    load_record,
    record_path,
    refresh_record,
    resolve_job_name,
    save_record,
    utc_now,
)
from arbiter.llm.cache import DiskCache
from arbiter.llm.catalogue import ModelRow
from arbiter.llm.client import parse_answer
from arbiter.llm.config import LLMSettings
from arbiter.llm.gemini import completion_from_response, generation_config, make_genai_client, translate_error
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion, offline
from arbiter.net.switch import require_network

log = logging.getLogger(__name__)

KEY_FIELD = "arbiter_key"  # inlined request metadata: the answer comes back tagged with it
MAX_INLINE_BYTES = 20_000_000  # the Batch API takes at most 20 MB of inline requests per job (UTF-8 bytes)
_JOB_WRAPPING_BYTES = 1_000  # the job around the requests: display name, model, field names


class BatchCollector:
    """Thread-safe set of deferred requests, unique by request key, in the order first seen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[str, LLMRequest] = {}

    def add(self, request: LLMRequest) -> str:
        key = request.key()
        with self._lock:
            self._requests.setdefault(key, request)
        return key

    def items(self) -> list[tuple[str, LLMRequest]]:
        with self._lock:
            return list(self._requests.items())

    def __len__(self) -> int:
        with self._lock:
            return len(self._requests)


class DeferringBackend:
    """An LLMBackend that answers nothing: it queues the request and raises LLMError("deferred").

    The client asks the cache first, so requests already answered by a collected batch never get here.
    """

    name = "gemini-batch"

    def __init__(self, collector: BatchCollector) -> None:
        self.collector = collector

    def complete(self, request: LLMRequest) -> RawCompletion:
        self.collector.add(request)
        raise LLMError(
            "deferred",
            "This check was queued for the nightly batch job; it will be answered once the job is collected.",
        )


@dataclass(frozen=True)
class ItemFailure:
    """One request the job did not answer usably; it is not cached, so it stays pending."""

    key: str
    kind: str
    message: str
    purpose: str | None = None
    doc_id: str | None = None


@dataclass
class CollectResult:
    job_name: str
    state: str
    status: JobStatus
    message: str
    stored: list[str] = field(default_factory=list)  # request keys now in the cache
    failures: list[ItemFailure] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # submitted keys with no answer in the results
    usage: TokenUsage = field(default_factory=TokenUsage)


def inline_request_json(key: str, request: LLMRequest, row: ModelRow | None = None) -> dict[str, Any]:
    """One inlined request as the REST body of batchGenerateContent carries it (JSON wrapping included)."""
    config = generation_config(request, row)
    generation = config.model_dump(
        mode="json",
        by_alias=True,
        exclude_none=True,
        exclude={"system_instruction", "automatic_function_calling"},
    )
    body: dict[str, Any] = {
        "request": {
            "contents": [{"role": "user", "parts": [{"text": request.prompt}]}],
            "generationConfig": generation,
        },
        "metadata": {KEY_FIELD: key},
    }
    if request.system:
        body["request"]["systemInstruction"] = {"role": "user", "parts": [{"text": request.system}]}
    return body


def inline_job_bytes(items: list[tuple[str, LLMRequest]], row: ModelRow | None = None) -> int:
    """The size of a job's inline requests in UTF-8 bytes, each with its JSON wrapping, as the 20 MB limit counts."""
    size = _JOB_WRAPPING_BYTES
    for key, request in items:
        text = json.dumps(inline_request_json(key, request, row), ensure_ascii=False)
        size += len(text.encode("utf-8")) + 1  # and the comma between requests
    return size


def submit(
    collector: BatchCollector,
    settings: LLMSettings,
    *,
    genai_client: Any = None,
    records_dir: Path | None = None,
    display_name: str | None = None,
) -> BatchJobRecord:
    """Send every collected request as one inline Batch API job and write its record; returns the record."""
    items = collector.items()
    if not items:
        raise LLMError("config", "There are no deferred requests to submit as a batch job.")
    models = sorted({request.model for _, request in items})
    if len(models) > 1:
        raise LLMError("config", f"One batch job takes one model; the requests name {', '.join(models)}.")
    size = inline_job_bytes(items, settings.row(models[0]))
    if size > MAX_INLINE_BYTES:
        raise LLMError(
            "config",
            f"The deferred requests ({size / 1_000_000:.1f} MB as sent) exceed the Batch API's inline limit "
            f"of {MAX_INLINE_BYTES // 1_000_000} MB; run fewer documents per batch.",
        )
    client = _client(settings, genai_client)
    if getattr(client, "vertexai", False):
        raise LLMError(
            "config",
            "Batch mode sends inline requests, which only the Gemini Developer API (API key) accepts, not Vertex AI.",
        )
    inlined = [
        types.InlinedRequest(
            contents=request.prompt,
            metadata={KEY_FIELD: key},
            config=generation_config(request, settings.row(request.model)),
        )
        for key, request in items
    ]
    now = utc_now()
    config = types.CreateBatchJobConfig(display_name=display_name or f"arbiter-{now[:19]}")
    try:
        job = client.batches.create(model=models[0], src=inlined, config=config)
    except Exception as exc:
        raise translate_error(exc, models[0]) from None
    if not job.name:
        raise LLMError("transport", "The Batch API accepted the job but returned no job name.")
    schemas: dict[str, Any] = {}
    entries = []
    for key, request in items:
        schema_id = _schema_id(request.response_schema)
        schemas.setdefault(schema_id, request.response_schema)
        entries.append(
            {"key": key, "purpose": request.purpose, "doc_id": request.doc_id, "schema": schema_id}
        )
    record = BatchJobRecord(
        name=job.name,
        model=models[0],
        state=job_state(job),
        created_at=now,
        updated_at=now,
        requests=entries,
        schemas=schemas,
        counts=dict(sorted(Counter(request.purpose for _, request in items).items())),
        documents=len({request.doc_id for _, request in items if request.doc_id is not None}),
    )
    save_record(record, records_dir)
    log.info(
        "batch job submitted name=%s requests=%d documents=%d", record.name, len(entries), record.documents
    )
    return record


def poll(
    job_name: str, settings: LLMSettings, *, genai_client: Any = None, records_dir: Path | None = None
) -> BatchJobRecord:
    """The job's current state, written to its record (a record is started for jobs submitted elsewhere)."""
    job = _get(job_name, settings, genai_client, records_dir)
    record = refresh_record(job_name, job, records_dir)
    save_record(record, records_dir)
    return record


def collect(
    job_name: str,
    settings: LLMSettings,
    cache: DiskCache,
    *,
    genai_client: Any = None,
    records_dir: Path | None = None,
) -> CollectResult:
    """Store a finished job's usable answers in the cache by request key; report what could not be used."""
    job = _get(job_name, settings, genai_client, records_dir)
    record = refresh_record(job_name, job, records_dir)
    status = record.status
    if status == "pending":
        save_record(record, records_dir)
        return CollectResult(
            record.name,
            record.state,
            status,
            f"The batch job is not finished yet ({record.state}); try again later.",
        )
    if status == "failed":
        save_record(record, records_dir)
        return CollectResult(
            record.name,
            record.state,
            status,
            f"The batch job ended without results ({record.state}); its documents stay pending. "
            "Submit them again or run them online.",
        )
    result = _store_answers(record, job, cache)
    record.collected = {
        "at": utc_now(),
        "stored": len(result.stored),
        "failed": len(result.failures),
        "missing": len(result.missing),
        "failures_by_kind": dict(sorted(Counter(f.kind for f in result.failures).items())),
    }
    save_record(record, records_dir)
    log.info(
        "batch job collected name=%s stored=%d failed=%d missing=%d",
        record.name,
        len(result.stored),
        len(result.failures),
        len(result.missing),
    )
    return result


def _store_answers(record: BatchJobRecord, job: Any, cache: DiskCache) -> CollectResult:
    dest = getattr(job, "dest", None)
    responses = list(getattr(dest, "inlined_responses", None) or [])
    by_key = {entry["key"]: entry for entry in record.requests}
    submitted = [entry["key"] for entry in record.requests]
    result = CollectResult(record.name, record.state, "succeeded", "")
    answered: set[str] = set()
    input_tokens = output_tokens = 0
    for index, item in enumerate(responses):
        metadata = item.metadata or {}
        key = metadata.get(KEY_FIELD)
        if key is None and len(responses) == len(submitted):
            key = submitted[index]  # results come back in request order when metadata is missing
        entry = by_key.get(key or "")
        if entry is None and key is not None and not by_key:
            entry = {"key": key}  # a job with no local record (submitted elsewhere): take its keys on trust
        if key is None or entry is None:
            result.failures.append(
                ItemFailure(key or "", "unmatched", "An answer could not be matched to a request.")
            )
            continue
        answered.add(key)
        outcome = _usable(item, entry, record)
        if isinstance(outcome, ItemFailure):
            result.failures.append(outcome)
            continue
        cache.put(key, outcome, record.model)
        result.stored.append(key)
        input_tokens += outcome.usage.input_tokens
        output_tokens += outcome.usage.output_tokens
    result.missing = [key for key in submitted if key not in answered]
    result.usage = TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    result.message = (
        f"Stored {len(result.stored)} of {len(submitted)} answers in the cache; "
        f"{len(result.failures)} unusable, {len(result.missing)} missing."
    )
    return result


def _usable(
    item: types.InlinedResponse, entry: dict[str, Any], record: BatchJobRecord
) -> RawCompletion | ItemFailure:
    """The answer as a RawCompletion when it is finished, unblocked and matches its schema; else the failure."""

    def failed(kind: str, message: str) -> ItemFailure:
        return ItemFailure(entry["key"], kind, message, entry.get("purpose"), entry.get("doc_id"))

    if item.error is not None:
        return failed("batch_error", f"The Batch API could not answer this request (code {item.error.code}).")
    if item.response is None:
        return failed("blocked", "The Batch API returned no answer for this request.")
    try:
        raw = completion_from_response(item.response, record.model)
        schema = record.schemas.get(str(entry.get("schema")))
        if schema is not None:
            parse_answer(raw.text, schema)
    except LLMError as error:
        return failed(error.kind, error.message)
    return raw


def _client(settings: LLMSettings, genai_client: Any) -> Any:
    require_network("the gemini batch backend", offline)
    return genai_client if genai_client is not None else make_genai_client(settings)


def _get(job_name: str, settings: LLMSettings, genai_client: Any, records_dir: Path | None) -> Any:
    client = _client(settings, genai_client)
    name = resolve_job_name(job_name, records_dir)
    try:
        return client.batches.get(name=name)
    except ValueError:
        raise LLMError("config", f"{job_name!r} is not a batch job name such as batches/abc123.") from None
    except Exception as exc:
        raise translate_error(exc, settings.model) from None


def _schema_id(schema: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


__all__ = [
    "KEY_FIELD",
    "BatchCollector",
    "BatchJobRecord",
    "CollectResult",
    "DeferringBackend",
    "ItemFailure",
    "collect",
    "inline_job_bytes",
    "inline_request_json",
    "job_status",
    "load_record",
    "poll",
    "record_path",
    "resolve_job_name",
    "submit",
]
