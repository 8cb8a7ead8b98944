"""The comparison `arbiter policy simulate` reports: both policies' decisions for every recorded document,
set side by side and judged against the SME ground truth.

Figures (each rate k of n with its Wilson 95 % interval, arbiter.metrics.stats.rate):
- decision mix and escalation reasons (arbiter.metrics.arbiter_side.decision_mix, as `arbiter metrics`);
- escalation load: escalation packets per 1,000 documents, and the blind review packets the profile's
  sampling shares would add (expected, not sampled);
- flips: documents whose final decision changes, both ways, with the rule or stop that decided;
- false accepts: accepted documents whose SME ground truth differs from the accepted answer (dominant type
  or any segment's pages or type), of the accepted documents with SME ground truth;
- needless escalations: escalated documents whose answer the SME ground truth confirms, of the escalated
  documents with SME ground truth;
- the blind-audit false-accept rate re-weighted to the candidate's accepts: the audits of documents both
  accept, and the SME-reviewed documents only the candidate accepts, weighted by how many documents each
  group holds (the interval weights the groups' Wilson bounds alike).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts.profile import Profile
from arbiter.metrics.arbiter_side import decision_mix
from arbiter.metrics.rows import DocRun
from arbiter.metrics.stats import rate
from arbiter.whatif import paths
from arbiter.whatif.history import History, Recorded, full_outcome, primary_of
from arbiter.whatif.paths import ACCEPT, ESCALATE, Simulated
from arbiter.whatif.redecide import classification_at


def same_answer(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Two classifications give the same answer: dominant type and every segment's pages and type."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False

    def key(c: dict[str, Any]) -> tuple[Any, ...]:
        found = c.get("segments")
        segments: list[Any] = found if isinstance(found, list) else []
        return (
            c.get("dominant_type"),
            tuple(
                (s.get("start_page"), s.get("end_page"), s.get("dominant_type"))
                for s in segments
                if isinstance(s, dict)
            ),
        )

    return key(a) == key(b)


@dataclass
class Outcomes:
    """Both policies' decision for every document, with what the comparison needs."""

    docs: list[Recorded]
    current: list[Simulated]
    candidate: list[Simulated]
    history: History
    primaries: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def _doc_runs(docs: Sequence[Recorded], sims: Sequence[Simulated]) -> list[DocRun]:
    """The documents grouped as the metrics' loader groups them: one DocRun for each decision, reason,
    error and re-attempt alike, standing for `count` documents (decision_mix reads only these; doc_id and
    run_id are left empty)."""
    groups = Counter((s.decision, s.reason, d.error, s.attempt > 0) for d, s in zip(docs, sims, strict=True))
    return [
        DocRun(
            doc_id="", run_id="", decision=decision, reason=reason, error=error, reattempted=again, count=n
        )
        for (decision, reason, error, again), n in groups.items()
    ]


def _rate_dict(k: int, n: int) -> dict[str, Any]:
    return rate(k, n).model_dump()


def _per_1000(k: int, n: int) -> dict[str, Any]:
    r = rate(k, n)
    scale = {key: (None if r_ is None else round(r_ * 1000, 2)) for key, r_ in (("per_1000", r.rate),)}
    return {
        "k": k,
        "n": n,
        **scale,
        "low": None if r.low is None else round(r.low * 1000, 2),
        "high": None if r.high is None else round(r.high * 1000, 2),
    }


# Each SME-reviewed document's stored final answer and attempt count, read for many documents at once (the
# answer of a document decided at its last attempt is its final classification: nothing else is read).
_FINALS = {
    "sqlite": "SELECT doc_id, run_id, json_array_length(outcome, '$.attempts'), "
    "outcome ->> '$.final_classification' FROM outcomes WHERE doc_id IN ({ids})",
    "postgresql": "SELECT doc_id, run_id, CASE WHEN jsonb_typeof(outcome -> 'attempts') = 'array' THEN "
    "jsonb_array_length(outcome -> 'attempts') END, outcome ->> 'final_classification' FROM outcomes "
    "WHERE doc_id IN ({ids})",
}


def _finals(conn: Connection, docs: Sequence[Recorded], chunk: int = 500) -> dict[str, tuple[int, Any]]:
    """doc_id -> (attempts stored, the final classification's JSON text) of each document's run."""
    runs = {d.doc_id: d.run_id for d in docs}
    ids = list(runs)
    out: dict[str, tuple[int, Any]] = {}
    for start in range(0, len(ids), chunk):
        names = {f"d{i}": doc_id for i, doc_id in enumerate(ids[start : start + chunk])}
        sql = _FINALS[conn.dialect.name].format(ids=", ".join(f":{name}" for name in names))
        for doc_id, run_id, count, final in conn.execute(sa.text(sql), names):
            if runs.get(doc_id) == run_id:
                out[doc_id] = (int(count or 0), final)
    return out


def _object(value: Any) -> dict[str, Any] | None:
    """A JSON object's text (or the driver's parsed value) as a dict; None for anything else."""
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


class _Judge:
    """Answers and their SME truth, per document and policy."""

    def __init__(self, conn: Connection | None, outcomes: Outcomes) -> None:
        self.conn = conn
        self.outcomes = outcomes
        truths = outcomes.history.truths
        self.finals = _finals(conn, [d for d in outcomes.docs if d.doc_id in truths]) if conn else {}
        self.parsed: dict[str, dict[str, Any] | None] = {}

    def answer(self, doc: Recorded, sim: Simulated) -> dict[str, Any] | None:
        if sim.classification is not None:
            return sim.classification
        if self.conn is None:
            return None
        stored = self.finals.get(doc.doc_id) if doc.full is None else None
        if stored is not None and sim.attempt >= stored[0] - 1:
            if doc.doc_id not in self.parsed:
                self.parsed[doc.doc_id] = _object(stored[1])
            return self.parsed[doc.doc_id]
        full = full_outcome(self.conn, doc)
        attempts = full.get("attempts") or []
        if sim.attempt >= len(attempts) - 1:  # the last version is the stored final classification
            final = full.get("final_classification")
            return final if isinstance(final, dict) else None
        return classification_at(self._primary(doc), full, sim.attempt)

    def _primary(self, doc: Recorded) -> dict[str, Any] | None:
        cache = self.outcomes.primaries
        if doc.doc_id not in cache:
            truth = self.outcomes.history.truths.get(doc.doc_id)
            if truth is not None and truth.primary is not None and truth.run_id in (None, doc.run_id):
                cache[doc.doc_id] = truth.primary
            elif self.conn is not None:
                cache[doc.doc_id] = primary_of(self.conn, doc, truth)
            else:
                cache[doc.doc_id] = None
        return cache[doc.doc_id]

    def right(self, doc: Recorded, sim: Simulated) -> bool | None:
        """The answer matches the SME truth (None: no SME truth, or no answer to compare)."""
        truth = self.outcomes.history.truths.get(doc.doc_id)
        if truth is None:
            return None
        answer = self.answer(doc, sim)
        if answer is None:
            return None
        return same_answer(answer, truth.classification)


def _side(
    docs: Sequence[Recorded], sims: Sequence[Simulated], profile: Profile, judge: _Judge
) -> dict[str, Any]:
    n = len(docs)
    mix = decision_mix(_doc_runs(docs, sims))
    escalated = sum(s.decision == ESCALATE for s in sims)
    accepted = n - escalated
    sampling = profile.sampling
    fa_k = fa_n = ne_k = ne_n = 0
    false_ids: list[str] = []
    needless_ids: list[str] = []
    for doc, sim in zip(docs, sims, strict=True):
        if doc.error:
            continue
        right = judge.right(doc, sim)
        if right is None:
            continue
        if sim.decision == ACCEPT:
            fa_n += 1
            if not right:
                fa_k += 1
                false_ids.append(doc.doc_id)
        else:
            ne_n += 1
            if right:
                ne_k += 1
                needless_ids.append(doc.doc_id)
    blind = accepted * sampling.audit_share + escalated * sampling.second_review_share
    return {
        "profile": profile.name,
        "version": profile.version,
        "policy_version": profile.arbiter.policy_version,
        "documents": n,
        "decisions": [s.model_dump() for s in mix.decisions],
        "escalation_reasons": [s.model_dump() for s in mix.escalation_reasons],
        "escalation_load": _per_1000(escalated, n),
        "expected_blind_packets_per_1000": round(blind * 1000 / n, 2) if n else None,
        "false_accepts": {**_rate_dict(fa_k, fa_n), "doc_ids": sorted(false_ids)},
        "needless_escalations": {**_rate_dict(ne_k, ne_n), "doc_ids": sorted(needless_ids)},
    }


def _audit(outcomes: Outcomes, judge: _Judge) -> dict[str, Any]:
    """The blind-audit false-accept rate, as recorded and re-weighted to the candidate's accepts."""
    audited = outcomes.history.audited

    def verdict(doc: Recorded, sim: Simulated) -> bool | None:
        right = judge.right(doc, sim)
        if right is None and doc.doc_id in audited and sim.path in ("recorded", paths.REDECIDED):
            return audited[doc.doc_id]
        return right

    current_k = current_n = 0
    kept_docs = kept_k = kept_n = new_docs = new_k = new_n = 0
    for doc, cur, cand in zip(outcomes.docs, outcomes.current, outcomes.candidate, strict=True):
        if cur.decision == ACCEPT and doc.doc_id in audited:
            ok = verdict(doc, cur)
            if ok is not None:
                current_n += 1
                current_k += not ok
        if cand.decision != ACCEPT:
            continue
        if cur.decision == ACCEPT:
            kept_docs += 1
            if doc.doc_id in audited:
                ok = verdict(doc, cand)
                if ok is not None:
                    kept_n += 1
                    kept_k += not ok
        else:
            new_docs += 1
            ok = judge.right(doc, cand)
            if ok is not None:
                new_n += 1
                new_k += not ok
    strata: list[dict[str, Any]] = [
        {
            "label": "accepted by both: blind audits",
            "documents": kept_docs,
            "audit": _rate_dict(kept_k, kept_n),
        },
        {
            "label": "accepted only by the candidate: SME reviews of their escalations",
            "documents": new_docs,
            "audit": _rate_dict(new_k, new_n),
        },
    ]
    weighted: dict[str, Any] = {
        "k": kept_k + new_k,
        "n": kept_n + new_n,
        "rate": None,
        "low": None,
        "high": None,
    }
    parts = [(s["documents"], s["audit"]) for s in strata if s["documents"]]
    if parts and all(r["n"] for _, r in parts):
        total = sum(w for w, _ in parts)
        for key in ("rate", "low", "high"):
            weighted[key] = sum(w * r[key] for w, r in parts) / total
    unknown = [s["label"] for s in strata if s["documents"] and not s["audit"]["n"]]
    return {
        "current": _rate_dict(current_k, current_n),
        "candidate": {**weighted, "strata": strata, "unknown_strata": unknown},
    }


def compare(
    outcomes: Outcomes, current: Profile, candidate: Profile, conn: Connection | None = None
) -> dict[str, Any]:
    """The comparison as plain data (the JSON of `arbiter policy simulate --json`)."""
    judge = _Judge(conn, outcomes)
    flips: list[dict[str, str]] = []
    taken: Counter[str] = Counter()
    needs_llm: list[str] = []
    llm_reused = 0
    for doc, cur, cand in zip(outcomes.docs, outcomes.current, outcomes.candidate, strict=True):
        taken[cand.path] += 1
        if cand.needs_llm:
            needs_llm.append(doc.doc_id)
        llm_reused += cand.llm_reused
        if cur.decision != cand.decision:
            flips.append(
                {
                    "doc_id": doc.doc_id,
                    "from": cur.decision,
                    "to": cand.decision,
                    "rule": cand.rule,
                    "from_rule": cur.rule,
                    "path": cand.path,
                }
            )
    cur_side = _side(outcomes.docs, outcomes.current, current, judge)
    cand_side = _side(outcomes.docs, outcomes.candidate, candidate, judge)
    return {
        "documents": len(outcomes.docs),
        "changed_sections": paths.changed_sections(current, candidate),
        "reverified_verifiers": sorted(paths.verifiers_to_rerun(current, candidate)),
        "paths": dict(taken.most_common()),
        "current": cur_side,
        "candidate": cand_side,
        "flips": flips,
        "flip_counts": {
            "to_accept": sum(f["to"] == ACCEPT for f in flips),
            "to_escalate": sum(f["to"] == ESCALATE for f in flips),
        },
        "false_accepts": {"current": cur_side["false_accepts"], "candidate": cand_side["false_accepts"]},
        "needless_escalations": {
            "current": cur_side["needless_escalations"],
            "candidate": cand_side["needless_escalations"],
        },
        "audit_false_accept": _audit(outcomes, judge),
        "llm_findings_needed": {"count": len(needs_llm), "doc_ids": sorted(needs_llm)},
        "llm_findings_reused_docs": llm_reused,
        "llm_calls": 0,
    }
