"""The LLM preflight: one minimal structured-output call that proves the key, the model name, the API version
and schema support before anything else runs (`arbiter llm check`, and the start of `arbiter run` with
`--llm gemini|openai`). A failure names the reason and what to change; a run then stops at once (exit 2)
instead of escalating every document as `verifier_errored`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from arbiter.errors import ConfigError
from arbiter.llm.client import parse_answer, prepared
from arbiter.llm.config import LLMSettings
from arbiter.llm.factory import build_backend
from arbiter.llm.port import LLMBackend, LLMError, LLMRequest, check_finish

log = logging.getLogger(__name__)

LIVE_BACKENDS = ("gemini", "openai")
ECHO = "arbiter-preflight"
CHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "echo": {"type": "string", "enum": [ECHO]}},
    "required": ["ok", "echo"],
    "additionalProperties": False,
}
CHECK_ANSWER_TOKENS = 64  # the answer is ~12 tokens; thinking gets its own budget on top

# What to change, per kind of failure (the error's own message says what went wrong).
_FIXES: dict[str, str] = {
    "config": "Fix the setting named above and run `arbiter llm check` again.",
    "network_disabled": "Real requests are switched off in this process (tests); nothing can be checked.",
    "timeout": "Check the network path to the service (proxy, firewall) or raise ARBITER_LLM_TIMEOUT_S.",
    "transport": "Check that the service is reachable from here (a proxy needs HTTPS_PROXY) and that the"
    " model is still served (ARBITER_LLM_MODEL / --llm-model).",
    "transport:openai": "Check that the server at ARBITER_OPENAI_BASE_URL is running and reachable from here,"
    " and that it serves the model (ARBITER_LLM_MODEL / --llm-model).",
    "rate_limited": "The key has no quota left at the moment: wait, or use a key or project with quota.",
    "blocked": "The service withheld even a trivial answer: check the account's safety settings and the model.",
    "invalid_json": "Choose a model that supports structured JSON output (ARBITER_LLM_MODEL); for an"
    " OpenAI-compatible server try ARBITER_OPENAI_RESPONSE_FORMAT=json_object.",
    "off_schema": "Choose a model that follows a JSON Schema (ARBITER_LLM_MODEL); for an OpenAI-compatible"
    " server try ARBITER_OPENAI_RESPONSE_FORMAT=json_object.",
}


@dataclass(frozen=True)
class CheckResult:
    """What `arbiter llm check` prints: ok, or the reason and what to change."""

    ok: bool
    backend: str
    model: str
    api_version: str | None
    message: str
    fix: str = ""
    kind: str | None = None
    latency_ms: float = 0.0
    price: str = ""
    warning: str = ""  # the model is deprecated: where to move (one line)

    def line(self) -> str:
        model = self.model or "(no model named)"
        where = f"{self.backend} {model}" + (f" (API {self.api_version})" if self.api_version else "")
        if self.ok:
            return f"LLM check passed: {where}: {self.message} Price: {self.price}."
        return f"LLM check failed: {where}: {self.message} {self.fix}".strip()


def truncated_fix(settings: LLMSettings) -> str:
    """What to change when the check's answer was cut off: the variable that really bounds this model's
    thinking (the catalogue row says whether it takes levels, a budget or neither)."""
    row = settings.row()
    allowance = (
        f"ARBITER_LLM_THINKING_BUDGET (the output allowance for thinking, now {settings.thinking_budget:,})"
    )
    if row is not None and row.thinking == "levels":
        return (
            f"The output limit was used up by thinking: raise {allowance} or set ARBITER_LLM_THINKING_LEVEL="
            f"{row.levels[0]} ({row.id} takes {', '.join(row.levels)})."
        )
    if settings.backend == "openai" and settings.service() == "generic":
        return (
            f"The output limit was used up, by a reasoning model's thinking if it is one: raise {allowance}; a"
            " thinking level reaches the model only with ARBITER_OPENAI_SERVER=vllm|llamacpp|openai."
        )
    return f"The output limit was used up by thinking: raise {allowance}."


def check_request(settings: LLMSettings) -> LLMRequest:
    """The check call: a fixed instruction, no document text, the smallest schema-bound answer, thinking as a
    run's requests have it (the catalogue's level)."""
    request = LLMRequest(
        purpose="check",
        model=settings.model,
        system="You answer configuration checks of a document verification service.",
        prompt=f'Answer with the JSON object {{"ok": true, "echo": "{ECHO}"}} and nothing else.',
        response_schema=CHECK_SCHEMA,
        temperature=0.0,
        max_output_tokens=CHECK_ANSWER_TOKENS,
        thinking_budget=settings.thinking_budget,
    )
    return prepared(request, settings)


def missing_configuration(settings: LLMSettings) -> str | None:
    """The variables a live backend still needs (checked without any call), or None when nothing is missing."""
    if settings.backend == "gemini":
        if settings.vertexai:
            if not settings.google_cloud_project and not settings.gemini_api_key:
                return (
                    "Vertex AI is switched on (GOOGLE_GENAI_USE_VERTEXAI) but has no project: set "
                    "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (credentials from "
                    "GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`)."
                )
            return None
        if not settings.gemini_api_key:
            return (
                "--llm gemini needs an API key: set GOOGLE_API_KEY (or GEMINI_API_KEY), or use Vertex AI with "
                "GOOGLE_GENAI_USE_VERTEXAI=1, GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION."
            )
    if settings.backend == "openai" and not (settings.openai_base_url or "").strip():
        return (
            "--llm openai needs the server's address: set ARBITER_OPENAI_BASE_URL (e.g. "
            "http://localhost:8000/v1), and ARBITER_OPENAI_API_KEY if the server wants a key."
        )
    if settings.backend == "openai" and not settings.model.strip():
        return (
            "--llm openai needs the name the server gives its model: set ARBITER_LLM_MODEL or pass "
            "--llm-model (Arbiter's default, a Gemini model, is not served there)."
        )
    return None


def check(settings: LLMSettings, backend: LLMBackend | None = None) -> CheckResult:
    """Run the preflight once: configuration, then one structured call straight to the backend (no cache)."""
    api_version = settings.api_version() if settings.backend == "gemini" else None

    def result(ok: bool, message: str, kind: str | None = None, latency_ms: float = 0.0) -> CheckResult:
        return CheckResult(
            ok=ok,
            backend=settings.backend,
            model=settings.model,
            api_version=api_version,
            message=message,
            fix="" if ok else _fix(settings, kind),
            kind=kind,
            latency_ms=latency_ms,
            price=settings.price_note(),
            warning=warning,
        )

    warning = ""
    if settings.backend not in LIVE_BACKENDS:
        return result(True, f"the {settings.backend} backend makes no live calls.")
    missing = missing_configuration(settings)
    if missing is not None:
        return result(False, missing, "config")
    try:
        warning = settings.require_servable() or ""
    except ConfigError as refused:
        return result(False, str(refused), "model")
    started = time.perf_counter()
    try:
        backend = backend if backend is not None else build_backend(settings)
        if backend is None:  # pragma: no cover - a live backend name always builds one
            raise LLMError("config", "No LLM backend is configured.")
        raw = backend.complete(check_request(settings))
        check_finish(raw.finish_reason, settings.backend)
        data = parse_answer(raw.text, CHECK_SCHEMA)
    except LLMError as error:
        return result(False, error.message, error.kind, (time.perf_counter() - started) * 1000)
    except Exception as exc:  # the check must end in a message, whatever the backend raised
        message = f"The {settings.backend} backend failed unexpectedly ({type(exc).__name__})."
        return result(False, message, "transport")
    latency_ms = (time.perf_counter() - started) * 1000
    served = f" (served as {raw.model})" if raw.model and raw.model != settings.model else ""
    if data.get("ok") is not True:
        return result(False, "The model answered, but not with the expected check answer.", "off_schema")
    return result(
        True,
        f"key accepted, model answered{served} with schema-valid JSON in {latency_ms:.0f} ms.",
        None,
        latency_ms,
    )


def _fix(settings: LLMSettings, kind: str | None) -> str:
    if kind == "truncated":
        return truncated_fix(settings)
    if kind == "model":
        return ""
    return _FIXES.get(f"{kind}:{settings.backend}", _FIXES.get(kind or "", ""))


class PreflightFailed(ConfigError):
    """The preflight failed: a run stops at its start (exit 2) with the reason and what to change."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.line())
        self.result = result


def require_ready(settings: LLMSettings, backend: LLMBackend | None = None) -> CheckResult | None:
    """The preflight of `arbiter run` and `arbiter verify`: None when nothing is live or it is switched off,
    else the passed check; raises PreflightFailed otherwise. A replay folder that does not exist stops it too
    (every request would miss), with how to record one."""
    if settings.backend == "replay" and backend is None and not settings.replay_dir.is_dir():
        from arbiter.llm.replay import ReplayBackend

        raise PreflightFailed(
            CheckResult(
                ok=False,
                backend=settings.backend,
                model=settings.model,
                api_version=None,
                message=ReplayBackend(settings.replay_dir).folder_missing(),
                kind="config",
            )
        )
    if settings.backend not in LIVE_BACKENDS:
        return None
    if not settings.preflight:
        missing = missing_configuration(settings)  # a missing key always stops the run
        try:
            warning = settings.require_servable()  # so does a shut-down model or a rejected level
        except ConfigError as refused:
            missing = missing or str(refused)
            warning = None
        if warning and missing is None:
            log.warning("%s", warning)
        if missing is not None:
            raise PreflightFailed(
                CheckResult(
                    ok=False,
                    backend=settings.backend,
                    model=settings.model,
                    api_version=None,
                    message=missing,
                    kind="config",
                )
            )
        return None
    result = check(settings, backend)
    if not result.ok:
        raise PreflightFailed(result)
    if result.warning:
        log.warning("%s", result.warning)
    return result
