"""On-disk cache of DocumentBundles keyed by file content hash and extractor version."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from pydantic import ValidationError

from arbiter.contracts.bundle import DocumentBundle

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


class BundleCache:
    """Bundles stored as JSON under `root/<sha[:2]>/<sha>.<extractor version>.json`.

    A bundle is stored as extracted; callers re-label doc_id and file_path for another copy of the bytes.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, sha256: str, extractor_version: str) -> Path:
        """Where the bundle for these bytes and this extractor version lives."""
        if not _SHA256.fullmatch(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        version = _UNSAFE.sub("_", extractor_version)
        return self.root / sha256[:2] / f"{sha256}.{version}.json"

    def get(self, sha256: str, extractor_version: str) -> DocumentBundle | None:
        """The cached bundle, or None when absent, unreadable or not what was asked for."""
        path = self.path_for(sha256, extractor_version)
        try:
            data = path.read_bytes()
            bundle = DocumentBundle.model_validate_json(data)
        except (OSError, ValueError, ValidationError):
            return None
        if bundle.file_sha256 != sha256 or bundle.extractor.version != extractor_version:
            return None
        return bundle

    def put(self, bundle: DocumentBundle) -> None:
        """Store the bundle atomically: readers see the old file or the new one, never a torn write."""
        target = self.path_for(bundle.file_sha256, bundle.extractor.version)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(bundle.model_dump_json().encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
