"""Reads each document's newest ground-truth version for the model scores, without contract models.

The database pulls the scalars the scores need out of each payload with one multi-path JSON call (SQLite
json1, PostgreSQL jsonb) and returns a chunk of documents as one JSON text: one statement step per
chunk, so on SQLite the whole chunk is worked out without holding Python's GIL (a row-at-a-time cursor
hands the GIL back and forth per row, which starves a reader thread). Python parses one small array per
document. Segments and mixture entries are read by index up to MAX_SEGMENTS / MAX_TYPES; a document with
more (the next index exists) is read again in full by full_rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.metrics.model import NO_LABEL, Labelled, Prediction, dominant_label, prediction
from arbiter.metrics.sql import bound, cut, of_kind, params
from arbiter.store.adjudication import unsettled_sql
from arbiter.store.versions import SME_SOURCES

if TYPE_CHECKING:
    from arbiter.metrics.compute import GroundTruthScores

CHUNK = 5_000
MAX_SEGMENTS = 6
MAX_TYPES = 6
GTC, PAC = "ground_truth_classification", "primary_agent_classification"
_CLASSIFIED = (GTC, PAC)
_PATHS = (
    ["$.run_id", "$.production_classification.dominant_type"]
    + [f"$.{c}.dominant_type" for c in _CLASSIFIED]
    + [
        f"$.{c}.segments[{i}]" + (".start_page" if i < MAX_SEGMENTS else "")
        for c in _CLASSIFIED
        for i in range(MAX_SEGMENTS + 1)
    ]
    + [
        f"$.{c}.document_mixture[{i}]{f}"
        for c in _CLASSIFIED
        for i in range(MAX_TYPES + 1)
        for f in ((".document_type", ".share") if i < MAX_TYPES else ("",))
    ]
)
# One document's array: [gt_id, source, type of the primary, [the paths above in order]]: run, production,
# truth and primary dominant; per classification the start pages and an overflow marker; per
# classification the flat mixture (type, share, ...) and an overflow marker.
_SEG0 = 4
_MIX0 = _SEG0 + 2 * (MAX_SEGMENTS + 1)
_SEGS = [(_SEG0 + j * (MAX_SEGMENTS + 1), _SEG0 + j * (MAX_SEGMENTS + 1) + MAX_SEGMENTS) for j in (0, 1)]
_MIXES = [(_MIX0 + j * (2 * MAX_TYPES + 1), _MIX0 + j * (2 * MAX_TYPES + 1) + 2 * MAX_TYPES) for j in (0, 1)]


# PostgreSQL's #> reads a key "0" of an object where SQLite's [0] reads only arrays: the segment and
# mixture lists are kept only when they are arrays (columns below), and indexed from there.
_PG_LISTS = {(c, f): f"{c[0]}{f[0]}" for c in _CLASSIFIED for f in ("segments", "document_mixture")}
_PG_ARRAYS = ", ".join(
    f"CASE WHEN jsonb_typeof(p #> '{{{c},{f}}}') = 'array' THEN p #> '{{{c},{f}}}' END AS {alias}"
    for (c, f), alias in _PG_LISTS.items()
)


def _pg_path(path: str) -> str:
    parts = path[2:].replace("[", ".").replace("]", "").split(".")
    if len(parts) > 2 and (parts[0], parts[1]) in _PG_LISTS:
        return f"{_PG_LISTS[(parts[0], parts[1])]} #> '{{" + ",".join(parts[2:]) + "}'"
    return "p #> '{" + ",".join(parts) + "}'"


_SQLITE_DOC = (
    f"json_array(gt_id, source, json_type(p, '$.{PAC}'), json_extract(p, "
    + ", ".join(f"'{p}'" for p in _PATHS)
    + "))"
)
_PG_DOC = (
    f"jsonb_build_array(gt_id, source, jsonb_typeof(p -> '{PAC}'), jsonb_build_array("
    + ", ".join(_pg_path(p) for p in _PATHS)
    + "))::text"
)
_FULL = {
    "sqlite": (
        "SELECT doc_id, source, json_extract(payload, '$.run_id', '$.production_classification.dominant_type', "
        f"'$.{GTC}', '$.{PAC}') FROM ground_truth WHERE gt_id IN ({{ids}})"
    ),
    "postgresql": (
        "SELECT doc_id, source, jsonb_build_array(payload -> 'run_id', "
        f"payload #> '{{{{production_classification,dominant_type}}}}', payload -> '{GTC}', payload -> '{PAC}')::text "
        "FROM ground_truth WHERE gt_id IN ({ids})"
    ),
}


def _newest(as_of: datetime | None, lo: bool, hi: bool) -> str:
    # A document awaiting adjudication has no settled truth to score against (store/adjudication.py).
    settled = f"NOT {unsettled_sql('ground_truth.doc_id', as_of is not None)}"
    where = [cut("created_at", as_of), of_kind("answer_kind"), settled]  # medical rows only
    where += (["doc_id >= :lo"] if lo else []) + (["doc_id < :hi"] if hi else [])
    return f"SELECT doc_id, max(version) AS version FROM ground_truth WHERE {' AND '.join(where)} GROUP BY doc_id"


def chunk_sql(dialect: str, as_of: datetime | None, lo: bool, hi: bool) -> str:
    """One chunk (doc_id in [lo, hi)) of newest versions as one text: the documents' arrays, comma-joined."""
    newest = _newest(as_of, lo, hi)
    if dialect == "postgresql":  # the inner query detoasts each payload once for all the paths
        return (
            f"SELECT string_agg({_PG_DOC}, ',') FROM (SELECT gt_id, source, p, {_PG_ARRAYS} FROM ("
            "SELECT g.gt_id, g.source, g.payload || '{}'::jsonb AS p FROM ground_truth g "
            f"JOIN ({newest}) n ON n.doc_id = g.doc_id AND n.version = g.version OFFSET 0) x OFFSET 0) y"
        )
    return (
        f"SELECT group_concat({_SQLITE_DOC}, ',') FROM (SELECT g.gt_id, g.source, g.payload AS p "
        f"FROM ground_truth g JOIN ({newest}) n ON n.doc_id = g.doc_id AND n.version = g.version)"
    )


def chunk_bounds(conn: Connection, as_of: datetime | None = None, size: int = CHUNK) -> list[str]:
    """doc_ids that split the documents with ground truth into chunks of about `size` (every document has
    a version 1, so version-1 rows in doc_id order walk the unique index)."""
    sql = (
        "SELECT doc_id FROM (SELECT doc_id, row_number() OVER (ORDER BY doc_id) AS n FROM ground_truth "
        f"WHERE version = 1 AND {of_kind('answer_kind')} AND {cut('created_at', as_of)}) x "
        "WHERE n % :size = 1 ORDER BY doc_id"
    )
    clause = bound(sql, as_of)
    return [row[0] for row in conn.execute(clause, {**params(as_of), "size": size})][1:]


def chunks(conn: Connection, as_of: datetime | None = None, size: int = CHUNK) -> Iterator[str]:
    """Each chunk's text (arrays joined by commas), one statement per chunk, in doc_id order."""
    edges: list[str | None] = [None, *chunk_bounds(conn, as_of, size), None]
    dialect = conn.dialect.name
    for lo, hi in pairwise(edges):
        sql = chunk_sql(dialect, as_of, lo is not None, hi is not None)
        values = {
            **params(as_of),
            **({"lo": lo} if lo is not None else {}),
            **({"hi": hi} if hi is not None else {}),
        }
        text = conn.execute(bound(sql, as_of), values).scalar()
        if text:
            yield text


def _starts(values: list[Any]) -> set[int]:
    return {p for p in values if p.__class__ is int and p > 1}


def _shares(flat: list[Any]) -> dict[str, float]:
    """[type, share, type, share, ...] as shares by type (the rules of model.mixture_from)."""
    shares: dict[str, float] = {}
    for i in range(0, len(flat), 2):
        kind, share = flat[i], flat[i + 1]
        if kind.__class__ is str and (share.__class__ is float or share.__class__ is int):
            shares[kind] = shares.get(kind, 0.0) + share
    return shares


def score_chunks(texts: Iterable[str], scores: GroundTruthScores, long_docs: list[str]) -> None:
    """Adds each chunk's documents to `scores` without building objects per document; the gt_ids of
    documents with more segments or mixture entries than were read by index go to `long_docs` instead."""
    sme_sources = frozenset(SME_SOURCES)
    add = scores.add_values
    (t0, t_more), (p0, p_more) = _SEGS
    (tm0, tm_more), (pm0, pm_more) = _MIXES
    for text in texts:
        for gt_id, source, primary_type, v in json.loads(f"[{text}]"):
            if (
                v[t_more] is not None
                or v[p_more] is not None
                or v[tm_more] is not None
                or v[pm_more] is not None
            ):
                long_docs.append(gt_id)
                continue
            run_id, production, truth, primary = v[0], v[1], v[2], v[3]
            has_primary = primary_type == "object"
            add(
                source in sme_sources,
                run_id if run_id.__class__ is str else None,
                truth if truth.__class__ is str and truth else NO_LABEL,
                _starts(v[t0:t_more]),
                _shares(v[tm0:tm_more]),
                (primary if primary.__class__ is str and primary else NO_LABEL) if has_primary else None,
                _starts(v[p0:p_more]) if has_primary else (),
                _shares(v[pm0:pm_more]) if has_primary else {},
                None if production is None else dominant_label(production),
            )


def full_rows(conn: Connection, gt_ids: list[str]) -> Iterator[Labelled]:
    """The documents score_chunks set aside, read in full (their classifications as dicts)."""
    sme_sources = frozenset(SME_SOURCES)
    for lo in range(0, len(gt_ids), 500):
        batch = gt_ids[lo : lo + 500]
        names = {f"g{i}": gt_id for i, gt_id in enumerate(batch)}
        sql = _FULL[conn.dialect.name].format(ids=", ".join(f":{name}" for name in names))
        for doc_id, source, packed in conn.execute(sa.text(sql), names):
            run_id, production, truth, primary = json.loads(packed)
            yield Labelled(
                doc_id=doc_id,
                sme=source in sme_sources,
                truth=prediction(truth) or Prediction(NO_LABEL),
                primary=prediction(primary),
                production=None if production is None else dominant_label(production),
                run_id=run_id if isinstance(run_id, str) else None,
            )


def score_all(
    conn: Connection, scores: GroundTruthScores, as_of: datetime | None = None
) -> GroundTruthScores:
    """Every newest version through one connection (the serial path)."""
    long_docs: list[str] = []
    score_chunks(chunks(conn, as_of), scores, long_docs)
    return scores.add_all(full_rows(conn, long_docs))
