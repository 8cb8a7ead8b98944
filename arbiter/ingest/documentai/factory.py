"""Builds the Document AI ingestor a run asks for: replaying recordings, or calling the live processor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arbiter.errors import ConfigError
from arbiter.ingest.documentai.batch import BatchRunner
from arbiter.ingest.documentai.client import DocumentAIClient, DocumentAIError, load_credentials
from arbiter.ingest.documentai.gcs import Storage
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.sources import DocumentSource, LiveSource, ReplaySource
from arbiter.net import switch


def open_documentai(
    overrides: Mapping[str, Any],
    *,
    timeout_s: float = 120.0,
    credentials: Any = None,
) -> DocumentAIIngestor:
    """The ingestor for these settings (environment plus `overrides`); ConfigError for a user mistake.

    A live run looks for Google credentials now, so that missing ones stop the run with one message
    instead of failing every document; with the network switched off it leaves that to the first request.
    """
    settings = DocumentAISettings.from_env(timeout_s=timeout_s, **dict(overrides))
    source: DocumentSource
    if settings.replay_dir is not None:
        if settings.record_dir is not None:
            raise ConfigError(
                "Replaying and recording Document AI responses at once makes no sense; choose one."
            )
        if not settings.replay_dir.is_dir():
            raise ConfigError(f"The Document AI replay folder {settings.replay_dir} does not exist.")
        source = ReplaySource(settings.replay_dir)
    else:
        if credentials is None and switch.ALLOW_NETWORK:
            try:
                credentials = load_credentials()
            except DocumentAIError as exc:
                raise ConfigError(exc.message) from None
        client = DocumentAIClient(settings, credentials=credentials)
        batch = None
        if settings.batch_enabled:
            storage = Storage(
                settings.bucket, settings.prefix, client.credentials_now, timeout_s=settings.timeout_s
            )
            batch = BatchRunner(client, storage, settings)
        source = LiveSource(client, settings.record_dir, batch)
    return DocumentAIIngestor(settings, source)
