"""The dated model catalogue (arbiter/llm/models.toml) as validated data: defaults, prices, lifecycle, thinking
controls, output caps and context windows per model. Moving to the next model generation is an edit of that
file; nothing here names a model.

Imports nothing of arbiter.llm, so config.py and every backend may import it.
"""

from __future__ import annotations

import fnmatch
import tomllib
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from arbiter.errors import ConfigError

Service = Literal["gemini", "openai", "vllm", "llamacpp"]
Status = Literal["stable", "preview", "deprecated", "shutdown"]
ThinkingParam = Literal[
    "thinkingLevel",
    "thinkingBudget",
    "reasoning_effort",
    "chat_template_kwargs.reasoning_effort",
    "chat_template_kwargs.enable_thinking",
]
CATALOGUE_ENV = "ARBITER_MODEL_CATALOGUE"  # a site's own catalogue file instead of the bundled one
HIGH_VOLUME = "high-volume"  # ARBITER_LLM_MODEL=high-volume names the catalogue's high-volume model


class ModelRow(BaseModel):
    """One model as a service takes it (see the field notes at the top of models.toml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: Service
    id: str
    status: Status
    deprecated_on: date | None = None
    shutdown_on: date | None = None
    routed_to: str | None = None
    replacement: str | None = None
    price_input_per_m: float | None = None
    price_output_per_m: float | None = None
    price_thinking_per_m: float | None = None
    price_until: date | None = None
    price_then: tuple[float, float] | None = None
    thinking: Literal["levels", "budget", "none"]
    thinking_param: ThinkingParam | None = None
    levels: tuple[str, ...] = ()
    default_level: str | None = None
    budget_range: tuple[int, int] | None = None
    output_cap: int
    context_window: int
    structured_output: Literal["json_schema", "strict_subset", "json_mode"]
    temperature: bool
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    source: str

    @model_validator(mode="after")
    def _consistent(self) -> ModelRow:
        where = f"{self.service} {self.id}"
        if self.thinking == "levels" and (not self.levels or self.default_level not in self.levels):
            raise ValueError(f"{where}: a levels model needs `levels` holding its `default_level`")
        if self.thinking == "levels" and self.thinking_param in (None, "thinkingBudget"):
            raise ValueError(f"{where}: a levels model needs a level `thinking_param`")
        if self.thinking == "budget" and (
            self.budget_range is None or self.thinking_param != "thinkingBudget"
        ):
            raise ValueError(
                f"{where}: a budget model needs `budget_range` and thinking_param thinkingBudget"
            )
        if self.status == "deprecated" and self.deprecated_on is None:
            raise ValueError(f"{where}: a deprecated model needs `deprecated_on`")
        if self.status == "shutdown" and self.shutdown_on is None:
            raise ValueError(f"{where}: a shut-down model needs `shutdown_on`")
        if (self.price_until is None) != (self.price_then is None):
            raise ValueError(f"{where}: `price_until` and `price_then` go together")
        if (self.price_input_per_m is None) != (self.price_output_per_m is None):
            raise ValueError(f"{where}: give both the input and the output price, or neither")
        if min(self.output_cap, self.context_window) < 1 or self.output_cap > self.context_window:
            raise ValueError(f"{where}: output_cap must be positive and within context_window")
        return self

    @property
    def is_pattern(self) -> bool:
        return any(ch in self.id for ch in "*?[")

    def matches(self, model: str) -> bool:
        name = model.removeprefix("models/").lower()
        return fnmatch.fnmatchcase(name, self.id.lower()) if self.is_pattern else name == self.id.lower()

    def lifecycle(self, today: date) -> Status:
        """The status on `today`: the dates decide where given (a row may be written before they pass);
        `status` decides for what has no date."""
        if self.shutdown_on is not None and today >= self.shutdown_on:
            return "shutdown"
        if self.deprecated_on is not None:
            return "deprecated" if today >= self.deprecated_on else "stable"
        return "deprecated" if self.status in ("deprecated", "shutdown") else self.status

    def price(self, today: date) -> tuple[float, float] | None:
        """(input, output) USD per million tokens on `today`; None when unknown."""
        if self.price_input_per_m is None or self.price_output_per_m is None:
            return None
        if self.price_until is not None and self.price_then is not None and today > self.price_until:
            return self.price_then
        return (self.price_input_per_m, self.price_output_per_m)

    def successor(self) -> str | None:
        return self.replacement or self.routed_to

    def level_for(self, configured: str | None) -> str | None:
        """The thinking level to send: the configured one if the model takes it, else its default; None for
        a model that takes no level. A level the model rejects is a ConfigError, never sent."""
        if self.thinking != "levels":
            if configured is not None:
                raise ConfigError(
                    f"{self.id} takes no thinking level ({configured!r} is set in ARBITER_LLM_THINKING_LEVEL);"
                    " unset it and bound thinking with ARBITER_LLM_THINKING_BUDGET."
                )
            return None
        if configured is None:
            return self.default_level
        if configured not in self.levels:
            raise ConfigError(
                f"{self.id} does not accept the thinking level {configured!r} (ARBITER_LLM_THINKING_LEVEL);"
                f" it takes {', '.join(self.levels)}."
            )
        return configured


class Catalogue(BaseModel):
    """The whole file: when it was checked, the defaults, and the rows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checked: date
    default_model: str
    high_volume_model: str
    model: tuple[ModelRow, ...]

    @model_validator(mode="after")
    def _defaults_are_current(self) -> Catalogue:
        seen: set[tuple[str, str]] = set()
        for each in self.model:
            key = (each.service, each.id.lower())
            if key in seen:
                raise ValueError(f"{each.service} {each.id} is listed twice")
            seen.add(key)
        for what, name in (
            ("default_model", self.default_model),
            ("high_volume_model", self.high_volume_model),
        ):
            row = self.find("gemini", name)
            if row is None or row.is_pattern:
                raise ValueError(f"{what} {name!r} has no gemini row")
            if row.lifecycle(self.checked) in ("deprecated", "shutdown"):
                raise ValueError(f"{what} {name!r} is {row.lifecycle(self.checked)} on {self.checked}")
            if row.price(self.checked) is None:
                raise ValueError(f"{what} {name!r} has no price")
        return self

    def find(self, service: str, model: str) -> ModelRow | None:
        """The row for `model` as `service` serves it: an exact id first, then a family pattern."""
        rows = [row for row in self.model if row.service == service and row.matches(model)]
        exact = [row for row in rows if not row.is_pattern]
        found = exact or rows
        return found[0] if found else None

    def resolve(self, model: str) -> str:
        """A model name with the catalogue's alias (`high-volume`) replaced by the model it stands for."""
        return self.high_volume_model if model.strip().lower() == HIGH_VOLUME else model


def service_for(backend: str, openai_server: str | None) -> str:
    """The catalogue service a backend's requests go to; replays and `none` are Gemini-shaped (the sample
    answers are keyed as the default Gemini model's requests)."""
    if backend == "openai":
        return openai_server or "generic"
    return "gemini"


def lifecycle_notice(row: ModelRow | None, today: date) -> str | None:
    """One line for a deprecated or shut-down model, naming where to go; None for a current or unknown model."""
    if row is None:
        return None
    status = row.lifecycle(today)
    nxt = row.successor()
    if status == "deprecated":
        when = f" since {row.deprecated_on}" if row.deprecated_on else ""
        routed = f"; the service routes its calls to {row.routed_to}" if row.routed_to else ""
        end = f", shutdown {row.shutdown_on}" if row.shutdown_on else ", no shutdown date announced"
        move = f". Move to {nxt} (ARBITER_LLM_MODEL / --llm-model)" if nxt else ""
        return f"The model {row.id} is deprecated{when}{end}{routed}{move}."
    if status == "shutdown":
        move = f"; use {nxt} (ARBITER_LLM_MODEL / --llm-model)" if nxt else "; choose a current model"
        return f"The model {row.id} was shut down on {row.shutdown_on}{move}."
    return None


def fit_output(
    requested: int, answer: int, prompt_tokens: int, row: ModelRow | None, served_context: int | None = None
) -> int | None:
    """The output token limit to ask for: `requested` (answer plus thinking allowance) cut to the model's
    output cap and to what the context leaves after the prompt. None when even min(answer, 1024) tokens do
    not fit (the request cannot succeed)."""
    context = served_context or (row.context_window if row else None)
    limit = requested
    if row is not None:
        limit = min(limit, row.output_cap)
    if context is not None:
        limit = min(limit, context - prompt_tokens)
    return limit if limit >= min(answer, 1024) else None


@cache
def _load(path: Path | None) -> Catalogue:
    try:
        if path is None:
            text = resources.files("arbiter.llm").joinpath("models.toml").read_text(encoding="utf-8")
        else:
            text = path.read_text(encoding="utf-8")
        return Catalogue.model_validate(tomllib.loads(text))
    except OSError as exc:
        raise ConfigError(f"The model catalogue {path} cannot be read ({type(exc).__name__}).") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"The model catalogue is not valid TOML: {exc}.") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(
            f"The model catalogue is invalid at {where or 'the top'}: {first['msg']}."
        ) from None


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    """The catalogue at `path` (LLMSettings.catalogue_path, from $ARBITER_MODEL_CATALOGUE), else the bundled
    models.toml; each file is read once."""
    return _load(Path(path).expanduser() if path else None)
