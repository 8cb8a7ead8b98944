"""The `arbiter` command line: run a batch, verify one document, print schemas, run the demo."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arbiter.errors import ArbiterError

app = typer.Typer(
    name="arbiter",
    help="Decide whether a machine's classification of a medical-records PDF can be trusted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)
out = Console()

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"

ProfileOpt = Annotated[
    Path | None, typer.Option("--profile", help="Profile TOML replacing the medical default.")
]
PasswordOpt = Annotated[
    str | None, typer.Option("--password", help="Password for encrypted PDFs (an empty one is always tried).")
]


def _fail(message: str, code: int = 2) -> typer.Exit:
    console.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)


@app.command()
def run(
    inputs: Annotated[list[Path], typer.Argument(help="PDF files, or directories searched recursively.")],
    classifications: Annotated[
        Path | None,
        typer.Option(help="Directory of pre-computed {doc_id}.json outputs (implies --classifier file)."),
    ] = None,
    classifier: Annotated[str | None, typer.Option(help="baseline | file")] = None,
    production: Annotated[
        Path | None, typer.Option(help="CSV or JSONL of doc_id,dominant_type from the production classifier.")
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("output"),
    workers: Annotated[
        int | None, typer.Option(min=1, help="Documents in flight (default: CPU count).")
    ] = None,
    profile: ProfileOpt = None,
    password: PasswordOpt = None,
    force: Annotated[bool, typer.Option(help="Redo documents even when nothing changed.")] = False,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds allowed to read one PDF.")] = 120.0,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Verify a batch of PDFs; write results under --out and a summary under OUT/runs/RUN_ID/."""
    try:
        summary = _run_batch(
            inputs,
            classifications,
            classifier,
            production,
            out_dir,
            workers,
            profile,
            password,
            force,
            timeout,
            quiet,
        )
    except ArbiterError as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        console.print(
            "[yellow]Interrupted.[/] Finished documents are saved; run the same command again to resume."
        )
        raise typer.Exit(130) from None
    _print_summary(summary)


def _run_batch(
    inputs: list[Path],
    classifications: Path | None,
    classifier_name: str | None,
    production_file: Path | None,
    out_dir: Path,
    workers: int | None,
    profile_file: Path | None,
    password: str | None,
    force: bool,
    timeout: float,
    quiet: bool,
) -> dict[str, Any]:
    from arbiter.batch import BatchRunner, default_workers, discover, new_run_id
    from arbiter.bundle_cache import BundleCache
    from arbiter.classifiers import get_classifier
    from arbiter.errors import ConfigError
    from arbiter.ingest import IsolatedIngestor
    from arbiter.outputs import FileStore
    from arbiter.pipeline import Pipeline
    from arbiter.production import load_production
    from arbiter.profile import load_profile

    if classifications is not None:
        if classifier_name not in (None, "file"):
            raise ConfigError("--classifications implies --classifier file; drop one of them.")
        if not classifications.is_dir():
            raise ConfigError(f"--classifications {classifications} is not a directory.")
        classifier_name = "file"
    classifier_name = classifier_name or "baseline"
    if classifier_name == "file" and classifications is None:
        raise ConfigError("--classifier file needs --classifications DIR.")
    prof = load_profile(profile_file)
    clf = get_classifier(classifier_name, classifications_dir=classifications)
    production = load_production(production_file) if production_file else {}
    docs = discover(inputs)
    n = workers or default_workers()
    store = FileStore(out_dir)
    run_id = new_run_id()
    with IsolatedIngestor(workers=n, timeout_s=timeout) as ingestor:
        pipeline = Pipeline(
            profile=prof,
            classifier=clf,
            store=store,
            run_id=run_id,
            ingest=lambda path, doc_id: ingestor.ingest(path, doc_id=doc_id, password=password),
            cache=BundleCache(out_dir / "cache" / "bundles"),
            production=production,
        )
        runner = BatchRunner(pipeline, store, workers=n, force=force)
        console.print(
            f"Run [bold]{run_id}[/]: {len(docs)} document(s), classifier [bold]{classifier_name}[/], "
            f"profile {prof.name} {prof.version}, {n} worker(s)"
        )
        if quiet or not console.is_terminal:
            return runner.run(docs)
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:
            task = bar.add_task("verifying", total=len(docs))
            return runner.run(docs, progress=lambda _r: bar.advance(task))


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title=f"Run {summary['run_id']}", show_lines=False)
    table.add_column("outcome")
    table.add_column("documents", justify="right")
    table.add_row("[green]accepted first time[/]", str(summary["accepted_first_time"]))
    table.add_row("[green]accepted after fixes[/]", str(summary["accepted_after_fixes"]))
    table.add_row("[yellow]escalated to an SME[/]", str(summary["escalated"]))
    for reason, count in summary["escalated_by_reason"].items():
        table.add_row(f"  [dim]{reason}[/]", str(count))
    table.add_row("[red]could not be verified (escalated)[/]", str(summary["errors"]))
    for reason, count in summary["errors_by_reason"].items():
        table.add_row(f"  [dim]{reason}[/]", str(count))
    table.add_row("total", str(summary["documents"]))
    out.print(table)
    skipped = summary["skipped_unchanged"]
    extra = (
        f"; {skipped} unchanged since an earlier run were skipped (use --force to redo)" if skipped else ""
    )
    out.print(
        f"{summary['processed']} processed in {summary['duration_s']} s{extra}. "
        f"Summary: {Path(summary['output_dir']) / 'runs' / summary['run_id'] / 'summary.json'}"
    )


@app.command()
def verify(
    pdf: Annotated[Path, typer.Option("--pdf", help="The PDF.")],
    classification: Annotated[
        Path, typer.Option("--classification", help="The classification JSON to verify.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the VerificationOutcome as JSON.")] = False,
    profile: ProfileOpt = None,
    password: PasswordOpt = None,
) -> None:
    """Verify one document's classification and print the decision (nothing is written to disk)."""
    from arbiter.contracts import FinalDecision, StopReason, VerificationOutcome
    from arbiter.governor import verify_with_retries
    from arbiter.ingest import IngestFailure, ingest_pdf
    from arbiter.profile import load_profile

    try:
        prof = load_profile(profile)
        if not pdf.is_file():
            raise ArbiterError(f"PDF {pdf} does not exist.")
        if not classification.is_file():
            raise ArbiterError(f"Classification {classification} does not exist.")
        raw = classification.read_bytes()
    except ArbiterError as exc:
        raise _fail(str(exc)) from None
    bundle = ingest_pdf(pdf, password=password)
    if isinstance(bundle, IngestFailure):
        outcome = VerificationOutcome(
            doc_id=bundle.doc_id,
            final_decision=FinalDecision.ESCALATE_TO_SME,
            escalation_reason=f"pdf_{bundle.kind}",
            escalation_message=bundle.message,
            stop_reason=StopReason.INPUT_FAILED,
            policy_version=prof.arbiter.policy_version,
        )
    else:
        outcome = verify_with_retries(raw, bundle, prof)
    if as_json:
        sys.stdout.write(outcome.model_dump_json(indent=2) + "\n")
        return
    _print_outcome(outcome)


def _print_outcome(outcome: Any) -> None:
    colour = "green" if outcome.final_decision == "AUTO_ACCEPT" else "yellow"
    out.print(f"[bold {colour}]{outcome.final_decision}[/] {outcome.doc_id}")
    if outcome.escalation_reason:
        out.print(f"reason: {outcome.escalation_reason} — {outcome.escalation_message}")
    for attempt in outcome.attempts:
        d = attempt.decision
        fixes = f", {len(attempt.fixes_applied)} fix(es) applied" if attempt.fixes_applied else ""
        out.print(
            f"attempt {attempt.attempt}: {d.decision} by rule {d.rule} (policy {d.policy_version}){fixes}"
        )
    if outcome.final_issues:
        table = Table(show_lines=False)
        for col in ("severity", "code", "where", "message"):
            table.add_column(col)
        for issue in outcome.final_issues:
            loc = issue.location
            where = " ".join(
                x
                for x in (
                    f"seg {loc.segment_index}" if loc.segment_index else "",
                    f"p.{loc.page}" if loc.page else "",
                    loc.path,
                )
                if x
            )
            table.add_row(str(issue.severity), issue.code, where, issue.message)
        out.print(table)


@app.command()
def schema(
    name: Annotated[str | None, typer.Argument(help="Contract name; omit to list them.")] = None,
) -> None:
    """Print a contract's JSON Schema (or list the contracts)."""
    from arbiter.schemas import SCHEMAS, json_schema

    if name is None:
        for key, model in SCHEMAS.items():
            out.print(f"{key:16} {model.__name__}")
        return
    try:
        sys.stdout.write(json.dumps(json_schema(name), indent=2) + "\n")
    except ArbiterError as exc:
        raise _fail(str(exc)) from None


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("output"),
    workers: Annotated[int | None, typer.Option(min=1)] = None,
    force: Annotated[bool, typer.Option(help="Redo documents even when nothing changed.")] = True,
) -> None:
    """Verify the bundled synthetic fixtures offline: the Quickstart's main job."""
    pdfs, demo_dir, production = FIXTURES / "pdfs", FIXTURES / "demo", FIXTURES / "production.csv"
    damaged = FIXTURES / "damaged"
    if not pdfs.is_dir() or not demo_dir.is_dir():
        raise _fail(f"The fixtures are missing under {FIXTURES}; run `python fixtures/generate.py`.")
    run(
        inputs=[pdfs, damaged] if damaged.is_dir() else [pdfs],
        classifications=demo_dir,
        classifier=None,
        production=production,
        out_dir=out_dir,
        workers=workers,
        profile=None,
        password=None,
        force=force,
        timeout=120.0,
        quiet=False,
    )
    out.print(
        f"Packets for the SME queue: {out_dir / 'sme_packets'}; ground truth: {out_dir / 'ground_truth'}"
    )


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
