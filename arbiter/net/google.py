"""Google API error bodies, as the REST APIs answer them and google-genai / google-api-core carry them:

    {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "...",
               "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"},
                           {"@type": "...ErrorInfo", "reason": "API_KEY_INVALID"}]}}

Read here once for Gemini and Document AI. A server's message may quote the request, so callers show it
only where the service is known not to (summary() shortens it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _details(body: Any) -> list[Any]:
    """The `details` entries of an error body (`{"error": {...}}`, the error itself, or its details list)."""
    if isinstance(body, list):
        return body
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    entries = inner.get("details") if isinstance(inner, Mapping) else None
    return entries if isinstance(entries, list) else []


def retry_delay_s(body: Any) -> float | None:
    """The RetryInfo delay (e.g. "17s") in a Google API error body, in seconds; None when absent."""
    for entry in _details(body):
        if isinstance(entry, Mapping) and str(entry.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(entry.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def api_key_invalid(body: Any) -> bool:
    """True when a Google API error says the API key itself was refused (a 400 with API_KEY_INVALID)."""
    return any(
        isinstance(entry, Mapping) and entry.get("reason") == "API_KEY_INVALID" for entry in _details(body)
    )


def summary(status: Any, message: Any, *, limit: int = 200) -> str:
    """' STATUS: message' (whitespace collapsed, shortened to `limit`), ' STATUS', ' message' or ''."""
    status_text = status if isinstance(status, str) else ""
    message_text = " ".join(str(message or "").split())
    if len(message_text) > limit:
        message_text = message_text[: limit - 1] + "…"
    found = ": ".join(part for part in (status_text, message_text) if part)
    return f" {found}" if found else ""


def body_summary(body: Any) -> str:
    """summary() of a JSON error body ({"error": {"status", "message"}}); '' when it is not one."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return ""
    return summary(error.get("status"), error.get("message"))
