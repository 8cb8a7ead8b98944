"""`arbiter policy simulate`: every recorded document decided again under a candidate profile (each on the
path arbiter.whatif.paths names), compared with what was recorded (compare.py). Read-only; never calls a
model."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from arbiter.contracts.profile import Profile
from arbiter.whatif import paths
from arbiter.whatif.compare import Outcomes, compare
from arbiter.whatif.focused import doubt_adjust, recheck_doubt
from arbiter.whatif.history import History, Recorded, Truth, full_outcome, primary_of, read_history
from arbiter.whatif.paths import ACCEPT, ESCALATE, Simulated
from arbiter.whatif.redecide import Recheck, classification_at, redecide
from arbiter.whatif.reverify import load_bundle, reverify

Progress = Callable[[int, int], None]


def current_of(doc: Recorded) -> Simulated:
    """What was recorded, in the simulation's terms."""
    attempts = doc.outcome.get("attempts") or []
    last = attempts[-1] if attempts else {}
    accepted = doc.decision == ACCEPT and not doc.error
    rule = (last.get("decision") or {}).get("rule") if accepted else doc.reason
    return Simulated(
        ACCEPT if accepted else ESCALATE,
        rule or doc.reason or doc.decision,
        None if accepted else doc.reason,
        max(len(attempts) - 1, 0),
        "recorded",
        classification=None,  # read when judged (history.full_outcome)
    )


def simulate_documents(
    conn: Connection,
    history: History,
    current: Profile,
    candidate: Profile,
    *,
    progress: Progress | None = None,
) -> Outcomes:
    """The candidate's decision for each recorded document (see paths.py for the paths)."""
    from verifiers import default_verifiers

    changed = paths.changed_sections(current, candidate)
    rerun = paths.verifiers_to_rerun(current, candidate)
    stale_llm = bool(set(changed) & set(paths.LLM_SECTIONS))
    checks = default_verifiers()
    result = Outcomes(history.docs, [], [], history)
    total = len(history.docs)
    focused = paths.focused_only(current, candidate)
    # The recorded counts stand while the candidate counts alike; else every issue is read.
    counts_ok = (current.arbiter.required_verifiers, current.arbiter.require_llm_phases) == (
        candidate.arbiter.required_verifiers,
        candidate.arbiter.require_llm_phases,
    )
    for i, doc in enumerate(history.docs):
        result.current.append(current_of(doc))
        decided = None
        if doc.error or not doc.outcome.get("attempts"):
            decided = redecide(doc, candidate)
        elif focused:
            if counts_ok:
                adjust = doubt_adjust(doc, current, candidate)
                decided = redecide(doc, candidate, adjust=adjust)
            if decided is None:
                full = full_outcome(conn, doc)
                decided = redecide(doc, candidate, _recheck(conn, doc, history, candidate), outcome=full)
        elif not rerun:
            decided = redecide(doc, candidate) if counts_ok else None
            if decided is None:
                decided = redecide(doc, candidate, outcome=full_outcome(conn, doc))
        if decided is None:
            decided = _reverify(
                conn, doc, history.truths.get(doc.doc_id), candidate, rerun, checks, stale_llm
            )
        result.candidate.append(decided)
        if progress is not None and (i + 1) % 1000 == 0:
            progress(i + 1, total)
    return result


def _recheck(conn: Connection, doc: Recorded, history: History, candidate: Profile) -> Recheck:
    """The focused re-check of each stored attempt's version (the last one's is stored in the outcome)."""
    attempts = full_outcome(conn, doc).get("attempts") or []

    def recheck(j: int, results: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        if j == len(attempts) - 1:
            version = full_outcome(conn, doc).get("final_classification")
        else:
            primary = primary_of(conn, doc, history.truths.get(doc.doc_id))
            version = classification_at(primary, full_outcome(conn, doc), j)
        return recheck_doubt(results, version if isinstance(version, dict) else None, candidate)

    return recheck


def _reverify(
    conn: Connection,
    doc: Recorded,
    truth: Truth | None,
    candidate: Profile,
    rerun: set[str],
    checks: Sequence[Any],
    stale_llm: bool,
) -> Simulated:
    primary = primary_of(conn, doc, truth)
    bundle = load_bundle(doc.bundle_path) if primary is not None else None
    if primary is None or bundle is None:
        stored = redecide(doc, candidate)
        if stored is not None:
            stored.path = paths.STORED_ONLY
            return stored
        kept = current_of(doc)
        kept.path = paths.KEPT
        return kept
    return reverify(
        doc, candidate, bundle, primary, rerun, checks, outcome=full_outcome(conn, doc), stale_llm=stale_llm
    )


def simulate(
    conn: Connection,
    current: Profile,
    candidate: Profile,
    *,
    as_of: datetime | None = None,
    out_dir: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Read the history (read-only connection), decide again, compare."""
    started = time.perf_counter()
    history = read_history(conn, as_of, out_dir, segments=paths.focused_only(current, candidate))
    read_s = time.perf_counter() - started
    outcomes = simulate_documents(conn, history, current, candidate, progress=progress)
    report = compare(outcomes, current, candidate, conn)
    report["as_of"] = as_of.isoformat() if as_of else None
    report["seconds"] = {"read": round(read_s, 3), "total": round(time.perf_counter() - started, 3)}
    return report
