"""Where a run's files go (`--out`): a local folder, or object storage through an fsspec URL (`s3://bucket/x`,
`gs://bucket/x`, any protocol fsspec knows) that every node of a cluster reaches.

A URL gives a `UPath` (universal_pathlib: pathlib's API over fsspec), so the mirror writer, the run summary and
the bundle readers use one code path. Object storage holds only the files a reader wants (bundles, packets,
ground truth, decisions, summaries); a run's lock and caches need a local folder (`work_dir`), and its
database must be a server every node reaches (SQLite inside object storage is refused). The storage's
endpoint and credentials come from its own configuration (for S3: the AWS variables, or fsspec's
`FSSPEC_S3_ENDPOINT_URL` and friends), never from Arbiter's options.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from arbiter.errors import ConfigError

if TYPE_CHECKING:  # imported for a URL only: fsspec brings asyncio and ssl (11 MB in every process of a run)
    from upath import UPath

Location: TypeAlias = "Path | UPath"

# The extra that installs each protocol's fsspec implementation.
_EXTRAS = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs"}


def is_url(value: str | Path | UPath) -> bool:
    """A storage URL other than a local file (`file://` and plain paths are folders on this machine)."""
    text = str(value)
    return "://" in text and not text.startswith("file://")


def location(value: str | Path | UPath) -> Location:
    """The folder or URL `value` names; a URL whose storage library is missing is a ConfigError that says
    what to install."""
    if not isinstance(value, str):
        return value  # a folder or a URL already
    if not is_url(value):
        return Path(value.removeprefix("file://"))
    from upath import UPath

    protocol = value.split("://", 1)[0].lower()
    try:
        where = UPath(value)
        where.fs  # noqa: B018  (builds the filesystem: an unknown protocol or missing library fails here)
    except (ImportError, ValueError) as exc:
        package = _EXTRAS.get(protocol)
        hint = f" Install {package} (`pip install {package}`)." if package else ""
        raise ConfigError(f"Cannot write to {protocol}:// storage: {exc}.{hint}") from exc
    return where


def work_dir(out: str | Path | UPath) -> Path:
    """The local folder for a run's lock and caches: the output folder itself, or for a URL a folder under
    the user's cache (`$ARBITER_WORK_DIR`, else `$XDG_CACHE_HOME/arbiter/work/<hash of the URL>`)."""
    if not is_url(out):
        return Path(str(out).removeprefix("file://"))
    base = os.environ.get("ARBITER_WORK_DIR")
    if base:
        return Path(base)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "arbiter" / "work" / hashlib.sha256(str(out).encode()).hexdigest()[:16]


def url_inside(url: str, prefixes: Sequence[str]) -> bool:
    """Whether an object storage URL lies under one of `prefixes` (the configured `--out` URLs): same scheme and
    bucket, a key below the prefix, no `.`/`..` segment or empty segment. A URL a packet names is never trusted
    to point elsewhere."""
    parts = url.split("://", 1)
    if len(parts) != 2 or "\\" in url or any(seg in (".", "..", "") for seg in parts[1].split("/")):
        return False
    return any(url.startswith(prefix.rstrip("/") + "/") for prefix in prefixes if is_url(prefix))
