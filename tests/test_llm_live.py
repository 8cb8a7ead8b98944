"""Issue 19: the live backends as the services are today, through google-genai's own default HTTP client stack
(httpx2 in google-genai 3.x) with only its transport faked (HttpOptions.client_args["transport"]), so nothing
leaves the machine: the current default model and its price, the pinned API version, timeouts, thinking,
the Batch API's byte limit, llama.cpp's JSON-mode fallback, and the preflight (`arbiter llm check`, `arbiter run`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from gemini_fakes import FAKE_KEY, FAST_RETRY, SCHEMA, answer_body, error_body
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.llm import preflight
from arbiter.llm.batch import BatchCollector, inline_job_bytes, submit
from arbiter.llm.catalogue import load_catalogue
from arbiter.llm.client import LLMClient
from arbiter.llm.config import (
    DEFAULT_MODEL,
    PRICES_AS_OF,
    LLMSettings,
    gemini_price,
)
from arbiter.llm.gemini import GeminiBackend, make_genai_client
from arbiter.llm.openai_compat import OpenAICompatBackend
from arbiter.llm.port import BudgetExhausted, LLMError, LLMRequest
from arbiter.net import switch as network
from tests.conftest import FIXTURES

runner = CliRunner()
CHECK_OK = '{"ok": true, "echo": "arbiter-preflight"}'


@pytest.fixture
def network_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a MockTransport answers here, so the session-wide network switch may be on."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)


class Google:
    """The Gemini service as an httpx2 MockTransport under the SDK's default client; records every request."""

    def __init__(self, *steps: dict[str, Any] | httpx2.Response | Exception) -> None:
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, httpx2.Response):
            return step
        return httpx2.Response(200, json=step)

    def args(self) -> dict[str, Any]:
        return {"transport": httpx2.MockTransport(self)}

    def body(self, index: int = 0) -> dict[str, Any]:
        return dict(json.loads(self.requests[index].content))


def gemini_settings(**overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {"backend": "gemini", "gemini_api_key": FAKE_KEY, "rpm": 0, "timeout_s": 5.0}
    values.update(overrides)
    return LLMSettings(**values)


def sdk_backend(google: Google, **overrides: Any) -> GeminiBackend:
    """The Gemini backend on the SDK's default HTTP client; only the transport under it is fake."""
    return GeminiBackend(gemini_settings(**overrides), retry=FAST_RETRY, client_args=google.args())


def v2(prompt: str = "Check page 1.", **changes: Any) -> LLMRequest:
    values: dict[str, Any] = {
        "purpose": "V2",
        "model": DEFAULT_MODEL,
        "system": "You verify medical record classifications.",
        "prompt": prompt,
        "response_schema": SCHEMA,
        "doc_id": "doc-a",
    }
    values.update(changes)
    return LLMRequest(**values)


# --- the default model and its price -------------------------------------------------------------------------


def test_default_model_is_current_and_priced() -> None:
    """The default is the catalogue's gemini-3.8-flash: stable, priced, checked 2026-11-27 (never a 2.5 model)."""
    catalogue = load_catalogue()
    row = catalogue.find("gemini", DEFAULT_MODEL)
    assert DEFAULT_MODEL == catalogue.default_model == "gemini-3.8-flash"
    assert row is not None
    assert row.lifecycle(catalogue.checked) == "stable"
    assert row.price(catalogue.checked) is not None
    assert date.fromisoformat(PRICES_AS_OF) == date(2026, 11, 27)


@pytest.mark.parametrize(
    ("model", "day", "price"),
    [
        ("gemini-3.5-flash", date(2026, 11, 25), (1.50, 9.00)),
        ("models/gemini-3.5-flash", date(2026, 11, 25), (1.50, 9.00)),
        ("gemini-3.5-flash-lite", date(2026, 11, 25), (0.30, 2.50)),
        ("gemini-3.1-flash-lite", date(2026, 11, 25), (0.25, 1.50)),
        ("gemini-3.6-flash", date(2026, 11, 25), (1.50, 7.50)),
        ("gemini-3.1-pro-preview", date(2026, 11, 25), (2.00, 12.00)),
        ("gemini-3.8-flash", date(2026, 12, 31), (0.75, 3.75)),
        ("gemini-3.8-flash", date(2027, 1, 1), (1.50, 7.50)),
        ("gemini-2.5-flash", date(2026, 11, 25), None),
        ("my-fine-tune", date(2026, 11, 25), None),
    ],
)
def test_price_table(model: str, day: date, price: tuple[float, float] | None) -> None:
    """Catalogued models have their published price on that day (announced changes included); others None."""
    assert gemini_price(model, day) == price


def test_unknown_price_is_reported_unknown_never_zero(tmp_path: Path) -> None:
    """With an unknown model's price, costs are None and 'unknown' in totals, per document, and in budgets."""
    from llm_fakes import FakeBackend, completion

    settings = LLMSettings.from_env(
        {"ARBITER_LLM": "replay", "ARBITER_LLM_MODEL": "my-fine-tune"}, doc_token_budget=3000, rpm=0
    )
    assert (settings.price_input_per_m, settings.price_output_per_m) == (None, None)
    client = LLMClient(
        FakeBackend(default=completion({"issues": []}, input_tokens=900, output_tokens=100)), settings
    )
    doc = client.for_document("d1")
    doc.complete(v2(model="my-fine-tune", max_output_tokens=100, thinking_budget=0))
    totals = client.totals()
    assert totals["cost_usd"] is None
    assert totals["price"].startswith("unknown")
    assert doc.usage()[2] is None
    with pytest.raises(BudgetExhausted) as caught:
        doc.complete(v2("other", model="my-fine-tune", max_output_tokens=2500, thinking_budget=0))
    assert "Their cost is unknown" in caught.value.message
    assert "ARBITER_PRICE_INPUT_PER_M" in caught.value.message


@pytest.mark.parametrize(
    ("cost", "backend", "said"),
    [
        (None, "gemini", "cost unknown (no price for this model)"),
        (0.01234, "gemini", "about $0.0123"),
        (0.0, "openai", "about $0.0000"),
        (0.32811, "replay", "would cost about $0.3281 live; nothing spent (replay)"),
        (None, "replay", "cost unknown (no price for this model)"),
    ],
)
def test_summary_line_says_what_was_spent(cost: float | None, backend: str, said: str) -> None:
    """The run summary prints 'cost unknown' for an unpriced model (never $0.0000), and for replayed answers
    what they would cost live and that nothing was spent."""
    from arbiter.cli.summary import cost_text

    assert cost_text(cost, backend) == said


# --- API version, thinking, timeouts: through the SDK's default HTTP client ----------------------------------


@pytest.mark.usefixtures("network_on")
def test_sdk_default_client_is_httpx2_and_calls_the_pinned_api_version() -> None:
    """Calls go through the SDK's own httpx2 client to /v1beta/models/<model>:generateContent."""
    google = Google(answer_body('{"issues": []}'))
    backend = sdk_backend(google)
    raw = backend.complete(v2(thinking_budget=1024))
    assert raw.text == '{"issues": []}'
    assert type(backend.client()._api_client._httpx_client).__name__ == "SyncHttpx2Client"
    assert google.requests[0].url.path == f"/v1beta/models/{DEFAULT_MODEL}:generateContent"
    config = google.body()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert "responseJsonSchema" in config


@pytest.mark.parametrize(
    ("overrides", "version"),
    [({}, "v1beta"), ({"vertexai": True}, "v1beta1"), ({"gemini_api_version": "v1"}, "v1")],
)
def test_api_version_setting(overrides: dict[str, Any], version: str) -> None:
    """The Developer API is pinned to v1beta, Vertex AI to v1beta1; ARBITER_GEMINI_API_VERSION overrides."""
    assert gemini_settings(**overrides).api_version() == version


def camel(fields: dict[str, Any]) -> dict[str, Any]:
    """google-genai 3.3 sends thinkingConfig's fields in proto (snake_case) spelling, which the API's JSON
    mapping accepts as well as lowerCamelCase; compare them in one spelling."""
    return {
        "".join(w if i == 0 else w.title() for i, w in enumerate(k.split("_"))): v for k, v in fields.items()
    }


@pytest.mark.usefixtures("network_on")
def test_thinking_budget_is_sent_and_the_output_limit_sized_with_it() -> None:
    """A budget model gets the thinking budget; maxOutputTokens is the answer's 8192 plus it."""
    google = Google(answer_body('{"issues": []}'))
    settings = gemini_settings(thinking_budget=3000, model="gemini-2.5-pro")
    client = LLMClient(GeminiBackend(settings, retry=FAST_RETRY, client_args=google.args()), settings)
    client.complete(v2(model="gemini-2.5-pro"))
    config = google.body()["generationConfig"]
    assert camel(config["thinkingConfig"]) == {"thinkingBudget": 3000}
    assert config["maxOutputTokens"] == 8192 + 3000


@pytest.mark.usefixtures("network_on")
def test_thinking_level_replaces_the_budget() -> None:
    """A thinking level (Gemini 3) is sent instead of the budget, which the API refuses alongside it."""
    google = Google(answer_body('{"issues": []}'))
    settings = gemini_settings(thinking_level="low", thinking_budget=1024)
    LLMClient(GeminiBackend(settings, retry=FAST_RETRY, client_args=google.args()), settings).complete(v2())
    config = google.body()["generationConfig"]
    assert camel(config["thinkingConfig"]) == {"thinkingLevel": "LOW"}
    assert config["maxOutputTokens"] == 8192 + 1024


@pytest.mark.usefixtures("network_on")
@pytest.mark.parametrize(
    ("model", "temperature"),
    [("gemini-3.5-flash", None), ("gemini-3.8-flash", None), ("gemini-2.5-flash", 0.0)],
)
def test_gemini_3_gets_its_default_temperature(model: str, temperature: float | None) -> None:
    """Gemini 3 and later are sent no temperature (Google: keep their default); older models get 0."""
    google = Google(answer_body('{"issues": []}'))
    sdk_backend(google).complete(v2(model=model))
    assert google.body()["generationConfig"].get("temperature") == temperature


def test_thinking_settings_from_the_environment() -> None:
    """ARBITER_LLM_THINKING_BUDGET and ARBITER_LLM_THINKING_LEVEL are read; a bad level is a ConfigError."""
    from arbiter.errors import ConfigError

    settings = LLMSettings.from_env(
        {"ARBITER_LLM_THINKING_BUDGET": "512", "ARBITER_LLM_THINKING_LEVEL": "High"}
    )
    assert (settings.thinking_budget, settings.thinking_level) == (512, "high")
    with pytest.raises(ConfigError):
        LLMSettings(thinking_level="extreme")


@pytest.mark.usefixtures("network_on")
@pytest.mark.parametrize(
    ("fault", "kind", "words"),
    [
        (httpx2.ReadTimeout("read timed out"), "timeout", "did not answer in time"),
        (httpx2.ConnectTimeout("connect timed out"), "timeout", "did not answer in time"),
        (httpx2.ConnectError("connection refused"), "transport", "could not be reached"),
        (httpx2.RemoteProtocolError("peer closed"), "transport", "could not be reached"),
    ],
)
def test_sdk_default_client_faults_are_reported_as_what_they_are(
    fault: Exception, kind: str, words: str
) -> None:
    """Timeouts and connection errors of the SDK's httpx2 client are timeouts and transport errors."""
    google = Google(fault)
    with pytest.raises(LLMError) as caught:
        sdk_backend(google).complete(v2())
    assert caught.value.kind == kind
    assert words in caught.value.message
    assert "unexpectedly" not in caught.value.message


@pytest.mark.usefixtures("network_on")
def test_max_tokens_through_the_sdk_is_truncated() -> None:
    """Thinking that eats the limit still ends as MAX_TOKENS: truncated, never an answer."""
    google = Google(answer_body('{"issues": [', finish="MAX_TOKENS"))
    with pytest.raises(LLMError) as caught:
        sdk_backend(google).complete(v2())
    assert caught.value.kind == "truncated"


# --- the Batch API's 20 MB in UTF-8 bytes --------------------------------------------------------------------


def collector_of(*requests: LLMRequest) -> BatchCollector:
    collector = BatchCollector()
    for request in requests:
        collector.add(request)
    return collector


def test_batch_size_counts_utf8_bytes_and_json_wrapping() -> None:
    """A prompt under 20 MB in characters but over it in UTF-8 bytes is refused before any call."""
    prompt = "é" * 6_000_000  # 6 M characters, 12 MB in UTF-8
    requests = [v2(prompt + str(n), doc_id=f"doc-{n}") for n in range(2)]
    assert sum(len(r.prompt) for r in requests) < 20_000_000
    collector = collector_of(*requests)
    assert inline_job_bytes(collector.items()) > 24_000_000
    with pytest.raises(LLMError) as caught:
        submit(collector, gemini_settings(), genai_client=object())
    assert caught.value.kind == "config"
    assert "20 MB" in caught.value.message


@pytest.mark.usefixtures("network_on")
def test_batch_size_estimate_matches_the_body_the_sdk_sends(tmp_path: Path) -> None:
    """The byte count is at least the real batchGenerateContent body's size and within 1% of it."""
    google = Google({"name": "batches/size-1", "metadata": {"state": "BATCH_STATE_PENDING"}})
    genai = make_genai_client(gemini_settings(), client_args=google.args())
    requests = [
        v2(f"Seite {n}: Hämoglobin 13,2 g/dl — ✓", doc_id=f"d{n}", thinking_budget=2048) for n in range(40)
    ]
    collector = collector_of(*requests)
    submit(collector, gemini_settings(), genai_client=genai, records_dir=tmp_path)
    assert google.requests[0].url.path == f"/v1beta/models/{DEFAULT_MODEL}:batchGenerateContent"
    sent = len(google.requests[0].content)
    estimate = inline_job_bytes(collector.items(), load_catalogue().find("gemini", DEFAULT_MODEL))
    assert sent <= estimate <= sent * 1.01 + 1_000


# --- a server that refuses json_schema with 400: a configuration error, never a silent JSON-mode run ---------


class Llama:
    """An older llama.cpp server: 400 to response_format json_schema, JSON mode works."""

    def __init__(self) -> None:
        self.formats: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        kind = body["response_format"]["type"]
        self.formats.append(kind)
        if kind == "json_schema":
            return httpx.Response(
                400,
                json={"error": {"code": 400, "message": "Unsupported response_format: json_schema strict"}},
            )
        answer = {"role": "assistant", "content": '{"issues": []}'}
        return httpx.Response(200, json={"choices": [{"message": answer, "finish_reason": "stop"}]})


@pytest.mark.usefixtures("network_on")
def test_schema_400_is_a_configuration_error_not_a_silent_downgrade() -> None:
    """A 400 to json_schema is LLMError("config") naming the opt-in; nothing switches to JSON mode by itself."""
    llama = Llama()
    settings = LLMSettings.from_env(
        {"ARBITER_LLM": "openai", "ARBITER_OPENAI_BASE_URL": "http://llama.local:8080/v1"}
    )
    backend = OpenAICompatBackend(settings, http_client=httpx.Client(transport=httpx.MockTransport(llama)))
    for prompt in ("first", "again"):
        with pytest.raises(LLMError) as caught:
            backend.complete(v2(prompt, model="local"))
        assert caught.value.kind == "config"
        assert "ARBITER_OPENAI_RESPONSE_FORMAT=json_object" in caught.value.message
    assert llama.formats == ["json_schema", "json_schema"]
    assert "notes" not in LLMClient(backend, settings).totals()


@pytest.mark.usefixtures("network_on")
def test_json_mode_is_used_only_when_asked_for() -> None:
    """ARBITER_OPENAI_RESPONSE_FORMAT=json_object is the explicit opt-in: JSON mode from the first call."""
    llama = Llama()
    settings = LLMSettings.from_env(
        {"ARBITER_LLM": "openai", "ARBITER_OPENAI_BASE_URL": "http://llama.local:8080/v1"}
    )
    backend = OpenAICompatBackend(
        settings,
        http_client=httpx.Client(transport=httpx.MockTransport(llama)),
        response_format="json_object",
    )
    assert backend.complete(v2(model="local")).text == '{"issues": []}'
    assert llama.formats == ["json_object"]


# --- the preflight: arbiter llm check, and the start of arbiter run ------------------------------------------

GEMINI_ENV = {"ARBITER_LLM": "gemini", "GOOGLE_API_KEY": FAKE_KEY}
ENV_NAMES = (
    "ARBITER_LLM",
    "ARBITER_LLM_MODEL",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "ARBITER_OPENAI_BASE_URL",
    "ARBITER_OPENAI_API_KEY",
    "OPENAI_API_KEY",
    "ARBITER_LLM_PREFLIGHT",
    "ARBITER_LLM_MODE",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, str]], None]:
    """Clears the LLM variables; the returned function sets the ones a case needs."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)

    def set_env(values: dict[str, str]) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return set_env


def fake_google(monkeypatch: pytest.MonkeyPatch, *steps: dict[str, Any] | httpx2.Response) -> Google:
    """The preflight's backend on the SDK's default client over a scripted Google."""
    google = Google(*steps)
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)

    def build(settings: LLMSettings) -> Any:
        if settings.backend == "gemini":
            return GeminiBackend(settings, retry=FAST_RETRY, client_args=google.args())
        raise AssertionError("only gemini is faked here")

    monkeypatch.setattr(preflight, "build_backend", build)
    return google


def rejected(code: int, status: str, reason: str | None = None) -> httpx2.Response:
    body = error_body(code, status)
    if reason is not None:
        body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    return httpx2.Response(code, json=body)


# (environment, Google's answer or None for no call, words the message must hold)
CHECK_CASES: list[tuple[dict[str, str], httpx2.Response | dict[str, Any] | None, tuple[str, ...]]] = [
    ({"ARBITER_LLM": "gemini"}, None, ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")),
    (
        {"ARBITER_LLM": "gemini", "GOOGLE_GENAI_USE_VERTEXAI": "1"},
        None,
        ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    ),
    ({"ARBITER_LLM": "openai"}, None, ("ARBITER_OPENAI_BASE_URL",)),
    (
        {"ARBITER_LLM": "openai", "ARBITER_OPENAI_BASE_URL": "http://llm.local/v1"},
        None,
        ("openai (no model named)", "ARBITER_LLM_MODEL", "--llm-model"),
    ),
    (
        GEMINI_ENV,
        rejected(400, "INVALID_ARGUMENT", "API_KEY_INVALID"),
        ("refused the credentials", "API key"),
    ),
    (GEMINI_ENV, rejected(403, "PERMISSION_DENIED"), ("refused the credentials",)),
    (
        GEMINI_ENV,
        rejected(404, "NOT_FOUND"),
        (DEFAULT_MODEL, "ARBITER_LLM_MODEL", "ARBITER_GEMINI_API_VERSION"),
    ),
    (GEMINI_ENV, rejected(400, "INVALID_ARGUMENT"), ("structured output", "ARBITER_LLM_THINKING_BUDGET")),
    (GEMINI_ENV, answer_body('{"ok": "yes"}'), ("does not match", "ARBITER_LLM_MODEL")),
    (GEMINI_ENV, answer_body(None, finish="SAFETY"), ("SAFETY",)),
    (GEMINI_ENV, rejected(429, "RESOURCE_EXHAUSTED"), ("quota",)),
]
CHECK_IDS = [
    "no-key",
    "vertex-no-project",
    "openai-no-url",
    "openai-no-model",
    "key-invalid",
    "key-forbidden",
    "model-unknown",
    "request-refused",
    "off-schema",
    "blocked",
    "no-quota",
]


@pytest.mark.parametrize(("env", "answer", "words"), CHECK_CASES, ids=CHECK_IDS)
def test_llm_check_fails_clearly(
    env: dict[str, str],
    answer: httpx2.Response | dict[str, Any] | None,
    words: tuple[str, ...],
    clean_env: Callable[[dict[str, str]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`arbiter llm check` exits 2 with the reason and what to change, for each misconfiguration."""
    clean_env(env)
    google = fake_google(monkeypatch, answer) if answer is not None else None
    result = runner.invoke(app, ["llm", "check"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    flat = " ".join(result.output.split())
    assert "LLM check failed" in flat
    for word in words:
        assert word in flat
    assert "gemini" not in flat or env.get("ARBITER_LLM") != "openai"  # openai never names a Gemini model
    if google is not None:
        assert len(google.requests) >= 1


def test_llm_check_passes_with_one_structured_call(
    clean_env: Callable[[dict[str, str]], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A working setup: one call on v1beta with the check schema, exit 0, model and price named."""
    clean_env(GEMINI_ENV)
    google = fake_google(monkeypatch, answer_body(CHECK_OK))
    result = runner.invoke(app, ["llm", "check"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert f"LLM check passed: gemini {DEFAULT_MODEL} (API v1beta)" in flat
    assert "$0.75 in / $3.75 out" in flat or "$1.5 in / $7.5 out" in flat  # the launch price ends 2026-12-31
    assert len(google.requests) == 1
    assert google.requests[0].url.path == f"/v1beta/models/{DEFAULT_MODEL}:generateContent"
    assert google.body()["generationConfig"]["responseJsonSchema"]["required"] == ["ok", "echo"]


def test_llm_check_without_a_live_backend_says_what_to_pass(
    clean_env: Callable[[dict[str, str]], None],
) -> None:
    """With no --llm and no ARBITER_LLM there is nothing to check: exit 2 and what to pass."""
    clean_env({})
    result = runner.invoke(app, ["llm", "check"])
    assert result.exit_code == 2
    assert "--llm gemini" in result.output


RUN_CASES = [
    ({"ARBITER_LLM": "gemini"}, None, "GOOGLE_API_KEY"),
    ({"ARBITER_LLM": "openai"}, None, "ARBITER_OPENAI_BASE_URL"),
    ({"ARBITER_LLM": "gemini", "ARBITER_LLM_PREFLIGHT": "0"}, None, "GOOGLE_API_KEY"),
    ({"ARBITER_LLM": "gemini", "ARBITER_LLM_MODE": "batch"}, None, "GOOGLE_API_KEY"),
    (GEMINI_ENV, rejected(400, "INVALID_ARGUMENT", "API_KEY_INVALID"), "refused the credentials"),
    (GEMINI_ENV, rejected(404, "NOT_FOUND"), "ARBITER_LLM_MODEL"),
]


@pytest.mark.parametrize(
    ("env", "answer", "words"),
    RUN_CASES,
    ids=["no-key", "no-url", "no-key-preflight-off", "no-key-batch-mode", "key-rejected", "model-gone"],
)
def test_run_stops_at_start_on_llm_misconfiguration(
    env: dict[str, str],
    answer: httpx2.Response | None,
    words: str,
    tmp_path: Path,
    clean_env: Callable[[dict[str, str]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`arbiter run` with a live backend that cannot answer exits 2 at once: no document is processed."""
    clean_env(env)
    google = fake_google(monkeypatch, answer) if answer is not None else None
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(FIXTURES / "pdfs"), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not (out / "runs").exists()
    if google is not None:
        assert len(google.requests) == 1  # the one check call; no document's call


def test_run_preflight_passes_then_the_run_goes_on(
    tmp_path: Path, clean_env: Callable[[dict[str, str]], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passing preflight costs one call; the run then proceeds (here every later call fails closed)."""
    clean_env(GEMINI_ENV)
    google = fake_google(monkeypatch, answer_body(CHECK_OK), answer_body(None, finish="SAFETY"))
    monkeypatch.setattr(network, "ALLOW_NETWORK", False)  # after the check: documents' calls cannot go out

    def checked(settings: LLMSettings) -> Any:
        monkeypatch.setattr(network, "ALLOW_NETWORK", True)
        backend = GeminiBackend(settings, retry=FAST_RETRY, client_args=google.args())
        return _OnceOnline(backend)

    monkeypatch.setattr(preflight, "build_backend", checked)
    pdf = FIXTURES / "pdfs" / "lab-labcorp-02.pdf"
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(pdf), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert len(google.requests) == 1
    assert (out / "runs").is_dir()


class _OnceOnline:
    """Lets exactly the preflight's call through, then switches the network off again."""

    name = "gemini"

    def __init__(self, backend: GeminiBackend) -> None:
        self.backend = backend

    def complete(self, request: LLMRequest) -> Any:
        try:
            return self.backend.complete(request)
        finally:
            network.ALLOW_NETWORK = False


def test_check_request_is_small_and_holds_no_document() -> None:
    """The check call has a fixed prompt, a 64-token answer allowance plus the thinking budget."""
    request = preflight.check_request(gemini_settings(thinking_budget=256))
    assert request.purpose == "check"
    assert request.output_limit() == 64 + 256
    assert replace(request, doc_id="x").key() == request.key()


@pytest.mark.usefixtures("network_on")
@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (httpx.ConnectError("refused"), "ARBITER_OPENAI_BASE_URL is running"),
        (httpx.Response(404, json={"error": {"code": "model_not_found"}}), "ARBITER_LLM_MODEL"),
        (httpx.Response(401, json={"error": {"code": "invalid_api_key"}}), "ARBITER_OPENAI_API_KEY"),
    ],
    ids=["server-down", "model-not-served", "key-refused"],
)
def test_openai_check_names_what_to_change(reply: httpx.Response | Exception, words: str) -> None:
    """The OpenAI-compatible check fails with the server's address, model or key as the thing to change."""
    from arbiter.net.retry import RetryPolicy

    def answer(_: httpx.Request) -> httpx.Response:
        if isinstance(reply, Exception):
            raise reply
        return reply

    settings = LLMSettings.from_env(
        {
            "ARBITER_LLM": "openai",
            "ARBITER_OPENAI_BASE_URL": "http://llm.local:8000/v1",
            "ARBITER_LLM_MODEL": "q",
        }
    )
    backend = OpenAICompatBackend(
        settings,
        http_client=httpx.Client(transport=httpx.MockTransport(answer)),
        retry=RetryPolicy(attempts=1, rate_limit_attempts=1),
        sleep=lambda _: None,
    )
    result = preflight.check(settings, backend)
    assert not result.ok
    assert words in result.line()
