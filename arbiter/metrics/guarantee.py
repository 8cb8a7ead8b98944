"""The guarantee line (docs/design.md §9.3): "false-accept rate ≤ X % with 95 % confidence", overall, per kind
of accept (how it was earned: rules only, or rules and a model) and per document type, from the blind audits
weighted by 1 / their recorded inclusion probability (`metrics/ipw.py`), with the further audits that would
bring X under the profile's target.

The population of an audited period is every accept as of the cut (each run's accept of a document is one
accept, as each was drawn on its own). An audit still waiting for its review is a missing answer: the
reviewed audits of a group stand for all its sampled ones, their inclusion probability multiplied by the
group's reviewed share (the usual weighting for missing answers, valid when which audits are reviewed first
does not depend on whether they are right). An accept recorded before probabilities were (migration 0009)
counts as drawn with the profile's audit_share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND
from arbiter.contracts.profile import MetricsPolicy
from arbiter.metrics.ipw import further_audits, horvitz_thompson
from arbiter.metrics.loader import _EARNED
from arbiter.metrics.result import Guarantee
from arbiter.metrics.rows import PacketKind
from arbiter.metrics.sql import bound, cut, not_known, of_kind, params

ALL, KIND, TYPE = "all", "kind", "type"
UNTYPED = "(no type)"
_ACCEPT = "d.final_decision = 'AUTO_ACCEPT' AND d.error IS NULL"


@dataclass(frozen=True)
class AuditRow:
    """One audit packet of an accept: the accept's kind and type, its recorded probability, whether its
    first review (as of the cut) exists and said the accept was wrong."""

    kind: str
    doc_type: str
    probability: float | None
    reviewed: bool
    wrong: bool


@dataclass(frozen=True)
class AuditFrame:
    accepts: Counter[tuple[str, str]]  # (kind, type) → accepts
    audits: list[AuditRow]


def _earned(dialect: str, alias: str) -> str:
    return _EARNED[dialect].replace("p.doc_id", f"{alias}.doc_id").replace("p.run_id", f"{alias}.run_id")


def read(conn: Connection, as_of: datetime | None = None, answer_kind: str = DEFAULT_KIND) -> AuditFrame:
    """The accepts of the answer kind grouped by (kind, type) and every audit packet of one, as of the time."""
    dialect = conn.dialect.name
    accepts_sql = (
        f"SELECT kind, doc_type, count(*) FROM (SELECT {_earned(dialect, 'd')} AS kind, d.doc_type "
        f"FROM documents d WHERE {_ACCEPT} AND {of_kind('d.answer_kind', answer_kind)} "
        f"AND {cut('d.created_at', as_of)}) x GROUP BY kind, doc_type"
    )
    accepts: Counter[tuple[str, str]] = Counter()
    for kind, doc_type, count in conn.execute(bound(accepts_sql, as_of), params(as_of)):
        accepts[(kind or "", doc_type or UNTYPED)] += int(count)
    agrees = (
        "r.payload ->> '$.agrees_with_primary'"
        if dialect == "sqlite"
        else "r.payload ->> 'agrees_with_primary'"
    )
    audits_sql = (
        f"SELECT {_earned(dialect, 'd')}, d.doc_type, d.audit_p, r.id IS NOT NULL, {agrees} "
        "FROM packets p JOIN documents d ON d.doc_id = p.doc_id AND d.run_id = p.run_id "
        f"LEFT JOIN (SELECT packet_id, min(id) AS id FROM reviews WHERE {cut('created_at', as_of)} "
        "GROUP BY packet_id) f ON f.packet_id = p.packet_id "
        "LEFT JOIN reviews r ON r.id = f.id "
        f"WHERE p.kind = '{PacketKind.AUDIT.value}' AND p.status <> 'SUPERSEDED' AND {_ACCEPT} AND {not_known()} "
        f"AND {of_kind('d.answer_kind', answer_kind)} AND {cut('p.created_at', as_of)}"
    )
    audits = [
        AuditRow(
            kind=kind or "",
            doc_type=doc_type or UNTYPED,
            probability=float(p) if p is not None else None,
            reviewed=bool(reviewed),
            wrong=bool(reviewed) and str(agreed).lower() not in ("1", "true"),
        )
        for kind, doc_type, p, reviewed, agreed in conn.execute(bound(audits_sql, as_of), params(as_of))
    ]
    return AuditFrame(accepts=accepts, audits=audits)


def _one(
    scope: str, label: str, accepts: int, rows: list[AuditRow], policy: MetricsPolicy, share: float
) -> Guarantee:
    reviewed = [r for r in rows if r.reviewed]
    answered = len(reviewed) / len(rows) if rows else 0.0
    probabilities = [
        min(1.0, (r.probability if r.probability is not None and r.probability > 0 else share) * answered)
        for r in reviewed
    ]
    base = Guarantee(
        scope=scope,
        label=label,
        accepts=accepts,
        audits=len(rows),
        reviewed=len(reviewed),
        false_accepts=sum(r.wrong for r in reviewed),
        confidence=policy.guarantee_confidence,
        target=policy.target_false_accept_rate,
    )
    if not reviewed or accepts <= 0 or min(probabilities) <= 0:
        return base
    estimate = horvitz_thompson(
        [r.wrong for r in reviewed], probabilities, accepts, level=policy.guarantee_confidence
    )
    return base.model_copy(
        update={
            "rate": estimate.rate,
            "low": estimate.low,
            "high": estimate.high,
            "bound": estimate.bound,
            "further_audits": further_audits(estimate, policy.target_false_accept_rate),
        }
    )


def guarantees(
    frame: AuditFrame, policy: MetricsPolicy | None = None, share: float = 0.05
) -> list[Guarantee]:
    """The guarantee overall, per kind and per type (groups with accepts, sorted by label)."""
    policy = policy or MetricsPolicy()
    groups: dict[tuple[str, str], tuple[int, list[AuditRow]]] = {}

    def add(key: tuple[str, str], count: int, rows: Iterable[AuditRow]) -> None:
        total, found = groups.get(key, (0, []))
        groups[key] = (total + count, found + list(rows))

    for (kind, doc_type), count in frame.accepts.items():
        add((ALL, ALL), count, ())
        add((KIND, kind), count, ())
        add((TYPE, doc_type), count, ())
    for row in frame.audits:
        add((ALL, ALL), 0, [row])
        add((KIND, row.kind), 0, [row])
        add((TYPE, row.doc_type), 0, [row])
    order = {ALL: 0, KIND: 1, TYPE: 2}
    return [
        _one(scope, label, count, rows, policy, share)
        for (scope, label), (count, rows) in sorted(groups.items(), key=lambda i: (order[i[0][0]], i[0][1]))
    ]
