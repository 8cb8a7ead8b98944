"""Document AI settings from the environment (ARBITER_DOCUMENTAI_*) and command-line overrides.

A live run needs a processor's resource name; a replay run (recorded responses) needs only the folder;
batch processing needs a Cloud Storage folder (`gs://BUCKET/PREFIX`). A bad value is a one-line ConfigError.

The limits are the service's documented system limits (cloud.google.com/document-ai/limits), the same for
the layout parser and Enterprise Document OCR: an online request takes a file of at most 40 MB and 15
pages, or 30 pages in imageless mode; a batch request takes a file of at most 1 GB and 500 pages.
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
BatchMode = Literal["auto", "off", "always"]

ONLINE_PAGES = 15  # pages per online request
IMAGELESS_PAGES = 30  # pages per online request in imageless mode
BATCH_PAGES = 500  # pages per document in a batch request
ONLINE_MAX_BYTES = 40_000_000  # "40 MB" per online request's file, read as the smaller (decimal) megabytes
BATCH_MAX_BYTES = 1_000_000_000  # "1 GB" per file of a batch request, likewise

# POST https://{location}-documentai.googleapis.com/v1/{name}:process (REST reference, processors.process).
_PROCESSOR = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[a-z0-9-]+)/processors/(?P<id>[^/\s]+)"
    r"(?:/processorVersions/(?P<version>[^/\s]+))?"
)
_LOCATION = re.compile(r"[a-z][a-z0-9-]*")
# gs://BUCKET[/PREFIX]: bucket names as Cloud Storage allows them (3-63 characters without dots; dotted
# names up to 222); the prefix has no empty, "." or ".." parts, so objects stay inside it.
_GCS = re.compile(r"gs://(?P<bucket>[a-z0-9][a-z0-9._-]{1,220}[a-z0-9])(?:/(?P<prefix>[^\s]*?))?/?")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

_ENV: dict[str, str] = {
    "processor": "ARBITER_DOCUMENTAI_PROCESSOR",
    "location": "ARBITER_DOCUMENTAI_LOCATION",
    "replay_dir": "ARBITER_DOCUMENTAI_REPLAY_DIR",
    "record_dir": "ARBITER_DOCUMENTAI_RECORD_DIR",
    "processor_type": "ARBITER_DOCUMENTAI_PROCESSOR_TYPE",
    "pages_per_request": "ARBITER_DOCUMENTAI_PAGES_PER_REQUEST",
    "rpm": "ARBITER_DOCUMENTAI_RPM",
    "imageless_mode": "ARBITER_DOCUMENTAI_IMAGELESS",
    "gcs_uri": "ARBITER_DOCUMENTAI_GCS_URI",
    "batch": "ARBITER_DOCUMENTAI_BATCH",
    "batch_timeout_s": "ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S",
}


@dataclass(frozen=True)
class DocumentAISettings:
    """Which processor, where, and the bounds of each request.

    A PDF within the online limits goes in one `:process` request (imageless mode, on by default, since
    nothing Arbiter keeps uses the page images it drops: 30 pages instead of 15). A longer or larger one
    goes through batch processing when `gcs_uri` names a Cloud Storage folder (`batch` auto), else in
    online parts of `pages_per_request` pages; `batch` always sends every PDF through batch processing.
    """

    processor: str | None = None  # projects/P/locations/L/processors/ID[/processorVersions/V]
    location: str | None = None  # default: the processor name's location
    replay_dir: Path | None = None  # answer from recorded responses only: never the network
    record_dir: Path | None = None  # write every live response there, named as replay looks them up
    processor_type: ProcessorType = "layout"  # layout: ask for block bounding boxes; ocr: plain request
    pages_per_request: int | None = None  # default: the online limit (30 in imageless mode, else 15)
    max_request_bytes: int = ONLINE_MAX_BYTES
    timeout_s: float = 120.0
    rpm: int = 0  # requests per minute across the run; 0 is unlimited
    imageless_mode: bool = True  # no page images in the answer: 30 pages per online request
    gcs_uri: str | None = None  # gs://BUCKET/PREFIX: where batch processing stages PDFs and answers
    batch: BatchMode = "auto"  # auto: PDFs past the online limits, when gcs_uri is set; off; always
    batch_timeout_s: float = 1800.0  # how long one batch operation may take before it is cancelled

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
        if isinstance(self.imageless_mode, str):
            object.__setattr__(self, "imageless_mode", _flag(self.imageless_mode, _ENV["imageless_mode"]))
        if self.pages_per_request is None:
            object.__setattr__(self, "pages_per_request", self.online_pages)
        for name, minimum in (("pages_per_request", 1), ("max_request_bytes", 1), ("rpm", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"The Document AI {name.replace('_', ' ')} must be at least {minimum}.")
        if self.per_request > self.online_pages:
            mode = "in imageless mode" if self.imageless_mode else "without imageless mode"
            raise ConfigError(
                f"Document AI takes at most {self.online_pages} pages per online request {mode}; "
                f"ARBITER_DOCUMENTAI_PAGES_PER_REQUEST={self.pages_per_request} is more."
            )
        if self.max_request_bytes > ONLINE_MAX_BYTES:
            raise ConfigError(f"Document AI takes at most {ONLINE_MAX_BYTES / 1e6:g} MB per online request.")
        for name, what in (("timeout_s", "timeout"), ("batch_timeout_s", "batch timeout")):
            value = getattr(self, name)
            if isinstance(value, str):
                value = _seconds(value, _ENV.get(name, name))
                object.__setattr__(self, name, value)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"The Document AI {what} must be a positive number of seconds.")
        self._check_batch()

    def _check_batch(self) -> None:
        if self.batch not in ("auto", "off", "always"):
            raise ConfigError(f"Unknown ARBITER_DOCUMENTAI_BATCH {self.batch!r}; use auto, off or always.")
        if self.gcs_uri is not None:
            uri = self.gcs_uri.strip()
            match = _GCS.fullmatch(uri)
            parts = (match["prefix"] or "").split("/") if match and match["prefix"] else []
            if match is None or any(part in ("", ".", "..") for part in parts):
                raise ConfigError(
                    f"ARBITER_DOCUMENTAI_GCS_URI {self.gcs_uri!r} is not a Cloud Storage folder; give "
                    "gs://BUCKET or gs://BUCKET/PREFIX."
                )
            object.__setattr__(
                self, "gcs_uri", f"gs://{match['bucket']}" + (f"/{'/'.join(parts)}" if parts else "")
            )
        if self.batch == "always" and self.gcs_uri is None and self.replay_dir is None:
            raise ConfigError(
                "ARBITER_DOCUMENTAI_BATCH=always needs a Cloud Storage folder for batch processing: set "
                "ARBITER_DOCUMENTAI_GCS_URI=gs://BUCKET/PREFIX (a bucket in the processor's project)."
            )

    @property
    def online_pages(self) -> int:
        """The documented page limit of one online request: 30 in imageless mode, else 15."""
        return IMAGELESS_PAGES if self.imageless_mode else ONLINE_PAGES

    @property
    def per_request(self) -> int:
        """Pages per online request: `pages_per_request`, by default the online limit."""
        return self.pages_per_request or self.online_pages

    @property
    def batch_enabled(self) -> bool:
        """Whether PDFs past the online limits (or all, with `batch` always) go through batch processing."""
        return self.gcs_uri is not None and self.batch != "off"

    @property
    def bucket(self) -> str:
        """The bucket of `gcs_uri` (ValueError without one)."""
        if self.gcs_uri is None:
            raise ValueError("no Cloud Storage folder is configured")
        return self.gcs_uri.removeprefix("gs://").split("/", 1)[0]

    @property
    def prefix(self) -> str:
        """The object-name prefix of `gcs_uri`, without slashes at either end ("" for a whole bucket)."""
        if self.gcs_uri is None:
            raise ValueError("no Cloud Storage folder is configured")
        rest = self.gcs_uri.removeprefix("gs://").split("/", 1)
        return rest[1] if len(rest) > 1 else ""

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


def _seconds(raw: str, variable: str) -> float:
    try:
        return float(raw.strip())
    except ValueError:
        raise ConfigError(f"{variable} must be a number of seconds, not {raw!r}.") from None


def _flag(raw: str, variable: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{variable} must be true or false, not {raw!r}.")
