"""The LLM client: cache, budgets, concurrency bound and rate limit around a backend; parses and validates answers.

complete(): cache lookup by request hash (a hit costs no call and no budget) -> per-document and per-run
budget reservation -> concurrency semaphore + rate limiter -> backend -> JSON parse -> schema validation ->
cache write (+ replay recording) -> usage charged. Logs carry doc_id, key, kind, latency, tokens; never text.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

from arbiter.contracts import TokenUsage
from arbiter.errors import ConfigError
from arbiter.llm.budget import Reservation, TokenBudget
from arbiter.llm.cache import DiskCache
from arbiter.llm.config import LLMSettings
from arbiter.llm.port import (
    BudgetExhausted,
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    RawCompletion,
    check_finish,
)
from arbiter.llm.replay import write_replay
from arbiter.net.limiter import RateLimiter

log = logging.getLogger(__name__)

# when a 429 carries no retry delay, pause 2, 4, 8 ... seconds
_FALLBACK_BACKOFF_S = 2.0


def estimate_tokens(request: LLMRequest) -> int:
    """What a request may cost at most: ~4 characters a token for the input plus the whole output limit
    (the answer's allowance and the thinking budget)."""
    return (len(request.system) + len(request.prompt)) // 4 + request.output_limit()


def prepared(request: LLMRequest, settings: LLMSettings) -> LLMRequest:
    """The request with the settings' thinking budget and the catalogue's thinking level filled in (both are
    part of its key); a level the model rejects is LLMError("config"), never sent."""
    if request.thinking_budget is None:
        request = replace(request, thinking_budget=settings.thinking_budget)
    if request.thinking_level is None:
        try:
            level = settings.thinking_level_for(request.model)
        except ConfigError as exc:
            raise LLMError("config", str(exc)) from None
        if level is not None:
            request = replace(request, thinking_level=level)
    return request


def parse_answer(text: str, schema: dict[str, Any]) -> Any:
    """Parse the model's text as JSON and validate it; raise LLMError invalid_json / off_schema otherwise."""
    try:
        data = json.loads(_strip_fence(text))
    except ValueError:
        raise LLMError(
            "invalid_json", "The model's answer is not valid JSON (it may have been cut short)."
        ) from None
    try:
        validator = validator_for(schema)(schema)
        error = best_match(validator.iter_errors(data))
    except SchemaError:
        raise LLMError("config", "The response schema for this request is itself invalid.") from None
    if error is not None:
        where = "/" + "/".join(str(part) for part in error.absolute_path)
        raise LLMError(
            "off_schema",
            f"The model's answer does not match the expected format at {where} (failed check: {error.validator}).",
        )
    return data


def _strip_fence(text: str) -> str:
    """Accept one ```json fenced block, which some on-premises models add despite JSON mode."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and stripped.count("```") == 2:
        body = stripped[3:-3]
        first_line, _, rest = body.partition("\n")
        return rest if first_line.strip().lower() in {"", "json"} else body
    return text


@dataclass
class Usage:
    """Counters for one document or the whole run. Calls are backend requests; cache hits cost nothing."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: bool = False  # tokens were spent on a model whose price is unknown
    rate_limit_retries: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def cost(self) -> float | None:
        """The estimated cost, or None when it is unknown (never a misleading $0)."""
        return None if self.cost_unknown else self.cost_usd

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_unknown else round(self.cost_usd, 6),
            "rate_limit_retries": self.rate_limit_retries,
            "errors": dict(sorted(self.errors.items())),
        }


class LLMClient:
    """Thread-safe; one per run. Use for_document(doc_id) for the `LLM` each document's verifiers receive.

    complete() on the client itself applies only the run budget. With settings.use_cache False (--no-cache)
    cached answers are not read, but fresh answers are still written so the next run can reuse them.
    """

    def __init__(
        self,
        backend: LLMBackend,
        settings: LLMSettings,
        cache: DiskCache | None = None,
        *,
        limiter: RateLimiter | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.backend = backend
        self.settings = settings
        self.cache = cache
        self.limiter = limiter or RateLimiter(settings.rpm, burst=settings.concurrency)
        self.run_budget = TokenBudget(settings.run_token_budget, scope="run")
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._clock = clock
        self._lock = threading.Lock()
        self._usage = Usage()

    @property
    def name(self) -> str:
        return self.backend.name

    def for_document(self, doc_id: str, *, token_budget: int | None = None) -> DocumentLLM:
        """An `LLM` for one document with its own budget (settings.doc_token_budget unless given)."""
        limit = self.settings.doc_token_budget if token_budget is None else token_budget
        return DocumentLLM(self, doc_id, TokenBudget(limit, scope="document"))

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self._complete(request, None, None)

    def totals(self) -> dict[str, Any]:
        """Run totals: backend, model, calls, cache_hits, input/output tokens, cost_usd (None: price
        unknown), the price used, errors by kind."""
        notes = getattr(self.backend, "notes", None)
        with self._lock:
            totals = {
                "backend": self.name,
                "model": self.settings.model,
                **self._usage.as_dict(),
                "price": self.settings.price_note(),
            }
        if callable(notes) and (said := list(notes())):
            totals["notes"] = said  # e.g. the OpenAI-compatible backend's fallback to JSON mode
        return totals

    def _complete(self, request: LLMRequest, budget: TokenBudget | None, usage: Usage | None) -> LLMResponse:
        started = self._clock()
        key = request.key()
        try:
            request = prepared(request, self.settings)
            key = request.key()
            cached = self._from_cache(request, key)
            if cached is not None:
                self._count(usage, cache_hits=1)
                log.debug("llm cache hit doc=%s purpose=%s key=%s", request.doc_id, request.purpose, key[:12])
                return LLMResponse(
                    data=cached[0],
                    text=cached[1].text,
                    usage=TokenUsage(),
                    latency_ms=(self._clock() - started) * 1000,
                    cached=True,
                    model=cached[1].model or request.model,
                    finish_reason=cached[1].finish_reason,
                )
            estimate = estimate_tokens(request)
            held = self._reserve(budget, estimate)
            raw: RawCompletion | None = None
            try:
                raw = self._call(request, usage)
                data = parse_answer(raw.text, request.response_schema)
            finally:
                spent = _spent(raw, estimate)
                self.run_budget.settle(held[0], spent)
                if budget is not None and held[1] is not None:
                    budget.settle(held[1], spent)
                if raw is not None:
                    self._charge(usage, raw.usage)
        except LLMError as error:
            self._count(usage, error=error.kind)
            # an exhausted budget or a batch deferral is an expected outcome, not a failure worth a warning
            level = logging.INFO if error.kind in {"budget_exhausted", "deferred"} else logging.WARNING
            log.log(
                level,
                "llm call failed doc=%s purpose=%s key=%s kind=%s",
                request.doc_id,
                request.purpose,
                key[:12],
                error.kind,
            )
            raise
        self._store(request, key, raw)
        latency_ms = (self._clock() - started) * 1000
        log.info(
            "llm call doc=%s purpose=%s key=%s latency_ms=%.0f input_tokens=%d output_tokens=%d",
            request.doc_id,
            request.purpose,
            key[:12],
            latency_ms,
            raw.usage.input_tokens,
            raw.usage.output_tokens,
        )
        return LLMResponse(
            data=data,
            text=raw.text,
            usage=raw.usage,
            latency_ms=latency_ms,
            cached=False,
            model=raw.model or request.model,
            finish_reason=raw.finish_reason,
        )

    def _from_cache(self, request: LLMRequest, key: str) -> tuple[Any, RawCompletion] | None:
        if self.cache is None or not self.settings.use_cache:
            return None
        raw = self.cache.get(key)
        if raw is None:
            return None
        try:
            check_finish(raw.finish_reason, "cached")
            return parse_answer(raw.text, request.response_schema), raw
        except LLMError:
            log.warning("llm cache entry %s no longer validates; asking the model again", key[:12])
            return None

    def _reserve(self, budget: TokenBudget | None, estimate: int) -> tuple[Reservation, Reservation | None]:
        try:
            document = budget.reserve(estimate) if budget is not None else None
            try:
                return self.run_budget.reserve(estimate), document
            except LLMError:
                if budget is not None and document is not None:
                    budget.release(document)
                raise
        except BudgetExhausted as exhausted:
            if self.settings.price_known:
                raise
            # a token budget says what it cannot: what those tokens cost
            raise BudgetExhausted(
                f"{exhausted.message} Their cost is {self.settings.price_note()}."
            ) from None

    def _call(self, request: LLMRequest, usage: Usage | None) -> RawCompletion:
        """One backend answer inside the concurrency bound; a 429 pauses every caller, then retries."""
        attempt = 0
        with self._slots:
            while True:
                self.limiter.acquire()
                self._count(usage, calls=1)
                try:
                    return self._ask_backend(request)
                except LLMError as error:
                    if error.kind != "rate_limited" or attempt >= self.settings.rate_limit_retries:
                        raise
                    delay = error.retry_after_s
                    if delay is None:
                        delay = _FALLBACK_BACKOFF_S * 2**attempt
                    log.info("llm rate limited key=%s; pausing all callers %.1fs", request.key()[:12], delay)
                    self.limiter.penalise(delay)
                    self._count(usage, retries=1)
                    attempt += 1

    def _ask_backend(self, request: LLMRequest) -> RawCompletion:
        """The backend's answer; an unexpected exception becomes a transport LLMError so the call fails closed."""
        try:
            raw = self.backend.complete(request)
        except LLMError:
            raise
        except Exception as exc:
            log.error("llm backend %s raised %s key=%s", self.name, type(exc).__name__, request.key()[:12])
            raise LLMError(
                "transport", f"The {self.name} backend failed unexpectedly ({type(exc).__name__})."
            ) from None
        if not isinstance(raw, RawCompletion):
            raise LLMError("transport", f"The {self.name} backend returned no answer.")
        check_finish(raw.finish_reason, self.name)  # every backend, replays included
        return raw

    def _store(self, request: LLMRequest, key: str, raw: RawCompletion) -> None:
        """Cache and record a fresh answer; a disk problem costs the next run a call, not this one its answer."""
        try:
            if self.cache is not None:
                self.cache.put(key, raw, request.model)
            if self.settings.record_dir is not None:
                write_replay(self.settings.record_dir, request, raw, note="recorded from a live run")
        except OSError as exc:
            log.warning("llm answer key=%s not stored (%s)", key[:12], type(exc).__name__)

    def _charge(self, usage: Usage | None, tokens: TokenUsage) -> None:
        cost = self.settings.cost_usd(tokens.input_tokens, tokens.output_tokens)
        with self._lock:
            for counter in (self._usage, usage):
                if counter is not None:
                    counter.input_tokens += tokens.input_tokens
                    counter.output_tokens += tokens.output_tokens
                    if cost is None:
                        counter.cost_unknown = True
                    else:
                        counter.cost_usd += cost

    def _count(
        self,
        usage: Usage | None,
        *,
        calls: int = 0,
        cache_hits: int = 0,
        retries: int = 0,
        error: str | None = None,
    ) -> None:
        with self._lock:
            for counter in (self._usage, usage):
                if counter is not None:
                    counter.calls += calls
                    counter.cache_hits += cache_hits
                    counter.rate_limit_retries += retries
                    if error is not None:
                        counter.errors[error] += 1


def _spent(raw: RawCompletion | None, estimate: int) -> int:
    """Tokens to charge: the reported usage; the estimate when a backend answered but reported none."""
    if raw is None:
        return 0
    total = raw.usage.input_tokens + raw.usage.output_tokens
    return total if total > 0 else estimate


class DocumentLLM:
    """The `LLM` one document's classifier and verifiers share: its own budget, plus the run's."""

    def __init__(self, client: LLMClient, doc_id: str, budget: TokenBudget) -> None:
        self.client = client
        self.doc_id = doc_id
        self.budget = budget
        self._usage = Usage()

    def complete(self, request: LLMRequest) -> LLMResponse:
        if request.doc_id is None:
            request = replace(request, doc_id=self.doc_id)
        return self.client._complete(request, self.budget, self._usage)

    def usage(self) -> tuple[int, TokenUsage, float | None]:
        """(backend calls, tokens, estimated cost in USD or None when the model's price is unknown)."""
        with self.client._lock:
            u = self._usage
            return u.calls, TokenUsage(input_tokens=u.input_tokens, output_tokens=u.output_tokens), u.cost()

    def stats(self) -> dict[str, Any]:
        """The same counters as LLMClient.totals(), for this document."""
        with self.client._lock:
            return {"doc_id": self.doc_id, **self._usage.as_dict()}
