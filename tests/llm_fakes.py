"""Fakes for the LLM seams: FakeBackend (scripted RawCompletions behind the real client) and FakeLLM (the `LLM`
protocol directly, for verifier and classifier tests). Both record requests and are thread-safe.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from arbiter.contracts import TokenUsage
from arbiter.llm.client import parse_answer
from arbiter.llm.port import LLMError, LLMRequest, LLMResponse, RawCompletion

# A backend reply: a completion, an error to raise, a callable answering the request, or data to send as JSON.
Reply = RawCompletion | LLMError | Callable[[LLMRequest], Any] | Mapping[str, Any] | list[Any] | str


def completion(
    data: Any,
    *,
    input_tokens: int = 100,
    output_tokens: int = 20,
    model: str = "fake-model",
    finish_reason: str = "STOP",
) -> RawCompletion:
    """A RawCompletion whose text is `data` as JSON (a str is sent as it is, e.g. to test broken JSON)."""
    text = data if isinstance(data, str) else json.dumps(data)
    usage = TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return RawCompletion(text=text, usage=usage, model=model, finish_reason=finish_reason)


def _to_completion(reply: Any, request: LLMRequest) -> RawCompletion:
    if isinstance(reply, LLMError):
        raise reply
    if callable(reply):
        return _to_completion(reply(request), request)
    if isinstance(reply, RawCompletion):
        return reply
    return completion(reply)


class FakeBackend:
    """An LLMBackend that answers from a script (in order, then `default`), with optional latency and jitter.

    `history` holds every request; `max_in_flight` the most calls seen running at once.
    """

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        latency_s: float = 0.0,
        jitter_s: float = 0.0,
        seed: int = 0,
        name: str = "fake",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        self._script = list(script)
        self.default = default
        self.latency_s = latency_s
        self.jitter_s = jitter_s
        self._random = random.Random(seed)
        self._sleep = sleep
        self._lock = threading.Lock()
        self.history: list[LLMRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.history)

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def complete(self, request: LLMRequest) -> RawCompletion:
        with self._lock:
            self.history.append(request)
            if self._script:
                reply: Reply | None = self._script.pop(0)
            else:
                reply = self.default
            delay = self.latency_s + (
                self._random.uniform(-self.jitter_s, self.jitter_s) if self.jitter_s else 0.0
            )
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if delay > 0:
                self._sleep(delay)
            if reply is None:
                raise AssertionError(f"FakeBackend has no reply left for request {len(self.history)}")
            return _to_completion(reply, request)
        finally:
            with self._lock:
                self.in_flight -= 1


class FakeLLM:
    """An `LLM` answering with scripted data: by purpose first (for concurrent verifiers), then in order.

    A reply is data (becomes LLMResponse.data), an LLMResponse, an LLMError to raise, or a callable(request).
    With validate=True, data is checked against the request's schema exactly as the real client does.
    """

    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        by_purpose: Mapping[str, Any] | None = None,
        default: Any = None,
        validate: bool = True,
        usage: TokenUsage | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self._script = list(script)
        self.by_purpose = dict(by_purpose or {})
        self.default = default
        self.validate = validate
        self.token_usage = usage or TokenUsage(input_tokens=100, output_tokens=20)
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self.history: list[LLMRequest] = []

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.history)

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.history.append(request)
            if request.purpose in self.by_purpose:
                reply = self.by_purpose[request.purpose]
            elif self._script:
                reply = self._script.pop(0)
            else:
                reply = self.default
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        while callable(reply) and not isinstance(reply, LLMError):
            reply = reply(request)
        if isinstance(reply, LLMError):
            raise reply
        if isinstance(reply, LLMResponse):
            return reply
        if reply is None:
            raise AssertionError(f"FakeLLM has no reply for a {request.purpose} request")
        text = reply if isinstance(reply, str) else json.dumps(reply)
        data = parse_answer(text, request.response_schema) if self.validate else reply
        return LLMResponse(
            data=data,
            text=text,
            usage=self.token_usage,
            latency_ms=self.latency_s * 1000,
            cached=False,
            model=request.model,
            finish_reason="STOP",
        )
