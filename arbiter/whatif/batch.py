"""Re-verifying many recorded documents (rules only): in worker processes when there are enough of them and
more than one core, each worker with its own read-only connection; in this process otherwise.

Documents whose inputs are the same content are re-verified once (a night holds repeated faxes, and a
batch re-sent): the content key is the bundle file's SHA-256, the primary's classification and the stored
attempts (each verifier's recorded results by version fingerprint), the only inputs reverify reads; the
candidate and the verifiers to re-run are shared by the whole call. The doc_id is no part of it. A document
whose key is missing (no bundle or classification stored) is decided on its own.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.engine import Connection

from arbiter.contracts.profile import Profile
from arbiter.errors import ConfigError
from arbiter.outputs import location
from arbiter.whatif import paths
from arbiter.whatif.history import Recorded, Truth, full_outcome, primary_of, reading
from arbiter.whatif.paths import Simulated, current_of
from arbiter.whatif.redecide import redecide
from arbiter.whatif.reverify import load_bundle, reverify

# Below this many documents a worker's start-up (imports, connection, verifiers) costs more than it saves.
MIN_PER_WORKER = 100


@dataclass(frozen=True)
class Reverification:
    """What every re-verified document shares: the candidate, the verifiers to re-run, stale model findings."""

    candidate: Profile
    rerun: tuple[str, ...]
    stale_llm: bool


def reverify_one(
    conn: Connection, work: Reverification, doc: Recorded, truth: Truth | None, checks: Sequence[Any]
) -> Simulated:
    """One document re-verified from its stored bundle and the primary's classification; without them,
    decided from the stored issues where they suffice, else its recorded decision kept (the path says so)."""
    primary = primary_of(conn, doc, truth)
    bundle = load_bundle(doc.bundle_path) if primary is not None else None
    if primary is None or bundle is None:
        stored = redecide(doc, work.candidate)
        if stored is not None:
            stored.path = paths.STORED_ONLY
            return stored
        kept = current_of(doc)
        kept.path = paths.KEPT
        return kept
    outcome = full_outcome(conn, doc)
    return reverify(
        doc,
        work.candidate,
        bundle,
        primary,
        set(work.rerun),
        checks,
        outcome=outcome,
        stale_llm=work.stale_llm,
    )


def _workers(count: int, url: str | None) -> int:
    if url is None or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), count // MIN_PER_WORKER))


def content_key(conn: Connection, doc: Recorded, truth: Truth | None) -> str | None:
    """The SHA-256 of everything reverify reads of a document (see the module's docstring), or None when
    its bundle or the primary's classification is not stored."""
    primary = primary_of(conn, doc, truth)
    if primary is None or not doc.bundle_path:
        return None
    try:
        bundle = location(doc.bundle_path).read_bytes()  # a file, or object storage (arbiter/outputs.py)
    except (OSError, ConfigError):
        return None
    attempts = full_outcome(conn, doc).get("attempts") or []
    digest = hashlib.sha256(bundle)
    for part in (primary, attempts):
        digest.update(b"\0" + json.dumps(part, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def reverify_all(
    conn: Connection, work: Reverification, docs: Sequence[Recorded], truths: dict[str, Truth]
) -> list[Simulated]:
    """Each document re-verified (reverify_one), in document order; documents of the same content
    (content_key) once, the others given a copy of its decision."""
    keys = [content_key(conn, doc, truths.get(doc.doc_id)) for doc in docs]
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key is not None:
            first.setdefault(key, i)
    unique = [i for i, key in enumerate(keys) if key is None or first[key] == i]
    decided = dict(zip(unique, _reverify_each(conn, work, [docs[i] for i in unique], truths), strict=True))
    out: list[Simulated] = []
    for i, key in enumerate(keys):
        if i in decided:
            out.append(decided[i])
            continue
        assert key is not None
        shared = decided[first[key]]
        if shared.path in (paths.REVERIFIED, paths.REDECIDED):
            out.append(replace(shared))
        else:  # the stored bundle does not parse: decided from the document's own record
            out.append(_serially(conn, work, [docs[i]], truths)[0])
    return out


def _reverify_each(
    conn: Connection, work: Reverification, docs: Sequence[Recorded], truths: dict[str, Truth]
) -> list[Simulated]:
    url = _url(conn)
    workers = _workers(len(docs), url)
    if workers == 1 or url is None:
        return _serially(conn, work, docs, truths)
    chunks = [list(docs[k::workers]) for k in range(workers)]
    jobs = [
        (url, work, chunk, {d.doc_id: truths[d.doc_id] for d in chunk if d.doc_id in truths})
        for chunk in chunks
    ]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        done = pool.starmap(_worker, jobs)
    out: list[Simulated | None] = [None] * len(docs)
    for k, results in enumerate(done):
        out[k::workers] = results
    return [s for s in out if s is not None]


def _serially(
    conn: Connection, work: Reverification, docs: Sequence[Recorded], truths: dict[str, Truth]
) -> list[Simulated]:
    from arbiter.verifiers import default_verifiers

    checks = default_verifiers()
    return [reverify_one(conn, work, doc, truths.get(doc.doc_id), checks) for doc in docs]


def _worker(
    url: str, work: Reverification, docs: list[Recorded], truths: dict[str, Truth]
) -> list[Simulated]:
    with reading(url) as conn:
        return _serially(conn, work, docs, truths)


def _url(conn: Connection) -> str | None:
    """The database's URL for a worker's own connection (None: an in-memory database no worker can open)."""
    url = conn.engine.url
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return None
    return url.render_as_string(hide_password=False)
