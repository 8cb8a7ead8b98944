"""`arbiter policy simulate`: every recorded document decided again under a candidate profile (each on the
path arbiter.whatif.paths names), compared with what was recorded (compare.py). Read-only; never calls a
model."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from arbiter.contracts.profile import Profile
from arbiter.whatif import paths
from arbiter.whatif.batch import Reverification, reverify_all
from arbiter.whatif.compare import Outcomes, compare
from arbiter.whatif.focused import doubt_adjust, recheck_doubt
from arbiter.whatif.history import History, Recorded, full_outcome, primary_of, read_history
from arbiter.whatif.paths import current_of
from arbiter.whatif.redecide import Recheck, classification_at, redecide

Progress = Callable[[int, int], None]


@contextmanager
def collector(enabled: bool) -> Iterator[None]:
    """The cyclic garbage collector switched on or off for the block, then left as it was. A simulation
    holds the whole history (about ten small dicts and lists a document, no cycles) until its report is
    made: each pass over the oldest generation walks all of it, about half the CPU of a 100k-document run.
    It is off while the history is read, decided and compared, and on while documents are re-verified (the
    verifiers' objects come and go; forked workers inherit the setting), the objects already made frozen
    meanwhile (gc.freeze: left out of every pass)."""
    was = gc.isenabled()
    if enabled:
        gc.freeze()
        gc.enable()
    else:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.unfreeze()
        if was:
            gc.enable()
        else:
            gc.disable()


def simulate_documents(
    conn: Connection,
    history: History,
    current: Profile,
    candidate: Profile,
    *,
    progress: Progress | None = None,
) -> Outcomes:
    """The candidate's decision for each recorded document (see paths.py for the paths)."""
    changed = paths.changed_sections(current, candidate)
    rerun = paths.verifiers_to_rerun(current, candidate)
    stale_llm = bool(set(changed) & set(paths.LLM_SECTIONS))
    result = Outcomes(history.docs, [], [], history)
    total = len(history.docs)
    focused = paths.focused_only(current, candidate)
    # The recorded counts stand while the candidate counts alike; else every issue is read.
    counts_ok = _counting(current) == _counting(candidate)
    pending: list[int] = []  # documents to re-verify (rules only), after every other is decided
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
            pending.append(i)
            decided = result.current[-1]  # replaced below
        result.candidate.append(decided)
        if progress is not None and (i + 1) % 1000 == 0 and not pending:
            progress(i + 1, total)
    if pending:
        work = Reverification(candidate, tuple(sorted(rerun)), stale_llm)
        docs = [history.docs[i] for i in pending]
        truths = {d.doc_id: history.truths[d.doc_id] for d in docs if d.doc_id in history.truths}
        with collector(True):
            decided_all = reverify_all(conn, work, docs, truths)
        for i, decided in zip(pending, decided_all, strict=True):
            result.candidate[i] = decided
        if progress is not None:
            progress(total, total)
    return result


def _counting(profile: Profile) -> tuple[object, ...]:
    """The policy settings that change how an attempt's issues are counted."""
    policy = profile.arbiter
    return (policy.required_verifiers, policy.require_llm_phases, policy.require_primary_evidence)


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


def simulate(
    conn: Connection,
    current: Profile,
    candidate: Profile,
    *,
    as_of: datetime | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Read the history (read-only connection), decide again, compare."""
    started = time.perf_counter()
    with collector(False):
        history = read_history(conn, as_of, out_dir, segments=paths.focused_only(current, candidate))
        read_s = time.perf_counter() - started
        outcomes = simulate_documents(conn, history, current, candidate, progress=progress)
        report = compare(outcomes, current, candidate, conn)
        del history, outcomes  # freed here, before the collector's first pass would walk them once more
    report["as_of"] = as_of.isoformat() if as_of else None
    report["seconds"] = {"read": round(read_s, 3), "total": round(time.perf_counter() - started, 3)}
    return report
