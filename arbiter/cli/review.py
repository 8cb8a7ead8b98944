"""CLI commands around the review database: `arbiter review`, `arbiter users ...`, `arbiter export`."""

from __future__ import annotations

import getpass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arbiter.cli.support import (
    NO_DATABASE,
    NO_DATABASE_TO_WRITE,
    ArbiterCommand,
    ArbiterGroup,
    fail,
    require_database,
)
from arbiter.errors import UserError
from arbiter.kinds import KINDS, MEDICAL
from arbiter.outputs import location
from arbiter.review.onboarding import NO_ACCOUNTS_HINT
from arbiter.store import Store
from arbiter.store.errors import PermissionDenied, UnknownUser

console = Console(stderr=True)
out = Console()

users_app = typer.Typer(
    help="Reviewer accounts for the review app.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=ArbiterGroup,
)

review_app = typer.Typer(
    help="Start the review app in the browser (sign-in required; add accounts with `arbiter users add`).",
    rich_markup_mode=None,
    cls=ArbiterGroup,
)

OutOpt = Annotated[
    str,
    typer.Option(
        "--out",
        metavar="DIR_OR_URL",
        help="Output directory (holds arbiter.db by default), or the object storage URL a run wrote to "
        "(s3://bucket/prefix, gs://bucket/prefix; then --db names the database).",
    ),
]
DbOpt = Annotated[
    str | None,
    typer.Option("--db", metavar="URL", help="Database URL (default: $DATABASE_URL, else OUT/arbiter.db)."),
]


def _store(db: str | None, out_dir: str, *, writes: bool = False) -> Store:
    """The store at --db / $DATABASE_URL / OUT/arbiter.db, migrated. No command here makes a database (that
    is `arbiter run` or `arbiter db migrate`): one that does not exist is refused in one line, worded for a
    command that `writes` to it or one that only reads, instead of an empty one appearing at a typo."""
    # The composition root is imported when a command runs: it loads the PDF and model libraries, which
    # `arbiter --help` and the user commands never need.
    from arbiter.run.compose import database_url, open_store

    url = database_url(db, out_dir)
    require_database(url, NO_DATABASE_TO_WRITE if writes else NO_DATABASE)
    return open_store(url)


@users_app.command("add", cls=ArbiterCommand)
def users_add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Sign-in name.")],
    role: Annotated[str, typer.Option(metavar="ROLE", help="reviewer | admin")] = "reviewer",
    password: Annotated[
        str | None,
        typer.Option(
            metavar="PW", help="Password (asked for when omitted; prefer the prompt: shells keep history)."
        ),
    ] = None,
    no_password: Annotated[
        bool, typer.Option("--no-password", help="An account for reverse-proxy sign-in only.")
    ] = False,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Create a reviewer or admin account (passwords are stored as argon2 hashes)."""
    if role not in ("reviewer", "admin"):
        raise fail("--role must be reviewer or admin.")
    if not no_password and password is None:
        password = getpass.getpass(f"Password for {name}: ")
        if password != getpass.getpass("Again: "):
            raise fail("The two passwords differ.")
    if not no_password and not password:
        raise fail("An empty password is not allowed (use --no-password for proxy sign-in accounts).")
    store = _store(db, out_dir, writes=True)
    try:
        store.users.add(name, role, None if no_password else password, actor="cli")
    except ValueError as exc:
        raise fail(str(exc)) from None
    finally:
        store.dispose()
    out.print(f"Added {role} {name}.")


@users_app.command("list", cls=ArbiterCommand)
def users_list(out_dir: OutOpt = "output", db: DbOpt = None) -> None:
    """List the accounts, their roles, whether they are locked and the kinds of answer they review."""
    store = _store(db, out_dir)
    try:
        table = Table("name", "role", "active", "locked", "kinds")
        for user in store.users.list_all():
            table.add_row(
                user.name,
                str(user.role),
                "yes" if user.active else "no",
                "LOCKED" if user.locked else "no",
                ", ".join(user.kinds) or "all",
            )
        out.print(table)
    finally:
        store.dispose()


@users_app.command("unlock", cls=ArbiterCommand)
def users_unlock(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The locked account.")],
    by: Annotated[str, typer.Option("--by", metavar="ADMIN", help="The admin who unlocks it (audited).")],
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Lift an account's sign-in lockout and throttle (as the named admin; audited)."""
    store = _store(db, out_dir, writes=True)
    try:
        store.users.unlock(name, actor=by)
    except (PermissionDenied, UnknownUser) as exc:
        raise fail(str(exc)) from None
    finally:
        store.dispose()
    out.print(f"Unlocked {name}.")


@users_app.command("kinds", cls=ArbiterCommand)
def users_kinds(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The account.")],
    by: Annotated[str, typer.Option("--by", metavar="ADMIN", help="The admin who changes it (audited).")],
    kinds: Annotated[
        list[str] | None,
        typer.Argument(metavar="KIND", help=f"The kinds of answer it reviews: {' | '.join(KINDS)}."),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Review every kind again (no restriction).")] = False,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Restrict an account to kinds of answer (a clinician to medical-classification, a compliance analyst
    to grounded-answer), or give it every kind back with --all (as the named admin; audited). Its open claims
    of other kinds go back to the queue."""
    if every and kinds:
        raise fail("Name the kinds or give --all, not both.")
    if not every and not kinds:
        raise fail("Name the kinds of answer the account reviews, or give --all for every kind.")
    store = _store(db, out_dir, writes=True)
    try:
        now = store.users.set_kinds(name, [] if every else list(kinds or []), actor=by)
    except (ValueError, PermissionDenied, UnknownUser) as exc:
        raise fail(str(exc)) from None
    finally:
        store.dispose()
    out.print(f"{name} reviews {', '.join(now)} only." if now else f"{name} reviews every kind.")


@review_app.callback(invoke_without_command=True)
def review(
    ctx: typer.Context,
    docs: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Folder the PDFs live in; packets pointing elsewhere are refused (default: the current folder).",
        ),
    ] = None,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
    port: Annotated[int, typer.Option(min=1, max=65535, metavar="N", help="Port to serve on.")] = 8501,
    address: Annotated[str, typer.Option(metavar="ADDR", help="Address to listen on.")] = "127.0.0.1",
    auth: Annotated[
        str, typer.Option(metavar="MODE", help="local (accounts) | proxy (trusted reverse-proxy header)")
    ] = "local",
    user_header: Annotated[
        str | None,
        typer.Option(metavar="H", help="Header the proxy puts the user name in (default: X-Forwarded-User)."),
    ] = None,
    lease: Annotated[
        int, typer.Option(min=1, metavar="MIN", help="Minutes a claim lasts without activity.")
    ] = 30,
) -> None:
    """Start the review app in the browser (sign-in required; add accounts with `arbiter users add`)."""
    if ctx.invoked_subcommand is not None:
        return
    from arbiter.review_app.launch import launch
    from arbiter.run.compose import database_url

    if auth not in ("local", "proxy"):
        raise fail("--auth must be local or proxy.")
    docs_root = docs or Path.cwd()
    if not docs_root.is_dir():
        raise fail(f"--docs {docs_root} is not a folder.")
    problem = port_problem(address, port)
    if problem:
        raise fail(problem)
    store = _store(db, out_dir)
    try:
        if not store.users.list_all():
            console.print(f"No accounts yet: {NO_ACCOUNTS_HINT}", soft_wrap=True)
    finally:
        store.dispose()
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


@review_app.command("seed-known", cls=ArbiterCommand)
def seed_known(
    by: Annotated[str, typer.Option("--by", metavar="ADMIN", help="The admin who seeds them (audited).")],
    count: Annotated[int, typer.Option("--count", min=1, metavar="N", help="How many packets to seed.")] = 10,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Seed known-answer packets from adjudicated ground truth into the queue: they look like any audit to
    reviewers, their answers never become ground truth, and each reviewer's accuracy on them is on the
    admins' Metrics page."""
    from arbiter.review.known import seed_known as seed

    store = _store(db, out_dir, writes=True)
    try:
        done = seed(store, by, count)
    except (PermissionDenied, ValueError) as exc:
        raise fail(str(exc)) from None
    finally:
        store.dispose()
    if not done.packets:
        raise fail(
            "No adjudicated document without an open packet to seed from: known answers come from documents "
            "an adjudicator decided."
        )
    out.print(f"Seeded {len(done.packets)} known-answer packets (of {done.available} adjudicated documents).")


def port_problem(address: str, port: int) -> str | None:
    """Why the app could not listen on address:port (in use, not allowed), or None when it can."""
    import socket

    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"--address {address} cannot be used: {exc.strerror or exc}."
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            return f"Port {port} on {address} is not available ({exc.strerror or exc}); pick another with --port."
    return None


def export(
    mirrors: Annotated[
        bool,
        typer.Option(
            "--mirrors",
            help="Write every mirror file but the bundles (decisions, packets, ground truth, index "
            "entries) from the database.",
        ),
    ] = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="FORMATS",
            help="Ground truth in force per document as jsonl, csv or parquet (comma-separated, or all).",
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            metavar="TIME",
            help="The versions in force at this ISO 8601 time (a date is 00:00 UTC, no zone is UTC); "
            "default: the newest.",
        ),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="DIR_OR_URL",
            help="Export directory or object storage URL (default: OUT/exports/as-of-TIME or latest-TIME).",
        ),
    ] = None,
    answer_kind: Annotated[
        str,
        typer.Option(
            "--kind",
            metavar="KIND",
            help="Whose ground truth: medical-classification (the default) or grounded-answer (its own layout: "
            "answers and answer_statements tables).",
        ),
    ] = MEDICAL,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Write files from the database: ground truth as JSONL/CSV/Parquet with a manifest, or the JSON mirrors."""
    from arbiter.export import ExportError, parse_as_of, parse_formats
    from arbiter.export.options import default_dir, refuse_future
    from arbiter.export.writer import KINDS, describe, export_ground_truth
    from arbiter.record.mirrors import export_mirrors

    if fmt is None and (as_of is not None or to is not None):
        raise fail("--as-of and --to go with --format.")
    if not mirrors and fmt is None:
        raise fail("Say what to export: --format jsonl|csv|parquet (ground truth) or --mirrors.")
    now = datetime.now(UTC)
    try:
        formats = parse_formats(fmt) if fmt is not None else ()
        when = parse_as_of(as_of) if as_of is not None else None
        refuse_future(when, now)  # said before the database is opened, as every usage error is
        if answer_kind not in KINDS:
            raise ExportError(f"--kind must be one of {', '.join(KINDS)}; got '{answer_kind}'.")
    except ExportError as exc:
        raise fail(str(exc)) from None
    try:
        root = location(out_dir)
        target = location(to) if to is not None else default_dir(root, when, now)
    except UserError as exc:
        raise fail(str(exc)) from None
    store = _store(db, out_dir)
    try:
        if mirrors:
            counts = export_mirrors(store, root)
            out.print(
                "Regenerated " + ", ".join(f"{n} {what}" for what, n in counts.items()) + f" under {out_dir}."
            )
        if formats:
            manifest = export_ground_truth(store, formats, target, as_of=when, now=now, kind=answer_kind)
            out.print(describe(manifest, target), soft_wrap=True)
            if when is not None and not manifest["records"]:
                out.print(_nothing_in_force(store, when), soft_wrap=True)
    except ExportError as exc:
        raise fail(str(exc)) from None
    finally:
        store.dispose()


def _nothing_in_force(store: Store, when: datetime) -> str:
    """Why an export as of `when` holds no document: no ground truth yet, or none written by then."""
    from arbiter.export.options import iso
    from arbiter.store.exports import first_version_at

    with store.read() as conn:
        first = first_version_at(conn)
    if first is None:
        return "The database holds no ground truth yet: accepted documents and SME reviews write it."
    return (
        f"No ground truth was in force at {iso(when)}: the first version was written at {iso(first)}. "
        "Pass a later --as-of (or none, for the newest versions)."
    )
