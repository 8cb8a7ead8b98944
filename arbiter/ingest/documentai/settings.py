"""Document AI settings from the environment (ARBITER_DOCUMENTAI_*) and command-line overrides.

A live run needs a processor's resource name; a replay run (recorded responses) needs only the folder.
A bad value is a one-line ConfigError.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from arbiter.errors import ConfigError
from arbiter.ingest.documentai.mapping import MAPPING_VERSION

ProcessorType = Literal["layout", "ocr"]

# POST https://{location}-documentai.googleapis.com/v1/{name}:process (REST reference, processors.process).
_PROCESSOR = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[a-z0-9-]+)/processors/(?P<id>[^/\s]+)"
    r"(?:/processorVersions/(?P<version>[^/\s]+))?"
)
_LOCATION = re.compile(r"[a-z][a-z0-9-]*")

_ENV: dict[str, str] = {
    "processor": "ARBITER_DOCUMENTAI_PROCESSOR",
    "location": "ARBITER_DOCUMENTAI_LOCATION",
    "replay_dir": "ARBITER_DOCUMENTAI_REPLAY_DIR",
    "record_dir": "ARBITER_DOCUMENTAI_RECORD_DIR",
    "processor_type": "ARBITER_DOCUMENTAI_PROCESSOR_TYPE",
    "pages_per_request": "ARBITER_DOCUMENTAI_PAGES_PER_REQUEST",
    "rpm": "ARBITER_DOCUMENTAI_RPM",
}


@dataclass(frozen=True)
class DocumentAISettings:
    """Which processor, where, and the bounds of each request.

    Online processing takes at most 15 pages and 20 MB per request for the layout parser (its public
    limits), so longer PDFs are sent in parts of `pages_per_request` pages.
    """

    processor: str | None = None  # projects/P/locations/L/processors/ID[/processorVersions/V]
    location: str | None = None  # default: the processor name's location
    replay_dir: Path | None = None  # answer from recorded responses only: never the network
    record_dir: Path | None = None  # write every live response there, named as replay looks them up
    processor_type: ProcessorType = "layout"  # layout: ask for block bounding boxes; ocr: plain request
    pages_per_request: int = 15
    max_request_bytes: int = 20 * 1024 * 1024
    timeout_s: float = 120.0
    rpm: int = 0  # requests per minute across the run; 0 is unlimited

    def __post_init__(self) -> None:
        for name in ("replay_dir", "record_dir"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value) if value.strip() else None)
        if self.processor is not None:
            match = _PROCESSOR.fullmatch(self.processor.strip())
            if match is None:
                raise ConfigError(
                    f"The Document AI processor {self.processor!r} is not a processor resource name; give "
                    "projects/PROJECT/locations/LOCATION/processors/ID (optionally /processorVersions/V)."
                )
            object.__setattr__(self, "processor", self.processor.strip())
            named = match["location"]
            if self.location is None:
                object.__setattr__(self, "location", named)
            elif self.location != named:
                raise ConfigError(
                    f"The Document AI location {self.location!r} differs from the processor's ({named!r})."
                )
        if self.location is not None and not _LOCATION.fullmatch(self.location):
            raise ConfigError(
                f"The Document AI location {self.location!r} is not a location such as us or eu."
            )
        if self.processor_type not in ("layout", "ocr"):
            raise ConfigError(
                f"Unknown Document AI processor type {self.processor_type!r}; use layout or ocr."
            )
        if self.replay_dir is None and self.processor is None:
            raise ConfigError(
                "--extractor documentai needs a processor: set ARBITER_DOCUMENTAI_PROCESSOR (or "
                "--documentai-processor) to projects/PROJECT/locations/LOCATION/processors/ID, or replay "
                "recorded responses with ARBITER_DOCUMENTAI_REPLAY_DIR (or --documentai-replay)."
            )
        for name, minimum in (("pages_per_request", 1), ("max_request_bytes", 1), ("rpm", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"The Document AI {name.replace('_', ' ')} must be at least {minimum}.")
        if (
            isinstance(self.timeout_s, bool)
            or not isinstance(self.timeout_s, int | float)
            or self.timeout_s <= 0
        ):
            raise ConfigError("The Document AI timeout must be a positive number of seconds.")

    @property
    def host(self) -> str:
        """The processor's regional endpoint (Google's client is pointed there)."""
        return f"{self.location}-documentai.googleapis.com"

    @property
    def endpoint(self) -> str:
        """The processor's `:process` URL on its regional endpoint."""
        return f"https://{self.host}/v1/{self.processor}:process"

    @property
    def version(self) -> str:
        """What the bundles' extractor version names: API version, processor (and version) or replay."""
        match = _PROCESSOR.fullmatch(self.processor) if self.processor else None
        if match is None:
            source = "replay"
        else:
            source = f"{match['id']}@{match['version']}" if match["version"] else match["id"]
        return f"v1+{source}+map{MAPPING_VERSION}"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> DocumentAISettings:
        """ARBITER_DOCUMENTAI_* variables (os.environ by default); overrides that are not None win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name, variable in _ENV.items():
            raw = (env.get(variable) or "").strip()
            if raw:
                values[name] = _int(raw, variable) if name in ("pages_per_request", "rpm") else raw
        known = {f.name for f in fields(cls)}
        for name, value in overrides.items():
            if name not in known:
                raise ConfigError(f"Unknown Document AI setting {name!r}.")
            if value is not None:
                values[name] = value
        return cls(**values)


def _int(raw: str, variable: str) -> int:
    try:
        return int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{variable} must be a whole number, not {raw!r}.") from None
