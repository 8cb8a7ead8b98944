"""Read queries of the ground-truth export (docs/design.md §9.2): the version in force per document, streamed.

The version in force at a time T is, per document, the highest version created at or before T; without T
it is the newest; a document awaiting adjudication at T (store/adjudication.py) has none. One statement (a version is chosen when no later version exists, by T), read in batches
(a server-side cursor on PostgreSQL) in doc_id order. Payloads come back as UTF-8 JSON bytes, as stored,
so the exporter hands them to a C JSON parser instead of building Python objects for every record.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND
from arbiter.store.adjudication import unsettled
from arbiter.store.models import ground_truth

BATCH = 5_000


def in_force_query(
    as_of: datetime | None = None, *, dialect: str = "sqlite", kind: str = DEFAULT_KIND
) -> sa.Select[Any]:
    """gt_id and payload (JSON: bytes on SQLite, text on PostgreSQL) of each version in force of the answer
    kind's documents (a medical export never holds an answer's ground truth, nor the reverse), by doc_id."""
    g = ground_truth.c
    later = ground_truth.alias("later")
    newer = [later.c.doc_id == g.doc_id, later.c.version > g.version]
    if as_of is not None:
        newer.append(later.c.created_at <= as_of)
    # SQLite hands a BLOB over without decoding it; PostgreSQL renders jsonb as text either way.
    payload = sa.cast(g.payload, sa.LargeBinary if dialect == "sqlite" else sa.Text)
    # A document whose two reviews disagree and await adjudication has no settled truth: it is left out.
    query = sa.select(g.gt_id, payload.label("payload")).where(
        g.answer_kind == kind, ~sa.exists().where(*newer), ~unsettled(g.doc_id, as_of)
    )
    if as_of is not None:
        query = query.where(g.created_at <= as_of)
    return query.order_by(g.doc_id)


def iter_in_force(
    conn: Connection, as_of: datetime | None = None, *, batch: int = BATCH, kind: str = DEFAULT_KIND
) -> Iterator[tuple[list[str], list[bytes]]]:
    """(gt_ids, payloads as UTF-8 JSON) of the answer kind's versions in force, at most `batch` at a time."""
    query = in_force_query(as_of, dialect=conn.dialect.name, kind=kind).execution_options(yield_per=batch)
    for rows in conn.execute(query).partitions():
        ids = [r[0] for r in rows]
        payloads = [p if isinstance(p, bytes) else p.encode() for _, p in rows]
        yield ids, payloads


def first_version_at(conn: Connection) -> datetime | None:
    """When the oldest ground-truth version was written (None: there is none), for an export as of an earlier
    time, which can only be empty."""
    found: datetime | None = conn.execute(sa.select(sa.func.min(ground_truth.c.created_at))).scalar()
    return found
