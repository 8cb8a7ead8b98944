"""`arbiter demo --trust`: the guarantee, the calibration and the drift alarm on a demo run, everything through
the code `arbiter run`, the review desk and `arbiter metrics` use, offline (docs/design.md §9.8).

A history batch from three known producers, then a batch where a new producer sends 5 % of the documents
with 30 % wrong answers (arbiter/demo/trust.py); every blind audit answered by simulated reviewers with the
generator's known truth (arbiter/demo/trust_review.py); then `arbiter metrics calibrate` and the metrics.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from arbiter.cli.run import run
from arbiter.cli.support import command_name, fail

console = Console(stderr=True)
out = Console()

# Documents: 100 per known producer in the history ([drift] min_history: each is judged against its own
# record), and a shifted batch of 500 (the scenario), 25 of them from the new producer.
HISTORY, SHIFTED = 300, 500
# The profile audits about 5 % of accepts (risk-weighted): this demo's accepts would give some forty audits, under
# thirty of them outside the calibration's held-out share, which needs 40. The demo passes `arbiter run
# --audit-share` for more, and says so.
TRUST_AUDIT_SHARE = 0.2
DEFAULT_OUT = Path("output/trust")


@dataclass
class TrustResult:
    """What the demo found, for its test: the lines it printed of the metrics and the counts behind them."""

    guarantee: str = ""
    calibration: str = ""
    alarms: list[str] = field(default_factory=list)  # the metrics' drift alarms (every run replayed)
    run_alarms: list[dict[str, Any]] = field(default_factory=list)  # the shifted run's own
    audits: int = 0
    corrected: int = 0
    ece: float | None = None
    report: Any = None


def _run(batch: Any, out_dir: Path, db: str, workers: int) -> dict[str, Any]:
    """One batch through `arbiter run` (its summary printed); returns the run's summary.json."""
    import json

    before = set((out_dir / "runs").glob("*/summary.json"))
    run(
        inputs=[batch.pdfs],
        classifications=batch.classifications,
        production=batch.production,
        out_dir=str(out_dir),
        workers=workers,
        force=True,
        quiet=False,
        db=db,
        audit_share=TRUST_AUDIT_SHARE,
    )
    (summary,) = set((out_dir / "runs").glob("*/summary.json")) - before
    data: dict[str, Any] = json.loads(summary.read_text(encoding="utf-8"))
    return data


def _decisions(store: Any) -> dict[str, str]:
    """doc_id -> its final decision (each demo document is decided once)."""
    import sqlalchemy as sa

    from arbiter.store.models import documents

    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(documents.c.doc_id, documents.c.final_decision))
        return {str(row.doc_id): str(row.final_decision) for row in rows}


def trust_demo(
    out_dir: Path, workers: int | None = None, *, history: int = HISTORY, shifted: int = SHIFTED
) -> TrustResult:
    """Write both batches, run them, play the audits, calibrate and print the trust figures."""
    from arbiter.cli.metrics import calibrate
    from arbiter.contracts.profile import load_profile
    from arbiter.demo.trust import KNOWN, NEW, NEW_SHARE, NEW_WRONG, make_batch, write_batch
    from arbiter.demo.trust_review import REVIEWERS, add_reviewers, play_audits
    from arbiter.metrics.calibration import path_of
    from arbiter.metrics.collect import compute_metrics
    from arbiter.metrics.text import guarantee_sentence
    from arbiter.record.drift import alarm_line
    from arbiter.run.compose import open_store

    database = out_dir / "arbiter.db"
    if database.exists():
        raise fail(
            f"{database} already exists, and the trust demo's figures need a database of their own: delete "
            f"{out_dir} or pass another --out."
        )
    # One document at a time unless asked: the drift monitor then sees the documents in the same order on every
    # run, so the alarm, the audits it raises and every figure below come out the same.
    workers = workers or 1
    db = f"sqlite:///{database.resolve()}"
    folder = out_dir / "demo-trust"
    profile = load_profile()
    known = ", ".join(f"{name} ({share:.0%} wrong)" for name, share in KNOWN.items())
    console.print(
        f"The trust demo's synthetic inputs (no real patient data): {escape(str(folder))}", soft_wrap=True
    )
    out.print(
        f"Blind audits are drawn with `arbiter run --audit-share {TRUST_AUDIT_SHARE}` (the profile's "
        f"{profile.sampling.audit_share}, risk-weighted as the profile says), so these few hundred documents "
        "give enough audits to calibrate on.",
        soft_wrap=True,
    )
    past = make_batch("history", history, profile=profile)
    out.print(f"History batch: {len(past)} documents from {known}.", soft_wrap=True)
    _run(write_batch(folder / "history", past), out_dir, db, workers)
    batch = make_batch("shifted", shifted, NEW_SHARE, profile=profile)
    new = [d for d in batch if d.producer == NEW]
    out.print(
        f"Shifted batch: {len(batch)} documents; {len(new)} ({len(new) / len(batch):.0%}) from a new producer, "
        f"{NEW}, {sum(d.wrong for d in new)} of them wrong ({NEW_WRONG:.0%}).",
        soft_wrap=True,
    )
    summary = _run(write_batch(folder / "shifted", batch), out_dir, db, workers)

    store = open_store(db)
    try:
        add_reviewers(store)
        docs = past + batch
        played = play_audits(store, {d.doc_id: d.truth for d in docs}, profile, [folder, out_dir])
        decided = _decisions(store)
    finally:
        store.dispose()
    out.print(
        f"Simulated reviews, not a person's: {' and '.join(REVIEWERS)} claimed and answered all "
        f"{played.reviewed} blind audits through the review desk with the generator's known truth "
        f"({played.agreed} agreed, {played.corrected} corrected).",
        soft_wrap=True,
    )
    calibrate(out_dir=str(out_dir), db=db)
    store = open_store(db)
    try:
        report = compute_metrics(
            store,
            None,
            profile.taxonomy.document_types,
            policy=profile.metrics,
            sampling=profile.sampling,
            drift_policy=profile.drift,
            calibration_file=path_of(str(out_dir), profile.calibration),
            calibration_policy=profile.calibration,
        )
    finally:
        store.dispose()
    result = TrustResult(
        guarantee=guarantee_sentence(report.guarantees[0]) if report.guarantees else "",
        calibration=report.calibration.message if report.calibration else "",
        alarms=[alarm_line(a.model_dump()) for a in report.drift],
        run_alarms=list((summary.get("drift") or {}).get("alarms") or []),
        audits=played.reviewed,
        corrected=played.corrected,
        ece=report.calibration.ece if report.calibration else None,
        report=report,
    )
    _print(result, docs, decided, out_dir, db)
    return result


def _print(result: TrustResult, docs: list[Any], decided: dict[str, str], out_dir: Path, db: str) -> None:
    """The figures, then what was planted to compare them with, then where to look further."""
    from arbiter.demo.trust import NEW

    out.print(f"[bold]Guarantee:[/] {escape(result.guarantee)}", soft_wrap=True)
    out.print(f"[bold]Calibrated accepts:[/] {escape(result.calibration)}", soft_wrap=True)
    for line in result.alarms:
        out.print(escape(line), style="bold red", soft_wrap=True)
    if not result.alarms:
        out.print("Drift: no alarm on any producer's escalation rate or risk mix.")
    accepted = [d for d in docs if decided.get(d.doc_id) == "AUTO_ACCEPT"]
    wrong = [d for d in accepted if d.wrong]
    new = [d for d in docs if d.producer == NEW]
    caught = Counter(decided.get(d.doc_id) for d in new if d.wrong)
    out.print(
        f"What was planted (the generator's truth; no figure above reads it): {len(wrong)} of the "
        f"{len(accepted)} accepts are wrong ({len(wrong) / max(1, len(accepted)):.1%}); {NEW} sent "
        f"{len(new)} documents, {sum(d.wrong for d in new)} wrong, {caught['ESCALATE_TO_SME']} of those "
        f"escalated. Each document's producer and planted mistake: "
        f"{escape(str(out_dir / 'demo-trust'))}/*/planted.csv",
        soft_wrap=True,
    )
    arbiter = command_name()
    # The demo's database is the one under --out even when $DATABASE_URL names another: the hints say so then.
    where = f"--out {out_dir}" + (f" --db {db}" if os.environ.get("DATABASE_URL") else "")
    out.print(
        escape(
            f"All the figures: {arbiter} metrics {where}. The Metrics page: {arbiter} users add NAME --role admin "
            f"{where}, then {arbiter} review --docs {out_dir / 'demo-trust'} {where}"
        ),
        soft_wrap=True,
    )
