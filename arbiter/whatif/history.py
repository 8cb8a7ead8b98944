"""Reads what a simulation replays from the review store, read-only: each document's newest run as of a
time (decision, reason, every attempt's issues and decisions), the SME ground truth and the blind audits.

Nothing here writes. On SQLite every connection is switched to `PRAGMA query_only`; on PostgreSQL every
transaction is `READ ONLY`, so a bug cannot change the store. The audits come from the metrics' own
reader (arbiter.metrics.loader.reviews).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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
from arbiter.store.db import make_engine, resolve_url
from arbiter.store.records import SME_SOURCES

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


# Each outcome is read slim, in the database: what re-deciding needs (per attempt its fingerprint and
# decision; per result the verifier, status, model phase and each issue's severity, fixability, code and
# source) and the final classification's answer (dominant type; per segment its pages, type and the
# types' shares and confidences). A 100k history then reads as a few hundred bytes per document; the full
# outcome is fetched (full_outcome) only for a document that is re-verified.
def _j(expr: str) -> str:
    return f"json({expr})"


_ISSUES_SQLITE = (
    "SELECT json_group_array(json_object('severity', json_extract(i.value, '$.severity'), 'auto_fixable', "
    "json_extract(i.value, '$.auto_fixable'), 'code', json_extract(i.value, '$.code'), 'source', "
    "json_extract(i.value, '$.source'))) FROM json_each(r.value, '$.issues') i"
)
_RESULTS_SQLITE = (
    "SELECT json_group_array(json_object('verifier', json_extract(r.value, '$.verifier'), 'status', "
    "json_extract(r.value, '$.status'), 'llm_phase', json_extract(r.value, '$.llm_phase'), 'issues', "
    f"{_j('(' + _ISSUES_SQLITE + ')')})) FROM json_each(a.value, '$.verifier_results') r"
)
_ATTEMPTS_SQLITE = (
    "SELECT json_group_array(json_object('attempt', json_extract(a.value, '$.attempt'), 'fingerprint', "
    "json_extract(a.value, '$.fingerprint'), 'decision', json_object('decision', "
    "json_extract(a.value, '$.decision.decision'), 'rule', json_extract(a.value, '$.decision.rule')), "
    f"'verifier_results', {_j('(' + _RESULTS_SQLITE + ')')})) FROM json_each(o.outcome, '$.attempts') a"
)
_TYPES_SQLITE = (
    "SELECT json_group_array(json_object('document_type', json_extract(t.value, '$.document_type'), 'share', "
    "json_extract(t.value, '$.share'), 'confidence', json_extract(t.value, '$.confidence'))) "
    "FROM json_each(s.value, '$.types') t"
)
_SEGMENTS_SQLITE = (
    "SELECT json_group_array(json_object('segment_index', json_extract(s.value, '$.segment_index'), "
    "'start_page', json_extract(s.value, '$.start_page'), 'end_page', json_extract(s.value, '$.end_page'), "
    f"'dominant_type', json_extract(s.value, '$.dominant_type'), 'types', {_j('(' + _TYPES_SQLITE + ')')})) "
    "FROM json_each(o.outcome, '$.final_classification.segments') s"
)
_SLIM_SQLITE = (
    "json_object('stop_reason', json_extract(o.outcome, '$.stop_reason'), 'final_classification', CASE WHEN "
    "json_type(o.outcome, '$.final_classification') = 'object' THEN json_object('dominant_type', "
    "json_extract(o.outcome, '$.final_classification.dominant_type'), 'segments', "
    f"{_j('(' + _SEGMENTS_SQLITE + ')')}) END, 'attempts', {_j('(' + _ATTEMPTS_SQLITE + ')')})"
)


def _pg_agg(build: str, source: str, alias: str) -> str:
    return (
        f"(SELECT coalesce(jsonb_agg({build} ORDER BY {alias}_n), '[]'::jsonb) FROM jsonb_array_elements("
        f"CASE WHEN jsonb_typeof({source}) = 'array' THEN {source} ELSE '[]'::jsonb END) "
        f"WITH ORDINALITY AS {alias}_t({alias}, {alias}_n))"
    )


_ISSUES_PG = _pg_agg(
    "jsonb_build_object('severity', i -> 'severity', 'auto_fixable', i -> 'auto_fixable', 'code', "
    "i -> 'code', 'source', i -> 'source')",
    "r -> 'issues'",
    "i",
)
_RESULTS_PG = _pg_agg(
    "jsonb_build_object('verifier', r -> 'verifier', 'status', r -> 'status', 'llm_phase', r -> 'llm_phase', "
    f"'issues', {_ISSUES_PG})",
    "a -> 'verifier_results'",
    "r",
)
_ATTEMPTS_PG = _pg_agg(
    "jsonb_build_object('attempt', a -> 'attempt', 'fingerprint', a -> 'fingerprint', 'decision', "
    "jsonb_build_object('decision', a #> '{decision,decision}', 'rule', a #> '{decision,rule}'), "
    f"'verifier_results', {_RESULTS_PG})",
    "o.outcome -> 'attempts'",
    "a",
)
_TYPES_PG = _pg_agg(
    "jsonb_build_object('document_type', t -> 'document_type', 'share', t -> 'share', 'confidence', "
    "t -> 'confidence')",
    "s -> 'types'",
    "t",
)
_SEGMENTS_PG = _pg_agg(
    "jsonb_build_object('segment_index', s -> 'segment_index', 'start_page', s -> 'start_page', 'end_page', "
    f"s -> 'end_page', 'dominant_type', s -> 'dominant_type', 'types', {_TYPES_PG})",
    "o.outcome #> '{final_classification,segments}'",
    "s",
)
_SLIM_PG = (
    "jsonb_build_object('stop_reason', o.outcome -> 'stop_reason', 'final_classification', CASE WHEN "
    "jsonb_typeof(o.outcome -> 'final_classification') = 'object' THEN jsonb_build_object('dominant_type', "
    f"o.outcome #> '{{final_classification,dominant_type}}', 'segments', {_SEGMENTS_PG}) END, "
    f"'attempts', {_ATTEMPTS_PG})::text"
)
_SLIM = {"sqlite": _SLIM_SQLITE, "postgresql": _SLIM_PG}

_DOCS = (
    "SELECT d.doc_id, d.run_id, d.final_decision, d.escalation_reason, d.error, d.pdf_path, {slim}, "
    "(SELECT {bundle} FROM packets p WHERE p.doc_id = d.doc_id AND p.run_id = d.run_id "
    "ORDER BY p.packet_id LIMIT 1) FROM (SELECT doc_id, run_id, final_decision, escalation_reason, error, "
    "pdf_path, row_number() OVER (PARTITION BY doc_id ORDER BY created_at DESC, id DESC) AS n "
    "FROM documents WHERE {cut}) d LEFT JOIN outcomes o ON o.doc_id = d.doc_id AND o.run_id = d.run_id "
    "WHERE d.n = 1 ORDER BY d.doc_id"
)
_BUNDLE = {
    "sqlite": "p.payload ->> '$.document_bundle_path'",
    "postgresql": "p.payload ->> 'document_bundle_path'",
}
_TRUTH = (
    "SELECT g.doc_id, g.source, g.payload FROM ground_truth g JOIN (SELECT doc_id, max(version) AS v "
    "FROM ground_truth WHERE {cut} GROUP BY doc_id) n ON n.doc_id = g.doc_id AND n.v = g.version "
    "WHERE g.source IN ({sources})"
)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def documents(conn: Connection, as_of: datetime | None, out_dir: Path | None = None) -> list[Recorded]:
    """Each document's newest run as of the time, with its outcome (doc_id order)."""
    dialect = conn.dialect.name
    sql = _DOCS.format(slim=_SLIM[dialect], bundle=_BUNDLE[dialect], cut=cut("created_at", as_of))
    rows = []
    for doc_id, run_id, decision, reason, error, pdf, outcome, bundle in conn.execute(
        bound(sql, as_of), params(as_of)
    ):
        if not bundle and out_dir is not None:
            bundle = str(out_dir / "bundles" / f"{doc_id}.json")
        data = _json(outcome) if outcome is not None else None
        if isinstance(data, dict) and data.get("stop_reason") is None and not data.get("attempts"):
            data = None  # no outcome row
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
    """Documents whose newest ground-truth version (as of the time) an SME wrote."""
    sources = ", ".join(f"'{s}'" for s in SME_SOURCES)
    sql = _TRUTH.format(cut=cut("created_at", as_of), sources=sources)
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


def read_history(conn: Connection, as_of: datetime | None, out_dir: Path | None = None) -> History:
    return History(documents(conn, as_of, out_dir), truths(conn, as_of), audited(conn, as_of))
