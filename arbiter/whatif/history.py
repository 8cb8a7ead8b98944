"""Reads what a simulation replays from the review store, read-only: each document's newest run as of a
time (decision, reason, every attempt's issues and decisions), the SME ground truth and the blind audits.

Nothing here writes. On SQLite every connection is switched to `PRAGMA query_only`; on PostgreSQL every
transaction is `READ ONLY`, so a bug cannot change the store. The audits come from the metrics' own
reader (arbiter.metrics.loader.reviews).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from arbiter.metrics import loader
from arbiter.metrics.rows import PacketKind
from arbiter.metrics.sql import bound, cut, params
from arbiter.store.adjudication import unsettled_sql
from arbiter.store.db import make_engine, resolve_url
from arbiter.store.versions import SME_SOURCES
from arbiter.whatif.prefetch import prefetched

GTC, PAC = "ground_truth_classification", "primary_agent_classification"


@dataclass(slots=True)
class Recorded:
    """One document's newest recorded run: the documents row and its stored outcome (a plain dict)."""

    doc_id: str
    run_id: str
    decision: str
    reason: str | None
    error: str | None
    pdf_path: str
    outcome: dict[str, Any]
    bundle_path: str | None = None  # recorded in the run's packet; else OUT/bundles/{doc_id}.json
    full: dict[str, Any] | None = None  # the whole stored outcome, once full_outcome read it
    primary_segments: list[dict[str, Any]] | None = None  # read by primary_segments, for a focused re-check


@dataclass(slots=True)
class Truth:
    """The newest SME-reviewed ground-truth version of a document (validated or corrected)."""

    doc_id: str
    source: str
    classification: dict[str, Any]
    primary: dict[str, Any] | None
    run_id: str | None


@dataclass
class History:
    docs: list[Recorded] = field(default_factory=list)
    truths: dict[str, Truth] = field(default_factory=dict)
    audited: dict[str, bool] = field(default_factory=dict)  # doc_id -> SME agreed with the accepted answer


def read_only_engine(url: str) -> Engine:
    """An engine whose connections cannot write (see the module's docstring)."""
    engine = make_engine(resolve_url(url))
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _query_only(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA query_only = ON")
            cur.close()

    else:

        @event.listens_for(engine, "begin")
        def _read_only(conn: Connection) -> None:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")

    return engine


@contextmanager
def reading(url: str) -> Iterator[Connection]:
    engine = read_only_engine(url)
    try:
        with engine.connect() as conn, conn.begin():
            yield conn
    finally:
        engine.dispose()


# Each outcome is read slim, in the database, with one multi-path JSON call (one parse per outcome, as the
# metrics loader reads): the stop reason and, per attempt, its fingerprint, decision, rule and the counts
# the policy decided on, plus which verifier sits second and its status (V2, for a focused re-check). A
# document with more attempts than MAX_ATTEMPTS, or a simulation that needs every issue (the counts rules
# differ, a re-verification), reads the whole outcome (full_outcome) instead.
MAX_ATTEMPTS = 4
_FIELDS = (
    "fingerprint",
    "decision.decision",
    "decision.rule",
    "decision.counts",
    "verifier_results[1].verifier",
    "verifier_results[1].status",
)
_PATHS = (
    ["$.stop_reason"]
    + [f"$.attempts[{i}].{f}" for i in range(MAX_ATTEMPTS) for f in _FIELDS]
    + [f"$.attempts[{MAX_ATTEMPTS}].fingerprint"]
)
# The final version's segments, for a focused re-check: index, type and each type's share and confidence.
MAX_SEGMENTS, MAX_TYPES = 4, 6
_TYPE_FIELDS = ("document_type", "share", "confidence")


def _segment_paths(root: str) -> list[str]:
    return [
        f"{root}.segments[{k}].{f}"
        for k in range(MAX_SEGMENTS)
        for f in (
            "segment_index",
            "dominant_type",
            *(f"types[{t}].{x}" for t in range(MAX_TYPES) for x in _TYPE_FIELDS),
            f"types[{MAX_TYPES}]",
        )
    ] + [f"{root}.segments[{MAX_SEGMENTS}]"]


_SEGMENT_PATHS = _segment_paths("$.final_classification")
_PER_SEGMENT = 2 + MAX_TYPES * len(_TYPE_FIELDS) + 1


def _pg_path(path: str, column: str = "o.outcome") -> str:
    parts = path[2:].replace("[", ".").replace("]", "").split(".")
    return column + " #> '{" + ",".join(parts) + "}'"


def _slim_sql(dialect: str, segments: bool) -> str:
    return _extract_sql(dialect, "o.outcome", [*_PATHS, *_SEGMENT_PATHS] if segments else _PATHS)


def _extract_sql(dialect: str, column: str, paths: Sequence[str]) -> str:
    """One SQL expression reading every path of a JSON column as one JSON array (text)."""
    if dialect == "postgresql":  # at most 100 arguments a function: arrays of 90 joined with ||
        parts = [paths[i : i + 90] for i in range(0, len(paths), 90)]
        arrays = " || ".join(
            "jsonb_build_array(" + ", ".join(_pg_path(p, column) for p in part) + ")" for part in parts
        )
        return f"({arrays})::text"
    return f"json_extract({column}, " + ", ".join(f"'{p}'" for p in paths) + ")"


def _slim(values: list[Any]) -> dict[str, Any]:
    """The slim outcome: {stop_reason, attempts: [{attempt, fingerprint, decision: {decision, rule,
    counts}, second: [verifier, status]}], overflow, final_segments, slim: True}."""
    attempts = []
    width = len(_FIELDS)
    for i in range(MAX_ATTEMPTS):
        fp, decision, rule, counts, second, status = values[1 + i * width : 1 + (i + 1) * width]
        if fp is None and decision is None:
            break
        attempts.append(
            {
                "attempt": i,
                "fingerprint": fp,
                "decision": {"decision": decision, "rule": rule, "counts": counts},
                "second": [second, status],
            }
        )
    end = 1 + MAX_ATTEMPTS * width
    return {
        "slim": True,
        "stop_reason": values[0],
        "attempts": attempts,
        "overflow": values[end] is not None,
        "final_segments": _segments(values[end + 1 :]) if len(values) > end + 1 else None,
    }


def _segments(values: list[Any]) -> list[dict[str, Any]] | None:
    """The segments read by index (None when there are more segments or types than were read)."""
    if values[-1] is not None:
        return None
    out = []
    for base in range(0, MAX_SEGMENTS * _PER_SEGMENT, _PER_SEGMENT):
        index, dominant = values[base], values[base + 1]
        if index is None and dominant is None:
            break
        if values[base + _PER_SEGMENT - 1] is not None:
            return None
        types = []
        for t in range(base + 2, base + 2 + 3 * MAX_TYPES, 3):
            kind, share, confidence = values[t], values[t + 1], values[t + 2]
            if kind is None and share is None and confidence is None:
                break
            types.append({"document_type": kind, "share": share, "confidence": confidence})
        out.append({"segment_index": index, "dominant_type": dominant, "types": types})
    return out


_DOCS = (
    "SELECT d.doc_id, d.run_id, d.final_decision, d.escalation_reason, d.error, d.pdf_path, {slim}, "
    "(SELECT {bundle} FROM packets p WHERE p.doc_id = d.doc_id AND p.run_id = d.run_id "
    "ORDER BY p.packet_id LIMIT 1) FROM (SELECT doc_id, run_id, final_decision, escalation_reason, error, "
    "pdf_path, row_number() OVER (PARTITION BY doc_id ORDER BY created_at DESC, id DESC) AS n "
    "FROM documents WHERE {cut}) d LEFT JOIN outcomes o ON o.doc_id = d.doc_id AND o.run_id = d.run_id "
    "WHERE d.n = 1{order}"
)
# SQLite returns the rows as its window yields them (each outcome's JSON read as the row is stepped, while
# this process parses the rows before it: history_rows) and they are sorted by doc_id here, as its BINARY
# collation would; PostgreSQL sorts them by its own collation.
_ORDER = {"sqlite": "", "postgresql": " ORDER BY d.doc_id"}
_BUNDLE = {
    "sqlite": "p.payload ->> '$.document_bundle_path'",
    "postgresql": "p.payload ->> 'document_bundle_path'",
}
_TRUTH = (
    "SELECT g.doc_id, g.source, g.payload FROM ground_truth g JOIN (SELECT doc_id, max(version) AS v "
    "FROM ground_truth WHERE {cut} GROUP BY doc_id) n ON n.doc_id = g.doc_id AND n.v = g.version "
    "WHERE g.source IN ({sources}) AND NOT {unsettled}"
)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def documents(
    conn: Connection, as_of: datetime | None, out_dir: str | Path | None = None, *, segments: bool = False
) -> list[Recorded]:
    """Each document's newest run as of the time, with its slim outcome (doc_id order); `segments` adds the
    final classification's segments (a focused re-check reads them)."""
    dialect = conn.dialect.name
    sql = _DOCS.format(
        slim=_slim_sql(dialect, segments),
        bundle=_BUNDLE[dialect],
        cut=cut("created_at", as_of),
        order=_ORDER[dialect],
    )
    rows = []
    for doc_id, run_id, decision, reason, error, pdf, outcome, bundle in prefetched(
        conn.execute(bound(sql, as_of), params(as_of))
    ):
        if not bundle and out_dir is not None:  # a folder or an object storage URL (str joins both)
            bundle = f"{str(out_dir).rstrip('/')}/bundles/{doc_id}.json"
        values = _json(outcome) if outcome is not None else None
        data = _slim(values) if isinstance(values, list) else None
        rows.append(
            Recorded(
                doc_id=doc_id,
                run_id=run_id,
                decision=decision,
                reason=reason,
                error=error,
                pdf_path=pdf,
                outcome=data if isinstance(data, dict) else {},
                bundle_path=bundle or None,
            )
        )
    if not _ORDER[dialect]:
        rows.sort(key=lambda r: r.doc_id)
    return rows


def full_outcome(conn: Connection, doc: Recorded) -> dict[str, Any]:
    """The document's whole stored outcome (every issue with its fix, every result), read once."""
    if doc.full is None:
        data = conn.execute(
            sa.text("SELECT outcome FROM outcomes WHERE doc_id = :d AND run_id = :r"),
            {"d": doc.doc_id, "r": doc.run_id},
        ).scalar()
        loaded = _json(data) if data is not None else None
        doc.full = loaded if isinstance(loaded, dict) else {}
    return doc.full


def truths(conn: Connection, as_of: datetime | None) -> dict[str, Truth]:
    """Documents whose newest ground-truth version (as of the time) an SME wrote, unless awaiting adjudication."""
    sources = ", ".join(f"'{s}'" for s in SME_SOURCES)
    # A document whose two reviews await adjudication has no settled truth (store/adjudication.py).
    unsettled = unsettled_sql("g.doc_id", as_of is not None)
    sql = _TRUTH.format(cut=cut("created_at", as_of), sources=sources, unsettled=unsettled)
    out = {}
    for doc_id, source, payload in conn.execute(bound(sql, as_of), params(as_of)):
        data = _json(payload)
        truth = data.get(GTC) if isinstance(data, dict) else None
        if not isinstance(truth, dict):
            continue
        primary = data.get(PAC)
        out[doc_id] = Truth(
            doc_id=doc_id,
            source=source,
            classification=truth,
            primary=primary if isinstance(primary, dict) else None,
            run_id=data.get("run_id") if isinstance(data.get("run_id"), str) else None,
        )
    return out


def audited(conn: Connection, as_of: datetime | None) -> dict[str, bool]:
    """Documents with a reviewed blind audit (the metrics' reader): doc_id -> the SME agreed."""
    return {r.doc_id: r.agrees for r in loader.reviews(conn, as_of) if r.kind == PacketKind.AUDIT.value}


def primary_of(conn: Connection, doc: Recorded, truth: Truth | None) -> dict[str, Any] | None:
    """The primary's classification of the document's run: its packet's copy, else a ground-truth
    version written from that run, else the newest SME version's copy (None when none is stored)."""
    field_ = "$.primary_agent_classification" if conn.dialect.name == "sqlite" else None
    if field_ is not None:
        sql = (
            "SELECT payload ->> '$.primary_agent_classification' FROM packets WHERE doc_id = :d AND "
            "run_id = :r AND payload ->> '$.primary_agent_classification' IS NOT NULL LIMIT 1"
        )
        gt_sql = (
            "SELECT payload ->> '$.primary_agent_classification' FROM ground_truth WHERE doc_id = :d AND "
            "payload ->> '$.run_id' = :r AND payload ->> '$.primary_agent_classification' IS NOT NULL "
            "ORDER BY version DESC LIMIT 1"
        )
    else:
        sql = (
            "SELECT payload ->> 'primary_agent_classification' FROM packets WHERE doc_id = :d AND "
            "run_id = :r AND jsonb_typeof(payload -> 'primary_agent_classification') = 'object' LIMIT 1"
        )
        gt_sql = (
            "SELECT payload ->> 'primary_agent_classification' FROM ground_truth WHERE doc_id = :d AND "
            "payload ->> 'run_id' = :r AND jsonb_typeof(payload -> 'primary_agent_classification') = 'object' "
            "ORDER BY version DESC LIMIT 1"
        )
    values = {"d": doc.doc_id, "r": doc.run_id}
    for query in (sql, gt_sql):
        text = conn.execute(sa.text(query), values).scalar()
        data = _json(text) if text else None
        if isinstance(data, dict):
            return data
    if truth is not None and truth.primary is not None and truth.run_id in (None, doc.run_id):
        return truth.primary
    return None


# The primary's segments of a retried document's run, as primary_of finds its classification: the run's
# packet, else the newest ground-truth version written from that run.
_PRIMARY_SEGMENT_PATHS = _segment_paths("$.primary_agent_classification")
_PRIMARY_IN = {
    "packets": "SELECT doc_id, run_id, {segments} FROM packets WHERE doc_id IN ({ids}) AND {is_object} "
    "ORDER BY packet_id",
    "ground_truth": "SELECT doc_id, {run_id}, {segments} FROM ground_truth WHERE doc_id IN ({ids}) AND "
    "{is_object} ORDER BY version DESC",
}
_IS_OBJECT = {
    "sqlite": "json_type(payload, '$.primary_agent_classification') = 'object'",
    "postgresql": "jsonb_typeof(payload -> 'primary_agent_classification') = 'object'",
}
_RUN_ID = {"sqlite": "payload ->> '$.run_id'", "postgresql": "payload ->> 'run_id'"}


def primary_segments(conn: Connection, docs: Sequence[Recorded], chunk: int = 500) -> None:
    """Sets each document's `primary_segments` (its first attempt's version, for a focused re-check) from
    the run's stored primary classification; left None when none is stored or it has more segments or
    types than are read (the caller reads the whole record then)."""
    dialect = conn.dialect.name
    segments = _extract_sql(dialect, "payload", _PRIMARY_SEGMENT_PATHS)
    for start in range(0, len(docs), chunk):
        part = {d.doc_id: d for d in docs[start : start + chunk]}
        found: dict[str, list[dict[str, Any]] | None] = {}
        for table in ("packets", "ground_truth"):  # the run's packet first; the others' ground truth
            names = {f"d{i}": doc_id for i, doc_id in enumerate(part) if doc_id not in found}
            if not names:
                break
            ids = ", ".join(f":{name}" for name in names)
            sql = _PRIMARY_IN[table].format(
                segments=segments, ids=ids, is_object=_IS_OBJECT[dialect], run_id=_RUN_ID[dialect]
            )
            for doc_id, run_id, values in conn.execute(sa.text(sql), names):
                if doc_id in found or run_id != part[doc_id].run_id:
                    continue
                data = _json(values)
                found[doc_id] = _segments(data) if isinstance(data, list) else None
        for doc_id, value in found.items():
            part[doc_id].primary_segments = value


def read_history(
    conn: Connection, as_of: datetime | None, out_dir: str | Path | None = None, *, segments: bool = False
) -> History:
    """The history; `segments` (a focused re-check) adds the segments of each retried document's versions."""
    docs = documents(conn, as_of, out_dir, segments=segments)
    if segments:
        primary_segments(conn, [d for d in docs if len(d.outcome.get("attempts") or ()) > 1])
    return History(docs, truths(conn, as_of), audited(conn, as_of))
