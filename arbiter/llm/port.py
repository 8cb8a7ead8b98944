"""Requests, responses, errors and the backend protocol of the LLM port.

    LLMError(kind=...)            every way a call can fail; verifiers turn it into ERRORED (never a pass)
     └── BudgetExhausted          a token budget ran out: the document escalates with `budget_exhausted`

A backend answers one request with raw text and usage; the client (arbiter/llm/client.py) adds the
disk cache, JSON and schema validation, budgets, the rate limiter and the concurrency bound.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from arbiter.contracts import TokenUsage
from arbiter.errors import ServiceError

ErrorKind = Literal[
    "config",  # backend misconfigured (no key, unknown model)
    "network_disabled",  # tests switched real calls off
    "timeout",
    "rate_limited",  # 429 after the transport retries gave up
    "transport",  # connection errors, 5xx after retries
    "blocked",  # safety or policy block, or a prompt refusal
    "truncated",  # finish reason MAX_TOKENS or JSON cut short
    "invalid_json",
    "off_schema",  # valid JSON that does not match the response schema
    "replay_miss",  # the replay backend has no recording for this request
    "budget_exhausted",
    "deferred",  # batch mode: the request was queued for a batch job, no answer yet
]


class LLMError(ServiceError):
    """A call that produced no usable answer. `message` is plain English and never quotes the prompt."""

    def __init__(
        self, kind: ErrorKind, message: str, *, retryable: bool = False, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.retryable = retryable
        # the server's own retry delay on a 429 (seconds): the client pauses every caller until then
        self.retry_after_s = retry_after_s


def offline(message: str) -> LLMError:
    """The error a real backend raises when the network switch is off (arbiter.net.switch.require_network)."""
    return LLMError("network_disabled", message)


class BudgetExhausted(LLMError):
    def __init__(self, message: str) -> None:
        super().__init__("budget_exhausted", message)


Purpose = Literal["classify", "V2", "V3", "V4", "check"]  # check: the preflight (arbiter/llm/preflight.py)


@dataclass(frozen=True)
class LLMRequest:
    """One structured request. Document text belongs in `prompt`, inside the delimiters the prompt files use."""

    purpose: Purpose
    model: str
    system: str
    prompt: str
    response_schema: dict[str, Any]
    temperature: float = 0.0
    max_output_tokens: int = 8192  # the answer's own allowance; thinking gets thinking_budget on top
    doc_id: str | None = None  # for budgets, batch keys and logs; deliberately not part of the cache key
    # Tokens the model may spend thinking before it answers (None: the model's default). The client sets it
    # from LLMSettings.thinking_budget; the output limit sent to the model is output_limit().
    thinking_budget: int | None = None
    # The thinking level / reasoning effort sent instead of a budget (catalogue.py: the model's levels); the
    # client sets it from the settings and the catalogue row. None: no level is sent.
    thinking_level: str | None = None

    def output_limit(self) -> int:
        """The output token limit to send: the answer's allowance plus the thinking budget."""
        return self.max_output_tokens + max(0, self.thinking_budget or 0)

    def key(self) -> str:
        """sha256 of everything that determines the answer: equal keys may share a cached response."""
        fields: dict[str, Any] = {
            "model": self.model,
            "system": self.system,
            "prompt": self.prompt,
            "schema": self.response_schema,
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens,
        }
        if self.thinking_budget is not None:  # absent, keys stay those of requests made before it existed
            fields["thinking_budget"] = self.thinking_budget
        if self.thinking_level is not None:  # likewise: a level changes the answer, so it changes the key
            fields["thinking_level"] = self.thinking_level
        canonical = json.dumps(
            fields,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RawCompletion:
    """What a backend returns: the model's text and what it cost. The client parses and validates it."""

    text: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = ""
    finish_reason: str | None = None


@dataclass(frozen=True)
class LLMResponse:
    """A validated answer: `data` is the parsed JSON and matches the request's response schema."""

    data: Any
    text: str
    usage: TokenUsage
    latency_ms: float
    cached: bool
    model: str
    finish_reason: str | None = None


# Finish reasons of a complete answer (Gemini: STOP; OpenAI-compatible servers: stop). Anything else is an
# answer cut short (MAX_TOKENS, length), withheld (SAFETY, content_filter, ...) or of an unknown kind.
_FINISHED = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED", "END_TURN"})
_CUT_SHORT = frozenset({"MAX_TOKENS", "LENGTH"})
_WITHHELD = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "MODEL_ARMOR",
        "LANGUAGE",
        "OTHER",
        "CONTENT_FILTER",
        "REFUSAL",
    }
)


def check_finish(finish_reason: str | None, source: str) -> None:
    """Raise LLMError unless `finish_reason` marks a complete answer (None counts as complete).

    Every backend's answer passes here (the client checks each one, replays and cache entries included),
    so a cut-short or blocked answer is an error (the verifier ERRORED), never a pass.
    """
    if finish_reason is None or not str(finish_reason).strip():
        return
    reason = str(finish_reason).strip().upper()
    if reason in _FINISHED:
        return
    if reason in _CUT_SHORT:
        raise LLMError("truncated", f"The {source} answer was cut short at its output limit ({reason}).")
    if reason in _WITHHELD:
        raise LLMError("blocked", f"The {source} answer was withheld or blocked ({reason}).")
    raise LLMError("invalid_json", f"The {source} answer stopped without being complete ({reason}).")


class LLMBackend(Protocol):
    name: str

    def complete(self, request: LLMRequest) -> RawCompletion:
        """Answer one request or raise LLMError; never return text that was blocked or cut short."""
        ...


class LLM(Protocol):
    """What verifiers and classifiers receive (VerifyContext.llm): the client, or a fake in tests."""

    def complete(self, request: LLMRequest) -> LLMResponse: ...
