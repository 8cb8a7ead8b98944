"""Issue 28: requests as each service documents them, per model family, built by the real request builders
(Gemini through google-genai's default client over a mock transport; OpenAI-compatible bodies over an httpx
MockTransport): thinkingLevel only with levels the model takes, no temperature where it is ignored,
max_completion_tokens and reasoning effort for OpenAI, per-family reasoning controls for vLLM and llama.cpp,
output limits that fit the model, and the strict structured-output schema subset.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import httpx2
import pytest
from gemini_fakes import FAKE_KEY, FAST_RETRY, answer_body

from arbiter.classify.gemini import MAX_OUTPUT_TOKENS, response_schema
from arbiter.contracts.profile import load_profile
from arbiter.llm import preflight
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.gemini import GeminiBackend
from arbiter.llm.openai_compat import OpenAICompatBackend
from arbiter.llm.openai_request import strict_problems, strict_schema
from arbiter.llm.port import LLMError, LLMRequest
from arbiter.net import switch as network
from arbiter.verifiers.llm_phase import MAX_OUTPUT_TOKENS as PHASE_TOKENS
from arbiter.verifiers.llm_phase import issues_schema

ISSUES = issues_schema("inconsistency")
ANSWER = '{"issues": []}'


@pytest.fixture(autouse=True)
def network_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only mock transports answer here, so the session-wide network switch may be on."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)


def v2(model: str, prompt: str = "Check page 1.", **changes: Any) -> LLMRequest:
    values: dict[str, Any] = {
        "purpose": "V2",
        "model": model,
        "system": "You verify medical record classifications.",
        "prompt": prompt,
        "response_schema": ISSUES,
        "max_output_tokens": PHASE_TOKENS,
        "doc_id": "doc-a",
    }
    values.update(changes)
    return LLMRequest(**values)


def camel(fields: dict[str, Any]) -> dict[str, Any]:
    """thinkingConfig's fields in one spelling (google-genai sends snake_case, the API takes both)."""
    return {
        "".join(w if i == 0 else w.title() for i, w in enumerate(k.split("_"))): v for k, v in fields.items()
    }


def gemini_sent(model: str, **settings: Any) -> dict[str, Any]:
    """The generationConfig google-genai sends for one V2 request through the client."""
    sent: list[httpx2.Request] = []

    def google(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, json=answer_body(ANSWER))

    config = LLMSettings(backend="gemini", gemini_api_key=FAKE_KEY, model=model, rpm=0, **settings)
    backend = GeminiBackend(config, retry=FAST_RETRY, client_args={"transport": httpx2.MockTransport(google)})
    LLMClient(backend, config).complete(v2(model))
    return dict(json.loads(sent[0].content)["generationConfig"])


# --- Gemini ------------------------------------------------------------------------------------------------------

# (model, ARBITER_LLM_THINKING_LEVEL, the thinkingConfig sent)
GEMINI_THINKING = [
    ("gemini-3.6-flash", None, {"thinkingLevel": "LOW"}),
    ("gemini-3.6-flash", "minimal", {"thinkingLevel": "MINIMAL"}),
    ("gemini-3.8-flash", None, {"thinkingLevel": "LOW"}),
    ("gemini-3.8-flash", "high", {"thinkingLevel": "HIGH"}),
    ("gemini-3.1-flash-lite", None, {"thinkingLevel": "MINIMAL"}),
    ("gemini-3.1-pro-preview", None, {"thinkingLevel": "LOW"}),
    ("gemini-3.1-pro-preview", "medium", {"thinkingLevel": "MEDIUM"}),
]


@pytest.mark.parametrize(("model", "level", "thinking"), GEMINI_THINKING)
def test_gemini_sends_a_level_the_model_takes_and_no_budget(
    model: str, level: str | None, thinking: dict[str, Any]
) -> None:
    """Gemini 3 models get thinkingLevel (their own or the configured one), never thinkingBudget, and no
    temperature (ignored by these models); maxOutputTokens is the answer's plus the thinking allowance."""
    config = gemini_sent(model, thinking_level=level)
    assert camel(config["thinkingConfig"]) == thinking
    assert "temperature" not in config
    assert config["maxOutputTokens"] == PHASE_TOKENS + 2048


@pytest.mark.parametrize(
    ("model", "level"),
    [("gemini-3.8-flash", "minimal"), ("gemini-3.7-flash", "minimal"), ("gemini-3.1-pro-preview", "minimal")],
)
def test_gemini_never_sends_a_level_the_model_rejects(model: str, level: str) -> None:
    """3.7/3.8 Flash and 3.1 Pro answer 400 to `minimal`: it is a config error before anything is sent."""
    with pytest.raises(LLMError) as caught:
        gemini_sent(model, thinking_level=level)
    assert caught.value.kind == "config"
    assert "low, medium, high" in caught.value.message


def test_gemini_output_limit_fits_the_models_cap() -> None:
    """A request asking for more than the model's 65,536 output tokens is sent the cap."""
    sent: list[httpx2.Request] = []

    def google(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, json=answer_body(ANSWER))

    config = LLMSettings(backend="gemini", gemini_api_key=FAKE_KEY, rpm=0)
    backend = GeminiBackend(config, retry=FAST_RETRY, client_args={"transport": httpx2.MockTransport(google)})
    LLMClient(backend, config).complete(v2(config.model, max_output_tokens=70_000))
    assert json.loads(sent[0].content)["generationConfig"]["maxOutputTokens"] == 65_536


def test_classifier_output_tokens_fit_every_catalogued_gemini_model() -> None:
    """The classifier's 32,768 answer tokens plus the thinking allowance fit each current model's cap."""
    settings = LLMSettings(backend="gemini")
    for row in settings.catalogue().model:
        if row.service == "gemini" and row.lifecycle(settings.catalogue().checked) != "shutdown":
            assert MAX_OUTPUT_TOKENS + settings.thinking_budget <= row.output_cap, row.id


# --- OpenAI-compatible servers ---------------------------------------------------------------------------------------


class Server:
    """An OpenAI-compatible server as a MockTransport: /v1/models (vLLM's shape) and chat completions with a
    reasoning model's answer (reasoning_content and reasoning beside the answer's content)."""

    def __init__(self, max_model_len: int | None = None) -> None:
        self.max_model_len = max_model_len
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        if request.method == "GET":
            data = [{"id": model, "object": "model", "max_model_len": self.max_model_len} for model in MODELS]
            return httpx.Response(200, json={"object": "list", "data": data})
        self.bodies.append(json.loads(request.content))
        message = {
            "role": "assistant",
            "reasoning_content": "thinking",
            "reasoning": "thinking",
            "content": ANSWER,
        }
        usage = {"prompt_tokens": 50, "completion_tokens": 400}
        return httpx.Response(
            200, json={"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}
        )


MODELS = ("gpt-5.5", "openai/gpt-oss-20b", "Qwen/Qwen3-32B", "gpt-oss-20b", "qwen3-8b")


def openai_backend(server: Server, env: dict[str, str]) -> tuple[OpenAICompatBackend, LLMSettings]:
    settings = LLMSettings.from_env({"ARBITER_LLM": "openai", **env}, rpm=0)
    return OpenAICompatBackend(
        settings, http_client=httpx.Client(transport=httpx.MockTransport(server))
    ), settings


def body_for(env: dict[str, str], request: LLMRequest, server: Server | None = None) -> dict[str, Any]:
    """The body a run's client sends for `request` to the server the environment names."""
    server = server or Server()
    backend, settings = openai_backend(server, env)
    LLMClient(backend, settings).complete(request)
    return server.bodies[0]


OPENAI = {"ARBITER_OPENAI_BASE_URL": "https://api.openai.com/v1", "ARBITER_LLM_MODEL": "gpt-5.5"}
VLLM = {"ARBITER_OPENAI_BASE_URL": "http://vllm.local:8000/v1", "ARBITER_OPENAI_SERVER": "vllm"}
LLAMA = {"ARBITER_OPENAI_BASE_URL": "http://llama.local:8080/v1", "ARBITER_OPENAI_SERVER": "llamacpp"}

# (environment, model, fields that must be in the body, fields that must not)
SHAPES: list[tuple[dict[str, str], str, dict[str, Any], tuple[str, ...]]] = [
    (
        OPENAI,
        "gpt-5.5",
        {"max_completion_tokens": PHASE_TOKENS + 2048, "reasoning_effort": "low"},
        ("max_tokens", "temperature"),
    ),
    (
        {**OPENAI, "ARBITER_LLM_REASONING_EFFORT": "none"},
        "gpt-5.5",
        {"reasoning_effort": "none"},
        ("max_tokens", "temperature"),
    ),
    (OPENAI, "gpt-5.4-mini", {"reasoning_effort": "low"}, ("max_tokens", "temperature")),
    (
        VLLM,
        "openai/gpt-oss-20b",
        {"max_tokens": PHASE_TOKENS + 2048, "reasoning_effort": "low", "temperature": 0.0},
        ("max_completion_tokens",),
    ),
    (VLLM, "Qwen/Qwen3-32B", {"chat_template_kwargs": {"enable_thinking": False}}, ("reasoning_effort",)),
    (
        {**VLLM, "ARBITER_LLM_THINKING_LEVEL": "high"},
        "Qwen/Qwen3-32B",
        {"chat_template_kwargs": {"enable_thinking": True}},
        ("reasoning_effort",),
    ),
    (
        LLAMA,
        "gpt-oss-20b",
        {"max_tokens": PHASE_TOKENS + 2048, "chat_template_kwargs": {"reasoning_effort": "low"}},
        ("reasoning_effort",),
    ),
    (LLAMA, "qwen3-8b", {"chat_template_kwargs": {"enable_thinking": False}}, ("max_completion_tokens",)),
]
SHAPE_IDS = [
    "openai-gpt-5.5",
    "openai-effort-none",
    "openai-gpt-5.4-mini",
    "vllm-gpt-oss",
    "vllm-qwen3",
    "vllm-qwen3-thinking",
    "llamacpp-gpt-oss",
    "llamacpp-qwen3",
]


@pytest.mark.parametrize(("env", "model", "present", "absent"), SHAPES, ids=SHAPE_IDS)
def test_openai_compatible_body_per_family(
    env: dict[str, str], model: str, present: dict[str, Any], absent: tuple[str, ...]
) -> None:
    """Each family gets its own output-token field, temperature rule and reasoning control."""
    body = body_for({**env, "ARBITER_LLM_MODEL": model}, v2(model))
    for field, value in present.items():
        assert body[field] == value, field
    for field in absent:
        assert field not in body, field
    assert body["response_format"]["json_schema"]["strict"] is True


def test_the_schema_sent_is_inside_openais_strict_subset() -> None:
    """Every schema Arbiter sends (V2-V4 issues, the classification) validates against the strict subset;
    the V2-V4 schema itself is outside it (maxLength), and what is sent leaves that out."""
    schemas = [issues_schema(f) for f in ("inconsistency", "trap", "weak_evidence")]
    schemas.append(response_schema(load_profile()))
    for schema in schemas:
        assert strict_problems(strict_schema(schema)) == []
    assert any("maxLength" in problem for problem in strict_problems(ISSUES))
    sent = body_for(OPENAI, v2("gpt-5.5"))["response_format"]["json_schema"]["schema"]
    assert strict_problems(sent) == []
    assert "maxLength" not in json.dumps(sent)


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": [],
                "additionalProperties": False,
            },
            "every property must be required",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            "additionalProperties must be false",
        ),
        ({"anyOf": [{"type": "object"}]}, "root must be an object"),
        (
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False, "allOf": []},
            "'allOf'",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string", "if": {}}},
                "required": ["a"],
                "additionalProperties": False,
            },
            "'if'",
        ),
    ],
    ids=["optional-property", "open-object", "root-anyof", "allof", "if-then"],
)
def test_strict_subset_rules(schema: dict[str, Any], words: str) -> None:
    """The subset check names what leaves OpenAI's documented strict-mode subset."""
    assert any(words in problem for problem in strict_problems(schema))


def test_a_schema_outside_the_subset_is_a_config_error_before_sending() -> None:
    """A response schema the strict mode cannot take fails as config, and no request goes out."""
    server = Server()
    backend, _ = openai_backend(server, OPENAI)
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    with pytest.raises(LLMError) as caught:
        backend.complete(v2("gpt-5.5", response_schema=open_schema))
    assert caught.value.kind == "config"
    assert server.bodies == []


def test_vllm_output_request_fits_max_model_len_from_v1_models() -> None:
    """With vLLM, the classifier's 32,768-token request is cut to what /v1/models' max_model_len leaves."""
    server = Server(max_model_len=16_384)
    prompt = "x" * 8_000  # about 2,000 tokens with the system message
    request = v2("openai/gpt-oss-20b", prompt, purpose="classify", max_output_tokens=MAX_OUTPUT_TOKENS)
    body = body_for({**VLLM, "ARBITER_LLM_MODEL": "openai/gpt-oss-20b"}, request, server)
    assert "/v1/models" in server.paths
    prompt_tokens = (len(request.system) + len(prompt)) // 4
    assert body["max_tokens"] == 16_384 - prompt_tokens


def test_llamacpp_output_request_fits_the_catalogued_context() -> None:
    """llama.cpp (no /v1/models length): the catalogue's 32,768-token context bounds the classifier's request."""
    request = v2("gpt-oss-20b", "y" * 4_000, purpose="classify", max_output_tokens=MAX_OUTPUT_TOKENS)
    body = body_for({**LLAMA, "ARBITER_LLM_MODEL": "gpt-oss-20b"}, request)
    assert body["max_tokens"] == 32_768 - (len(request.system) + len(request.prompt)) // 4


def test_a_prompt_that_leaves_no_room_for_the_answer_is_a_config_error() -> None:
    """When the context cannot hold the prompt and a minimal answer, nothing is sent and the error says why."""
    server = Server(max_model_len=4_096)
    request = v2("openai/gpt-oss-20b", "z" * 16_000)
    backend, _ = openai_backend(server, {**VLLM, "ARBITER_LLM_MODEL": "openai/gpt-oss-20b"})
    with pytest.raises(LLMError) as caught:
        backend.complete(request)
    assert caught.value.kind == "config"
    assert "--max-model-len" in caught.value.message
    assert server.bodies == []


def test_a_level_for_a_generic_server_is_a_config_error_naming_the_server_setting() -> None:
    """Without ARBITER_OPENAI_SERVER a level would reach no model: the error names the setting that works."""
    env = {"ARBITER_OPENAI_BASE_URL": "http://local:8000/v1", "ARBITER_LLM_THINKING_LEVEL": "low"}
    backend, settings = openai_backend(Server(), {**env, "ARBITER_LLM_MODEL": "my-model"})
    with pytest.raises(LLMError) as caught:
        LLMClient(backend, settings).complete(v2("my-model"))
    assert "ARBITER_OPENAI_SERVER" in caught.value.message


@pytest.mark.parametrize(
    ("env", "words", "not_words"),
    [
        (
            {**VLLM, "ARBITER_LLM_MODEL": "openai/gpt-oss-20b"},
            ("ARBITER_LLM_THINKING_BUDGET", "ARBITER_LLM_THINKING_LEVEL=low"),
            (),
        ),
        (
            {"ARBITER_OPENAI_BASE_URL": "http://local:8000/v1", "ARBITER_LLM_MODEL": "m"},
            ("ARBITER_LLM_THINKING_BUDGET", "ARBITER_OPENAI_SERVER"),
            ("ARBITER_LLM_THINKING_LEVEL=low",),
        ),
    ],
    ids=["catalogued-reasoning-model", "generic-server"],
)
def test_preflight_truncation_hint_names_the_variable_that_works(
    env: dict[str, str], words: tuple[str, ...], not_words: tuple[str, ...]
) -> None:
    """An answer cut at `length` in the check names the variables that really change the limit."""

    def cut(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(404)
        message = {"role": "assistant", "reasoning_content": "...", "content": None}
        return httpx.Response(200, json={"choices": [{"message": message, "finish_reason": "length"}]})

    settings = LLMSettings.from_env({"ARBITER_LLM": "openai", **env})
    backend = OpenAICompatBackend(settings, http_client=httpx.Client(transport=httpx.MockTransport(cut)))
    result = preflight.check(settings, backend)
    assert result.kind == "truncated"
    for word in words:
        assert word in result.line()
    for word in not_words:
        assert word not in result.line()


def test_a_catalogued_reasoning_model_keeps_a_thinking_allowance() -> None:
    """gpt-oss on vLLM keeps the 2,048-token thinking allowance (the 64-token check would end in `length`
    without it); an unknown model on a generic server still gets none unless set."""
    catalogued = LLMSettings.from_env(
        {"ARBITER_LLM": "openai", **VLLM, "ARBITER_LLM_MODEL": "openai/gpt-oss-20b"}
    )
    generic = LLMSettings.from_env({"ARBITER_LLM": "openai", "ARBITER_LLM_MODEL": "my-model"})
    assert (catalogued.thinking_budget, generic.thinking_budget) == (2048, 0)
    assert preflight.check_request(catalogued).output_limit() == 64 + 2048
