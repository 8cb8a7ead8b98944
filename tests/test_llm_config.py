"""LLM settings from the environment, their errors, the backend factory and the network switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arbiter.errors import ConfigError
from arbiter.llm.client import LLMClient
from arbiter.llm.config import DEFAULT_MODEL, SAMPLE_REPLAYS, LLMSettings, gemini_price
from arbiter.llm.factory import build_backend, build_client
from arbiter.llm.port import LLMError, LLMRequest
from arbiter.llm.replay import ReplayBackend
from arbiter.net import switch as network


def test_defaults_without_environment() -> None:
    """An empty environment selects no LLM, the default model's prices and the documented bounds."""
    settings = LLMSettings.from_env({})
    assert settings.backend == "none"
    assert settings.model == DEFAULT_MODEL == "gemini-3.8-flash"
    assert (settings.timeout_s, settings.rpm, settings.concurrency) == (60.0, 60, 4)
    assert (settings.doc_token_budget, settings.run_token_budget) == (200_000, 0)
    assert settings.cache_dir == Path("output/cache/llm")
    assert settings.replay_dir == SAMPLE_REPLAYS
    assert settings.record_dir is None
    assert settings.use_cache is True
    assert (settings.price_input_per_m, settings.price_output_per_m) == gemini_price(DEFAULT_MODEL)
    assert settings.mode == "online"
    assert (settings.thinking_budget, settings.thinking_level, settings.preflight) == (2048, None, True)
    assert settings.api_version() == "v1beta"


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("ARBITER_LLM", "gemini", "backend", "gemini"),
        ("ARBITER_LLM", "OpenAI", "backend", "openai"),
        ("ARBITER_LLM", "replay", "backend", "replay"),
        ("ARBITER_LLM_MODEL", "gemini-2.5-pro", "model", "gemini-2.5-pro"),
        ("ARBITER_LLM_TIMEOUT_S", "12.5", "timeout_s", 12.5),
        ("ARBITER_LLM_RPM", "600", "rpm", 600),
        ("ARBITER_LLM_RPM", "0", "rpm", 0),
        ("ARBITER_LLM_CONCURRENCY", "16", "concurrency", 16),
        ("ARBITER_DOC_TOKEN_BUDGET", "50_000", "doc_token_budget", 50_000),
        ("ARBITER_RUN_TOKEN_BUDGET", "1000000", "run_token_budget", 1_000_000),
        ("ARBITER_LLM_CACHE_DIR", "/tmp/c", "cache_dir", Path("/tmp/c")),
        ("ARBITER_LLM_NO_CACHE", "1", "use_cache", False),
        ("ARBITER_LLM_NO_CACHE", "false", "use_cache", True),
        ("ARBITER_REPLAY_DIR", "/tmp/r", "replay_dir", Path("/tmp/r")),
        ("ARBITER_LLM_RECORD_DIR", "/tmp/rec", "record_dir", Path("/tmp/rec")),
        (
            "ARBITER_OPENAI_BASE_URL",
            "http://localhost:8000/v1",
            "openai_base_url",
            "http://localhost:8000/v1",
        ),
        ("ARBITER_OPENAI_API_KEY", "sk-a", "openai_api_key", "sk-a"),
        ("OPENAI_API_KEY", "sk-b", "openai_api_key", "sk-b"),
        ("ARBITER_PRICE_INPUT_PER_M", "1.5", "price_input_per_m", 1.5),
        ("ARBITER_PRICE_OUTPUT_PER_M", "7", "price_output_per_m", 7.0),
        ("ARBITER_LLM_MODE", "batch", "mode", "batch"),
        ("ARBITER_LLM_RATE_LIMIT_RETRIES", "5", "rate_limit_retries", 5),
        ("GEMINI_API_KEY", "g-key", "gemini_api_key", "g-key"),
        ("GOOGLE_GENAI_USE_VERTEXAI", "true", "vertexai", True),
        ("GOOGLE_CLOUD_PROJECT", "proj", "google_cloud_project", "proj"),
        ("GOOGLE_CLOUD_LOCATION", "europe-west4", "google_cloud_location", "europe-west4"),
    ],
)
def test_environment_variable_sets_field(variable: str, value: str, field: str, expected: Any) -> None:
    """Each documented variable sets its setting."""
    assert getattr(LLMSettings.from_env({variable: value}), field) == expected


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"ARBITER_LLM": "claude"}, "ARBITER_LLM must be one of"),
        ({"ARBITER_LLM_RPM": "fast"}, "ARBITER_LLM_RPM must be a whole number"),
        ({"ARBITER_LLM_RPM": "-1"}, "requests per minute"),
        ({"ARBITER_LLM_CONCURRENCY": "0"}, "concurrency"),
        ({"ARBITER_LLM_TIMEOUT_S": "soon"}, "ARBITER_LLM_TIMEOUT_S must be a number"),
        ({"ARBITER_LLM_TIMEOUT_S": "0"}, "timeout"),
        ({"ARBITER_DOC_TOKEN_BUDGET": "1e5"}, "ARBITER_DOC_TOKEN_BUDGET must be a whole number"),
        ({"ARBITER_RUN_TOKEN_BUDGET": "-5"}, "run token budget"),
        ({"ARBITER_PRICE_INPUT_PER_M": "cheap"}, "ARBITER_PRICE_INPUT_PER_M must be a number"),
        ({"ARBITER_LLM_NO_CACHE": "maybe"}, "ARBITER_LLM_NO_CACHE must be true or false"),
        ({"ARBITER_LLM_MODE": "nightly"}, "ARBITER_LLM_MODE must be one of"),
    ],
)
def test_bad_value_is_one_line_config_error(env: dict[str, str], fragment: str) -> None:
    """A bad value raises ConfigError with a one-line message naming what is wrong."""
    with pytest.raises(ConfigError) as caught:
        LLMSettings.from_env(env)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_overrides_win_and_none_means_not_given() -> None:
    """Keyword overrides (CLI options) beat the environment; an override of None keeps the environment's value."""
    env = {"ARBITER_LLM": "gemini", "ARBITER_LLM_RPM": "10"}
    settings = LLMSettings.from_env(env, backend="replay", rpm=None, use_cache=False, cache_dir="/tmp/x")
    assert (settings.backend, settings.rpm, settings.use_cache) == ("replay", 10, False)
    assert settings.cache_dir == Path("/tmp/x")


def test_bad_override_is_config_error() -> None:
    """Overrides are validated like the environment, and unknown names are refused."""
    with pytest.raises(ConfigError):
        LLMSettings.from_env({}, backend="claude")
    with pytest.raises(ConfigError):
        LLMSettings.from_env({}, concurrency=0)
    with pytest.raises(ConfigError, match="Unknown LLM setting"):
        LLMSettings.from_env({}, colour="blue")


def test_google_api_key_wins_over_gemini_api_key() -> None:
    """GOOGLE_API_KEY takes precedence over GEMINI_API_KEY, as in google-genai."""
    settings = LLMSettings.from_env({"GOOGLE_API_KEY": "google", "GEMINI_API_KEY": "gemini"})
    assert settings.gemini_api_key == "google"


def test_arbiter_openai_key_wins_over_openai_api_key() -> None:
    """ARBITER_OPENAI_API_KEY takes precedence over the generic OPENAI_API_KEY."""
    settings = LLMSettings.from_env({"ARBITER_OPENAI_API_KEY": "mine", "OPENAI_API_KEY": "generic"})
    assert settings.openai_api_key == "mine"


def test_keys_do_not_appear_in_repr() -> None:
    """API keys are left out of the settings' repr, which may end up in logs."""
    settings = LLMSettings.from_env({"GOOGLE_API_KEY": "secret-g", "OPENAI_API_KEY": "secret-o"})
    assert "secret" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "prices"),
    [
        ({"ARBITER_LLM_MODEL": "gemini-3.6-flash"}, (1.50, 7.50)),
        ({"ARBITER_LLM_MODEL": "gemini-3.5-flash"}, (1.50, 9.00)),
        ({"ARBITER_LLM_MODEL": "gemini-3.5-flash-lite"}, (0.30, 2.50)),
        ({"ARBITER_LLM_MODEL": "high-volume"}, (0.25, 1.50)),
        ({"ARBITER_LLM_MODEL": "gemini-3.1-pro-preview"}, (2.00, 12.00)),
        ({"ARBITER_LLM": "openai", "ARBITER_LLM_MODEL": "llama3"}, (0.0, 0.0)),
        ({"ARBITER_LLM": "openai", "ARBITER_PRICE_INPUT_PER_M": "0.2"}, (0.2, 0.0)),
        ({"ARBITER_LLM_MODEL": "unknown-model"}, (None, None)),
        ({"ARBITER_LLM_MODEL": "gemini-2.5-flash"}, (None, None)),
    ],
)
def test_default_prices_follow_backend_and_model(
    env: dict[str, str], prices: tuple[float | None, float | None]
) -> None:
    """Listed Gemini models get their published prices, on-premises models 0, unknown models None (unknown)."""
    settings = LLMSettings.from_env(env)
    assert (settings.price_input_per_m, settings.price_output_per_m) == prices


@pytest.mark.parametrize(
    ("env", "budget"),
    [
        ({}, 2048),
        ({"ARBITER_LLM": "gemini"}, 2048),
        ({"ARBITER_LLM": "openai"}, 0),
        ({"ARBITER_LLM": "openai", "ARBITER_LLM_THINKING_BUDGET": "1024"}, 1024),
    ],
)
def test_thinking_budget_default_follows_backend(env: dict[str, str], budget: int) -> None:
    """Gemini calls may think 2,048 tokens; on-premises servers get no thinking allowance unless set."""
    assert LLMSettings.from_env(env).thinking_budget == budget


def test_cost_uses_prices_per_million() -> None:
    """Cost is tokens times the price per million."""
    settings = LLMSettings(price_input_per_m=0.30, price_output_per_m=2.50)
    assert settings.cost_usd(1_000_000, 100_000) == pytest.approx(0.30 + 0.25)


def test_none_backend_builds_nothing(tmp_path: Path) -> None:
    """ARBITER_LLM=none gives no backend and no client: LLM phases are then SKIPPED."""
    settings = LLMSettings(backend="none", cache_dir=tmp_path)
    assert build_backend(settings) is None
    assert build_client(settings) is None


def test_replay_backend_builds_client_with_cache(tmp_path: Path) -> None:
    """ARBITER_LLM=replay builds a client over a ReplayBackend reading the configured directory."""
    settings = LLMSettings(backend="replay", replay_dir=tmp_path / "r", cache_dir=tmp_path / "c")
    client = build_client(settings)
    assert isinstance(client, LLMClient)
    assert isinstance(client.backend, ReplayBackend)
    assert client.backend.replay_dir == tmp_path / "r"
    assert client.cache is not None
    assert client.cache.root == tmp_path / "c"


@pytest.mark.parametrize(
    ("backend", "module"), [("gemini", "arbiter.llm.gemini"), ("openai", "arbiter.llm.openai_compat")]
)
def test_real_backends_refuse_without_network(
    backend: str, module: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The gemini and openai backends built from settings refuse to send anything when the network is off."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", False)
    settings = LLMSettings(
        backend=backend,  # type: ignore[arg-type]
        cache_dir=tmp_path,
        gemini_api_key="test-key",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_api_key="test-key",
        model="gemini-2.5-flash",
    )
    built = build_backend(settings)
    assert built is not None
    request = LLMRequest(purpose="V2", model=settings.model, system="s", prompt="p", response_schema={})
    with pytest.raises(LLMError) as caught:
        built.complete(request)
    assert caught.value.kind == "network_disabled"
