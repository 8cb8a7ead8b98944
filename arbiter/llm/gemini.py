"""The `gemini` backend: google-genai (API key or Vertex AI) with transport retries and explicit handling of
finish reasons, safety blocks, truncation and 429s. JSON and schema checks are the client's.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

import httpx
from google.genai import Client, errors, types

from arbiter.contracts import TokenUsage
from arbiter.llm.catalogue import ModelRow
from arbiter.llm.config import LLMSettings
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion, check_finish, offline
from arbiter.net import google
from arbiter.net.switch import require_network

log = logging.getLogger(__name__)

# 429 is deliberately absent: the SDK's backoff ignores the server's RetryInfo delay, so a 429 surfaces at
# once as rate_limited with retry_after_s and the client's limiter pauses every caller for that long.
TRANSPORT_RETRY_CODES = (408, 500, 502, 503, 504)

# google-genai 3.x sends through httpx2 (a fork of httpx under its own names) unless given an httpx client:
# both packages' timeouts and connection errors must be recognised as such.
_TIMEOUTS: tuple[type[Exception], ...] = (httpx.TimeoutException,)
_TRANSPORT_ERRORS: tuple[type[Exception], ...] = (httpx.TransportError,)
try:
    import httpx2

    _TIMEOUTS += (httpx2.TimeoutException,)
    _TRANSPORT_ERRORS += (httpx2.TransportError,)
except ImportError:  # pragma: no cover - httpx2 comes with google-genai 3.x
    pass


@dataclass(frozen=True)
class GeminiRetry:
    """google-genai HttpRetryOptions for transport faults (timeouts, connection errors, 408 and 5xx)."""

    attempts: int = 4  # the first try plus three retries
    initial_delay_s: float = 1.0
    max_delay_s: float = 30.0
    exp_base: float = 2.0
    jitter_s: float = 1.0

    def options(self) -> types.HttpRetryOptions:
        return types.HttpRetryOptions(
            attempts=self.attempts,
            initial_delay=self.initial_delay_s,
            max_delay=self.max_delay_s,
            exp_base=self.exp_base,
            jitter=self.jitter_s,
            http_status_codes=list(TRANSPORT_RETRY_CODES),
        )


def make_genai_client(
    settings: LLMSettings,
    *,
    http_client: httpx.Client | None = None,
    retry: GeminiRetry | None = None,
    credentials: Any = None,
    client_args: dict[str, Any] | None = None,
) -> Client:
    """A google-genai Client from the settings; a missing key or Vertex project is LLMError("config").

    Without `http_client` the SDK builds its own default HTTP client (httpx2 in google-genai 3.x);
    `client_args` go to that client's constructor (tests pass a mock `transport` there).
    """
    http_options = types.HttpOptions(
        api_version=settings.api_version(),  # pinned: the SDK's own default moved from v1beta to v1
        timeout=max(1, round(settings.timeout_s * 1000)),
        retry_options=(retry or GeminiRetry()).options(),
        httpx_client=http_client,
        client_args=client_args,
    )
    try:
        if settings.vertexai:
            if not settings.google_cloud_project and not settings.gemini_api_key:
                raise LLMError(
                    "config",
                    "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION), or an API key"
                    " (GOOGLE_API_KEY).",
                )
            if settings.google_cloud_project:
                return Client(
                    vertexai=True,
                    project=settings.google_cloud_project,
                    location=settings.google_cloud_location,
                    credentials=credentials,
                    http_options=http_options,
                )
            return Client(vertexai=True, api_key=settings.gemini_api_key, http_options=http_options)
        if not settings.gemini_api_key:
            raise LLMError(
                "config",
                "No Gemini API key: set GOOGLE_API_KEY or GEMINI_API_KEY, or use Vertex AI with"
                " GOOGLE_GENAI_USE_VERTEXAI=1, GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION.",
            )
        return Client(vertexai=False, api_key=settings.gemini_api_key, http_options=http_options)
    except ValueError:
        # the SDK's own configuration checks; their text may echo settings, so it is not repeated
        raise LLMError(
            "config", "The Gemini client configuration is invalid (key, project or location)."
        ) from None


_GENERATION = re.compile(r"(?:^|/)gemini-(\d+)(?:[.-]|$)")


def gemini_generation(model: str) -> int:
    """The major generation in a Gemini model name (gemini-3.5-flash -> 3); 0 when it names none."""
    match = _GENERATION.search(model.lower())
    return int(match.group(1)) if match else 0


def thinking_config(request: LLMRequest, row: ModelRow | None = None) -> types.ThinkingConfig | None:
    """thinkingLevel when the request carries one (the client sets it from the catalogue: only levels the model
    takes), else thinkingBudget for a budget model or an uncatalogued one; never both (the API refuses that)."""
    if request.thinking_level:
        return types.ThinkingConfig(thinking_level=types.ThinkingLevel(request.thinking_level.upper()))
    if request.thinking_budget is None or (row is not None and row.thinking != "budget"):
        return None
    return types.ThinkingConfig(thinking_budget=request.thinking_budget)


def sends_temperature(request: LLMRequest, row: ModelRow | None) -> bool:
    """The catalogue says whether a model honours a custom temperature; for an uncatalogued model, Gemini 3 and
    later get none (Google's migration guide: below 1.0 it can loop until MAX_TOKENS; 3.6+ ignore it)."""
    if row is not None:
        return row.temperature
    return gemini_generation(request.model) < 3


def output_limit(request: LLMRequest, row: ModelRow | None) -> int:
    """The answer's allowance plus the thinking allowance, cut to the model's output cap (Gemini's context,
    a million tokens, holds any prompt Arbiter builds: pages are cut to 100,000 characters)."""
    limit = request.output_limit()
    return min(limit, row.output_cap) if row is not None else limit


def generation_config(request: LLMRequest, row: ModelRow | None = None) -> types.GenerateContentConfig:
    """Structured JSON output as the catalogue row says the model takes it; the schema goes as plain JSON
    Schema. The output limit is the answer's allowance plus the thinking allowance, within the model's cap.
    """
    return types.GenerateContentConfig(
        system_instruction=request.system or None,
        temperature=request.temperature if sends_temperature(request, row) else None,
        max_output_tokens=output_limit(request, row),
        thinking_config=thinking_config(request, row),
        response_mime_type="application/json",
        # response_json_schema takes the dict as is; response_schema would go through the SDK's OpenAPI
        # Schema model, which mangles dict-typed fields in API-key mode (ENGINEERING_NOTES)
        response_json_schema=json_schema_for_gemini(request.response_schema),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


# The JSON Schema keywords Gemini's responseJsonSchema supports (google-genai 3.3.0 GenerateContentConfig docs)
_GEMINI_KEYWORDS = frozenset(
    [
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    ]
)


def json_schema_for_gemini(schema: Any) -> Any:
    """The response schema cut down to the keywords Gemini supports (a `$ref` may only have `$` siblings).

    The model sees the looser schema; the client still validates the answer against the full one.
    """
    if isinstance(schema, list):
        return [json_schema_for_gemini(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "const" and "enum" not in schema:
            out["enum"] = [value]
        elif key not in _GEMINI_KEYWORDS or ("$ref" in schema and not key.startswith("$")):
            continue
        elif key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: json_schema_for_gemini(sub) for name, sub in value.items()}
        elif key in ("items", "prefixItems", "anyOf", "oneOf", "additionalProperties"):
            out[key] = json_schema_for_gemini(value)
        else:
            out[key] = value
    return out


class GeminiBackend:
    """Answers an LLMRequest through models.generate_content; every failure is an LLMError of a known kind."""

    name = "gemini"

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.Client | None = None,
        genai_client: Any = None,
        retry: GeminiRetry | None = None,
        credentials: Any = None,
        client_args: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self._http_client = http_client
        self._client_args = client_args
        self._retry = retry
        self._credentials = credentials
        self._client: Any = genai_client
        self._lock = threading.Lock()

    def client(self) -> Any:
        """The google-genai client, built on first use (so a missing key fails the call, not the import)."""
        with self._lock:
            if self._client is None:
                self._client = make_genai_client(
                    self.settings,
                    http_client=self._http_client,
                    retry=self._retry,
                    credentials=self._credentials,
                    client_args=self._client_args,
                )
            return self._client

    def complete(self, request: LLMRequest) -> RawCompletion:
        require_network(f"the {self.name} backend", offline)
        client = self.client()
        try:
            response = client.models.generate_content(
                model=request.model,
                contents=request.prompt,
                config=generation_config(request, self.settings.row(request.model)),
            )
        except Exception as exc:
            error = translate_error(exc, request.model)
            log.warning(
                "gemini call failed: kind=%s doc_id=%s key=%s error_type=%s",
                error.kind,
                request.doc_id,
                request.key()[:12],
                type(exc).__name__,
            )
            raise error from None
        return completion_from_response(response, request.model)


def completion_from_response(response: types.GenerateContentResponse, model: str) -> RawCompletion:
    """The text of a finished answer, or LLMError: blocked, truncated or empty answers are never returned.

    `response.parsed` is not consulted: it is None without an error for truncated or off-schema JSON.
    """
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason not in (
        None,
        types.BlockedReason.BLOCKED_REASON_UNSPECIFIED,
    ):
        raise LLMError("blocked", f"Gemini refused the prompt ({_name(feedback.block_reason)}).")
    if not response.candidates:
        raise LLMError("blocked", "Gemini returned no answer at all.")
    finish = _name(response.candidates[0].finish_reason)
    check_finish(finish, "Gemini")
    text = response.text
    if text is None or not text.strip():
        raise LLMError("invalid_json", "Gemini returned an empty answer.")
    return RawCompletion(
        text=text,
        usage=usage_of(response),
        model=response.model_version or model,
        finish_reason=finish or "STOP",
    )


def usage_of(response: types.GenerateContentResponse) -> TokenUsage:
    """Prompt and output tokens; thinking tokens are billed as output, so they count as output here."""
    meta = response.usage_metadata
    if meta is None:
        return TokenUsage()
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    return TokenUsage(input_tokens=meta.prompt_token_count or 0, output_tokens=output)


def translate_error(exc: Exception, model: str) -> LLMError:
    """One LLMError for anything google-genai or httpx raised; messages never quote the server's text."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, errors.APIError):
        return _api_error(exc, model)
    if isinstance(exc, _TIMEOUTS):
        return LLMError("timeout", "Gemini did not answer in time.", retryable=True)
    if isinstance(exc, _TRANSPORT_ERRORS):
        return LLMError("transport", "Gemini could not be reached (connection failed).", retryable=True)
    if _is_auth_error(exc):
        return LLMError("config", "Google Cloud credentials for Vertex AI were not found or were refused.")
    return LLMError("transport", f"The Gemini call failed unexpectedly ({type(exc).__name__}).")


def _api_error(exc: errors.APIError, model: str) -> LLMError:
    code = exc.code
    label = f"{code} {exc.status}" if exc.status else str(code)
    if code == 429:
        return LLMError(
            "rate_limited",
            f"Gemini's rate limit or quota was reached ({label}).",
            retryable=True,
            retry_after_s=google.retry_delay_s(exc.details),
        )
    if code == 408:
        return LLMError("timeout", f"Gemini timed out on the request ({label}).", retryable=True)
    if isinstance(exc, errors.ServerError) or code >= 500:
        return LLMError("transport", f"Gemini kept failing on its side ({label}).", retryable=True)
    if code in (401, 403) or google.api_key_invalid(exc.details):
        return LLMError(
            "config", f"Gemini refused the credentials ({label}): check the API key or Vertex AI access."
        )
    if code == 404:
        return LLMError(
            "config",
            f"Gemini does not know the model {model!r} or the resource ({label}): the model may be shut down"
            " or misspelt (ARBITER_LLM_MODEL / --llm-model), or the API version wrong (ARBITER_GEMINI_API_VERSION).",
        )
    if code == 400:
        return LLMError(
            "config",
            f"Gemini rejected the request as invalid ({label}): the model may not support this API version,"
            " structured output or the thinking setting (ARBITER_LLM_THINKING_BUDGET / ARBITER_LLM_THINKING_LEVEL),"
            " or the API key may be invalid.",
        )
    return LLMError("config", f"Gemini rejected the request ({label}).")


def _is_auth_error(exc: Exception) -> bool:
    try:
        from google.auth.exceptions import GoogleAuthError
    except ImportError:  # pragma: no cover - google-auth is a google-genai dependency
        return False
    return isinstance(exc, GoogleAuthError)


def _name(value: Any) -> str | None:
    """An enum member or a raw string from the API as its plain name."""
    if value is None:
        return None
    return str(getattr(value, "value", value))
