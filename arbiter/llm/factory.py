"""Builds the LLM backend and client that LLMSettings name (the one place that knows every backend)."""

from __future__ import annotations

from arbiter.llm.cache import DiskCache
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.openai_compat import OpenAICompatBackend
from arbiter.llm.port import LLMBackend
from arbiter.llm.replay import ReplayBackend


def build_backend(settings: LLMSettings) -> LLMBackend | None:
    """The backend the settings name, or None for "none" (LLM phases are then SKIPPED)."""
    if settings.backend == "none":
        return None
    if settings.backend == "replay":
        return ReplayBackend(settings.replay_dir)
    if settings.backend == "gemini":
        from arbiter.llm.gemini import GeminiBackend  # google-genai takes seconds to import: only when used

        return GeminiBackend(settings)
    return OpenAICompatBackend(settings)


def build_client(settings: LLMSettings, backend: LLMBackend | None = None) -> LLMClient | None:
    """An LLMClient over the configured backend (or the one given) with the disk cache; None for "none"."""
    backend = backend if backend is not None else build_backend(settings)
    if backend is None:
        return None
    return LLMClient(backend, settings, DiskCache(settings.cache_dir))
