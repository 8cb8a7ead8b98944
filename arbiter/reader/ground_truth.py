"""The pages clinicians reviewed, as training pages for the page reader (`arbiter model train
--from-ground-truth`).

A document counts when the newest version of its ground truth was written by an SME review (validated,
corrected or adjudicated) and is not awaiting adjudication: an automatic accept taught nobody anything.
Its pages are read from the bundle its run stored (the path its packet records, else
OUT/bundles/{doc_id}.json), and only when that bundle is of the very file the ground truth was written
for (same sha256). Each page takes the dominant type of the ground truth's segment that holds it; pages
with no text (a scan nobody could read) are left out. Read-only (arbiter.whatif.history.reading).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DocumentBundle, GroundTruthRecord
from arbiter.reader.corpus import TYPES
from arbiter.reader.train import GROUND_TRUTH, TrainPage
from arbiter.store.adjudication import unsettled
from arbiter.store.models import ground_truth, packets
from arbiter.store.versions import SME_SOURCES


@dataclass(frozen=True)
class TruthDocument:
    """One reviewed document: the ground-truth version it was read from, and its typed pages."""

    doc_id: str
    version: int
    source: str  # SME_VALIDATED, SME_CORRECTED or SME_ADJUDICATED
    pages: tuple[TrainPage, ...]


@dataclass
class TruthPages:
    documents: list[TruthDocument] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (doc_id, why it was left out)

    @property
    def pages(self) -> list[TrainPage]:
        return [p for d in self.documents for p in d.pages]


def newest_reviewed(conn: Connection) -> list[GroundTruthRecord]:
    """The newest ground-truth version of each document, where an SME wrote it and it is settled."""
    g = ground_truth.c
    newest = sa.select(g.doc_id, sa.func.max(g.version).label("v")).group_by(g.doc_id).subquery()
    query = (
        sa.select(g.payload)
        .join(newest, sa.and_(newest.c.doc_id == g.doc_id, newest.c.v == g.version))
        .where(g.source.in_(SME_SOURCES), sa.not_(unsettled(g.doc_id)))
        .order_by(g.doc_id)
    )
    return [GroundTruthRecord.model_validate(p) for p in conn.execute(query).scalars()]


def bundle_paths(conn: Connection, record: GroundTruthRecord, out_dir: Path | None) -> list[str]:
    """Where the document's bundle may be: its run's packet's path first, then other packets', then
    OUT/bundles/{doc_id}.json."""
    rows = conn.execute(
        sa.select(packets.c.run_id, packets.c.payload)
        .where(packets.c.doc_id == record.doc_id)
        .order_by(packets.c.created_at.desc(), packets.c.packet_id)
    ).all()
    found: list[str] = []
    for _run, payload in sorted(rows, key=lambda r: r[0] != record.run_id):
        path = payload.get("document_bundle_path") if isinstance(payload, dict) else None
        if isinstance(path, str) and path and path not in found:
            found.append(path)
    if out_dir is not None:
        found.append(f"{out_dir}/bundles/{record.doc_id}.json")
    return found


def typed_pages(
    record: GroundTruthRecord, bundle: DocumentBundle, types: Sequence[str] = TYPES
) -> list[TrainPage]:
    """Each page the ground truth's segments cover, typed by its segment's dominant type (ValueError when a
    segment names a type the reader does not know)."""
    truth: dict[str, Any] = record.ground_truth_classification
    pages: list[TrainPage] = []
    for segment in truth.get("segments") or ():
        kind = segment.get("dominant_type")
        if kind not in types:
            raise ValueError(f"a segment's type {kind!r} is not one the page reader reads")
        first, last = int(segment["start_page"]), int(segment["end_page"])
        for number in range(first, last + 1):
            page = bundle.page(number)
            if page is None or not page.text.strip():
                continue
            pages.append(TrainPage(GROUND_TRUTH, record.doc_id, number, kind, page.text, number == first))
    return pages


def read_ground_truth(conn: Connection, out_dir: Path | None) -> TruthPages:
    """Every reviewed document's typed pages, and the documents left out with the reason."""
    from arbiter.whatif.reverify import load_bundle

    found = TruthPages()
    for record in newest_reviewed(conn):
        bundle = None
        tried = bundle_paths(conn, record, out_dir)
        other = False
        for path in tried:
            bundle = load_bundle(path)
            if bundle is not None and bundle.file_sha256 != record.pdf_sha256:
                bundle, other = None, True
            if bundle is not None:
                break
        if bundle is None:
            why = (
                "its stored bundle is of another file"
                if other
                else "no stored bundle (" + ", ".join(tried) + ")"
            )
            found.skipped.append((record.doc_id, why))
            continue
        try:
            pages = typed_pages(record, bundle)
        except (KeyError, TypeError, ValueError) as exc:
            found.skipped.append((record.doc_id, f"its ground truth cannot be read: {exc}"))
            continue
        if not pages:
            found.skipped.append((record.doc_id, "no page with text"))
            continue
        found.documents.append(
            TruthDocument(record.doc_id, record.version, record.ground_truth_source.value, tuple(pages))
        )
    return found


def load_ground_truth(url: str, out_dir: Path | None) -> TruthPages:
    """read_ground_truth over a read-only connection to the store at `url`."""
    from arbiter.whatif.history import reading

    with reading(url) as conn:
        return read_ground_truth(conn, out_dir)
