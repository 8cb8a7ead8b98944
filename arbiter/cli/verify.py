"""`arbiter verify`: one document's classification checked and the decision printed; nothing written."""

from __future__ import annotations

import sys
import tempfile
from contextlib import closing
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from arbiter.cli.items import KindOpt_HELP as KIND_HELP
from arbiter.cli.items import items_kind, verify_item_command
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
from arbiter.cli.support import fail
from arbiter.errors import InputError, UserError
from arbiter.outputs import is_url, location

console = Console(stderr=True)
out = Console()


def verify(
    pdf: Annotated[
        str | None,
        typer.Option("--pdf", metavar="FILE_OR_URL", help="The PDF (a file or an object storage URL)."),
    ] = None,
    classification: Annotated[
        str | None,
        typer.Option(
            "--classification",
            metavar="FILE_OR_URL",
            help="The classification JSON to verify (format: `arbiter schema classification`), a file or a URL.",
        ),
    ] = None,
    kind: Annotated[str | None, typer.Option("--kind", metavar="NAME", help=KIND_HELP)] = None,
    item: Annotated[
        Path | None,
        typer.Option(
            "--item",
            metavar="FILE",
            help="--kind grounded-answer: one item, a JSON file or a one-line JSONL (`arbiter schema grounded-answer`).",
        ),
    ] = None,
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
    """Verify one document's classification (--pdf and --classification), or one item of another kind
    (--kind grounded-answer --item FILE), and print the decision; nothing is written to disk. With --llm
    gemini or openai it first makes the same check call as `arbiter run`."""
    try:
        spec = items_kind(kind)
        if spec is not None:
            if item is None or pdf is not None or classification is not None:
                raise InputError(
                    f"--kind {spec.name} checks one --item FILE (and takes no --pdf or --classification)."
                )
            outcome = verify_item_command(spec, item, profile, as_json, llm=llm, llm_model=llm_model)
            if not as_json:
                _print_outcome(outcome)
            return
        if pdf is None or classification is None or item is not None:
            raise InputError(
                "Give --pdf FILE and --classification FILE (--item is for --kind grounded-answer)."
            )
    except UserError as exc:
        raise fail(str(exc)) from None
    from arbiter.llm.config import LLMSettings
    from arbiter.run.compose import build_engine, open_extraction
    from arbiter.run.worker import verify_one

    try:
        settings = LLMSettings.from_env(backend=llm, model=llm_model)
        # No disk cache: one document's answers are not worth files under ./output (a run caches them).
        # check_llm: the same preflight as `arbiter run`, so a missing key or URL stops here in one line
        # naming the variable, instead of a decision whose every semantic check ERRORED.
        engine = build_engine(
            settings, profile=profile, disk_cache=False, with_classifier=False, check_llm=True
        )
        if engine.llm is not None and settings.record_dir is not None:
            console.print(
                f"Fresh model answers are also recorded in {settings.record_dir} (ARBITER_LLM_RECORD_DIR)."
            )
        with tempfile.TemporaryDirectory(prefix="arbiter-verify-") as scratch:
            local_pdf = _local_pdf(pdf, Path(scratch))
            raw = _read(classification, "Classification")
            ingestor, _ = open_extraction(
                extractor,
                isolated=False,
                documentai=documentai_overrides(documentai_processor, documentai_location, documentai_replay),
            )
            with closing(ingestor):
                bundle = ingestor.ingest(local_pdf, password=password)
    except UserError as exc:
        raise fail(str(exc)) from None
    outcome = verify_one(bundle, raw, profile=engine.profile, llm=engine.llm)
    if as_json:
        sys.stdout.write(outcome.model_dump_json(indent=2) + "\n")
        return
    _print_outcome(outcome)


def _read(value: str, what: str) -> bytes:
    """The bytes of a file or of an object in storage (arbiter/outputs.py); InputError when it is not there."""
    where = location(value)
    try:
        return where.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise InputError(f"{what} {value} does not exist.") from None
    except OSError as exc:
        raise InputError(f"{what} {value} could not be read ({exc.strerror or exc}).") from None


def _local_pdf(value: str, scratch: Path) -> Path:
    """The PDF as a local file (the extractors read files): itself, or an object copied into `scratch` under
    its own name (the document id is the file name)."""
    if not is_url(value):
        path = Path(value.removeprefix("file://"))
        if not path.is_file():
            raise InputError(f"PDF {value} does not exist.")
        return path
    name = PurePosixPath(value.split("://", 1)[1]).name
    if not name or name in (".", ".."):
        raise InputError(f"PDF {value} names no file.")
    local = scratch / name
    local.write_bytes(_read(value, "PDF"))
    return local


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
