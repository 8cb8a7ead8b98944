"""`arbiter ops ...`: the operations lane from a shell, scriptable for a nightly batch: list the documents
that could not be read, retry them with a password (read from a file or a prompt, never an argument a
shell history keeps), or close them as not a medical record. Every change is audited under --by ADMIN."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arbiter.cli.options import ProfileOpt
from arbiter.cli.review import DbOpt, OutOpt, _store
from arbiter.cli.support import ArbiterCommand, ArbiterGroup, fail
from arbiter.contracts.bundle import FAILURE_KINDS
from arbiter.outputs import location
from arbiter.record.packets import UNREADABLE_PREFIX
from arbiter.review.queue_view import reason_label, waited

console = Console(stderr=True)
out = Console()

ops_app = typer.Typer(
    help="The operations lane: documents that could not be read (never in a reviewer's queue).",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=ArbiterGroup,
)
ByOpt = Annotated[str, typer.Option("--by", metavar="ADMIN", help="The admin who acts (audited).")]
# What --reason accepts for `dismiss`, and the resolution stored for it.
DISMISS_REASONS = {"not-medical": "not_medical_record"}


@ops_app.command("list", cls=ArbiterCommand)
def ops_list(
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            metavar="KIND",
            help=f"Only this failure: {', '.join(FAILURE_KINDS)}.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    ids: Annotated[
        bool, typer.Option("--ids", help="Only the document ids, one per line (for xargs).")
    ] = False,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """List the documents waiting in the operations lane, most urgent and oldest first, with why."""
    if kind is not None and kind not in FAILURE_KINDS:
        raise fail(f"Unknown --kind {kind!r}; choose one of {', '.join(FAILURE_KINDS)}.")
    store = _store(db, out_dir)
    try:
        reason = None if kind is None else UNREADABLE_PREFIX + kind
        items = [i for i in store.operations.page(limit=10**9) if reason is None or i.reason == reason]
        if ids:
            for item in items:
                typer.echo(item.doc_id)
            return
        if as_json:
            for item in items:
                packet = store.queue.get(item.packet_id)
                row = {
                    "doc_id": item.doc_id,
                    "packet_id": item.packet_id,
                    "reason": item.reason,
                    "why": packet.escalation_message,
                    "pdf_path": packet.pdf_path,
                    "run_id": packet.run_id,
                    "created_at": item.created_at.isoformat(),
                }
                typer.echo(json.dumps(row))
            return
    finally:
        store.dispose()
    if not items:
        out.print("Nothing is waiting in the operations lane.")
        return
    now = datetime.now(UTC)
    table = Table("document", "why", "waiting")  # the file's path and ingestion's sentence: --json
    for item in items:
        table.add_row(item.doc_id, reason_label(item.reason), waited(item, now))
    out.print(table)


def _password(password_file: Path | None, prompt: bool) -> str | None:
    if password_file is not None and prompt:
        raise fail("Give the password one way: --password-file or --password-prompt.")
    if password_file is not None:
        try:
            return (
                password_file.read_text(encoding="utf-8").splitlines()[0]
                if password_file.stat().st_size
                else ""
            )
        except OSError as exc:
            raise fail(f"The password file {password_file} cannot be read ({exc.strerror}).") from None
    if prompt:
        return getpass.getpass("PDF password: ")
    return None


@ops_app.command("retry", cls=ArbiterCommand)
def ops_retry(
    docs: Annotated[
        list[str], typer.Argument(metavar="DOC", help="Document ids (or packet ids) in the lane.")
    ],
    by: ByOpt,
    password_file: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Read the PDF password from the first line of FILE."),
    ] = None,
    password_prompt: Annotated[
        bool, typer.Option("--password-prompt", help="Ask for the PDF password (not echoed).")
    ] = False,
    classifier: Annotated[
        str | None, typer.Option(metavar="NAME", help="baseline | file | gemini (default: baseline).")
    ] = None,
    classifications: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR", help="Directory of {doc_id}.json classifications (implies --classifier file)."
        ),
    ] = None,
    profile: ProfileOpt = None,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Run documents of the lane again through the normal pipeline, with a password for encrypted PDFs. The
    result replaces each item (a review packet, an accept, or a new item saying why it still failed). The
    password is never stored or logged. Exit 1 when any document still could not be read."""
    from arbiter.run.compose import build_engine
    from arbiter.run.operations import retry

    password = _password(password_file, password_prompt)
    engine = build_engine(profile=profile, classifier=classifier, classifications=classifications)
    store = _store(db, out_dir, writes=True)
    failed = 0
    try:
        for ref in docs:
            result = retry(store, ref, admin=by, password=password, out_dir=location(out_dir), engine=engine)
            failed += not result.opened
            out.print(result.message, highlight=False, soft_wrap=True, markup=False)
    finally:
        store.dispose()
    if failed:
        raise typer.Exit(1)


@ops_app.command("dismiss", cls=ArbiterCommand)
def ops_dismiss(
    docs: Annotated[
        list[str], typer.Argument(metavar="DOC", help="Document ids (or packet ids) in the lane.")
    ],
    by: ByOpt,
    reason: Annotated[
        str,
        typer.Option(
            metavar="REASON", help="Why it is closed: not-medical (the file is not a medical record)."
        ),
    ] = "not-medical",
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Close documents of the lane as not medical records (audited; no ground truth is written)."""
    if reason not in DISMISS_REASONS:
        raise fail(f"--reason must be one of: {', '.join(DISMISS_REASONS)}.")
    store = _store(db, out_dir, writes=True)
    try:
        for ref in docs:
            item = store.operations.find(ref)
            store.operations.dismiss(item.packet_id, by, resolution=DISMISS_REASONS[reason])
            out.print(
                f"Closed {item.doc_id}: not a medical record.", highlight=False, soft_wrap=True, markup=False
            )
    finally:
        store.dispose()
