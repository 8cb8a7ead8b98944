"""LLM settings from the environment (ARBITER_LLM=gemini|openai|replay|none) and the factory that builds them.

Backends are chosen by configuration, never by code edits; a bad value is a one-line ConfigError.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from arbiter.errors import ConfigError

if TYPE_CHECKING:
    from arbiter.llm.client import LLMClient
    from arbiter.llm.port import LLMBackend

BackendName = Literal["gemini", "openai", "replay", "none"]
Mode = Literal["online", "batch"]

BACKENDS: tuple[str, ...] = get_args(BackendName)
MODES: tuple[str, ...] = get_args(Mode)

DEFAULT_MODEL = "gemini-2.5-flash"
# USD per million tokens (input, output), standard online tier; batch mode is half price.
GEMINI_PRICES: dict[str, tuple[float, float]] = {
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-pro": (1.25, 10.00),
}


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
    replay_dir: Path = Path("fixtures/llm_replays")
    record_dir: Path | None = None  # when set, every fresh answer is also written there as a replay file
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    price_input_per_m: float = 0.30
    price_output_per_m: float = 2.50
    mode: Mode = "online"
    rate_limit_retries: int = 3  # extra attempts after a 429, each after the limiter's pause
    # Gemini credentials as google-genai reads them; the Gemini backend may also let the SDK read the env.
    gemini_api_key: str | None = field(default=None, repr=False)
    vertexai: bool = False
    google_cloud_project: str | None = None
    google_cloud_location: str | None = None

    def __post_init__(self) -> None:
        for name in ("cache_dir", "replay_dir", "record_dir"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))
        if self.backend not in BACKENDS:
            raise ConfigError(f"Unknown LLM backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")
        if self.mode not in MODES:
            raise ConfigError(f"Unknown LLM mode {self.mode!r}; choose online or batch.")
        if not self.model.strip():
            raise ConfigError("The LLM model name is empty.")
        _at_least("timeout", self.timeout_s, 0.001)
        _at_least("requests per minute", self.rpm, 0)
        _at_least("concurrency", self.concurrency, 1)
        _at_least("document token budget", self.doc_token_budget, 0)
        _at_least("run token budget", self.run_token_budget, 0)
        _at_least("input price", self.price_input_per_m, 0)
        _at_least("output price", self.price_output_per_m, 0)
        _at_least("rate-limit retries", self.rate_limit_retries, 0)

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        """Estimated cost of tokens at the configured prices."""
        return (input_tokens * self.price_input_per_m + output_tokens * self.price_output_per_m) / 1_000_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Read ARBITER_* variables (os.environ by default); keyword overrides (e.g. CLI options) win.

        An override of None means "not given" and keeps the environment's value.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
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
        if backend == "replay" or values.get("mode") == "batch":
            # Nothing is sent online: a requests-per-minute limit would only slow the run down.
            values.setdefault("rpm", 0)
        return cls(**values)


def _default_prices(backend: str, model: str) -> tuple[float, float]:
    """Published Gemini prices for known models; on-premises (openai) and unknown models cost 0 unless set."""
    if backend == "openai":
        return (0.0, 0.0)
    return GEMINI_PRICES.get(model, (0.0, 0.0))


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
}


def build_backend(settings: LLMSettings) -> LLMBackend | None:
    """The backend the settings name, or None for "none" (LLM phases are then SKIPPED)."""
    if settings.backend == "none":
        return None
    if settings.backend == "replay":
        from arbiter.llm.replay import ReplayBackend

        return ReplayBackend(settings.replay_dir)
    if settings.backend == "gemini":
        from arbiter.llm.gemini import GeminiBackend

        return GeminiBackend(settings)
    from arbiter.llm.openai_compat import OpenAICompatBackend

    return OpenAICompatBackend(settings)


def build_client(settings: LLMSettings, backend: LLMBackend | None = None) -> LLMClient | None:
    """An LLMClient over the configured backend (or the one given) with the disk cache; None for "none"."""
    from arbiter.llm.cache import DiskCache
    from arbiter.llm.client import LLMClient

    backend = backend if backend is not None else build_backend(settings)
    if backend is None:
        return None
    return LLMClient(backend, settings, DiskCache(settings.cache_dir))
