"""Batch mode as a cache filler: defer, submit, poll, collect into the cache, then answer with 0 calls. Offline."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from gemini_fakes import (
    SCHEMA,
    FakeBatches,
    FakeGenaiClient,
    ScriptedTransport,
    answer_body,
    echo_answers,
    ok,
    request,
    settings,
)
from google.genai import types
from llm_fakes import FakeBackend

from arbiter.llm.batch import (
    KEY_FIELD,
    BatchCollector,
    DeferringBackend,
    collect,
    job_status,
    load_record,
    poll,
    record_path,
    resolve_job_name,
    submit,
)
from arbiter.llm.cache import DiskCache
from arbiter.llm.client import LLMClient
from arbiter.llm.gemini import GeminiBackend, make_genai_client
from arbiter.llm.port import LLMError, LLMRequest
from arbiter.net import switch as network

PROMPT_MARK = "PATIENT-TEXT-MARKER"


@pytest.fixture(autouse=True)
def network_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fakes and a MockTransport stand in for Google here, so the session-wide switch may be on."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)


def two_documents() -> list[LLMRequest]:
    """The requests two documents' verifiers would make, one of them twice (a retry of the same check),
    with the thinking budget the client gives them (so their keys are the ones the client uses)."""
    made = [
        request("V2", "doc-a", f"{PROMPT_MARK} a V2"),
        request("V3", "doc-a", f"{PROMPT_MARK} a V3"),
        request("V2", "doc-b", f"{PROMPT_MARK} b V2"),
        request("V4", "doc-b", f"{PROMPT_MARK} b V4"),
        request("V4", "doc-b", f"{PROMPT_MARK} b V4"),
    ]
    return [replace(r, thinking_budget=settings().thinking_budget) for r in made]


def deferred_run(collector: BatchCollector, requests: list[LLMRequest]) -> None:
    """A batch-mode run: every uncached request is deferred, none is answered."""
    client = LLMClient(DeferringBackend(collector), settings(), None)
    for req in requests:
        with pytest.raises(LLMError) as caught:
            client.for_document(req.doc_id or "").complete(req)
        assert caught.value.kind == "deferred"


def submitted(tmp_path: Path, batches: FakeBatches | None = None) -> tuple[FakeGenaiClient, list[LLMRequest]]:
    requests = two_documents()
    collector = BatchCollector()
    deferred_run(collector, requests)
    fake = FakeGenaiClient(batches or FakeBatches())
    submit(collector, settings(), genai_client=fake, records_dir=tmp_path / "jobs")
    return fake, requests


class TestCollector:
    def test_deferring_backend_collects_unique_requests(self) -> None:
        """Deferred requests from two documents are collected once each, keyed by request hash."""
        collector = BatchCollector()
        requests = two_documents()
        deferred_run(collector, requests)
        assert [key for key, _ in collector.items()] == list(dict.fromkeys(r.key() for r in requests))
        assert len(collector) == 4

    def test_collector_is_thread_safe(self) -> None:
        """Concurrent adds of overlapping requests keep exactly one entry per key."""
        collector = BatchCollector()
        reqs = [request("V2", f"doc-{i % 7}", f"page {i % 50}") for i in range(400)]
        threads = [
            threading.Thread(target=lambda part=reqs[n::8]: [collector.add(r) for r in part])
            for n in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(collector) == len({r.key() for r in reqs})


class TestSubmit:
    def test_submit_builds_keyed_inline_requests(self, tmp_path: Path) -> None:
        """Each inline request carries its key as metadata, the prompt, and the JSON-mode config."""
        fake, requests = submitted(tmp_path)
        created = fake.batches.created[0]
        assert created["model"] == "gemini-2.5-flash"
        inlined: list[types.InlinedRequest] = created["src"]
        assert [r.metadata[KEY_FIELD] for r in inlined if r.metadata] == list(
            dict.fromkeys(r.key() for r in requests)
        )
        assert inlined[0].config is not None
        assert inlined[0].config.response_mime_type == "application/json"
        assert inlined[0].config.temperature == 0.0

    def test_record_is_written_without_prompt_text(self, tmp_path: Path) -> None:
        """The job record names the job, model, keys, purposes and document count, and holds no prompt."""
        submitted(tmp_path)
        path = record_path("batches/fake-job-1", tmp_path / "jobs")
        text = path.read_text(encoding="utf-8")
        assert PROMPT_MARK not in text
        data = json.loads(text)
        assert data["name"] == "batches/fake-job-1"
        assert data["state"] == "JOB_STATE_PENDING"
        assert data["counts"] == {"V2": 2, "V3": 1, "V4": 1}
        assert data["documents"] == 2
        assert len(data["requests"]) == 4

    def test_empty_collector_is_refused(self) -> None:
        """Submitting nothing is a config error, not an empty job."""
        with pytest.raises(LLMError) as caught:
            submit(BatchCollector(), settings(), genai_client=FakeGenaiClient())
        assert caught.value.kind == "config"

    def test_mixed_models_are_refused(self) -> None:
        """One job takes one model."""
        collector = BatchCollector()
        collector.add(request())
        collector.add(replace(request(), model="gemini-2.5-pro"))
        with pytest.raises(LLMError, match="one model"):
            submit(collector, settings(), genai_client=FakeGenaiClient())

    def test_vertex_is_refused(self) -> None:
        """Inline batch requests need the Developer API; a Vertex client is a config error."""
        collector = BatchCollector()
        collector.add(request())
        with pytest.raises(LLMError, match="Vertex"):
            submit(collector, settings(), genai_client=FakeGenaiClient(vertexai=True))

    def test_network_switch_off(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With ALLOW_NETWORK False nothing is submitted."""
        monkeypatch.setattr(network, "ALLOW_NETWORK", False)
        collector = BatchCollector()
        collector.add(request())
        fake = FakeGenaiClient()
        with pytest.raises(LLMError) as caught:
            submit(collector, settings(), genai_client=fake)
        assert caught.value.kind == "network_disabled"
        assert fake.batches.created == []


class TestPollAndCollect:
    def test_poll_pending_then_succeeded(self, tmp_path: Path) -> None:
        """poll reports the job's state and keeps the record in step."""
        fake, _ = submitted(tmp_path)
        jobs = tmp_path / "jobs"
        assert poll("batches/fake-job-1", settings(), genai_client=fake, records_dir=jobs).status == "pending"
        record = poll("batches/fake-job-1", settings(), genai_client=fake, records_dir=jobs)
        assert record.status == "succeeded"
        saved = load_record("batches/fake-job-1", jobs)
        assert saved is not None
        assert saved.state == "JOB_STATE_SUCCEEDED"

    def test_collect_pending_stores_nothing(self, tmp_path: Path) -> None:
        """An unfinished job says to try later and caches nothing."""
        fake, _ = submitted(tmp_path, FakeBatches(states=["JOB_STATE_RUNNING"]))
        cache = DiskCache(tmp_path / "cache")
        result = collect(
            "batches/fake-job-1", settings(), cache, genai_client=fake, records_dir=tmp_path / "jobs"
        )
        assert result.status == "pending"
        assert "try again later" in result.message
        assert not (tmp_path / "cache").exists()

    def test_collect_fills_the_cache_and_a_rerun_makes_no_calls(self, tmp_path: Path) -> None:
        """After collect, a client over the same cache answers every request with 0 backend calls."""
        fake, requests = submitted(tmp_path, FakeBatches(states=["JOB_STATE_SUCCEEDED"]))
        cache = DiskCache(tmp_path / "cache")
        result = collect(
            "batches/fake-job-1", settings(), cache, genai_client=fake, records_dir=tmp_path / "jobs"
        )
        assert result.status == "succeeded"
        assert (len(result.stored), result.failures, result.missing) == (4, [], [])
        assert result.usage.input_tokens == 200

        backend = FakeBackend(default=LLMError("transport", "must not be called"))
        rerun = LLMClient(backend, settings(), cache)
        responses = [rerun.for_document(r.doc_id or "").complete(r) for r in requests]
        assert all(r.cached for r in responses)
        assert all(r.data == {"issues": []} for r in responses)
        assert backend.calls == 0
        assert rerun.totals()["calls"] == 0

    def test_collected_requests_are_not_deferred_again(self, tmp_path: Path) -> None:
        """A second batch-mode run over the filled cache defers nothing."""
        fake, requests = submitted(tmp_path, FakeBatches(states=["JOB_STATE_SUCCEEDED"]))
        cache = DiskCache(tmp_path / "cache")
        collect("batches/fake-job-1", settings(), cache, genai_client=fake, records_dir=tmp_path / "jobs")
        collector = BatchCollector()
        client = LLMClient(DeferringBackend(collector), settings(), cache)
        for req in requests:
            client.complete(req)
        assert len(collector) == 0

    @pytest.mark.parametrize("state", ["JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"])
    def test_failed_job(self, tmp_path: Path, state: str) -> None:
        """A failed, cancelled or expired job is reported plainly and caches nothing."""
        fake, _ = submitted(tmp_path, FakeBatches(states=[state]))
        cache = DiskCache(tmp_path / "cache")
        result = collect(
            "batches/fake-job-1", settings(), cache, genai_client=fake, records_dir=tmp_path / "jobs"
        )
        assert result.status == "failed"
        assert state in result.message
        assert result.stored == []
        assert not (tmp_path / "cache").exists()

    def test_partial_failures(self, tmp_path: Path) -> None:
        """Errored, blocked, truncated and off-schema items are failures, not cached; a lost one is missing."""

        def mixed(inlined: list[types.InlinedRequest]) -> list[types.InlinedResponse]:
            good = echo_answers(inlined)
            meta = [r.metadata for r in inlined]
            return [
                good[0],
                types.InlinedResponse(metadata=meta[1], error=types.JobError(code=13, message="internal")),
                types.InlinedResponse(
                    metadata=meta[2], response=_response(answer_body(None, finish="SAFETY"))
                ),
                types.InlinedResponse(metadata=meta[3], response=_response(answer_body('{"nope": 1}'))),
            ]

        fake, requests = submitted(
            tmp_path, FakeBatches(states=["JOB_STATE_PARTIALLY_SUCCEEDED"], responses=mixed)
        )
        cache = DiskCache(tmp_path / "cache")
        result = collect(
            "batches/fake-job-1", settings(), cache, genai_client=fake, records_dir=tmp_path / "jobs"
        )
        assert result.status == "succeeded"
        assert [f.kind for f in result.failures] == ["batch_error", "blocked", "off_schema"]
        assert {f.doc_id for f in result.failures} == {"doc-a", "doc-b"}
        keys = list(dict.fromkeys(r.key() for r in requests))
        assert result.stored == [keys[0]]
        assert cache.get(keys[0]) is not None
        assert all(cache.get(k) is None for k in keys[1:])
        record = load_record("batches/fake-job-1", tmp_path / "jobs")
        assert record is not None
        assert record.collected is not None
        assert record.collected["failures_by_kind"] == {"batch_error": 1, "blocked": 1, "off_schema": 1}

    def test_missing_and_truncated(self, tmp_path: Path) -> None:
        """A truncated answer is a failure and a request with no answer is listed as missing."""

        def short(inlined: list[types.InlinedRequest]) -> list[types.InlinedResponse]:
            cut = _response(answer_body('{"issues": [', finish="MAX_TOKENS"))
            return [
                *echo_answers(inlined[:2]),
                types.InlinedResponse(metadata=inlined[2].metadata, response=cut),
            ]

        fake, requests = submitted(tmp_path, FakeBatches(states=["JOB_STATE_SUCCEEDED"], responses=short))
        result = collect(
            "batches/fake-job-1",
            settings(),
            DiskCache(tmp_path / "c"),
            genai_client=fake,
            records_dir=tmp_path / "jobs",
        )
        keys = list(dict.fromkeys(r.key() for r in requests))
        assert [f.kind for f in result.failures] == ["truncated"]
        assert result.missing == [keys[3]]

    def test_answers_without_metadata_map_by_order(self, tmp_path: Path) -> None:
        """When the results carry no metadata but one answer per request, they map back in request order."""

        def bare(inlined: list[types.InlinedRequest]) -> list[types.InlinedResponse]:
            return [types.InlinedResponse(response=item.response) for item in echo_answers(inlined)]

        fake, _ = submitted(tmp_path, FakeBatches(states=["JOB_STATE_SUCCEEDED"], responses=bare))
        result = collect(
            "batches/fake-job-1",
            settings(),
            DiskCache(tmp_path / "c"),
            genai_client=fake,
            records_dir=tmp_path / "jobs",
        )
        assert len(result.stored) == 4

    def test_collect_without_a_local_record(self, tmp_path: Path) -> None:
        """A job submitted elsewhere is still collected; answers are cached without schema re-validation."""
        fake, _ = submitted(tmp_path, FakeBatches(states=["JOB_STATE_SUCCEEDED"]))
        result = collect(
            "batches/fake-job-1",
            settings(),
            DiskCache(tmp_path / "c"),
            genai_client=fake,
            records_dir=tmp_path / "other",
        )
        assert len(result.stored) == 4
        assert result.missing == []


class TestThroughRest:
    def test_submit_and_collect_over_mock_transport(self, tmp_path: Path) -> None:
        """The real google-genai client sends batchGenerateContent with keyed requests and reads the results."""
        seen: dict[str, object] = {}

        def handler(req: httpx.Request) -> httpx.Response:
            if req.method == "POST":
                assert req.url.path.endswith("/models/gemini-2.5-flash:batchGenerateContent")
                body = json.loads(req.content)
                seen["body"] = body
                return ok({"name": "batches/rest-1", "metadata": _meta("BATCH_STATE_PENDING")})
            assert req.url.path.endswith("/batches/rest-1")
            requests = seen["body"]["batch"]["inputConfig"]["requests"]["requests"]  # type: ignore[index]
            output = {
                "inlinedResponses": {
                    "inlinedResponses": [
                        {"response": answer_body('{"issues": []}'), "metadata": item["metadata"]}
                        for item in requests
                    ]
                }
            }
            return ok(
                {"name": "batches/rest-1", "metadata": {**_meta("BATCH_STATE_SUCCEEDED"), "output": output}}
            )

        transport = ScriptedTransport([handler])
        genai = make_genai_client(settings(), http_client=transport.client())
        collector = BatchCollector()
        requests = two_documents()
        deferred_run(collector, requests)
        record = submit(collector, settings(), genai_client=genai, records_dir=tmp_path / "jobs")
        assert (record.name, record.state) == ("batches/rest-1", "JOB_STATE_PENDING")

        sent = seen["body"]["batch"]["inputConfig"]["requests"]["requests"]  # type: ignore[index]
        first = sent[0]
        assert first["metadata"] == {KEY_FIELD: requests[0].key()}
        assert first["request"]["contents"][0]["parts"][0]["text"] == requests[0].prompt
        assert first["request"]["systemInstruction"]["parts"][0]["text"] == requests[0].system
        assert first["request"]["generationConfig"]["responseJsonSchema"]["required"] == SCHEMA["required"]

        cache = DiskCache(tmp_path / "cache")
        result = collect("rest-1", settings(), cache, genai_client=genai, records_dir=tmp_path / "jobs")
        assert (result.status, len(result.stored)) == ("succeeded", 4)
        backend = GeminiBackend(settings(), http_client=ScriptedTransport([]).client())
        rerun = LLMClient(backend, settings(), cache)
        assert all(rerun.complete(r).cached for r in requests)
        assert rerun.totals()["calls"] == 0

    def test_bad_job_name_is_config(self, tmp_path: Path) -> None:
        """A name the Batch API cannot take is a config error, and nothing is sent."""
        transport = ScriptedTransport([ok({})])
        genai = make_genai_client(settings(), http_client=transport.client())
        with pytest.raises(LLMError) as caught:
            poll("models/not-a-job", settings(), genai_client=genai, records_dir=tmp_path)
        assert caught.value.kind == "config"
        assert transport.requests == []


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("JOB_STATE_QUEUED", "pending"),
        ("JOB_STATE_PENDING", "pending"),
        ("JOB_STATE_RUNNING", "pending"),
        ("JOB_STATE_UNSPECIFIED", "pending"),
        ("JOB_STATE_SUCCEEDED", "succeeded"),
        ("JOB_STATE_PARTIALLY_SUCCEEDED", "succeeded"),
        ("JOB_STATE_FAILED", "failed"),
        ("JOB_STATE_CANCELLED", "failed"),
        ("JOB_STATE_EXPIRED", "failed"),
    ],
)
def test_job_status(state: str, status: str) -> None:
    """Every job state maps to pending, succeeded or failed."""
    assert job_status(state) == status


def test_job_names_and_record_paths(tmp_path: Path) -> None:
    """Records are named by job id; a bare id resolves to the Developer API job name."""
    assert record_path("batches/abc", tmp_path) == tmp_path / "abc.json"
    assert record_path("projects/p/locations/l/batchPredictionJobs/42", tmp_path) == tmp_path / "42.json"
    assert record_path("batches/../../x", tmp_path).parent == tmp_path
    assert resolve_job_name("abc", tmp_path) == "batches/abc"
    assert resolve_job_name("batches/abc", tmp_path) == "batches/abc"


def _response(body: dict[str, object]) -> types.GenerateContentResponse:
    """A REST body as the SDK parses it (camelCase keys are accepted by the pydantic aliases)."""
    return types.GenerateContentResponse.model_validate(body)


def _meta(state: str) -> dict[str, object]:
    return {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "model": "models/gemini-2.5-flash",
        "state": state,
        "createTime": "2026-01-01T00:00:00Z",
    }
