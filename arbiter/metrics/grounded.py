"""Metrics of the grounded-answer kind (docs/design.md §9.3; docs/ground-truth/index.md, "Grounded answers"): how grounded the
answering system's statements are, how right its citations and its abstentions are, how often its answer needed
no correction, and the arbiter's false-accept rate on audited accepts of answers.

Every figure is read from the ground truth in force per item (the same versions the export writes,
`store/exports.in_force_query`), answer rows only (`answer_kind = 'grounded-answer'`):

- A version with `statement_verdicts` judges each statement of the primary's answer (by index). A version without
  them is an auto-accept (every statement supported, its citations as answered) or, for an expert's version, the
  answer as the primary gave it (all supported) when the expert's answer is that answer, else *unjudged*: its
  statements are left out of the statement-level figures and counted in `unjudged`.
- groundedness: statements judged `supported` / judged statements (a `corrected` statement was not grounded as
  written; `kept` counts it with the supported ones).
- citation precision and recall, micro-averaged over judged statements: per statement P = the primary's cited
  quote ids, T = the ground truth's cites (the verdict's; the primary's own for an accepted statement);
  precision = Σ|P ∩ T| / Σ|P|, recall = Σ|P ∩ T| / Σ|T|. An unsupported statement's T is empty (its cites all
  count against precision); a statement with no cites adds nothing; an abstention has no statements.
- abstention: per item, the primary abstained or answered, the ground truth abstains or answers. Accuracy is the
  share where they match; "abstained when it should" = abstained among items whose truth abstains; "answered when it
  could" = answered among items whose truth answers.
- answer accuracy: the primary's answer needed no correction: every judged statement supported, and the truth's
  statements (text and cite set) and abstention equal the primary's.
- false accept: reviewed blind audits of accepted answers whose reviewer did not agree (arbiter_side.audit_stats,
  the medical computation, over the answer kind's AUDIT packets), with the guarantee (guarantee.py) alike.

Each figure is given over all items with ground truth and over the expert-reviewed ones (auto-accepts count as
all supported, which flatters the "all" scope). Every rate has its count and a Wilson 95 % interval (for citations
and statements the interval treats them as independent, which they are not within an item: read it as optimistic).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.engine import Connection

from arbiter.contracts.answers import UnsupportedReason, Verdict
from arbiter.contracts.grounded import KIND
from arbiter.contracts.profile import MetricsPolicy, Sampling
from arbiter.metrics import guarantee, loader
from arbiter.metrics.arbiter_side import audit_stats, shares
from arbiter.metrics.collect import database_label, reading
from arbiter.metrics.result import Audit, Confusion, Guarantee, Rate, Share
from arbiter.metrics.stats import confusion, rate
from arbiter.store import Store
from arbiter.store.exports import in_force_query
from arbiter.store.models import ground_truth
from arbiter.store.versions import SME_SOURCES

VERDICTS, AS_ANSWERED, UNJUDGED = "verdicts", "as_answered", "unjudged"
ABSTAIN, ANSWER = "abstain", "answer"
NOT_JUDGED = "unjudged"  # a statement of the primary's answer no verdict names


# One item ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgedStatement:
    """One statement of the primary's answer with the ground truth's verdict on it."""

    index: int
    text: str
    verdict: str  # supported / unsupported / corrected, or NOT_JUDGED
    reason: str | None
    cites: tuple[str, ...]  # the primary's
    truth_cites: tuple[str, ...]  # after review (the primary's own when accepted as answered)

    @property
    def matched(self) -> int:
        return len(set(self.cites) & set(self.truth_cites))


@dataclass(frozen=True)
class JudgedItem:
    """An item's ground truth in force read against the primary's answer (see the module's rules)."""

    record: dict[str, Any]
    sme: bool
    basis: str  # VERDICTS, AS_ANSWERED or UNJUDGED
    has_primary: bool
    primary_abstained: bool | None
    abstained: bool
    statements: tuple[JudgedStatement, ...]  # empty when the basis is UNJUDGED
    primary_statements: int
    answer_correct: bool | None  # None without the primary's answer

    @property
    def judged(self) -> tuple[JudgedStatement, ...]:
        return tuple(s for s in self.statements if s.verdict != NOT_JUDGED)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _cites(statement: Any) -> tuple[str, ...]:
    return tuple(str(c) for c in _list(_dict(statement).get("cites")) if isinstance(c, str))


def _text(statement: Any) -> str:
    text = _dict(statement).get("text")
    return text if isinstance(text, str) else ""


def _shape(answer: dict[str, Any]) -> tuple[bool, list[tuple[str, frozenset[str]]]]:
    """What 'needed no correction' compares: abstained, and each statement's text and cite set, in order."""
    statements = [(_text(s), frozenset(_cites(s))) for s in _list(answer.get("statements"))]
    return answer.get("abstained") is True, statements


def judge(record: dict[str, Any]) -> JudgedItem:
    """A stored GroundTruthRecord (as a dict, as exported) of an answer, judged; never raises on odd values."""
    source = record.get("ground_truth_source")
    sme = source in SME_SOURCES
    truth = _dict(record.get("ground_truth_classification"))
    primary_value = record.get("primary_agent_classification")
    has_primary = isinstance(primary_value, dict)
    primary = _dict(primary_value)
    statements = _list(primary.get("statements"))
    same_answer = has_primary and _shape(truth) == _shape(primary)
    verdicts = record.get("statement_verdicts")
    judged: list[JudgedStatement] = []
    if isinstance(verdicts, list):
        basis = VERDICTS
        by_index = {
            v["index"]: v for v in verdicts if isinstance(v, dict) and isinstance(v.get("index"), int)
        }
        for i, statement in enumerate(statements):
            v = by_index.get(i)
            verdict = v.get("verdict") if v is not None else None
            reason = v.get("reason") if v is not None else None
            judged.append(
                JudgedStatement(
                    index=i,
                    text=_text(statement),
                    verdict=verdict if isinstance(verdict, str) else NOT_JUDGED,
                    reason=reason if isinstance(reason, str) else None,
                    cites=_cites(statement),
                    truth_cites=_cites(v) if v is not None else (),
                )
            )
    elif not sme or same_answer:
        basis = AS_ANSWERED
        judged = [
            JudgedStatement(i, _text(s), Verdict.SUPPORTED.value, None, _cites(s), _cites(s))
            for i, s in enumerate(statements)
        ]
    else:
        basis = UNJUDGED
    all_supported = all(s.verdict == Verdict.SUPPORTED.value for s in judged)
    return JudgedItem(
        record=record,
        sme=sme,
        basis=basis,
        has_primary=has_primary,
        primary_abstained=(primary.get("abstained") is True) if has_primary else None,
        abstained=truth.get("abstained") is True,
        statements=tuple(judged),
        primary_statements=len(statements),
        answer_correct=(same_answer and basis != UNJUDGED and all_supported) if has_primary else None,
    )


# The figures ---------------------------------------------------------------------------------------------
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GroundedScores(Strict):
    scope: Literal["all", "sme"]
    items: int = Field(description="Items with ground truth in scope.")
    with_primary: int = Field(description="Of them, items with the primary's answer.")
    unjudged: int = Field(description="Expert versions that changed the answer without statement verdicts.")
    statements: int = Field(description="Judged statements of the primary's answers.")
    groundedness: Rate = Field(description="Statements supported as written / judged statements.")
    kept: Rate = Field(
        description="Statements supported or corrected (they stand after review) / judged ones."
    )
    unsupported_reasons: list[Share] = Field(
        description="Why statements were unsupported, as shares of them."
    )
    citation_precision: Rate = Field(description="The primary's cites the ground truth keeps / its cites.")
    citation_recall: Rate = Field(
        description="The ground truth's cites the primary gave / the truth's cites."
    )
    citation_f1: float | None = None
    abstention_accuracy: Rate = Field(description="Items whose abstain-or-answer choice matches the truth's.")
    abstained_when_it_should: Rate = Field(description="The primary abstained / the truth abstains.")
    answered_when_it_could: Rate = Field(description="The primary answered / the truth answers.")
    abstention: Confusion = Field(description="Rows: the truth (abstain/answer); columns: the primary.")
    answer_accuracy: Rate = Field(description="Answers that needed no correction / items with the primary's.")


class GroundedTotals(Strict):
    items: int = Field(description="Answer items with ground truth in force.")
    sme_items: int = 0
    reviews: int = 0
    reviews_by_kind: dict[str, int] = Field(default_factory=dict)


class GroundedReport(Strict):
    kind: str = KIND
    generated_at: datetime
    as_of: datetime | None = None
    database: str = ""
    totals: GroundedTotals
    scores: list[GroundedScores]
    audit: Audit
    guarantees: list[Guarantee] = Field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    def scope(self, name: str) -> GroundedScores:
        return next(s for s in self.scores if s.scope == name)


def _f1(precision: Rate, recall: Rate) -> float | None:
    p, r = precision.rate, recall.rate
    if p is None or r is None or p + r == 0:
        return None
    return 2 * p * r / (p + r)


def scores(items: Iterable[JudgedItem], scope: Literal["all", "sme"]) -> GroundedScores:
    """The figures over `items` (already chosen for the scope)."""
    n = with_primary = unjudged = 0
    verdicts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    cited = truth_cited = matched = 0
    choices: Counter[tuple[str, str]] = Counter()
    correct = 0
    for item in items:
        n += 1
        unjudged += item.basis == UNJUDGED
        for s in item.judged:
            verdicts[s.verdict] += 1
            if s.verdict == Verdict.UNSUPPORTED.value:
                reasons[s.reason or "unknown"] += 1
            cited += len(set(s.cites))
            truth_cited += len(set(s.truth_cites))
            matched += s.matched
        if item.has_primary:
            with_primary += 1
            correct += bool(item.answer_correct)
            choices[
                (ABSTAIN if item.abstained else ANSWER, ABSTAIN if item.primary_abstained else ANSWER)
            ] += 1
    judged = sum(verdicts.values())
    supported = verdicts[Verdict.SUPPORTED.value]
    precision, recall = rate(matched, cited), rate(matched, truth_cited)
    return GroundedScores(
        scope=scope,
        items=n,
        with_primary=with_primary,
        unjudged=unjudged,
        statements=judged,
        groundedness=rate(supported, judged),
        kept=rate(supported + verdicts[Verdict.CORRECTED.value], judged),
        unsupported_reasons=shares(reasons, sum(reasons.values()), [r.value for r in UnsupportedReason]),
        citation_precision=precision,
        citation_recall=recall,
        citation_f1=_f1(precision, recall),
        abstention_accuracy=rate(choices[(ABSTAIN, ABSTAIN)] + choices[(ANSWER, ANSWER)], with_primary),
        abstained_when_it_should=rate(
            choices[(ABSTAIN, ABSTAIN)], choices[(ABSTAIN, ABSTAIN)] + choices[(ABSTAIN, ANSWER)]
        ),
        answered_when_it_could=rate(
            choices[(ANSWER, ANSWER)], choices[(ANSWER, ANSWER)] + choices[(ANSWER, ABSTAIN)]
        ),
        abstention=confusion(choices, (ABSTAIN, ANSWER)),
        answer_accuracy=rate(correct, with_primary),
    )


def read_items(conn: Connection, as_of: datetime | None = None) -> list[JudgedItem]:
    """The answer items' ground truth in force (as of the time), judged, in item order."""
    query = in_force_query(as_of, dialect=conn.dialect.name, kind=KIND)
    out = []
    for _, payload in conn.execute(query):
        data = json.loads(payload)
        if isinstance(data, dict):
            out.append(judge(data))
    return out


def build(
    items: Sequence[JudgedItem],
    audit: Audit,
    *,
    reviews_by_kind: dict[str, int] | None = None,
    guarantees: list[Guarantee] | None = None,
    as_of: datetime | None = None,
    database: str = "",
) -> GroundedReport:
    kinds = dict(sorted((reviews_by_kind or {}).items()))
    return GroundedReport(
        generated_at=datetime.now(UTC),
        as_of=as_of,
        database=database,
        totals=GroundedTotals(
            items=len(items),
            sme_items=sum(i.sme for i in items),
            reviews=sum(kinds.values()),
            reviews_by_kind=kinds,
        ),
        scores=[scores(items, "all"), scores([i for i in items if i.sme], "sme")],
        audit=audit,
        guarantees=guarantees or [],
    )


def compute_grounded(
    store: Store,
    as_of: datetime | None = None,
    *,
    policy: MetricsPolicy | None = None,
    sampling: Sampling | None = None,
) -> GroundedReport:
    """The grounded-answer report of the store, as of a time (None: everything there is), in one read
    transaction."""
    started = time.perf_counter()
    with reading(store.engine) as conn:
        items = read_items(conn, as_of)
        reviewed = loader.reviews(conn, as_of, KIND)
        waiting = loader.open_audits(conn, as_of, KIND)
        frame = guarantee.read(conn, as_of, answer_kind=KIND)
    report = build(
        items,
        audit_stats(reviewed, waiting, policy),
        reviews_by_kind=Counter(r.kind for r in reviewed),
        guarantees=guarantee.guarantees(frame, policy, (sampling or Sampling()).audit_share),
        as_of=as_of,
        database=database_label(store.engine),
    )
    report.seconds = time.perf_counter() - started
    return report


def has_answers(store: Store) -> bool:
    """Whether any answer item has ground truth (the Metrics page shows its section then)."""
    with store.read() as conn:
        found = conn.execute(
            sa.select(ground_truth.c.gt_id).where(ground_truth.c.answer_kind == KIND).limit(1)
        ).first()
    return found is not None
