"""The `openai` backend: OpenAI's own API or any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp
server) over httpx, for on-premises models when patient data may not leave the site. The body per server
family is built in openai_request.py; transport retries live here; JSON and schema checks are the client's.
A reasoning model's answer is the message's `content`; its reasoning (`reasoning_content`, vLLM's
`reasoning`) is never read.
"""

from __future__ import annotations

import logging
import os
import random
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from arbiter.contracts import TokenUsage
from arbiter.errors import ServiceError
from arbiter.llm.config import LLMSettings
from arbiter.llm.openai_request import RESPONSE_FORMAT_ENV, chat_body
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion, offline
from arbiter.net.retry import Retryable, RetryPolicy, call_with_retries, retry_after_s
from arbiter.net.switch import require_network

if TYPE_CHECKING:  # imported where a request is made: a run without this backend never loads httpx (5 MB)
    import httpx

log = logging.getLogger(__name__)

ResponseFormat = Literal["json_schema", "json_object"]
_SAFE_TOKEN = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


class _SchemaRefused(ServiceError):
    """A 400 to a json_schema request that speaks of the schema: a configuration error, never a silent switch
    to JSON mode (which would weaken every call of the run)."""


class OpenAICompatBackend:
    """POST {base_url}/chat/completions with a JSON Schema response format; answers a RawCompletion."""

    name = "openai"

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        response_format: ResponseFormat | None = None,
    ) -> None:
        self.settings = settings
        self.base_url = _normalise_base_url(settings.openai_base_url)
        self.api_key = settings.openai_api_key or None
        self.timeout_s = float(settings.timeout_s)
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.response_format: ResponseFormat = response_format or _format_from_env()
        self._client = http_client
        self._owns_client = http_client is None
        self._served_context: dict[str, int | None] = {}  # vLLM's max_model_len per model, read once

    # -- public -----------------------------------------------------------------------------------

    def complete(self, request: LLMRequest) -> RawCompletion:
        require_network(f"the {self.name} backend", offline)
        if not self.base_url:
            raise LLMError(
                "config",
                "Set ARBITER_OPENAI_BASE_URL to the endpoint of your OpenAI-compatible server, "
                "e.g. http://localhost:8000/v1 (vLLM) or http://localhost:11434/v1 (Ollama).",
            )
        body = self.request_body(request)
        started = time.perf_counter()
        try:
            payload = call_with_retries(
                lambda: self._post(body),
                self.retry,
                sleep=self.sleep,
                rng=self.rng,
                label=f"openai doc_id={request.doc_id} key={request.key()[:12]}",
            )
        except _SchemaRefused:
            raise LLMError(
                "config",
                "The model server refused the JSON Schema output format (HTTP 400). Arbiter does not switch to"
                f" JSON mode on its own: use a server and model with structured output, or set {RESPONSE_FORMAT_ENV}"
                "=json_object to ask for JSON mode with the schema in the instructions (answers are still"
                " validated against it).",
            ) from None
        completion = self._completion(payload, request, _sent_limit(body))
        log.info(
            "openai: ok doc_id=%s key=%s latency_ms=%.0f tokens_in=%d tokens_out=%d",
            request.doc_id,
            request.key()[:12],
            (time.perf_counter() - started) * 1000.0,
            completion.usage.input_tokens,
            completion.usage.output_tokens,
        )
        return completion

    def request_body(self, request: LLMRequest) -> dict[str, Any]:
        """The chat-completions body for one request (public so tests can read its shape)."""
        served = self.served_context(request.model) if self.settings.service() == "vllm" else None
        return chat_body(request, self.settings, self.response_format, served)

    def served_context(self, model: str) -> int | None:
        """vLLM's `max_model_len` for `model` from GET /v1/models (read once); None when it cannot be read, and
        the catalogue's context window applies."""
        if model not in self._served_context:
            self._served_context[model] = self._read_max_model_len(model)
        return self._served_context[model]

    def _read_max_model_len(self, model: str) -> int | None:
        import httpx

        try:
            response = self._http().get(f"{self.base_url}/models", headers=self._headers())
            entries = response.json().get("data") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == model:
                length = entry.get("max_model_len")
                return length if isinstance(length, int) and length > 0 else None
        return None

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    # -- one attempt ------------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        import httpx

        if self._client is None:
            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout_s))
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        try:
            response = self._http().post(
                f"{self.base_url}/chat/completions",
                json=body,
                headers=self._headers(),
                timeout=httpx.Timeout(self.timeout_s),
            )
        except httpx.TimeoutException:
            raise Retryable(
                LLMError(
                    "timeout",
                    f"The model server did not answer within {self.timeout_s:g} s, after "
                    f"{self.retry.attempts} attempts.",
                    retryable=True,
                )
            ) from None
        except httpx.TransportError as exc:
            raise Retryable(
                LLMError(
                    "transport",
                    f"Could not reach the model server at {self.base_url} ({type(exc).__name__}), after "
                    f"{self.retry.attempts} attempts.",
                    retryable=True,
                )
            ) from None
        status = response.status_code
        if status == 429:
            wait = retry_after_s(response.headers.get("retry-after"))
            raise Retryable(_rate_limited(wait), wait, rate_limited=True)
        if status >= 500:
            raise Retryable(
                LLMError(
                    "transport",
                    f"The model server kept failing (HTTP {status}{_error_code(response)}) after "
                    f"{self.retry.attempts} attempts.",
                    retryable=True,
                ),
                retry_after_s(response.headers.get("retry-after")) if status == 503 else None,
            )
        if status in (401, 403):
            raise LLMError(
                "config",
                f"The model server refused the credentials (HTTP {status}); set ARBITER_OPENAI_API_KEY "
                "(or OPENAI_API_KEY) to a key it accepts.",
            )
        if status == 404:
            raise LLMError(
                "config",
                f"The model server has no {self.base_url}/chat/completions or does not serve this model "
                "(HTTP 404); check ARBITER_OPENAI_BASE_URL (it usually ends in /v1) and ARBITER_LLM_MODEL.",
            )
        if status == 400 and body["response_format"]["type"] == "json_schema" and _refuses_schema(response):
            raise _SchemaRefused()
        if status >= 400:
            raise LLMError(
                "transport",
                f"The model server rejected the request (HTTP {status}{_error_code(response)}); the prompt "
                "may be too long for the model, or the server may not support JSON Schema output "
                f"(try {RESPONSE_FORMAT_ENV}=json_object).",
            )
        try:
            payload = response.json()
        except ValueError:
            raise LLMError(
                "transport", "The model server answered with something that is not a JSON response."
            ) from None
        if not isinstance(payload, dict):
            raise LLMError("transport", "The model server answered with an unexpected response shape.")
        return payload

    def _completion(
        self, payload: dict[str, Any], request: LLMRequest, limit: int | None = None
    ) -> RawCompletion:
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMError("transport", "The model server's response holds no answer (no choices).")
        choice = choices[0]
        found = choice.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        finish_reason = choice.get("finish_reason")
        finish = str(finish_reason) if finish_reason is not None else None
        if message.get("refusal"):
            raise LLMError("blocked", "The model refused to answer this request.")
        if finish == "content_filter":
            raise LLMError("blocked", "The model server's content filter blocked the answer.")
        if finish == "length":
            sent = limit if limit is not None else request.output_limit()
            raise LLMError(
                "truncated",
                f"The model's answer was cut off at its output limit ({sent} tokens, thinking included).",
            )
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        return RawCompletion(
            text=text,
            usage=_usage(payload.get("usage"), request, text),
            model=str(payload.get("model") or request.model),
            finish_reason=finish,
        )


# -- helpers --------------------------------------------------------------------------------------


def _normalise_base_url(raw: str | None) -> str:
    url = (raw or "").strip().rstrip("/")
    suffix = "/chat/completions"
    return url[: -len(suffix)] if url.endswith(suffix) else url


def _format_from_env() -> ResponseFormat:
    value = os.environ.get(RESPONSE_FORMAT_ENV, "").strip().lower()
    return "json_object" if value == "json_object" else "json_schema"


def _sent_limit(body: dict[str, Any]) -> int | None:
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return value if isinstance(value, int) else None


def _rate_limited(wait: float | None) -> LLMError:
    hint = f"; it asked to wait {wait:g} s" if wait is not None else ""
    return LLMError(
        "rate_limited",
        f"The model server kept refusing for too many requests (HTTP 429){hint}. Lower ARBITER_LLM_RPM "
        "or ARBITER_LLM_CONCURRENCY, or try again later.",
        retryable=True,
        retry_after_s=wait,
    )


_SCHEMA_WORDS = ("response_format", "json_schema", "schema", "strict", "grammar")


def _refuses_schema(response: httpx.Response) -> bool:
    """A 400 whose error speaks of the response format or schema (read here, never repeated)."""
    text = response.text.lower()
    return any(word in text for word in _SCHEMA_WORDS)


def _error_code(response: httpx.Response) -> str:
    """The server's error code or type when it is a short identifier; never its message (it may quote input)."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    for field in ("code", "type"):
        value = error.get(field)
        if isinstance(value, str | int) and _SAFE_TOKEN.match(str(value)):
            return f", {value}"
    return ""


def _usage(raw: Any, request: LLMRequest, text: str) -> TokenUsage:
    """The server's token counts; a server that omits them is charged an estimate (4 characters a token)."""
    if isinstance(raw, dict):
        prompt = raw.get("prompt_tokens")
        completion = raw.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int):
            return TokenUsage(input_tokens=max(prompt, 0), output_tokens=max(completion, 0))
    return TokenUsage(
        input_tokens=len(request.system + request.prompt) // 4,
        output_tokens=len(text) // 4,
    )
