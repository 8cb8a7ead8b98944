"""`arbiter run`: verify a batch of PDFs, with a progress bar, a clean stop on Ctrl+C or SIGTERM, and the
summary table."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arbiter.cli.items import KindOpt_HELP as KIND_HELP
from arbiter.cli.items import items_kind, refuse_pdf_options, run_items_command
from arbiter.cli.options import (
    DocAILocationOpt,
    DocAIProcessorOpt,
    DocAIReplayOpt,
    ExtractorOpt,
    LlmModelOpt,
    LlmOpt,
    PasswordOpt,
    ProfileOpt,
    documentai_overrides,
)
from arbiter.cli.summary import print_summary
from arbiter.cli.support import fail
from arbiter.errors import InputError, UserError

console = Console(stderr=True)


def run(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="INPUT",
            help="PDF files, or directories searched recursively (--kind grounded-answer: JSONL files, or "
            "folders of JSON items).",
        ),
    ] = None,
    kind: Annotated[str | None, typer.Option("--kind", metavar="NAME", help=KIND_HELP)] = None,
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
    out_dir: Annotated[
        str,
        typer.Option(
            "--out",
            metavar="DIR_OR_URL",
            help="Output directory, or object storage every node reaches as an fsspec URL "
            "(s3://bucket/prefix, gs://bucket/prefix; needs --db naming a database server).",
        ),
    ] = "output",
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
    engine: Annotated[
        str,
        typer.Option(
            metavar="NAME", help="local (this machine) | ray (documents as Ray tasks on a cluster)."
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            metavar="ADDR",
            help="--engine ray: auto | HOST:PORT | ray://HOST:PORT (default: start a local Ray instance).",
        ),
    ] = None,
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
    mirrors: Annotated[
        str | None,
        typer.Option(
            metavar="WHICH",
            help="Files written per document: all (docs/design.md §4, the default) | bundles (bundles and "
            "index entries only; the database holds the rest and `arbiter export --mirrors` writes it).",
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
        spec = items_kind(kind)
        if spec is not None:
            if not inputs:
                raise InputError(
                    f"Give the items to verify (JSONL files or folders of JSON items) for --kind {spec.name}."
                )
            refuse_pdf_options(
                spec,
                {
                    "--classifications": classifications,
                    "--classifier": classifier,
                    "--production": production,
                    "--password": password,
                    "--resume-batch": resume_batch,
                    "--extractor": extractor,
                    "--documentai-processor": documentai_processor,
                    "--documentai-location": documentai_location,
                    "--documentai-replay": documentai_replay,
                    "--audit-share": audit_share,
                    "--second-review-share": second_review_share,
                    "--mirrors": mirrors,
                },
            )
            summary = run_items_command(
                spec,
                list(inputs),
                out_dir,
                profile=profile,
                workers=workers,
                force=force,
                db=db,
                progress=None if quiet else _progress_factory,
                engine=engine,
                ray_address=ray_address,
                llm=overrides,
            )
        elif resume_batch:
            options, collected = resume(resume_batch, out_dir)
            console.print(f"Batch job {collected.job_name}: {collected.state}. {collected.message}")
            if collected.status == "pending":
                raise typer.Exit(0)
            if collected.status == "failed":
                raise fail(f"Batch job {collected.job_name} failed: {collected.message}", code=1)
        else:
            if not inputs:
                raise InputError("Give the PDFs to verify (files or directories), or --resume-batch JOB.")
            options = RunOptions(
                inputs=[str(p) for p in inputs],
                classifications=str(classifications) if classifications else None,
                classifier=classifier,
                production=str(production) if production else None,
                out_dir=out_dir,
                workers=workers,
                profile=str(profile) if profile else None,
                force=force,
                timeout=timeout,
                db=db,
                llm={k: v for k, v in overrides.items() if v is not None},
                extractor=extractor,
                documentai=documentai_overrides(documentai_processor, documentai_location, documentai_replay),
                sampling={
                    k: v
                    for k, v in (("audit_share", audit_share), ("second_review_share", second_review_share))
                    if v is not None
                },
                engine=engine,
                ray_address=ray_address,
                mirrors=mirrors or "all",
            )
        if spec is None:
            summary = execute(options, password=password, progress=None if quiet else _progress_factory)
    except UserError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt as exc:
        from arbiter.run.batch import RunInterrupted  # loaded with the run itself (execute), never at --help

        code = 143 if isinstance(exc, _Terminated) or _TERM.is_set() else 130
        if previous_term is not None:  # a second TERM while the summary prints ends the process as usual
            signal.signal(signal.SIGTERM, previous_term)
            previous_term = None
        if isinstance(exc, RunInterrupted):  # the batch had started: what it did before the stop
            print_summary(exc.summary)
        console.print(
            "[yellow]Interrupted.[/] Finished documents are saved; run the same command again to resume."
        )
        raise typer.Exit(code) from None
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
    print_summary(summary)


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
