"""CLI commands around the review database: `arbiter review`, `arbiter users ...`, `arbiter export`."""

from __future__ import annotations

import getpass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arbiter.runjob import database_url
from arbiter.store import Store

console = Console(stderr=True)
out = Console()

users_app = typer.Typer(help="Reviewer accounts for the review app.", no_args_is_help=True)

OutOpt = Annotated[Path, typer.Option("--out", help="Output directory (holds arbiter.db by default).")]
DbOpt = Annotated[
    str | None, typer.Option("--db", help="Database URL (default: $DATABASE_URL, else OUT/arbiter.db).")
]


def _fail(message: str) -> typer.Exit:
    console.print(f"[bold red]error:[/] {message}")
    return typer.Exit(2)


def _store(db: str | None, out_dir: Path) -> Store:

    out_dir.mkdir(parents=True, exist_ok=True)
    store = Store(database_url(db, out_dir))
    store.migrate()
    return store


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="Sign-in name.")],
    role: Annotated[str, typer.Option(help="reviewer | admin")] = "reviewer",
    password: Annotated[
        str | None,
        typer.Option(help="Password (asked for when omitted; prefer the prompt: shells keep history)."),
    ] = None,
    no_password: Annotated[
        bool, typer.Option("--no-password", help="An account for reverse-proxy sign-in only.")
    ] = False,
    out_dir: OutOpt = Path("output"),
    db: DbOpt = None,
) -> None:
    """Create a reviewer or admin account (passwords are stored as argon2 hashes)."""
    if role not in ("reviewer", "admin"):
        raise _fail("--role must be reviewer or admin.")
    if not no_password and password is None:
        password = getpass.getpass(f"Password for {name}: ")
        if password != getpass.getpass("Again: "):
            raise _fail("The two passwords differ.")
    if not no_password and not password:
        raise _fail("An empty password is not allowed (use --no-password for proxy sign-in accounts).")
    store = _store(db, out_dir)
    try:
        store.add_user(name, role, None if no_password else password, actor="cli")
    except ValueError as exc:
        raise _fail(str(exc)) from None
    finally:
        store.dispose()
    out.print(f"Added {role} {name}.")


@users_app.command("list")
def users_list(out_dir: OutOpt = Path("output"), db: DbOpt = None) -> None:
    """List the accounts and their roles."""
    store = _store(db, out_dir)
    try:
        table = Table("name", "role", "active")
        for user in store.list_users():
            table.add_row(user.name, str(user.role), "yes" if getattr(user, "active", True) else "no")
        out.print(table)
    finally:
        store.dispose()


def review(
    docs: Annotated[
        Path | None, typer.Option(help="Folder the PDFs live in; packets pointing elsewhere are refused.")
    ] = None,
    out_dir: OutOpt = Path("output"),
    db: DbOpt = None,
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8501,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    auth: Annotated[
        str, typer.Option(help="local (accounts) | proxy (trusted reverse-proxy header)")
    ] = "local",
    user_header: Annotated[
        str | None, typer.Option(help="Header the proxy puts the user name in (default X-Forwarded-User).")
    ] = None,
    lease: Annotated[int, typer.Option(min=1, help="Minutes a claim lasts without activity.")] = 30,
) -> None:
    """Start the review app in the browser (sign-in required; add accounts with `arbiter users add`)."""
    from review_app.launch import launch

    if auth not in ("local", "proxy"):
        raise _fail("--auth must be local or proxy.")
    docs_root = docs or Path.cwd()
    if not docs_root.is_dir():
        raise _fail(f"--docs {docs_root} is not a folder.")
    out.print(f"Review app on http://{address}:{port} (Ctrl+C stops it).")
    code = launch(
        port=port,
        docs_root=docs_root,
        db_url=database_url(db, out_dir),
        output_root=out_dir,
        auth=auth,
        user_header=user_header,
        address=address,
        lease_minutes=lease,
    )
    raise typer.Exit(code)


def export(
    mirrors: Annotated[
        bool,
        typer.Option(
            "--mirrors", help="Regenerate the packet and ground-truth JSON files from the database."
        ),
    ] = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Ground truth in force per document as jsonl, csv or parquet (comma-separated, or all).",
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="The versions in force at this ISO 8601 time (a date is 00:00 UTC, no zone is UTC); "
            "default: the newest.",
        ),
    ] = None,
    to: Annotated[
        Path | None,
        typer.Option("--to", help="Export directory (default: OUT/exports/as-of-TIME or latest-TIME)."),
    ] = None,
    out_dir: OutOpt = Path("output"),
    db: DbOpt = None,
) -> None:
    """Write files from the database: ground truth as JSONL/CSV/Parquet with a manifest, or the JSON mirrors."""
    from arbiter.export import ExportError, parse_as_of, parse_formats
    from arbiter.export.writer import default_dir, describe, export_ground_truth

    if fmt is None and (as_of is not None or to is not None):
        raise _fail("--as-of and --to go with --format.")
    if not mirrors and fmt is None:
        raise _fail("Say what to export: --format jsonl|csv|parquet (ground truth) or --mirrors.")
    try:
        formats = parse_formats(fmt) if fmt is not None else ()
        when = parse_as_of(as_of) if as_of is not None else None
    except ExportError as exc:
        raise _fail(str(exc)) from None
    store = _store(db, out_dir)
    try:
        if mirrors:
            counts = store.export_mirrors(out_dir)
            out.print(
                "Regenerated " + ", ".join(f"{n} {what}" for what, n in counts.items()) + f" under {out_dir}."
            )
        if formats:
            now = datetime.now(UTC)
            target = to or default_dir(out_dir, when, now)
            manifest = export_ground_truth(store, formats, target, as_of=when, now=now)
            out.print(describe(manifest, target), soft_wrap=True)
    except ExportError as exc:
        raise _fail(str(exc)) from None
    finally:
        store.dispose()
