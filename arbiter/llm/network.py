"""The one switch that real LLM backends check before any request; tests/conftest.py turns it off."""

from __future__ import annotations

from arbiter.llm.port import LLMError

ALLOW_NETWORK: bool = True


def require_network(backend: str) -> None:
    """Raise LLMError("network_disabled") when real requests are switched off (the whole test session)."""
    if not ALLOW_NETWORK:
        raise LLMError(
            "network_disabled",
            f"Network requests are switched off here, so the {backend} backend cannot be reached.",
        )
