"""The Gemini backend against an httpx MockTransport injected into google-genai: no test reaches the network."""

from __future__ import annotations

import json

import httpx
import pytest
from gemini_fakes import (
    FAKE_KEY,
    FAST_RETRY,
    SCHEMA,
    ScriptedTransport,
    answer_body,
    fail,
    ok,
    request,
    settings,
)

from arbiter.llm.client import LLMClient
from arbiter.llm.gemini import GeminiBackend, json_schema_for_gemini
from arbiter.llm.port import LLMError
from arbiter.net import switch as network
from arbiter.net.google import retry_delay_s


@pytest.fixture
def network_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests only reach a MockTransport, so the session-wide switch may be turned on for them."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)


def backend(transport: ScriptedTransport, **overrides: object) -> GeminiBackend:
    return GeminiBackend(settings(**overrides), http_client=transport.client(), retry=FAST_RETRY)


def failure(transport: ScriptedTransport, **overrides: object) -> LLMError:
    with pytest.raises(LLMError) as caught:
        backend(transport, **overrides).complete(request())
    return caught.value


@pytest.mark.usefixtures("network_on")
class TestSuccess:
    def test_text_and_usage_are_returned(self) -> None:
        """A STOP answer gives its text, prompt/output token counts and the model version."""
        transport = ScriptedTransport(
            [ok(answer_body('{"issues": ["x"]}', prompt_tokens=321, output_tokens=9))]
        )
        raw = backend(transport).complete(request())
        assert raw.text == '{"issues": ["x"]}'
        assert (raw.usage.input_tokens, raw.usage.output_tokens) == (321, 9)
        assert raw.model == "gemini-2.5-flash"
        assert raw.finish_reason == "STOP"

    def test_request_shape(self) -> None:
        """The request carries the key header, the system prompt, temperature 0, JSON mode and the schema."""
        transport = ScriptedTransport([ok(answer_body())])
        backend(transport).complete(request(prompt="DOC TEXT"))
        sent = transport.requests[0]
        assert sent.url.path.endswith("/models/gemini-2.5-flash:generateContent")
        assert sent.headers["x-goog-api-key"] == FAKE_KEY
        body = json.loads(sent.content)
        assert body["contents"][0]["parts"][0]["text"] == "DOC TEXT"
        assert body["systemInstruction"]["parts"][0]["text"].startswith("You verify")
        config = body["generationConfig"]
        assert config["temperature"] == 0.0
        assert config["responseMimeType"] == "application/json"
        assert config["responseJsonSchema"] == json_schema_for_gemini(SCHEMA)
        assert "$schema" not in config["responseJsonSchema"]

    def test_thinking_tokens_count_as_output(self) -> None:
        """Thinking tokens are billed as output, so they are added to the output count."""
        body = answer_body(output_tokens=10)
        body["usageMetadata"]["thoughtsTokenCount"] = 90
        raw = backend(ScriptedTransport([ok(body)])).complete(request())
        assert raw.usage.output_tokens == 100

    def test_off_schema_text_is_returned_by_the_backend(self) -> None:
        """The backend hands back valid JSON that misses the schema; it does not judge it."""
        raw = backend(ScriptedTransport([ok(answer_body('{"verdict": "fine"}'))])).complete(request())
        assert raw.text == '{"verdict": "fine"}'


@pytest.mark.usefixtures("network_on")
class TestThroughTheClient:
    def test_off_schema_answer_is_rejected_by_the_client(self) -> None:
        """Valid JSON that misses the response schema ends as off_schema at the client."""
        transport = ScriptedTransport([ok(answer_body('{"verdict": "fine"}'))])
        client = LLMClient(backend(transport), settings(), None)
        with pytest.raises(LLMError) as caught:
            client.complete(request())
        assert caught.value.kind == "off_schema"

    def test_429_then_success_honours_the_server_delay(self) -> None:
        """A 429 surfaces with its RetryInfo delay; the client pauses for it and the retry succeeds."""
        transport = ScriptedTransport(
            [fail(429, "RESOURCE_EXHAUSTED", retry_delay="0.01s"), ok(answer_body('{"issues": []}'))]
        )
        client = LLMClient(backend(transport, rate_limit_retries=2), settings(rate_limit_retries=2), None)
        response = client.complete(request())
        assert response.data == {"issues": []}
        assert len(transport.requests) == 2
        assert client.totals()["rate_limit_retries"] == 1


@pytest.mark.usefixtures("network_on")
class TestFailures:
    def test_429_is_rate_limited_with_retry_after(self) -> None:
        """A 429 is not retried blindly by the SDK: it is rate_limited, retryable, with the server's delay."""
        transport = ScriptedTransport([fail(429, "RESOURCE_EXHAUSTED", retry_delay="17s")])
        error = failure(transport)
        assert (error.kind, error.retryable, error.retry_after_s) == ("rate_limited", True, 17.0)
        assert len(transport.requests) == 1

    def test_429_without_retry_info(self) -> None:
        """A 429 without RetryInfo leaves the pause to the client's own backoff."""
        error = failure(ScriptedTransport([fail(429, "RESOURCE_EXHAUSTED")]))
        assert error.kind == "rate_limited"
        assert error.retry_after_s is None

    def test_5xx_then_success_is_retried(self) -> None:
        """A 503 is retried by HttpRetryOptions and the second answer is used."""
        transport = ScriptedTransport([fail(503, "UNAVAILABLE"), ok(answer_body())])
        assert backend(transport).complete(request()).text == '{"issues": []}'
        assert len(transport.requests) == 2

    def test_exhausted_5xx_is_transport(self) -> None:
        """A 500 on every attempt ends as a retryable transport error after the configured attempts."""
        transport = ScriptedTransport([fail(500, "INTERNAL")])
        error = failure(transport)
        assert (error.kind, error.retryable) == ("transport", True)
        assert len(transport.requests) == FAST_RETRY.attempts

    def test_timeout(self) -> None:
        """A read timeout on every attempt ends as timeout."""
        transport = ScriptedTransport([httpx.ReadTimeout("slow")])
        assert failure(transport).kind == "timeout"
        assert len(transport.requests) == FAST_RETRY.attempts

    def test_connection_error_is_transport(self) -> None:
        """A refused connection on every attempt ends as transport."""
        assert failure(ScriptedTransport([httpx.ConnectError("refused")])).kind == "transport"

    def test_truncated_json(self) -> None:
        """Finish reason MAX_TOKENS is truncated even though some text came back."""
        transport = ScriptedTransport([ok(answer_body('{"issues": ["cut', finish="MAX_TOKENS"))])
        assert failure(transport).kind == "truncated"

    @pytest.mark.parametrize("finish", ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"])
    def test_safety_finish_reasons_are_blocked(self, finish: str) -> None:
        """A candidate withheld for safety or policy is blocked, never returned."""
        assert failure(ScriptedTransport([ok(answer_body(None, finish=finish))])).kind == "blocked"

    def test_prompt_feedback_block(self) -> None:
        """A prompt blocked before generation (promptFeedback.blockReason, no candidates) is blocked."""
        body = answer_body(candidates=False, block_reason="SAFETY")
        error = failure(ScriptedTransport([ok(body)]))
        assert error.kind == "blocked"
        assert "SAFETY" in error.message

    def test_no_candidates(self) -> None:
        """An answer with no candidates and no reason is blocked."""
        assert failure(ScriptedTransport([ok(answer_body(candidates=False))])).kind == "blocked"

    def test_empty_text(self) -> None:
        """A STOP candidate with no text is invalid_json."""
        assert failure(ScriptedTransport([ok(answer_body(""))])).kind == "invalid_json"

    @pytest.mark.parametrize(
        ("code", "status"),
        [(400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"), (403, "PERMISSION_DENIED"), (404, "NOT_FOUND")],
    )
    def test_client_errors_are_config(self, code: int, status: str) -> None:
        """A 4xx other than 429 is a configuration problem, said plainly, not retried."""
        transport = ScriptedTransport([fail(code, status)])
        error = failure(transport)
        assert error.kind == "config"
        assert "synthetic error" not in error.message
        assert len(transport.requests) == 1

    def test_missing_key_is_config(self) -> None:
        """No API key and no Vertex project is a config error naming the variables to set."""
        transport = ScriptedTransport([ok(answer_body())])
        error = failure(transport, gemini_api_key=None)
        assert error.kind == "config"
        assert "GOOGLE_API_KEY" in error.message
        assert transport.requests == []

    def test_vertex_without_project_is_config(self) -> None:
        """Vertex AI without a project or key is a config error."""
        error = failure(ScriptedTransport([ok(answer_body())]), gemini_api_key=None, vertexai=True)
        assert error.kind == "config"
        assert "GOOGLE_CLOUD_PROJECT" in error.message


def test_network_switch_off_touches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ALLOW_NETWORK False the backend fails network_disabled before any request."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", False)
    transport = ScriptedTransport([ok(answer_body())])
    with pytest.raises(LLMError) as caught:
        backend(transport).complete(request())
    assert caught.value.kind == "network_disabled"
    assert transport.requests == []


@pytest.mark.usefixtures("network_on")
def test_vertex_mode_with_fake_credentials() -> None:
    """Vertex AI mode sends a bearer token to the regional endpoint and parses the same answer."""
    from google.oauth2.credentials import Credentials

    transport = ScriptedTransport([ok(answer_body('{"issues": []}'))])
    vertex = GeminiBackend(
        settings(
            gemini_api_key=None,
            vertexai=True,
            google_cloud_project="proj",
            google_cloud_location="europe-west4",
        ),
        http_client=transport.client(),
        retry=FAST_RETRY,
        credentials=Credentials(token="fake-token"),
    )
    assert vertex.complete(request()).text == '{"issues": []}'
    sent = transport.requests[0]
    assert sent.url.host == "europe-west4-aiplatform.googleapis.com"
    assert (
        "/projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent"
        in (sent.url.path)
    )
    assert sent.headers["authorization"] == "Bearer fake-token"


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (
            {
                "error": {
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]
                }
            },
            17.0,
        ),
        (
            {
                "error": {
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.5s"}]
                }
            },
            0.5,
        ),
        ({"error": {"details": [{"@type": "type.googleapis.com/google.rpc.Help"}]}}, None),
        ({"error": {"message": "no details"}}, None),
        ("not a dict", None),
        (
            {
                "error": {
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}]
                }
            },
            None,
        ),
    ],
)
def test_retry_delay_parsing(details: object, expected: float | None) -> None:
    """RetryInfo.retryDelay like "17s" becomes seconds; anything else is None."""
    assert retry_delay_s(details) == expected


def test_schema_is_cut_to_gemini_keywords() -> None:
    """Unsupported keywords are dropped, const becomes enum, $ref keeps only $ siblings; names are kept."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "pattern": "^a", "minLength": 1, "default": "a"},
            "kind": {"const": "x", "title": "Kind"},
            "page": {"$ref": "#/$defs/Page", "description": "the page"},
            "pages": {
                "type": "array",
                "items": {"type": "integer", "exclusiveMinimum": 0},
                "uniqueItems": True,
            },
        },
        "$defs": {"Page": {"type": "integer", "minimum": 1, "examples": [1]}},
        "required": ["kind"],
        "additionalProperties": False,
    }
    assert json_schema_for_gemini(schema) == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "kind": {"enum": ["x"], "title": "Kind"},
            "page": {"$ref": "#/$defs/Page"},
            "pages": {"type": "array", "items": {"type": "integer"}},
        },
        "$defs": {"Page": {"type": "integer", "minimum": 1}},
        "required": ["kind"],
        "additionalProperties": False,
    }
