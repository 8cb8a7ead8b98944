"""Reads the store's documents, reviews and runs for the metrics (the ground truth: gt_reader.py).

Documents are grouped in the database: one row per distinct (newest-run flag, run, decision, reason,
error, outcome facts) with its count, so 100k documents come back as a few hundred rows and, on SQLite,
in one statement step (without Python's GIL). Reviews come one row each (there are far fewer). Every
query is cut at `as_of` (created_at <= as_of).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND, PhaseStatus, SemanticChecks
from arbiter.contracts.verification import MODEL_JUDGED, SEMANTIC_VERIFIERS
from arbiter.metrics.rows import DocRun, PacketKind, Reviewed
from arbiter.metrics.sql import KNOWN_ANSWER, bound, cut, not_known, of_kind, params
from arbiter.store.models import UTCDateTime

GTC = "ground_truth_classification"
RULES, MODEL = SemanticChecks.RULES_ONLY.value, SemanticChecks.RULES_AND_MODEL.value

# An outcome's facts as one JSON array: [second attempt's number (there was a retry), first decision, stop].
_FACTS = {
    "sqlite": (
        "(SELECT json_extract(o.outcome, '$.attempts[1].attempt', '$.attempts[0].decision.decision', "
        "'$.stop_reason') FROM outcomes o WHERE o.doc_id = d.doc_id AND o.run_id = d.run_id)"
    ),
    "postgresql": (
        "(SELECT jsonb_build_array(x #> '{attempts,1,attempt}', x #> '{attempts,0,decision,decision}', "
        "x -> 'stop_reason')::text FROM (SELECT o.outcome || '{}'::jsonb AS x FROM outcomes o "
        "WHERE o.doc_id = d.doc_id AND o.run_id = d.run_id OFFSET 0) y)"
    ),
}
# Reviews, each as one JSON array, all of them joined into one text (one statement step): packet, document,
# run, kind, pair, reviewer, [agrees, started, submitted], the label (dominant type of the answer the review
# gave, or for a review saved before answers were kept, of the ground-truth version it wrote; only where a metric uses it: audits and double-reviewed escalations) and,
# for audits, the dominant type the arbiter accepted and how that accept was earned (_EARNED).
_PAIRED = "(p.kind <> 'ESCALATION' OR EXISTS (SELECT 1 FROM packets s WHERE s.pair_of = p.packet_id))"
# How an audited accept was earned: its outcome's semantic_checks; for an outcome stored before that field
# existed, worked out from the final attempt as VerificationOutcome does (contracts.semantic_checks_of):
# rules_and_model when a result with an LLM phase exists and the model judged (PASSED/FAILED) in all of them.
_PHASED = ", ".join(f"'{name}'" for name in SEMANTIC_VERIFIERS)
_JUDGED = ", ".join(f"'{status.value}'" for status in sorted(MODEL_JUDGED))
_NA = PhaseStatus.NOT_APPLICABLE.value
_EARNED = {
    "sqlite": (
        "(SELECT COALESCE(o.outcome ->> '$.semantic_checks', (SELECT CASE WHEN count(*) > 0 AND "
        f"sum(COALESCE(v.value ->> '$.llm_phase', '{_NA}') NOT IN ({_JUDGED})) = 0 THEN '{MODEL}' "
        f"ELSE '{RULES}' END FROM json_each(o.outcome, '$.attempts[#-1].verifier_results') v "
        f"WHERE v.value ->> '$.verifier' IN ({_PHASED}) OR COALESCE(v.value ->> '$.llm_phase', '{_NA}') "
        f"<> '{_NA}')) FROM outcomes o WHERE o.doc_id = p.doc_id AND o.run_id = p.run_id)"
    ),
    "postgresql": (
        "(SELECT COALESCE(o.outcome ->> 'semantic_checks', (SELECT CASE WHEN count(*) > 0 AND "
        f"bool_and(COALESCE(v ->> 'llm_phase', '{_NA}') IN ({_JUDGED})) THEN '{MODEL}' ELSE '{RULES}' END "
        "FROM jsonb_array_elements(COALESCE(o.outcome #> '{attempts,-1,verifier_results}', '[]'::jsonb)) v "
        f"WHERE v ->> 'verifier' IN ({_PHASED}) OR COALESCE(v ->> 'llm_phase', '{_NA}') <> '{_NA}')) "
        "FROM outcomes o WHERE o.doc_id = p.doc_id AND o.run_id = p.run_id)"
    ),
}
_ACCEPTED = "(SELECT d.doc_type FROM documents d WHERE d.doc_id = p.doc_id AND d.run_id = p.run_id)"
# A known-answer packet (review/known.py) is an AUDIT packet to everyone else; here its kind is KNOWN_ANSWER, so no
# audit figure counts it.
_KIND = f"CASE WHEN {not_known()} THEN p.kind ELSE '{KNOWN_ANSWER}' END"
_REVIEW = {
    "sqlite": (
        f"group_concat(json_array(r.packet_id, r.doc_id, p.run_id, {_KIND}, p.pair_of, r.reviewer, "
        "json_extract(r.payload, '$.agrees_with_primary', '$.started_at', '$.submitted_at'), "
        f"CASE WHEN {_PAIRED} THEN COALESCE(r.answer ->> '$.dominant_type', (SELECT t.payload ->> "
        f"'$.{GTC}.dominant_type' FROM ground_truth t WHERE t.gt_id = r.gt_id)) END, CASE WHEN p.kind = 'AUDIT' THEN COALESCE({_ACCEPTED}, "
        "p.payload ->> '$.final_classification.dominant_type') END, "
        f"CASE WHEN p.kind = 'AUDIT' THEN {_EARNED['sqlite']} END), ',')"
    ),
    "postgresql": (
        f"string_agg(jsonb_build_array(r.packet_id, r.doc_id, p.run_id, {_KIND}, p.pair_of, r.reviewer, "
        "jsonb_build_array(r.payload -> 'agrees_with_primary', r.payload -> 'started_at', "
        f"r.payload -> 'submitted_at'), CASE WHEN {_PAIRED} THEN COALESCE(r.answer ->> 'dominant_type', "
        f"(SELECT t.payload #>> '{{{GTC},dominant_type}}' FROM ground_truth t WHERE t.gt_id = r.gt_id)) END, CASE WHEN p.kind = 'AUDIT' THEN COALESCE({_ACCEPTED}, "
        "p.payload #>> '{final_classification,dominant_type}') END, "
        f"CASE WHEN p.kind = 'AUDIT' THEN {_EARNED['postgresql']} END)::text, ',')"
    ),
}


@dataclass
class ReviewSide:
    """The reviews with the runs and the count of open audits (read together: all small)."""

    reviews: list[Reviewed]
    runs: list[tuple[str, datetime | None]]
    open_audits: int


def documents(
    conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND
) -> list[DocRun]:
    """Every (document, run) row of the answer kind as of the time, grouped: each DocRun stands for `count`
    identical rows, `latest` when they are their documents' newest runs (doc_id is left empty)."""
    sql = (
        "SELECT latest, run_id, final_decision, escalation_reason, error, facts, count(*) FROM ("
        "SELECT d.run_id, d.final_decision, d.escalation_reason, d.error, "
        "row_number() OVER (PARTITION BY d.doc_id ORDER BY d.created_at DESC, d.id DESC) = 1 AS latest, "
        f"{_FACTS[conn.dialect.name]} AS facts FROM documents d WHERE {cut('d.created_at', as_of)} "
        f"AND {of_kind('d.answer_kind', answer_kind)}) x "
        "GROUP BY latest, run_id, final_decision, escalation_reason, error, facts"
    )
    out = []
    for latest, run_id, decision, reason, error, facts, count in conn.execute(
        bound(sql, as_of), params(as_of)
    ):
        second, first, stop = json.loads(facts) if facts else (None, None, None)
        out.append(
            DocRun(
                doc_id="",
                run_id=run_id,
                decision=decision,
                reason=reason,
                error=error,
                reattempted=second is not None,
                first_decision=first if isinstance(first, str) else None,
                stop_reason=stop if isinstance(stop, str) else None,
                count=int(count),
                latest=bool(latest),
            )
        )
    return out


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp


def reviews(
    conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND
) -> list[Reviewed]:
    """Each packet's first review (as of the time) of the answer kind's packets, oldest first, with the packet's kind, pair and codes,
    the dominant type of the ground-truth version the review wrote and, for audits, the type accepted."""
    sql = (
        f"SELECT {_REVIEW[conn.dialect.name]} FROM reviews r "
        f"JOIN (SELECT min(id) AS id FROM reviews WHERE {cut('created_at', as_of)} GROUP BY packet_id) f "
        f"ON f.id = r.id JOIN packets p ON p.packet_id = r.packet_id WHERE {of_kind('p.answer_kind', answer_kind)}"
    )
    text = conn.execute(bound(sql, as_of), params(as_of)).scalar()
    out: dict[str, Reviewed] = {}
    for packet_id, doc_id, run_id, kind, pair_of, reviewer, own, label, accepted, earned in json.loads(
        f"[{text or ''}]"
    ):
        agrees, started, submitted = own
        out[packet_id] = Reviewed(
            packet_id=packet_id,
            doc_id=doc_id,
            run_id=run_id,
            kind=kind,
            reviewer=reviewer,
            agrees=agrees is True,
            label=label if isinstance(label, str) and label else None,
            accepted_label=accepted if isinstance(accepted, str) and accepted else None,
            pair_of=pair_of,
            started_at=_when(started),
            submitted_at=_when(submitted),
            semantic_checks=earned if isinstance(earned, str) else None,
        )
    pair = "group_concat(json_array(c.packet_id, c.code), ',')"
    if conn.dialect.name == "postgresql":
        pair = "string_agg(jsonb_build_array(c.packet_id, c.code)::text, ',')"
    codes_sql = (
        f"SELECT {pair} FROM packet_codes c JOIN packets p ON p.packet_id = c.packet_id "
        f"WHERE p.kind = '{PacketKind.ESCALATION.value}' AND {of_kind('p.answer_kind', answer_kind)} AND c.packet_id IN "
        f"(SELECT packet_id FROM reviews WHERE {cut('created_at', as_of)})"
    )
    codes: dict[str, list[str]] = {}
    for packet_id, code in json.loads(
        f"[{conn.execute(bound(codes_sql, as_of), params(as_of)).scalar() or ''}]"
    ):
        codes.setdefault(packet_id, []).append(code)
    for packet_id, found in codes.items():
        if packet_id in out:
            out[packet_id].codes = tuple(sorted(found))
    oldest = datetime.min.replace(tzinfo=UTC)
    return sorted(out.values(), key=lambda r: (r.submitted_at or oldest, r.packet_id))


def open_audits(conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND) -> int:
    """Audit packets of the answer kind created by the time and not reviewed by then (superseded ones left out)."""
    sql = (
        f"SELECT count(*) FROM packets p WHERE p.kind = '{PacketKind.AUDIT.value}' "
        f"AND {of_kind('p.answer_kind', answer_kind)} "
        f"AND p.status <> 'SUPERSEDED' AND {cut('p.created_at', as_of)} AND {not_known()} AND NOT EXISTS "
        f"(SELECT 1 FROM reviews r WHERE r.packet_id = p.packet_id AND {cut('r.created_at', as_of)})"
    )
    return int(conn.execute(bound(sql, as_of), params(as_of)).scalar_one())


def runs(
    conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND
) -> list[tuple[str, datetime | None]]:
    """The runs as of the time that checked the answer kind (a run with no document yet is every kind's)."""
    sql = (
        f"SELECT run_id, created_at FROM runs WHERE {cut('created_at', as_of)} AND (EXISTS (SELECT 1 FROM "
        f"documents d WHERE d.run_id = runs.run_id AND {of_kind('d.answer_kind', answer_kind)}) OR NOT EXISTS "
        "(SELECT 1 FROM documents d WHERE d.run_id = runs.run_id)) ORDER BY created_at, run_id"
    )
    clause = bound(sql, as_of).columns(run_id=sa.String(), created_at=UTCDateTime())
    return [(run_id, created) for run_id, created in conn.execute(clause, params(as_of))]


def review_side(
    conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND
) -> ReviewSide:
    return ReviewSide(
        reviews(conn, as_of, answer_kind),
        runs(conn, as_of, answer_kind),
        open_audits(conn, as_of, answer_kind),
    )
