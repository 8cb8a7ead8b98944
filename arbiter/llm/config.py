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

from arbiter.demo import SAMPLE_REPLAYS
from arbiter.errors import ConfigError

BackendName = Literal["gemini", "openai", "replay", "none"]
Mode = Literal["online", "batch"]

BACKENDS: tuple[str, ...] = get_args(BackendName)
MODES: tuple[str, ...] = get_args(Mode)

# The default Gemini model: GA, no shutdown date announced, and the replacement Google names for
# gemini-3-flash-preview, itself the named replacement of gemini-2.5-flash (shut down June 17, 2026).
# Source: ai.google.dev/gemini-api/docs/deprecations, as read on PRICES_AS_OF (see README, "The LLM layer").
DEFAULT_MODEL = "gemini-3.5-flash"

# The Gemini API version Arbiter is written for: structured output (responseMimeType, responseJsonSchema)
# and the Batch API (batchGenerateContent) are documented on v1beta; google-genai 3.x calls v1 unless told.
# Vertex AI keeps the SDK's own v1beta1. ARBITER_GEMINI_API_VERSION overrides both.
GEMINI_API_VERSION = "v1beta"
VERTEX_API_VERSION = "v1beta1"

THINKING_LEVELS: tuple[str, ...] = ("minimal", "low", "medium", "high")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens, standard online tier (thinking billed as output); batch mode is half price."""

    input_per_m: float
    output_per_m: float
    until: date | None = None  # an announced price change: after this day the `then` price applies
    then: tuple[float, float] | None = None


# Prices of the models a site may pick, from ai.google.dev/gemini-api/docs/pricing as of PRICES_AS_OF
# (prompts up to 200k tokens). A model not listed has an unknown price: costs are reported as unknown,
# never as $0, until ARBITER_PRICE_INPUT_PER_M and ARBITER_PRICE_OUTPUT_PER_M are set.
PRICES_AS_OF = "2026-11-25"
GEMINI_PRICES: dict[str, ModelPrice] = {
    "gemini-3.5-flash": ModelPrice(1.50, 9.00),
    "gemini-3.5-flash-lite": ModelPrice(0.30, 2.50),
    "gemini-3.6-flash": ModelPrice(1.50, 7.50),
    "gemini-3.8-flash": ModelPrice(0.75, 3.75, until=date(2026, 12, 31), then=(1.50, 7.50)),
    "gemini-3.1-pro-preview": ModelPrice(2.00, 12.00),
}


def gemini_price(model: str, today: date | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for a listed Gemini model on `today`; None when unknown."""
    price = GEMINI_PRICES.get(model.removeprefix("models/"))
    if price is None:
        return None
    day = today or date.today()
    if price.until is not None and price.then is not None and day > price.until:
        return price.then
    return (price.input_per_m, price.output_per_m)


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
    thinking_level: str | None = None  # minimal|low|medium|high: sent instead of the budget (Gemini 3)
    preflight: bool = True  # one check call at the start of a run with --llm gemini|openai

    def __post_init__(self) -> None:
        for name in ("cache_dir", "replay_dir", "record_dir"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))
        if self.backend not in BACKENDS:
            raise ConfigError(f"Unknown LLM backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")
        if self.mode not in MODES:
            raise ConfigError(f"Unknown LLM mode {self.mode!r}; choose online or batch.")
        if not self.model.strip() and self.backend != "openai":  # openai: the preflight asks for one
            raise ConfigError("The LLM model name is empty.")
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

    @property
    def price_known(self) -> bool:
        return self.price_input_per_m is not None and self.price_output_per_m is not None

    def price_note(self) -> str:
        """The prices in use, or why there are none, in one line."""
        if self.price_input_per_m is not None and self.price_output_per_m is not None:
            return f"${self.price_input_per_m:g} in / ${self.price_output_per_m:g} out per million tokens"
        return (
            f"unknown (no published price for {self.model!r} in Arbiter's table of {PRICES_AS_OF}; set "
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
        model = values.get("model", DEFAULT_MODEL)
        default_in, default_out = _default_prices(str(backend), str(model))
        values.setdefault("price_input_per_m", default_in)
        values.setdefault("price_output_per_m", default_out)
        if values.get("thinking_level") is not None:
            values["thinking_level"] = str(values["thinking_level"]).lower()
        if backend == "openai":
            # on-premises servers count thinking inside max_tokens against a small context window: no
            # thinking allowance unless one is set (ARBITER_LLM_THINKING_BUDGET)
            values.setdefault("thinking_budget", 0)
            # Arbiter's default is a Gemini model, which no on-premises server serves: the server's own model
            # name must be given (an empty one is what preflight.missing_configuration asks for)
            values.setdefault("model", "")
        if backend == "replay" or values.get("mode") == "batch":
            # Nothing is sent online: a requests-per-minute limit would only slow the run down.
            values.setdefault("rpm", 0)
        return cls(**values)


def _default_prices(backend: str, model: str) -> tuple[float | None, float | None]:
    """Published Gemini prices for listed models; on-premises (openai) models cost 0 (the site's own
    hardware) unless set; any other model's price is unknown (None), never 0."""
    if backend == "openai":
        return (0.0, 0.0)
    price = gemini_price(model)
    return price if price is not None else (None, None)


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
    "thinking_level": (("ARBITER_LLM_THINKING_LEVEL",), _choice(THINKING_LEVELS)),
    "preflight": (("ARBITER_LLM_PREFLIGHT",), _bool),
}
