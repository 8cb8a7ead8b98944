"""The document behind a packet: its PDF (inside the documents root) and its DocumentBundle.

The bundle is read from the file the batch run wrote when that file is inside an allowed root and is
of the same PDF (same SHA-256); otherwise the PDF is read again, which takes well under a second.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from arbiter.contracts import DocumentBundle, SMEPacket
from arbiter.errors import ConfigError
from arbiter.outputs import is_url, location, url_inside
from arbiter.review.paths import PathRefused, resolve_inside

_CACHE: OrderedDict[tuple[str, str], DocumentBundle] = OrderedDict()
_CACHE_SIZE = 16
_LOCK = threading.Lock()


def pdf_of(packet: SMEPacket, docs_root: Path) -> Path:
    """The packet's PDF, resolved inside the documents root; PathRefused otherwise."""
    return resolve_inside(packet.pdf_path, [docs_root], what="PDF")


def bundle_of(packet: SMEPacket, roots: Sequence[Path], urls: Sequence[str] = ()) -> DocumentBundle | None:
    """The packet's bundle (cached), or None when neither the bundle file nor the PDF can be read. A bundle in
    object storage (a run with `--out s3://…`) is read only under one of `urls`."""
    key = (packet.doc_id, packet.pdf_sha256)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    bundle = _from_file(packet, roots, urls) or _from_pdf(packet, roots[0])
    if bundle is not None:
        with _LOCK:
            _CACHE[key] = bundle
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return bundle


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def _from_file(packet: SMEPacket, roots: Sequence[Path], urls: Sequence[str] = ()) -> DocumentBundle | None:
    raw = packet.document_bundle_path
    if not raw:
        return None
    try:
        if is_url(raw):
            if not url_inside(raw, urls):
                return None
            data = location(raw).read_bytes()
        else:
            data = resolve_inside(raw, roots, what="bundle").read_bytes()
        bundle = DocumentBundle.model_validate_json(data)
    except (PathRefused, OSError, ValidationError, ConfigError):
        return None
    return bundle if bundle.file_sha256 == packet.pdf_sha256 else None


def _from_pdf(packet: SMEPacket, docs_root: Path) -> DocumentBundle | None:
    from arbiter.ingest import ingest_pdf

    try:
        pdf = pdf_of(packet, docs_root)
    except PathRefused:
        return None
    result = ingest_pdf(pdf, doc_id=packet.doc_id)
    return result if isinstance(result, DocumentBundle) else None
