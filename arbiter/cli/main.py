"""The `arbiter` command line: run a batch, verify one document, print schemas, run the demo."""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arbiter.cli.support import ArbiterCommand, ArbiterGroup, print_error
from arbiter.errors import InputError, UserError
from arbiter.llm.config import DEFAULT_MODEL

app = typer.Typer(
    name="arbiter",
    help="Decide whether a machine's classification of a medical-records PDF can be trusted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: readable at 80 columns, no type column
    cls=ArbiterGroup,
)
console = Console(stderr=True)
out = Console()

ProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", metavar="FILE", help="Profile TOML replacing the medical default."),
]
PasswordOpt = Annotated[
    str | None,
    typer.Option(
        "--password", metavar="PW", help="Password for encrypted PDFs (an empty one is always tried)."
    ),
]
LlmOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="gemini | openai | replay | none (default: $ARBITER_LLM or none)."),
]
LlmModelOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help=f"Model name (default: $ARBITER_LLM_MODEL or {DEFAULT_MODEL})."),
]
ExtractorOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="local | documentai (default: $ARBITER_EXTRACTOR or local)."),
]
DocAIProcessorOpt = Annotated[
    str | None,
    typer.Option(
        "--documentai-processor",
        metavar="NAME",
        help="Document AI processor, projects/P/locations/L/processors/ID (default: $ARBITER_DOCUMENTAI_PROCESSOR).",
    ),
]
DocAILocationOpt = Annotated[
    str | None,
    typer.Option(
        "--documentai-location",
        metavar="LOC",
        help="Its location, e.g. us or eu (default: $ARBITER_DOCUMENTAI_LOCATION, else from its name).",
    ),
]
DocAIReplayOpt = Annotated[
    Path | None,
    typer.Option(
        "--documentai-replay",
        metavar="DIR",
        help="Answer from Document AI responses recorded in DIR, never the network "
        "(default: $ARBITER_DOCUMENTAI_REPLAY_DIR).",
    ),
]


def _documentai(processor: str | None, location: str | None, replay: Path | None) -> dict[str, Any]:
    """The Document AI settings given on the command line (the environment fills in the rest)."""
    given = {"processor": processor, "location": location, "replay_dir": str(replay) if replay else None}
    return {k: v for k, v in given.items() if v is not None}


def _fail(message: str, code: int = 2) -> typer.Exit:
    print_error(message)
    return typer.Exit(code)


@app.command(cls=ArbiterCommand)
def run(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(metavar="INPUT", help="PDF files, or directories searched recursively."),
    ] = None,
    classifications: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Directory of pre-computed {doc_id}.json classifications (implies --classifier file); "
            "format: `arbiter schema classification`.",
        ),
    ] = None,
    classifier: Annotated[
        str | None, typer.Option(metavar="NAME", help="baseline | file | gemini (default: baseline).")
    ] = None,
    production: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="CSV or JSONL of doc_id,dominant_type from the production classifier."
        ),
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")] = Path("output"),
    workers: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Documents in flight (default: CPU count).")
    ] = None,
    profile: ProfileOpt = None,
    password: PasswordOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Redo documents even when nothing changed.")] = False,
    timeout: Annotated[
        float, typer.Option(min=1, metavar="S", help="Seconds allowed to read one PDF.")
    ] = 120.0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    llm: LlmOpt = None,
    llm_model: LlmModelOpt = None,
    llm_mode: Annotated[
        str | None,
        typer.Option(
            metavar="MODE", help="online | batch (Gemini Batch API) (default: $ARBITER_LLM_MODE or online)."
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not answer LLM requests from the cache.")
    ] = False,
    doc_token_budget: Annotated[
        int | None,
        typer.Option(
            min=0,
            metavar="N",
            help="Tokens per document, 0 for no limit (default: $ARBITER_DOC_TOKEN_BUDGET or 200000).",
        ),
    ] = None,
    run_token_budget: Annotated[
        int | None,
        typer.Option(
            min=0,
            metavar="N",
            help="Tokens per run, 0 for no limit (default: $ARBITER_RUN_TOKEN_BUDGET or 0).",
        ),
    ] = None,
    resume_batch: Annotated[
        str | None,
        typer.Option(metavar="JOB", help="Collect a submitted batch job's answers and finish its run."),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", metavar="URL", help="Database URL (default: $DATABASE_URL, else OUT/arbiter.db)."
        ),
    ] = None,
    extractor: ExtractorOpt = None,
    documentai_processor: DocAIProcessorOpt = None,
    documentai_location: DocAILocationOpt = None,
    documentai_replay: DocAIReplayOpt = None,
    audit_share: Annotated[
        float | None,
        typer.Option(
            min=0,
            max=1,
            metavar="F",
            help="Share of auto-accepts sent to a blind audit (default: the profile's, 0.05).",
        ),
    ] = None,
    second_review_share: Annotated[
        float | None,
        typer.Option(
            min=0,
            max=1,
            metavar="F",
            help="Share of escalations given a blind second review (default: the profile's, 0.10).",
        ),
    ] = None,
) -> None:
    """Verify a batch of PDFs; write results under --out and a summary under OUT/runs/RUN_ID/."""
    from arbiter.run.job import RunOptions, execute, resume

    overrides: dict[str, Any] = {
        "backend": llm,
        "model": llm_model,
        "mode": llm_mode,
        "doc_token_budget": doc_token_budget,
        "run_token_budget": run_token_budget,
    }
    if no_cache:
        overrides["use_cache"] = False
    previous_term = _stop_on_term()
    try:
        if resume_batch:
            options, collected = resume(resume_batch, out_dir)
            console.print(f"Batch job {collected.job_name}: {collected.state}. {collected.message}")
            if collected.status == "pending":
                raise typer.Exit(0)
            if collected.status == "failed":
                raise _fail(f"Batch job {collected.job_name} failed: {collected.message}", code=1)
        else:
            if not inputs:
                raise InputError("Give the PDFs to verify (files or directories), or --resume-batch JOB.")
            options = RunOptions(
                inputs=[str(p) for p in inputs],
                classifications=str(classifications) if classifications else None,
                classifier=classifier,
                production=str(production) if production else None,
                out_dir=str(out_dir),
                workers=workers,
                profile=str(profile) if profile else None,
                force=force,
                timeout=timeout,
                db=db,
                llm={k: v for k, v in overrides.items() if v is not None},
                extractor=extractor,
                documentai=_documentai(documentai_processor, documentai_location, documentai_replay),
                sampling={
                    k: v
                    for k, v in (("audit_share", audit_share), ("second_review_share", second_review_share))
                    if v is not None
                },
            )
        summary = execute(options, password=password, progress=None if quiet else _progress_factory)
    except UserError as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt as exc:
        console.print(
            "[yellow]Interrupted.[/] Finished documents are saved; run the same command again to resume."
        )
        raise typer.Exit(143 if isinstance(exc, _Terminated) or _TERM.is_set() else 130) from None
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
    _print_summary(summary)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a service manager, `kill`, `timeout`) handled like Ctrl+C: a clean stop, no traceback."""


_TERM = threading.Event()  # set once SIGTERM arrived (the batch may re-raise it as a plain interrupt)


def _raise_terminated(_signum: int, _frame: Any) -> None:
    _TERM.set()
    raise _Terminated


def _stop_on_term() -> Any:
    """Turn SIGTERM into _Terminated for the run; the previous handler, or None when signals cannot be set
    (not the main thread)."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        return None


def _progress_factory(total: int) -> Any:
    """A rich progress bar on a terminal (none when output is piped or captured)."""
    if not console.is_terminal:
        return None
    bar = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("verifying", total=total)
    bar.start()

    def advance(_result: Any) -> None:
        bar.advance(task)
        if bar.finished:
            bar.stop()

    return advance


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
    if summary.get("pending_llm_batch"):
        table.add_row("[blue]waiting for the LLM batch job[/]", str(summary["pending_llm_batch"]))
    table.add_row("total", str(summary["documents"]))
    out.print(table)
    earned = summary.get("accepted_by_semantic_checks") or {}
    if any(earned.values()):
        out.print(
            f"Accepted on rules only: {earned.get('rules_only', 0)}; "
            f"rules and a model: {earned.get('rules_and_model', 0)}."
        )
    blind = summary.get("blind_samples") or {}
    if any(blind.values()):
        out.print(
            f"Queued for blind review as well: {blind.get('AUDIT', 0)} audit(s) of accepted documents, "
            f"{blind.get('SECOND_REVIEW', 0)} second review(s) of escalations."
        )
    llm = summary.get("llm") or {}
    if llm.get("backend", "none") != "none":
        out.print(
            f"LLM {llm['backend']} {llm.get('model', '')}: {llm.get('calls', 0)} call(s), "
            f"{llm.get('cache_hits', 0)} from cache, {llm.get('input_tokens', 0)}+{llm.get('output_tokens', 0)} "
            f"tokens, {_cost_text(llm.get('cost_usd'))}"
        )
    job = summary.get("llm_batch_job")
    if job:
        out.print(
            f"Submitted batch job {job['name']} with {job['requests']} request(s). When it has finished, run: "
            f"arbiter run --resume-batch {job['id']} --out {summary['output_dir']}"
        )
    skipped = summary["skipped_unchanged"]
    extra = (
        f"; {skipped} unchanged since an earlier run were skipped (use --force to redo)" if skipped else ""
    )
    out.print(
        f"{summary['processed']} processed in {summary['duration_s']} s{extra}. "
        f"Summary: {Path(summary['output_dir']) / 'runs' / summary['run_id'] / 'summary.json'}"
    )


@app.command(cls=ArbiterCommand)
def verify(
    pdf: Annotated[Path, typer.Option("--pdf", metavar="FILE", help="The PDF.")],
    classification: Annotated[
        Path,
        typer.Option(
            "--classification",
            metavar="FILE",
            help="The classification JSON to verify (format: `arbiter schema classification`).",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the VerificationOutcome as JSON.")] = False,
    profile: ProfileOpt = None,
    password: PasswordOpt = None,
    llm: LlmOpt = None,
    llm_model: LlmModelOpt = None,
    extractor: ExtractorOpt = None,
    documentai_processor: DocAIProcessorOpt = None,
    documentai_location: DocAILocationOpt = None,
    documentai_replay: DocAIReplayOpt = None,
) -> None:
    """Verify one document's classification and print the decision; nothing is written to disk."""
    from arbiter.contracts import FinalDecision, StopReason, VerificationOutcome
    from arbiter.contracts.profile import load_profile
    from arbiter.decide.governor import verify_with_retries
    from arbiter.ingest import IngestFailure
    from arbiter.ingest.extraction import open_ingestor
    from arbiter.llm.client import LLMClient
    from arbiter.llm.config import LLMSettings
    from arbiter.llm.factory import build_backend
    from verifiers.base import VerifyContext

    try:
        settings = LLMSettings.from_env(backend=llm, model=llm_model)
        backend = build_backend(settings)
        # No disk cache: one document's answers are not worth files under ./output (a run caches them).
        client = LLMClient(backend, settings, None) if backend is not None else None
        if client is not None and settings.record_dir is not None:
            console.print(
                f"Fresh model answers are also recorded in {settings.record_dir} (ARBITER_LLM_RECORD_DIR)."
            )
        prof = load_profile(profile)
        if not pdf.is_file():
            raise InputError(f"PDF {pdf} does not exist.")
        if not classification.is_file():
            raise InputError(f"Classification {classification} does not exist.")
        raw = classification.read_bytes()
        ingestor, _ = open_ingestor(
            extractor,
            isolated=False,
            documentai=_documentai(documentai_processor, documentai_location, documentai_replay),
        )
    except UserError as exc:
        raise _fail(str(exc)) from None
    with closing(ingestor):
        bundle = ingestor.ingest(pdf, password=password)
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
        doc_llm = client.for_document(bundle.doc_id) if client is not None else None
        outcome = verify_with_retries(raw, bundle, prof, context=VerifyContext(llm=doc_llm))
        if doc_llm is not None:
            calls, tokens, cost = doc_llm.usage()
            outcome = outcome.model_copy(
                update={"llm_calls": calls, "llm_usage": tokens, "llm_cost_usd": _round_cost(cost)}
            )
    if as_json:
        sys.stdout.write(outcome.model_dump_json(indent=2) + "\n")
        return
    _print_outcome(outcome)


def _print_outcome(outcome: Any) -> None:
    from arbiter.record.packets import semantic_checks_text

    colour = "green" if outcome.final_decision == "AUTO_ACCEPT" else "yellow"
    out.print(f"[bold {colour}]{outcome.final_decision}[/] {outcome.doc_id}")
    if outcome.escalation_reason:
        out.print(f"reason: {outcome.escalation_reason} — {outcome.escalation_message}")
    out.print(semantic_checks_text(outcome.semantic_checks))
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


@app.command(cls=ArbiterCommand)
def schema(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Contract name; omit to list them.")
    ] = None,
) -> None:
    """Print a contract's JSON Schema (or list the contracts). `arbiter schema classification` is the
    input format of --classifications and --classification; `arbiter demo` writes examples to
    OUT/demo/classifications/."""
    from arbiter.contracts.schemas import SCHEMAS, json_schema

    if name is None:
        for key, model in SCHEMAS.items():
            out.print(f"{key:16} {model.__name__}")
        return
    try:
        sys.stdout.write(json.dumps(json_schema(name), indent=2) + "\n")
    except UserError as exc:
        raise _fail(str(exc)) from None


# The demo samples a quarter of its 31 documents for blind review (the profile's 5% / 10% would give about
# one), so the audit and second-review flow and the false-accept rate are visible after a few reviews.
DEMO_SAMPLE_SHARE = 0.25


@app.command(cls=ArbiterCommand)
def demo(
    out_dir: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")] = Path("output"),
    workers: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Documents in flight (default: CPU count).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force/--no-force", help="Redo documents even when nothing changed."),
    ] = True,
    llm: Annotated[
        str,
        typer.Option(
            metavar="NAME", help="none, or replay: the LLM phases answered by the bundled sample responses."
        ),
    ] = "none",
) -> None:
    """Verify the bundled synthetic fixtures offline: the Quickstart's main job (a quarter of the documents
    are also sampled for blind review). A second demo into the same --out adds to its database (new
    ground-truth versions, more packets); `make reset` or another --out starts over."""
    from arbiter.demo.corpus import write_demo_inputs

    existing = out_dir / "arbiter.db"
    if existing.is_file():
        console.print(
            f"{existing} already exists: this demo adds to it (new ground-truth versions, more packets). "
            f"To start over, delete {out_dir} (`make reset` deletes output/) or pass another --out.",
            soft_wrap=True,
        )
    # The inputs are written from the package's generator, so the demo needs no checkout.
    inputs = write_demo_inputs(out_dir / "demo")
    console.print(f"The demo's synthetic inputs (no real patient data): {inputs.folder}", soft_wrap=True)
    run(
        inputs=[inputs.pdfs, inputs.damaged],
        classifications=inputs.classifications,
        classifier=None,
        production=inputs.production,
        out_dir=out_dir,
        workers=workers,
        profile=None,
        password=None,
        force=force,
        timeout=120.0,
        quiet=False,
        llm=llm,
        audit_share=DEMO_SAMPLE_SHARE,
        second_review_share=DEMO_SAMPLE_SHARE,
    )
    out.print(
        f"Packets for the SME queue: {out_dir / 'sme_packets'}; ground truth: {out_dir / 'ground_truth'}"
    )
    out_opt = "" if out_dir == Path("output") else f" --out {out_dir}"
    out.print(
        f"Review them in the browser: arbiter users add NAME --role admin{out_opt}, then "
        f"arbiter review --docs {inputs.folder}{out_opt}",
        soft_wrap=True,
    )


def _cost_text(cost: float | None) -> str:
    """The run's estimated LLM cost; unknown (never $0) when the model has no known price."""
    return f"about ${cost:.4f}" if cost is not None else "cost unknown (no price for this model)"


def _round_cost(cost: float | None) -> float | None:
    return round(cost, 6) if cost is not None else None


def _register_review_commands() -> None:
    from arbiter.cli.llm import llm_app
    from arbiter.cli.metrics import metrics
    from arbiter.cli.policy import policy_app
    from arbiter.cli.review import export, review, users_app

    app.add_typer(users_app, name="users")
    app.add_typer(llm_app, name="llm")
    app.add_typer(policy_app, name="policy")
    app.command(cls=ArbiterCommand)(review)
    app.command(cls=ArbiterCommand)(export)
    app.command(cls=ArbiterCommand)(metrics)


_register_review_commands()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
