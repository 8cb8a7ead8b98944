"""`arbiter metrics`: the ground-truth metrics of the review database as a summary, JSON or an HTML report."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arbiter.cli.review import DbOpt, OutOpt, _store
from arbiter.cli.support import ArbiterCommand, ArbiterGroup, fail
from arbiter.errors import UserError
from arbiter.kinds import GROUNDED, MEDICAL
from arbiter.metrics.as_of import parse_time
from arbiter.outputs import location

out = Console()
console = Console(stderr=True)

metrics_app = typer.Typer(
    help="Measure the primary model, the production classifier, the arbiter and the reviewers against ground "
    "truth.",
    rich_markup_mode=None,
    cls=ArbiterGroup,
)
CalibrationOpt = Annotated[
    str | None,
    typer.Option(
        "--calibration",
        metavar="FILE_OR_URL",
        help="The calibration file (default: the profile's [calibration] file, under --out).",
    ),
]


def _summary(report: object) -> None:
    from arbiter.metrics.result import MetricsReport
    from arbiter.metrics.text import (
        false_accept_sentence,
        false_accept_split,
        guarantee_sentence,
        headline_detail,
        headline_figures,
        rate_text,
    )
    from arbiter.record.drift import NO_ALARM, alarm_line

    assert isinstance(report, MetricsReport)
    fa = report.audit.false_accept
    headline = "unknown" if fa.rate is None else rate_text(fa)
    if report.audit.too_few:
        headline = f"too few audits to estimate ({headline_detail(report.audit)})"
    out.print(f"[bold]Arbiter false-accept rate:[/] {headline}")
    out.print(false_accept_sentence(report.audit))
    for g in report.guarantees:  # overall first, then per kind of accept and per document type
        out.print(
            ("[bold]Guarantee:[/] " if g.scope == "all" else "  ") + guarantee_sentence(g), soft_wrap=True
        )
    for alarm in report.drift:
        out.print(escape(alarm_line(alarm.model_dump())), style="bold red", soft_wrap=True)
    if not report.drift:
        out.print(NO_ALARM)
    if report.calibration is not None:
        out.print(f"[bold]Calibrated accepts:[/] {escape(report.calibration.message)}", soft_wrap=True)
    table = Table(title="Ground-truth metrics")
    table.add_column("figure", no_wrap=True)  # a figure's name stays whole; value and detail wrap
    table.add_column("value")
    table.add_column("detail")
    for label, split in false_accept_split(report.audit):
        table.add_row(f"False accept: {label}", rate_text(split), "blind audits of accepts")
    for name, value, detail in headline_figures(report):
        table.add_row(name, value, detail)
    for share in report.decisions.decisions:
        table.add_row(f"decision: {share.label}", rate_text(share.rate), "")
    for model in report.models:
        b = model.boundaries
        detail = "" if b is None or b.f1 is None else f"boundary F1 {b.f1:.3f}"
        table.add_row(f"{model.model} accuracy ({model.scope})", rate_text(model.accuracy), detail)
    out.print(table)
    t = report.totals
    out.print(
        f"{t.documents} documents, {t.ground_truth_docs} with ground truth ({t.sme_ground_truth_docs} SME-reviewed), "
        f"{t.reviews} reviews; computed in {report.seconds:.2f} s."
    )


@metrics_app.callback(invoke_without_command=True)
def metrics(
    ctx: typer.Context,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            metavar="TIME",
            help="Only what existed at this time (ISO 8601, UTC when no zone is given).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the full report as JSON on stdout.")
    ] = False,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="FILE_OR_URL",
            help="Write a self-contained HTML report (charts included) to FILE (or an object storage URL).",
        ),
    ] = None,
    calibration: CalibrationOpt = None,
    answer_kind: Annotated[
        str,
        typer.Option(
            "--kind",
            metavar="KIND",
            help="Whose figures: medical-classification (the default) or grounded-answer (groundedness, citations, "
            "abstention, answer accuracy and the arbiter's false-accept rate on answers).",
        ),
    ] = MEDICAL,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Measure the primary model, the production classifier, the arbiter and the reviewers against ground truth."""
    from arbiter.contracts.profile import load_profile
    from arbiter.metrics.calibration import path_of
    from arbiter.metrics.collect import compute_metrics
    from arbiter.metrics.report import write_html

    if ctx.invoked_subcommand is not None:
        return
    if answer_kind not in (MEDICAL, GROUNDED):
        raise fail(f"--kind must be {MEDICAL} or {GROUNDED}; got '{answer_kind}'.")
    if answer_kind == GROUNDED and (html is not None or calibration is not None):
        raise fail(
            "--html and --calibration are for medical-classification; grounded-answer has text and --json."
        )
    try:
        when = parse_time(as_of) if as_of else None
    except ValueError as exc:
        raise fail(str(exc)) from None
    if answer_kind == GROUNDED:
        _grounded(when, json_out, out_dir, db)
        return
    store = _store(db, out_dir)
    try:
        profile = load_profile()
        report = compute_metrics(
            store,
            when,
            profile.taxonomy.document_types,
            policy=profile.metrics,
            sampling=profile.sampling,
            drift_policy=profile.drift,
            calibration_file=path_of(out_dir, profile.calibration, calibration),
            calibration_policy=profile.calibration,
        )
    finally:
        store.dispose()
    if html is not None:
        try:
            write_html(report, location(html))
        except (OSError, UserError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else None
            raise fail(f"Could not write {html}: {reason or exc}.") from None
        console.print(f"Wrote {html}")
    if json_out:
        sys.stdout.write(report.to_json() + "\n")
    elif html is None:
        _summary(report)


def _grounded(when: datetime | None, json_out: bool, out_dir: str, db: str | None) -> None:
    """`arbiter metrics --kind grounded-answer`: the answers' figures (metrics/grounded.py)."""
    from arbiter.contracts.profile import load_profile
    from arbiter.metrics.grounded import compute_grounded
    from arbiter.metrics.grounded_text import summary_lines
    from arbiter.metrics.text import false_accept_sentence, headline_detail, headline_value

    profile = load_profile()
    store = _store(db, out_dir)
    try:
        report = compute_grounded(store, when, policy=profile.metrics, sampling=profile.sampling)
    finally:
        store.dispose()
    if json_out:
        sys.stdout.write(report.to_json() + "\n")
        return
    detail = headline_detail(report.audit)
    out.print(
        f"[bold]Arbiter false-accept rate on answers:[/] {headline_value(report.audit)}"
        + (f" ({escape(detail)})" if detail else ""),
        soft_wrap=True,
    )
    out.print(escape(false_accept_sentence(report.audit)), soft_wrap=True)
    for line in summary_lines(report):
        out.print(escape(line), soft_wrap=True)
    out.print(f"Computed in {report.seconds:.2f} s.")


@metrics_app.command("calibrate", cls=ArbiterCommand)
def calibrate(
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", metavar="TIME", help="Fit on the audits reviewed by this time (ISO 8601)."),
    ] = None,
    calibration: CalibrationOpt = None,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Fit each accept's probability of being right on its risk score (isotonic, over reviewed blind audits
    outside the held-out share) and write it to the calibration file."""
    from arbiter.contracts.profile import load_profile
    from arbiter.metrics import calibration as cal
    from arbiter.metrics.collect import database_label, reading

    try:
        when = parse_time(as_of) if as_of else None
    except ValueError as exc:
        raise fail(str(exc)) from None
    policy = load_profile().calibration
    target = cal.path_of(out_dir, policy, calibration)
    store = _store(db, out_dir)
    try:
        with reading(store.engine) as conn:
            audits = cal.read_audits(conn, when)
        label = database_label(store.engine)
    finally:
        store.dispose()
    curve = cal.fit(audits, policy)
    if curve is None:
        train, _ = cal.split(audits, policy.holdout_share)
        raise fail(cal.too_few_message(len(train), policy))
    try:
        where = location(target)
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(cal.dumps(curve, policy, when, label) + "\n", encoding="utf-8")
    except (OSError, UserError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else None
        raise fail(f"Could not write {target}: {reason or exc}.") from None
    wrong = sum(not a.right for a in audits if not cal.held_out(a.pdf_sha256, policy.holdout_share))
    out.print(
        f"Fitted on {curve.train_audits} reviewed audits ({wrong} false accepts); {len(curve.risk)} steps "
        f"written to {escape(target)}. `arbiter metrics` now shows it, measured on the held-out audits."
    )
