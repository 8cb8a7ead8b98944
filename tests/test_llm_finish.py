"""Issue 14 item 8: every backend, replay included, treats a cut-short or blocked answer as an error, so the
verifier is ERRORED (never a pass) even when the answer's text is valid JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from gemini_fakes import answer_body
from llm_fakes import FakeBackend, completion

from arbiter.contracts import VerifierStatus
from arbiter.llm.cache import DiskCache
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.gemini import completion_from_response
from arbiter.llm.openai_compat import OpenAICompatBackend
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion, check_finish
from arbiter.llm.replay import ReplayBackend, write_replay
from arbiter.net import switch as network
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.v3_traps import V3Traps
from tests.phase_fakes import scenario_bundle, scenario_classification
from tests.v34_helpers import PROFILE, subject

VALID = '{"issues": []}'
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"issues": {"type": "array", "items": {"type": "string"}}},
    "required": ["issues"],
    "additionalProperties": False,
}

# finish reason as a backend reports it, and the error kind it must become
CUT_OR_BLOCKED = [
    ("MAX_TOKENS", "truncated"),
    ("length", "truncated"),
    ("SAFETY", "blocked"),
    ("RECITATION", "blocked"),
    ("PROHIBITED_CONTENT", "blocked"),
    ("BLOCKLIST", "blocked"),
    ("SPII", "blocked"),
    ("content_filter", "blocked"),
    ("OTHER", "blocked"),
    ("MALFORMED_FUNCTION_CALL", "invalid_json"),
    ("tool_calls", "invalid_json"),
]
COMPLETE = [None, "", "STOP", "stop", "FINISH_REASON_UNSPECIFIED"]


def request(prompt: str = "Check page 1.") -> LLMRequest:
    return LLMRequest(
        purpose="V3", model="gemini-3.5-flash", system="Check.", prompt=prompt, response_schema=SCHEMA
    )


@pytest.mark.parametrize(("reason", "kind"), CUT_OR_BLOCKED)
def test_check_finish_table(reason: str, kind: str) -> None:
    """Each cut-short or withheld finish reason is an LLMError of its kind."""
    with pytest.raises(LLMError) as caught:
        check_finish(reason, "test")
    assert caught.value.kind == kind
    assert reason.upper() in caught.value.message


@pytest.mark.parametrize("reason", COMPLETE)
def test_complete_answers_pass(reason: str | None) -> None:
    """STOP (any case), an unspecified or an absent finish reason is a complete answer."""
    check_finish(reason, "test")


@pytest.mark.parametrize(("reason", "kind"), CUT_OR_BLOCKED)
def test_replay_backend_refuses_a_cut_or_blocked_recording(tmp_path: Path, reason: str, kind: str) -> None:
    """A recording marked SAFETY, MAX_TOKENS, length... with valid JSON is an error, not an answer."""
    write_replay(tmp_path, request(), RawCompletion(text=VALID, finish_reason=reason))
    with pytest.raises(LLMError) as caught:
        ReplayBackend(tmp_path).complete(request())
    assert caught.value.kind == kind


@pytest.mark.parametrize(("reason", "kind"), CUT_OR_BLOCKED)
def test_client_refuses_it_from_any_backend(tmp_path: Path, reason: str, kind: str) -> None:
    """The client checks every backend's finish reason (a backend that forgot to is still caught)."""
    client = LLMClient(FakeBackend([completion({"issues": []}, finish_reason=reason)]), LLMSettings(rpm=0))
    with pytest.raises(LLMError) as caught:
        client.complete(request())
    assert caught.value.kind == kind
    assert client.totals()["errors"] == {kind: 1}


@pytest.mark.parametrize(("reason", "kind"), CUT_OR_BLOCKED)
def test_cached_cut_or_blocked_answer_is_not_served(tmp_path: Path, reason: str, kind: str) -> None:
    """A cache entry with such a finish reason (written by an older version) is asked again, not served."""
    settings = LLMSettings(rpm=0, thinking_budget=0)
    cache = DiskCache(tmp_path)
    keyed = request()
    cache.put(
        replace(keyed, thinking_budget=0).key(), RawCompletion(text=VALID, finish_reason=reason), keyed.model
    )
    backend = FakeBackend([completion({"issues": ["fresh"]})])
    response = LLMClient(backend, settings, cache).complete(keyed)
    assert (response.cached, response.data, backend.calls) == (False, {"issues": ["fresh"]}, 1)


@pytest.mark.parametrize(
    ("gemini_reason", "kind"), [("MAX_TOKENS", "truncated"), ("SAFETY", "blocked"), ("RECITATION", "blocked")]
)
def test_gemini_response_with_valid_json_is_refused(gemini_reason: str, kind: str) -> None:
    """Gemini's own finish reasons are checked before the text is read."""
    from google.genai import types

    response = types.GenerateContentResponse.model_validate(answer_body(VALID, finish=gemini_reason))
    with pytest.raises(LLMError) as caught:
        completion_from_response(response, "gemini-3.5-flash")
    assert caught.value.kind == kind


@pytest.mark.parametrize(("openai_reason", "kind"), [("length", "truncated"), ("content_filter", "blocked")])
def test_openai_answer_with_valid_json_is_refused(
    openai_reason: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OpenAI-compatible answer cut at `length` or filtered is an error even when its JSON parses."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)
    choice = {"message": {"role": "assistant", "content": VALID}, "finish_reason": openai_reason}
    transport = httpx.MockTransport(lambda _: httpx.Response(200, json={"choices": [choice]}))
    settings = LLMSettings(backend="openai", openai_base_url="http://llm.local/v1", rpm=0)
    backend = OpenAICompatBackend(settings, http_client=httpx.Client(transport=transport))
    with pytest.raises(LLMError) as caught:
        backend.complete(request())
    assert caught.value.kind == kind


@pytest.mark.parametrize(("reason", "kind"), [("SAFETY", "blocked"), ("MAX_TOKENS", "truncated")])
def test_replayed_blocked_answer_makes_the_verifier_errored(tmp_path: Path, reason: str, kind: str) -> None:
    """V3 over replays of its own requests marked SAFETY or MAX_TOKENS is ERRORED with V3.LLM_ERROR."""
    record = tmp_path / "rec"
    recorder = LLMClient(
        FakeBackend(default=completion({"issues": []})), LLMSettings(rpm=0, record_dir=record), None
    )
    context = VerifyContext(llm=recorder.for_document("doc"))
    assert V3Traps().verify(
        subject(scenario_classification()), scenario_bundle(), PROFILE, context
    ).status in (
        VerifierStatus.PASSED,
        VerifierStatus.FAILED,
    )
    files = sorted(record.glob("*.json"))
    assert files, "the verifier made no model request"
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["finish_reason"] = reason
        path.write_text(json.dumps(data), encoding="utf-8")
    replayed = LLMClient(ReplayBackend(record), LLMSettings(backend="replay", rpm=0), None)
    result = V3Traps().verify(
        subject(scenario_classification()),
        scenario_bundle(),
        PROFILE,
        VerifyContext(llm=replayed.for_document("doc")),
    )
    assert result.status == VerifierStatus.ERRORED
    assert any(issue.code == "V3.LLM_ERROR" for issue in result.issues)
    assert replayed.totals()["errors"].get(kind, 0) >= 1
