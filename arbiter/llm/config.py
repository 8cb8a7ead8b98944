"""LLM settings from the environment (ARBITER_LLM=gemini|openai|replay|none); arbiter/llm/factory.py builds
the backend and client they name.

Backends are chosen by configuration, never by code edits; a bad value is a one-line ConfigError. This
module imports nothing else of arbiter.llm, so every backend may import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import date
from pathlib import Path
from typing import Any, Literal, get_args

from arbiter.errors import ConfigError
from arbiter.llm.catalogue import Catalogue, ModelRow, lifecycle_notice, load_catalogue, service_for

BackendName = Literal["gemini", "openai", "replay", "none"]
Mode = Literal["online", "batch"]

BACKENDS: tuple[str, ...] = get_args(BackendName)
MODES: tuple[str, ...] = get_args(Mode)

# The defaults and prices come from the dated model catalogue (arbiter/llm/models.toml, read by catalogue.py):
# the default model is its `default_model` (classification and the semantic phases), `high-volume` names its
# `high_volume_model`. A site's own catalogue file (ARBITER_MODEL_CATALOGUE) changes them without code.
DEFAULT_MODEL = load_catalogue().default_model
HIGH_VOLUME_MODEL = load_catalogue().high_volume_model
PRICES_AS_OF = load_catalogue().checked.isoformat()

# The Gemini API version Arbiter is written for: structured output (responseMimeType, responseJsonSchema)
# and the Batch API (batchGenerateContent) are documented on v1beta; google-genai 3.x calls v1 unless told.
# Vertex AI keeps the SDK's own v1beta1. ARBITER_GEMINI_API_VERSION overrides both.
GEMINI_API_VERSION = "v1beta"
VERTEX_API_VERSION = "v1beta1"

# Every level any catalogued model takes (Gemini's thinkingLevel, OpenAI's reasoning_effort); which ones a
# given model accepts is its catalogue row's `levels`.
THINKING_LEVELS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh")
# The OpenAI-compatible server families whose request shapes differ (ARBITER_OPENAI_SERVER); generic sends
# the plain chat-completions body of earlier Arbiter versions.
OPENAI_SERVERS: tuple[str, ...] = ("openai", "vllm", "llamacpp", "generic")
#: The sample model answers `--llm replay` reads unless ARBITER_REPLAY_DIR names another folder: shipped as
#: package data beside the demo (arbiter/demo/llm_replays/, written by fixtures/llm_samples.py), named here by
#: path so that the LLM layer does not import the demo above it.
SAMPLE_REPLAYS = Path(__file__).resolve().parent.parent / "demo" / "llm_replays"


def gemini_price(model: str, today: date | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for a catalogued Gemini model on `today`; None when unknown."""
    row = load_catalogue().find("gemini", model)
    return row.price(today or date.today()) if row is not None else None


@dataclass(frozen=True)
class LLMSettings:
    """Everything that selects and bounds the LLM layer. Token budgets and rpm of 0 mean unlimited."""

    backend: BackendName = "none"
    model: str = DEFAULT_MODEL
    timeout_s: float = 60.0
    rpm: int = 60
    concurrency: int = 4
    doc_token_budget: int = 200_000
    run_token_budget: int = 0
    cache_dir: Path = Path("output/cache/llm")
    use_cache: bool = True  # False (--no-cache) skips cache reads; fresh answers are still written
    replay_dir: Path = SAMPLE_REPLAYS  # the bundled sample answers, wherever Arbiter is installed
    record_dir: Path | None = None  # when set, every fresh answer is also written there as a replay file
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    # USD per million tokens; None: unknown (costs are then reported as unknown, never as $0)
    price_input_per_m: float | None = None
    price_output_per_m: float | None = None
    mode: Mode = "online"
    rate_limit_retries: int = 3  # extra attempts after a 429, each after the limiter's pause
    # Gemini credentials as google-genai reads them; the Gemini backend may also let the SDK read the env.
    gemini_api_key: str | None = field(default=None, repr=False)
    vertexai: bool = False
    google_cloud_project: str | None = None
    google_cloud_location: str | None = None
    gemini_api_version: str | None = None  # None: GEMINI_API_VERSION (Vertex AI: VERTEX_API_VERSION)
    # Tokens a call may spend thinking; the output limit sent is the answer's allowance plus this.
    thinking_budget: int = 2048
    # The thinking level / reasoning effort to send (None: the catalogue row's default_level); a level the
    # model does not take is refused. Budget-only models get thinking_budget instead.
    thinking_level: str | None = None
    preflight: bool = True  # one check call at the start of a run with --llm gemini|openai
    openai_server: str | None = (
        None  # openai|vllm|llamacpp|generic; None: openai for api.openai.com, else generic
    )
    catalogue_path: Path | None = (
        None  # ARBITER_MODEL_CATALOGUE: a site's own catalogue instead of the bundled
    )

    def __post_init__(self) -> None:
        for name in ("cache_dir", "replay_dir", "record_dir", "catalogue_path"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))
        if self.backend not in BACKENDS:
            raise ConfigError(f"Unknown LLM backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")
        if self.mode not in MODES:
            raise ConfigError(f"Unknown LLM mode {self.mode!r}; choose online or batch.")
        if not self.model.strip() and self.backend != "openai":  # openai: the preflight asks for one
            raise ConfigError("The LLM model name is empty.")
        object.__setattr__(self, "model", self.catalogue().resolve(self.model))
        if self.openai_server is None and "//api.openai.com" in (self.openai_base_url or ""):
            object.__setattr__(self, "openai_server", "openai")
        if self.openai_server is not None and self.openai_server not in OPENAI_SERVERS:
            raise ConfigError(
                f"Unknown OpenAI-compatible server {self.openai_server!r}; choose one of {', '.join(OPENAI_SERVERS)}."
            )
        _at_least("timeout", self.timeout_s, 0.001)
        _at_least("requests per minute", self.rpm, 0)
        _at_least("concurrency", self.concurrency, 1)
        _at_least("document token budget", self.doc_token_budget, 0)
        _at_least("run token budget", self.run_token_budget, 0)
        if self.price_input_per_m is not None:
            _at_least("input price", self.price_input_per_m, 0)
        if self.price_output_per_m is not None:
            _at_least("output price", self.price_output_per_m, 0)
        _at_least("rate-limit retries", self.rate_limit_retries, 0)
        _at_least("thinking budget", self.thinking_budget, 0)
        if self.thinking_level is not None and self.thinking_level not in THINKING_LEVELS:
            raise ConfigError(
                f"Unknown thinking level {self.thinking_level!r}; choose one of {', '.join(THINKING_LEVELS)}."
            )

    def catalogue(self) -> Catalogue:
        return load_catalogue(self.catalogue_path)

    def service(self) -> str:
        """The catalogue service this backend's requests go to (gemini, openai, vllm, llamacpp or generic)."""
        return service_for(self.backend, self.openai_server)

    def row(self, model: str | None = None) -> ModelRow | None:
        """The catalogue row of `model` (default: the configured one) as this backend serves it."""
        return self.catalogue().find(self.service(), model or self.model)

    def thinking_level_for(self, model: str | None = None) -> str | None:
        """The level to send with a request for `model`: the catalogue row's (the configured level if the
        model takes it, else its default; ConfigError for one it rejects), or the configured level as is for a
        model the catalogue does not list (None: a budget is sent)."""
        row = self.row(model)
        return row.level_for(self.thinking_level) if row is not None else self.thinking_level

    def lifecycle_notice(self, today: date | None = None) -> str | None:
        """One line when the configured model is deprecated or shut down (None otherwise)."""
        return lifecycle_notice(self.row(), today or date.today())

    def require_servable(self, today: date | None = None) -> str | None:
        """ConfigError when the configured model is past its shutdown date or the thinking level set is one it
        rejects; else the deprecation warning line, if any. Checked before any call of a live backend."""
        day = today or date.today()
        row = self.row()
        if row is not None:
            if row.lifecycle(day) == "shutdown":
                raise ConfigError(lifecycle_notice(row, day) or f"The model {row.id} is shut down.")
            row.level_for(self.thinking_level)
        return lifecycle_notice(row, day)

    @property
    def price_known(self) -> bool:
        return self.price_input_per_m is not None and self.price_output_per_m is not None

    def price_note(self) -> str:
        """The prices in use, or why there are none, in one line."""
        if self.price_input_per_m is not None and self.price_output_per_m is not None:
            return f"${self.price_input_per_m:g} in / ${self.price_output_per_m:g} out per million tokens"
        return (
            f"unknown (no price for {self.model!r} in Arbiter's model catalogue of {self.catalogue().checked}; set "
            "ARBITER_PRICE_INPUT_PER_M and ARBITER_PRICE_OUTPUT_PER_M)"
        )

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        """Estimated cost of tokens at the configured prices; None when the price is unknown."""
        if self.price_input_per_m is None or self.price_output_per_m is None:
            return None
        return (input_tokens * self.price_input_per_m + output_tokens * self.price_output_per_m) / 1_000_000

    def api_version(self) -> str:
        """The Gemini API version calls are pinned to."""
        if self.gemini_api_version:
            return self.gemini_api_version
        return VERTEX_API_VERSION if self.vertexai else GEMINI_API_VERSION

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        defaults: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> LLMSettings:
        """Read ARBITER_* variables (os.environ by default); keyword overrides (e.g. CLI options) win.

        An override of None means "not given" and keeps the environment's value. `defaults` replace the
        built-in defaults and yield to the environment (a run's cache under its output folder, say).
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = dict(defaults or {})
        for name, (variables, parse) in _ENV.items():
            raw = _first(env, variables)
            if raw is not None:
                values[name] = parse(raw, variables[0])
        known = {f.name for f in fields(cls)}
        for name, value in overrides.items():
            if name not in known:
                raise ConfigError(f"Unknown LLM setting {name!r}.")
            if value is not None:
                values[name] = value
        backend = values.get("backend", "none")
        catalogue = load_catalogue(values.get("catalogue_path"))
        if backend == "openai" and not values.get("model"):
            # Arbiter's default is a Gemini model, which no OpenAI-compatible server serves: the server's own
            # model name must be given (an empty one is what preflight.missing_configuration asks for).
            values["model"] = ""
        model = catalogue.resolve(str(values.setdefault("model", catalogue.default_model)))
        server = values.get("openai_server")
        if server is None and "//api.openai.com" in str(values.get("openai_base_url") or ""):
            server = "openai"
        default_in, default_out = _default_prices(catalogue, service_for(str(backend), server), model)
        values.setdefault("price_input_per_m", default_in)
        values.setdefault("price_output_per_m", default_out)
        if values.get("thinking_level") is not None:
            values["thinking_level"] = str(values["thinking_level"]).lower()
        if backend == "openai" and catalogue.find(service_for("openai", server), model) is None:
            # a server Arbiter knows nothing about counts any thinking inside max_tokens against a context
            # window of unknown size: no thinking allowance unless one is set (ARBITER_LLM_THINKING_BUDGET).
            # A catalogued reasoning model keeps the allowance (its answer would end with `length` without).
            values.setdefault("thinking_budget", 0)
        if backend == "replay" or values.get("mode") == "batch":
            # Nothing is sent online: a requests-per-minute limit would only slow the run down.
            values.setdefault("rpm", 0)
        return cls(**values)


def _default_prices(catalogue: Catalogue, service: str, model: str) -> tuple[float | None, float | None]:
    """The catalogue's price of the model on today's date; on-premises servers (vllm, llamacpp, generic) cost 0
    (the site's own hardware) unless set; any other model's price is unknown (None), never 0."""
    row = catalogue.find(service, model)
    price = row.price(date.today()) if row is not None else None
    if price is not None:
        return price
    if service in ("vllm", "llamacpp", "generic"):
        return (0.0, 0.0)
    return (None, None)


def _at_least(what: str, value: float, minimum: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ConfigError(f"The LLM {what} must be a number of at least {minimum:g}, not {value!r}.")


def _first(env: Mapping[str, str], variables: tuple[str, ...]) -> str | None:
    for variable in variables:
        value = env.get(variable)
        if value is not None and value.strip() != "":
            return value.strip()
    return None


def _int(raw: str, variable: str) -> int:
    try:
        return int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{variable} must be a whole number, not {raw!r}.") from None


def _float(raw: str, variable: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{variable} must be a number, not {raw!r}.") from None


def _bool(raw: str, variable: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{variable} must be true or false, not {raw!r}.")


def _choice(choices: tuple[str, ...]) -> Callable[[str, str], str]:
    def parse(raw: str, variable: str) -> str:
        if raw.lower() not in choices:
            raise ConfigError(f"{variable} must be one of {', '.join(choices)}, not {raw!r}.")
        return raw.lower()

    return parse


def _text(raw: str, variable: str) -> str:
    return raw


def _path(raw: str, variable: str) -> Path:
    return Path(raw).expanduser()


def _no_cache(raw: str, variable: str) -> bool:
    return not _bool(raw, variable)


_ENV: dict[str, tuple[tuple[str, ...], Callable[[str, str], Any]]] = {
    "backend": (("ARBITER_LLM",), _choice(BACKENDS)),
    "model": (("ARBITER_LLM_MODEL",), _text),
    "timeout_s": (("ARBITER_LLM_TIMEOUT_S",), _float),
    "rpm": (("ARBITER_LLM_RPM",), _int),
    "concurrency": (("ARBITER_LLM_CONCURRENCY",), _int),
    "doc_token_budget": (("ARBITER_DOC_TOKEN_BUDGET",), _int),
    "run_token_budget": (("ARBITER_RUN_TOKEN_BUDGET",), _int),
    "cache_dir": (("ARBITER_LLM_CACHE_DIR",), _path),
    "use_cache": (("ARBITER_LLM_NO_CACHE",), _no_cache),
    "replay_dir": (("ARBITER_REPLAY_DIR",), _path),
    "record_dir": (("ARBITER_LLM_RECORD_DIR",), _path),
    "openai_base_url": (("ARBITER_OPENAI_BASE_URL",), _text),
    "openai_api_key": (("ARBITER_OPENAI_API_KEY", "OPENAI_API_KEY"), _text),
    "price_input_per_m": (("ARBITER_PRICE_INPUT_PER_M",), _float),
    "price_output_per_m": (("ARBITER_PRICE_OUTPUT_PER_M",), _float),
    "mode": (("ARBITER_LLM_MODE",), _choice(MODES)),
    "rate_limit_retries": (("ARBITER_LLM_RATE_LIMIT_RETRIES",), _int),
    "gemini_api_key": (("GOOGLE_API_KEY", "GEMINI_API_KEY"), _text),
    "vertexai": (("GOOGLE_GENAI_USE_VERTEXAI",), _bool),
    "google_cloud_project": (("GOOGLE_CLOUD_PROJECT",), _text),
    "google_cloud_location": (("GOOGLE_CLOUD_LOCATION",), _text),
    "gemini_api_version": (("ARBITER_GEMINI_API_VERSION",), _text),
    "thinking_budget": (("ARBITER_LLM_THINKING_BUDGET",), _int),
    "thinking_level": (
        ("ARBITER_LLM_THINKING_LEVEL", "ARBITER_LLM_REASONING_EFFORT"),
        _choice(THINKING_LEVELS),
    ),
    "preflight": (("ARBITER_LLM_PREFLIGHT",), _bool),
    "openai_server": (("ARBITER_OPENAI_SERVER",), _choice(OPENAI_SERVERS)),
    "catalogue_path": (("ARBITER_MODEL_CATALOGUE",), _path),
}
