"""Issue 28: the dated model catalogue (arbiter/llm/models.toml) as data: its rows, the defaults and prices that
come from it, deprecation warnings and shutdown refusals, `arbiter llm models`, and moving to the next model
generation by editing the file alone.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import httpx2
import pytest
from gemini_fakes import FAKE_KEY, FAST_RETRY, answer_body
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.errors import ConfigError
from arbiter.llm import preflight
from arbiter.llm.catalogue import load_catalogue
from arbiter.llm.client import LLMClient
from arbiter.llm.config import DEFAULT_MODEL, LLMSettings
from arbiter.llm.gemini import GeminiBackend
from arbiter.llm.port import LLMError, LLMRequest
from arbiter.net import switch as network
from tests.conftest import FIXTURES

runner = CliRunner()
CHECK_OK = '{"ok": true, "echo": "arbiter-preflight"}'
LLM_VARIABLES = (
    "ARBITER_LLM",
    "ARBITER_LLM_MODEL",
    "ARBITER_LLM_THINKING_LEVEL",
    "ARBITER_LLM_REASONING_EFFORT",
    "ARBITER_MODEL_CATALOGUE",
    "ARBITER_LLM_PREFLIGHT",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GEMINI_API_KEY",
)


def bundled() -> dict[str, Any]:
    """The bundled catalogue file as plain TOML data, to be edited into another generation's."""
    text = resources.files("arbiter.llm").joinpath("models.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def write_toml(path: Path, data: dict[str, Any]) -> Path:
    """A minimal TOML writer for the catalogue's shape (top-level scalars and [[model]] tables)."""

    def value(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, date | int | float):
            return str(item)
        if isinstance(item, list | tuple):
            return "[" + ", ".join(value(x) for x in item) + "]"
        return json.dumps(item)

    lines = [f"{key} = {value(item)}" for key, item in data.items() if key != "model"]
    for row in data["model"]:
        lines.append("\n[[model]]")
        lines.extend(f"{key} = {value(item)}" for key, item in row.items())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Google:
    """The Gemini service as an httpx2 MockTransport under the SDK's default client; records every request."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return httpx2.Response(200, json=self.answers[min(len(self.requests), len(self.answers)) - 1])

    def args(self) -> dict[str, Any]:
        return {"transport": httpx2.MockTransport(self)}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, str]], None]:
    """Clears the LLM variables; the returned function sets the ones a case needs (a fake key included)."""
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def set_env(values: dict[str, str]) -> None:
        monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
        for name, item in values.items():
            monkeypatch.setenv(name, item)

    return set_env


def fake_google(monkeypatch: pytest.MonkeyPatch, *answers: dict[str, Any]) -> Google:
    google = Google(*answers)
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)
    monkeypatch.setattr(
        preflight,
        "build_backend",
        lambda settings: GeminiBackend(settings, retry=FAST_RETRY, client_args=google.args()),
    )
    return google


# --- the rows ----------------------------------------------------------------------------------------------------

# (model, status on 2026-11-27, price on 2026-11-27, levels, temperature honoured)
GEMINI_ROWS = [
    ("gemini-3.5-flash", "deprecated", (1.50, 9.00), ("minimal", "low", "medium", "high"), False),
    ("gemini-3.6-flash", "stable", (1.50, 7.50), ("minimal", "low", "medium", "high"), False),
    ("gemini-3.8-flash", "stable", (0.75, 3.75), ("low", "medium", "high"), False),
    ("gemini-3.7-flash", "stable", None, ("low", "medium", "high"), False),
    ("gemini-3.1-flash-lite", "stable", (0.25, 1.50), ("minimal", "low", "medium", "high"), False),
    ("gemini-3.1-pro-preview", "preview", (2.00, 12.00), ("low", "medium", "high"), False),
    ("gemini-2.5-flash", "shutdown", None, (), True),
]


@pytest.mark.parametrize(("model", "status", "price", "levels", "temperature"), GEMINI_ROWS)
def test_gemini_rows(
    model: str, status: str, price: tuple[float, float] | None, levels: tuple[str, ...], temperature: bool
) -> None:
    """Each Gemini row holds the status, price, thinking levels and temperature rule the issue names."""
    row = load_catalogue().find("gemini", model)
    assert row is not None
    day = date(2026, 11, 27)
    assert (row.lifecycle(day), row.price(day), row.levels, row.temperature) == (
        status,
        price,
        levels,
        temperature,
    )
    assert row.output_cap <= row.context_window


def test_deprecated_flash_is_routed_and_dated() -> None:
    """gemini-3.5-flash: deprecated 2026-10-08, its calls routed to gemini-3.6-flash, no shutdown date."""
    row = load_catalogue().find("gemini", "models/gemini-3.5-flash")
    assert row is not None
    assert (row.deprecated_on, row.routed_to, row.shutdown_on) == (
        date(2026, 10, 8),
        "gemini-3.6-flash",
        None,
    )


@pytest.mark.parametrize(
    ("service", "model", "field", "param"),
    [
        ("openai", "gpt-5.5", "max_completion_tokens", "reasoning_effort"),
        ("openai", "gpt-5.4-mini", "max_completion_tokens", "reasoning_effort"),
        ("vllm", "openai/gpt-oss-20b", "max_tokens", "reasoning_effort"),
        ("vllm", "Qwen/Qwen3-32B", "max_tokens", "chat_template_kwargs.enable_thinking"),
        ("llamacpp", "gpt-oss-20b-Q4_K_M", "max_tokens", "chat_template_kwargs.reasoning_effort"),
        ("llamacpp", "qwen3-8b", "max_tokens", "chat_template_kwargs.enable_thinking"),
    ],
)
def test_openai_compatible_rows(service: str, model: str, field: str, param: str) -> None:
    """OpenAI's gpt-5.x and reasoning models on vLLM and llama.cpp have rows (family globs match ids)."""
    row = load_catalogue().find(service, model)
    assert row is not None
    assert (row.max_tokens_field, row.thinking_param, row.structured_output) == (
        field,
        param,
        "strict_subset",
    )


def test_defaults_and_the_high_volume_option_come_from_the_catalogue() -> None:
    """The default model and the `high-volume` alias are the catalogue's; both current and priced."""
    catalogue = load_catalogue()
    assert catalogue.default_model == DEFAULT_MODEL
    settings = LLMSettings.from_env({"ARBITER_LLM": "gemini", "ARBITER_LLM_MODEL": "high-volume"})
    assert settings.model == catalogue.high_volume_model == "gemini-3.1-flash-lite"
    assert (settings.price_input_per_m, settings.price_output_per_m) == (0.25, 1.50)


# --- updating to the next generation is a data change ----------------------------------------------------------


def test_the_next_generation_is_a_data_change(tmp_path: Path) -> None:
    """A catalogue with a new row as default_model changes the default, its price, its levels and the
    warnings for the old default, with no code change."""
    data = bundled()
    old = next(row for row in data["model"] if row["id"] == data["default_model"])
    new = {**old, "id": "gemini-3.9-flash", "price_input_per_m": 1.00, "price_output_per_m": 5.00}
    new.update(price_thinking_per_m=5.00, levels=["medium", "high"], default_level="medium", source="test")
    for key in ("price_until", "price_then"):
        new.pop(key, None)
    old.update(status="deprecated", deprecated_on=date(2026, 11, 1), replacement="gemini-3.9-flash")
    data["model"].insert(0, new)
    data["default_model"] = "gemini-3.9-flash"
    path = write_toml(tmp_path / "next.toml", data)

    settings = LLMSettings.from_env({"ARBITER_LLM": "gemini", "ARBITER_MODEL_CATALOGUE": str(path)})
    assert settings.model == "gemini-3.9-flash"
    assert (settings.price_input_per_m, settings.price_output_per_m) == (1.00, 5.00)
    assert settings.thinking_level_for() == "medium"
    assert settings.require_servable() is None
    old_settings = LLMSettings.from_env(
        {"ARBITER_LLM": "gemini", "ARBITER_MODEL_CATALOGUE": str(path), "ARBITER_LLM_MODEL": old["id"]}
    )
    warning = old_settings.require_servable()
    assert warning is not None
    assert "deprecated" in warning
    assert "gemini-3.9-flash" in warning


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"default_model": "gemini-3.5-flash"}, "deprecated"),
        ({"default_model": "gemini-9-flash"}, "has no gemini row"),
        ({"high_volume_model": "gemini-3.7-flash"}, "has no price"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_an_invalid_catalogue_is_a_one_line_config_error(
    tmp_path: Path, change: dict[str, Any], words: str
) -> None:
    """A catalogue whose defaults are deprecated, missing or unpriced, or with unknown keys, is refused."""
    path = write_toml(tmp_path / "bad.toml", {**bundled(), **change})
    with pytest.raises(ConfigError) as caught:
        LLMSettings.from_env({"ARBITER_MODEL_CATALOGUE": str(path)})
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_row_with_a_default_level_it_does_not_take_is_refused(tmp_path: Path) -> None:
    """A levels row whose default_level is not among its levels fails validation."""
    data = bundled()
    data["model"][0]["default_level"] = "minimal"
    with pytest.raises(ConfigError) as caught:
        LLMSettings.from_env({"ARBITER_MODEL_CATALOGUE": str(write_toml(tmp_path / "c.toml", data))})
    assert "default_level" in str(caught.value)


# --- lifecycle: warn when deprecated, refuse after shutdown --------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "day", "outcome"),
    [
        ("gemini-3.8-flash", date(2026, 11, 27), None),
        ("gemini-3.5-flash", date(2026, 10, 7), None),
        ("gemini-3.5-flash", date(2026, 10, 8), "warn"),
        ("gemini-2.5-flash", date(2026, 11, 27), "refuse"),
        ("my-fine-tune", date(2026, 11, 27), None),
    ],
)
def test_lifecycle_by_date(model: str, day: date, outcome: str | None) -> None:
    """Deprecated models warn from their deprecation date; shut-down ones are refused; unknown ones pass."""
    settings = LLMSettings(backend="gemini", model=model)
    if outcome == "refuse":
        with pytest.raises(ConfigError):
            settings.require_servable(day)
        return
    warning = settings.require_servable(day)
    assert (warning is not None) == (outcome == "warn")


def test_llm_check_warns_in_one_line_for_a_deprecated_model(
    clean_env: Callable[[dict[str, str]], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arbiter llm check` on gemini-3.5-flash passes with one warning line naming where to move."""
    clean_env({"ARBITER_LLM": "gemini", "ARBITER_LLM_MODEL": "gemini-3.5-flash"})
    fake_google(monkeypatch, answer_body(CHECK_OK))
    result = runner.invoke(app, ["llm", "check"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "deprecated since 2026-10-08" in warnings[0]
    assert "gemini-3.8-flash" in warnings[0]


@pytest.mark.parametrize("command", [["llm", "check"], ["run", str(FIXTURES / "pdfs"), "--workers", "1"]])
def test_a_model_past_shutdown_is_refused_before_any_call(
    command: list[str],
    tmp_path: Path,
    clean_env: Callable[[dict[str, str]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`arbiter llm check` and `arbiter run` stop with exit 2 and one line on a shut-down model; no call."""
    clean_env({"ARBITER_LLM": "gemini", "ARBITER_LLM_MODEL": "gemini-2.5-flash"})
    google = fake_google(monkeypatch, answer_body(CHECK_OK))
    out = tmp_path / "out"
    result = runner.invoke(app, [*command, *(["--out", str(out)] if command[0] == "run" else [])])
    assert result.exit_code == 2, result.output
    assert "shut down on 2026-06-17" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert google.requests == []
    assert not (out / "runs").exists()


def test_a_level_the_model_rejects_is_refused_before_any_call(
    clean_env: Callable[[dict[str, str]], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ARBITER_LLM_THINKING_LEVEL=minimal with gemini-3.8-flash (which answers 400 to it) fails the check."""
    clean_env(
        {
            "ARBITER_LLM": "gemini",
            "ARBITER_LLM_MODEL": "gemini-3.8-flash",
            "ARBITER_LLM_THINKING_LEVEL": "minimal",
        }
    )
    google = fake_google(monkeypatch, answer_body(CHECK_OK))
    result = runner.invoke(app, ["llm", "check"])
    assert result.exit_code == 2
    assert "low, medium, high" in " ".join(result.output.split())
    assert google.requests == []


def test_the_client_refuses_a_rejected_level_as_a_config_error() -> None:
    """Past the preflight too, a request is never sent with a level its model rejects."""
    from llm_fakes import FakeBackend

    settings = LLMSettings(backend="gemini", thinking_level="minimal", rpm=0)
    backend = FakeBackend()
    request = LLMRequest(purpose="V2", model="gemini-3.8-flash", system="s", prompt="p", response_schema={})
    with pytest.raises(LLMError) as caught:
        LLMClient(backend, settings).complete(request)
    assert caught.value.kind == "config"
    assert backend.history == []


# --- arbiter llm models ----------------------------------------------------------------------------------------------


def test_llm_models_prints_every_row(clean_env: Callable[[dict[str, str]], None]) -> None:
    """`arbiter llm models` prints the catalogue as a table: every model, the default and its status."""
    clean_env({})
    result = runner.invoke(app, ["llm", "models"], env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    for row in load_catalogue().model:
        assert row.id in result.output
    assert "deprecated" in result.output
    assert "default" in result.output


def test_llm_models_json_holds_the_status_on_today(clean_env: Callable[[dict[str, str]], None]) -> None:
    """`arbiter llm models --json` gives the rows, the defaults and each row's status on today's date."""
    clean_env({})
    result = runner.invoke(app, ["llm", "models", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["default_model"] == DEFAULT_MODEL
    statuses = {row["id"]: row["status_today"] for row in data["models"]}
    assert statuses["gemini-3.5-flash"] == "deprecated"
    assert statuses["gemini-2.5-pro"] == "shutdown"
