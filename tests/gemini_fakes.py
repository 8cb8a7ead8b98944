"""Offline stand-ins for Gemini: REST bodies for an httpx MockTransport, and a fake google-genai client whose
`batches` script a Batch API job (create, then the states `get` reports)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
from google.genai import types

from arbiter.llm.config import LLMSettings
from arbiter.llm.gemini import GeminiRetry
from arbiter.llm.port import LLMRequest

FAKE_KEY = "fake-key-for-tests"
FAST_RETRY = GeminiRetry(attempts=3, initial_delay_s=0.001, max_delay_s=0.002, exp_base=2.0, jitter_s=0.0)

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"issues": {"type": "array", "items": {"type": "string"}}},
    "required": ["issues"],
    "additionalProperties": False,
}


def settings(**overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {"backend": "gemini", "gemini_api_key": FAKE_KEY, "rpm": 0, "timeout_s": 5.0}
    values.update(overrides)
    return LLMSettings(**values)


def request(purpose: str = "V2", doc_id: str | None = "doc-a", prompt: str = "Check page 1.") -> LLMRequest:
    return LLMRequest(
        purpose=purpose,  # type: ignore[arg-type]
        model="gemini-2.5-flash",
        system="You verify medical record classifications.",
        prompt=prompt,
        response_schema=SCHEMA,
        doc_id=doc_id,
    )


def answer_body(
    text: str | None = '{"issues": []}',
    *,
    finish: str = "STOP",
    prompt_tokens: int = 120,
    output_tokens: int = 7,
    block_reason: str | None = None,
    candidates: bool = True,
) -> dict[str, Any]:
    """A generateContent response as the REST API sends it."""
    body: dict[str, Any] = {
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
        },
        "modelVersion": "gemini-2.5-flash",
    }
    if candidates:
        candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
        if text is not None:
            candidate["content"] = {"role": "model", "parts": [{"text": text}]}
        body["candidates"] = [candidate]
    if block_reason is not None:
        body["promptFeedback"] = {"blockReason": block_reason}
    return body


def error_body(code: int, status: str, *, retry_delay: str | None = None) -> dict[str, Any]:
    """A Google API error body; a 429 may carry RetryInfo with the server's retry delay."""
    error: dict[str, Any] = {"code": code, "message": "synthetic error", "status": status}
    if retry_delay is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ]
    return {"error": error}


Step = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


@dataclass
class ScriptedTransport:
    """An httpx MockTransport handler answering with one scripted step per request (the last one repeats)."""

    steps: list[Step]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, httpx.Response):
            return step
        return step(req)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


def ok(body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json=body)


def fail(code: int, status: str, *, retry_delay: str | None = None) -> httpx.Response:
    return httpx.Response(code, json=error_body(code, status, retry_delay=retry_delay))


# --- a fake google-genai client for the Batch API -----------------------------------------------------------


@dataclass
class FakeBatches:
    """client.batches: create() records the job; get() walks through `states`, the last one repeating."""

    states: list[str] = field(default_factory=lambda: ["JOB_STATE_PENDING", "JOB_STATE_SUCCEEDED"])
    responses: Callable[[list[types.InlinedRequest]], list[types.InlinedResponse]] | None = None
    created: list[dict[str, Any]] = field(default_factory=list)
    gets: int = 0

    def create(self, *, model: str, src: Any, config: Any = None) -> types.BatchJob:
        self.created.append({"model": model, "src": src, "config": config})
        return types.BatchJob(
            name="batches/fake-job-1",
            model=f"models/{model}",
            state=types.JobState.JOB_STATE_PENDING,
        )

    def get(self, *, name: str, config: Any = None) -> types.BatchJob:
        assert self.created, "get() before create()"
        state = self.states[min(self.gets, len(self.states) - 1)]
        self.gets += 1
        job = types.BatchJob(name=name, model=self.created[0]["model"], state=types.JobState(state))
        if state in ("JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED"):
            inlined = list(self.created[0]["src"])
            make = self.responses or echo_answers
            job.dest = types.BatchJobDestination(inlined_responses=make(inlined))
        if state == "JOB_STATE_FAILED":
            job.error = types.JobError(code=13, message="internal")
        return job


def echo_answers(inlined: Iterable[types.InlinedRequest]) -> list[types.InlinedResponse]:
    """A valid answer for every request, tagged with the request's metadata as the real API does."""
    return [
        types.InlinedResponse(
            metadata=req.metadata,
            response=types.GenerateContentResponse.model_validate(
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": '{"issues": []}'}]},
                            "finish_reason": "STOP",
                        }
                    ],
                    "usage_metadata": {"prompt_token_count": 50, "candidates_token_count": 5},
                }
            ),
        )
        for req in inlined
    ]


@dataclass
class FakeModels:
    """client.models: generate_content answers the preflight's check call (or raises `error`)."""

    text: str = '{"ok": true, "echo": "arbiter-preflight"}'
    error: Exception | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)

    def generate_content(
        self, *, model: str, contents: Any, config: Any = None
    ) -> types.GenerateContentResponse:
        self.calls.append({"model": model, "contents": contents, "config": config})
        if self.error is not None:
            raise self.error
        return types.GenerateContentResponse.model_validate(
            {
                "candidates": [
                    {"content": {"role": "model", "parts": [{"text": self.text}]}, "finish_reason": "STOP"}
                ],
                "usage_metadata": {"prompt_token_count": 30, "candidates_token_count": 9},
            }
        )


@dataclass
class FakeGenaiClient:
    """Just enough of google.genai.Client for batch.py and the preflight: `.batches`, `.models`, not Vertex."""

    batches: FakeBatches = field(default_factory=FakeBatches)
    vertexai: bool = False
    models: FakeModels = field(default_factory=FakeModels)
