"""Which extractor turns PDFs into DocumentBundles: `local` (pypdfium2, the default) or `documentai`.

`open_ingestor` is the one place runs and `arbiter verify` get an ingestor from, with the Extractor
(name and version) its bundles carry, which the bundle cache and the skip key are keyed on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from arbiter.contracts.bundle import Extractor
from arbiter.errors import ConfigError
from arbiter.ingest import IngestResult

EXTRACTORS = ("local", "documentai")
EXTRACTOR_ENV = "ARBITER_EXTRACTOR"


class Ingestor(Protocol):
    """Ingests one file at a time (thread-safe); a bad file is an IngestFailure, never an exception."""

    def ingest(
        self, path: Path, *, doc_id: str | None = None, password: str | None = None
    ) -> IngestResult: ...

    def close(self) -> None: ...


class InProcessIngestor:
    """Local ingestion in this process (no worker processes): for one-off commands such as `arbiter verify`."""

    def ingest(self, path: Path, *, doc_id: str | None = None, password: str | None = None) -> IngestResult:
        from arbiter.ingest import ingest_pdf

        return ingest_pdf(path, doc_id=doc_id, password=password)

    def close(self) -> None:
        return None


def extractor_name(name: str | None) -> str:
    """The extractor asked for, else $ARBITER_EXTRACTOR, else local; ConfigError for an unknown one."""
    chosen = (name or os.environ.get(EXTRACTOR_ENV, "") or "local").strip().lower()
    if chosen not in EXTRACTORS:
        raise ConfigError(f"Unknown extractor {chosen!r}; choose one of {', '.join(EXTRACTORS)}.")
    return chosen


def local_extractor() -> Extractor:
    import arbiter.ingest as ingest

    return Extractor(name=ingest.EXTRACTOR_NAME, version=ingest.EXTRACTOR_VERSION)


def open_ingestor(
    name: str | None,
    *,
    workers: int = 1,
    timeout_s: float = 120.0,
    documentai: Mapping[str, Any] | None = None,
    isolated: bool = True,
    target: Any = None,
) -> tuple[Ingestor, Extractor]:
    """An ingestor to close when done, and the Extractor its bundles carry.

    `documentai` holds DocumentAISettings overrides (CLI options); `timeout_s` bounds one PDF locally and
    one request to Document AI. `target` replaces what local workers run on each file (ingest_pdf).
    """
    chosen = extractor_name(name)
    if chosen == "documentai":
        from arbiter.ingest.documentai.factory import open_documentai

        ingestor = open_documentai(documentai or {}, timeout_s=timeout_s)
        return ingestor, ingestor.extractor
    if isolated:
        from arbiter.ingest import IsolatedIngestor

        if target is not None:
            return IsolatedIngestor(workers=workers, timeout_s=timeout_s, target=target), local_extractor()
        return IsolatedIngestor(workers=workers, timeout_s=timeout_s), local_extractor()
    return InProcessIngestor(), local_extractor()
