"""On-disk cache of DocumentBundles keyed by file content hash, extractor version and the password that
opened the PDF; every entry sealed so that a bundle is only ever served for the PDF it was extracted from.

An entry is one header line (JSON) and the bundle's JSON. The header holds the PDF's SHA-256, the extractor
version, the password tag, the SHA-256 of the bundle bytes and a seal: an HMAC over all four with a key
kept beside the cache (`.key`, mode 0600, made on first use). A reader recomputes every part: another
document's bundle copied under this PDF's hash, an edited bundle, or a header rewritten without the key is
a miss (the PDF is extracted again), never a bundle served.

Encrypted PDFs: a run given `--password PW` stores and looks up its bundles under a tag derived from PW
(an HMAC with the cache key, so the password itself is not written). A run without a password (or with
another one) never reads that entry: it must open the PDF itself, so a wrong password fails as it would
without the cache. Bundles read without a password live under the tag `open`, which any run may use.

Bounded: the cache holds at most `ARBITER_BUNDLE_CACHE_MB` (default 2048) of entries. Each process counts what
it writes; after a tenth of the bound (and on its first write) it lists the cache and deletes the entries used
longest ago (a hit refreshes an entry's mtime) until a tenth of the bound is free. An evicted bundle is a miss:
the PDF is extracted again.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import tempfile
from pathlib import Path

from pydantic import ValidationError

from arbiter.contracts.bundle import DocumentBundle

log = logging.getLogger(__name__)

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
OPEN = "open"  # the tag of bundles extracted without a password
FORMAT = "arbiter-bundle-cache/2"
ENV_MAX_MB = "ARBITER_BUNDLE_CACHE_MB"
DEFAULT_MAX_MB = 2048
_WRITTEN: dict[Path, int] = {}  # per cache root: bytes this process wrote since it last checked the bound


def max_bytes_from_env() -> int:
    """The cache's bound in bytes, from ARBITER_BUNDLE_CACHE_MB (a positive whole number of MiB)."""
    raw = os.environ.get(ENV_MAX_MB, "").strip() or str(DEFAULT_MAX_MB)
    if not raw.isdigit() or int(raw) < 1:
        from arbiter.errors import ConfigError

        raise ConfigError(f"{ENV_MAX_MB} must be a whole number of MiB of at least 1, not {raw!r}.")
    return int(raw) * 2**20


class BundleCache:
    """Bundles stored under `root/<sha[:2]>/<sha>.<extractor version>.<password tag>.json`.

    A bundle is stored as extracted; callers re-label doc_id and file_path for another copy of the bytes.
    """

    def __init__(self, root: Path, *, max_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes if max_bytes is not None else max_bytes_from_env()
        self._secret: bytes | None = None

    # Keys ----------------------------------------------------------------------------------------------
    def _key(self) -> bytes:
        """The cache's sealing key: read, or made once (atomically, 0600) by whichever process comes first."""
        if self._secret is not None:
            return self._secret
        path = self.root / ".key"
        if not path.is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".key-")
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, secrets.token_hex(32).encode())
                os.fsync(fd)
                os.close(fd)
                with contextlib.suppress(FileExistsError):  # another process made it first: theirs wins
                    os.link(tmp, path)
            finally:
                Path(tmp).unlink(missing_ok=True)
        secret = path.read_bytes().strip()
        if len(secret) < 32:
            raise OSError(f"The bundle cache key {path} is damaged; delete it (the cache is then rebuilt).")
        self._secret = secret
        return secret

    def tag(self, password: str | None) -> str:
        """`open` without a password; with one, a keyed hash of it (the password is never written)."""
        if not password:
            return OPEN
        return (
            "pw-" + hmac.new(self._key(), b"password\0" + password.encode(), hashlib.sha256).hexdigest()[:32]
        )

    def path_for(self, sha256: str, extractor_version: str, password: str | None = None) -> Path:
        """Where the bundle for these bytes, this extractor version and this password lives."""
        return self._path(sha256, extractor_version, self.tag(password))

    def _path(self, sha256: str, extractor_version: str, tag: str) -> Path:
        if not _SHA256.fullmatch(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        version = _UNSAFE.sub("_", extractor_version)
        return self.root / sha256[:2] / f"{sha256}.{version}.{tag}.json"

    def _seal(self, sha256: str, extractor_version: str, tag: str, bundle_sha256: str) -> str:
        message = "\0".join((FORMAT, sha256, extractor_version, tag, bundle_sha256)).encode()
        return hmac.new(self._key(), message, hashlib.sha256).hexdigest()

    # Reads and writes ------------------------------------------------------------------------------------
    def get(
        self, sha256: str, extractor_version: str, *, password: str | None = None
    ) -> DocumentBundle | None:
        """The cached bundle for the PDF whose bytes hash to `sha256`, or None when absent, unreadable, not
        what was asked for, or not sealed for this PDF (then it is extracted again). With a password, the
        entry that password made is tried first, then a bundle extracted without one."""
        if not _SHA256.fullmatch(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        tags = [self.tag(password), OPEN] if password else [OPEN]
        for tag in tags:
            bundle = self._read(sha256, extractor_version, tag)
            if bundle is not None:
                return bundle
        return None

    def _read(self, sha256: str, extractor_version: str, tag: str) -> DocumentBundle | None:
        path = self._path(sha256, extractor_version, tag)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            head, _, body = data.partition(b"\n")
            header = json.loads(head)
            expected = self._seal(sha256, extractor_version, tag, hashlib.sha256(body).hexdigest())
            if not (
                isinstance(header, dict)
                and header.get("format") == FORMAT
                and isinstance(header.get("seal"), str)
                and hmac.compare_digest(header["seal"], expected)
            ):
                log.warning("bundle cache entry %s is not sealed for its PDF; extracting again", path.name)
                return None
            bundle = DocumentBundle.model_validate_json(body)
        except (ValueError, ValidationError, UnicodeDecodeError):
            log.warning("bundle cache entry %s is unreadable; extracting again", path.name)
            return None
        if bundle.file_sha256 != sha256 or bundle.extractor.version != extractor_version:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: evicted last
        return bundle

    def put(self, bundle: DocumentBundle, *, password: str | None = None, body: bytes | None = None) -> None:
        """Store the bundle atomically (readers see the old file or the new one, never a torn write), sealed
        to its PDF's hash, under the tag of the password the run opened the PDF with. `body`: the bundle's
        JSON already at hand (any layout of `bundle.model_dump_json`), so it is not serialized twice. Not
        fsynced: an entry a crash left empty or short fails its seal (the bundle's hash) and is a miss."""
        tag = self.tag(password)
        target = self.path_for(bundle.file_sha256, bundle.extractor.version, password)
        body = body if body is not None else bundle.model_dump_json().encode("utf-8")
        header = {
            "format": FORMAT,
            "pdf_sha256": bundle.file_sha256,
            "extractor_version": bundle.extractor.version,
            "tag": tag,
            "bundle_sha256": hashlib.sha256(body).hexdigest(),
        }
        header["seal"] = self._seal(
            bundle.file_sha256, bundle.extractor.version, tag, str(header["bundle_sha256"])
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(header).encode("utf-8") + b"\n" + body)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._count(len(body))

    # The bound -----------------------------------------------------------------------------------------
    def _count(self, written: int) -> None:
        """Add a write to this process's count; past a tenth of the bound (or at its first write), prune."""
        before = _WRITTEN.get(self.root)
        total = (before or 0) + written
        if before is None or total >= self.max_bytes // 10:
            self.prune()
            total = 0
        _WRITTEN[self.root] = total

    def prune(self) -> int:
        """Delete the entries used longest ago while the cache holds more than its bound, down to nine tenths
        of it; returns how many were deleted (entries another process deletes first are skipped)."""
        entries: list[tuple[float, int, str]] = []
        try:
            shards = [d.path for d in os.scandir(self.root) if d.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        for shard in shards:
            with contextlib.suppress(OSError):
                for entry in os.scandir(shard):
                    if entry.name.endswith(".json") and not entry.name.startswith("."):
                        with contextlib.suppress(OSError):
                            stat = entry.stat(follow_symlinks=False)
                            entries.append((stat.st_mtime, stat.st_size, entry.path))
        held = sum(size for _, size, _ in entries)
        if held <= self.max_bytes:
            return 0
        deleted = 0
        for _, size, path in sorted(entries):
            if held <= self.max_bytes * 9 // 10:
                break
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                deleted += 1
            held -= size
        log.info("bundle cache over its bound: %d entries deleted", deleted)
        return deleted
