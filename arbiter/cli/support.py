"""What every `arbiter` command shares: one plain line (exit 2) for a user mistake or a missing service,
help that reads at 80 columns, and the check that a command that only reads finds a database to read."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from typer import _click as click  # typer 0.29 carries its own click
from typer._click.exceptions import ClickException
from typer.core import TyperCommand, TyperGroup

from arbiter.errors import ConfigError

console = Console(stderr=True)

NO_DATABASE = "No Arbiter database at {where}; run `{arbiter} run` first or pass --db."
# A command that writes to an existing database (an account, an unlock, the operations lane) refuses a missing
# one as the reading commands do: a mistyped --out must not leave a new, nearly empty database behind.
NO_DATABASE_TO_WRITE = (
    "No Arbiter database at {where}; run `{arbiter} run` first (or `{arbiter} db migrate` for an empty one), "
    "or pass --db."
)
MODULE_COMMAND = "-m arbiter.cli.main"


def command_name(argv0: str | None = None, *, executable: str | None = None, cwd: Path | None = None) -> str:
    """How to type `arbiter` where the user is, for the commands a hint or a message suggests: `arbiter` when
    that name on PATH is this very program; else the script as run (`.venv/bin/arbiter` in a checkout after
    `make demo`, relative to the working folder when inside it); else `PYTHON -m arbiter.cli.main`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = executable or sys.executable
    here = Path.cwd() if cwd is None else cwd
    script: Path | None = None
    if argv0 and Path(argv0).name == "arbiter":
        script = here / argv0  # an absolute argv0 stays itself
    else:  # `python -m arbiter.cli.main`, or a test runner: the script installed beside this Python, if any
        beside = Path(executable).parent / "arbiter"
        script = beside if beside.is_file() else None
    on_path = shutil.which("arbiter")
    if script is None:
        return "arbiter" if on_path else f"{shlex.quote(executable)} {MODULE_COMMAND}"
    if on_path and _same_file(Path(on_path), script):
        return "arbiter"
    try:
        shown = str(script.resolve().relative_to(here.resolve()))
        shown = shown if "/" in shown else f"./{shown}"
    except ValueError:  # outside the working folder: the full path
        shown = str(script.resolve())
    return shlex.quote(shown)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or a.samefile(b)
    except OSError:
        return False


def print_error(message: str) -> None:
    """`error: MESSAGE` on stderr as one line (never wrapped, brackets in the message kept as typed)."""
    from rich.markup import escape

    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False)


def hide_password(url: str) -> str:
    """A database URL fit to print: the password replaced by ***."""
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy can parse: print it as given
        return url


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def user_error_message(exc: BaseException) -> str | None:
    """The one line a user should see for an error they (or their setup) caused; None for a bug."""
    import sqlalchemy.exc as sa_exc

    from arbiter.errors import UserError
    from arbiter.llm.port import LLMError
    from arbiter.store.errors import StoreError

    if isinstance(exc, UserError | StoreError):
        return str(exc)
    if isinstance(exc, LLMError):
        return exc.message
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        reason = _first_line(str(exc.orig)) or type(exc.orig).__name__
        return f"The database could not be opened: {reason} (check --db or DATABASE_URL)."
    if isinstance(exc, sa_exc.ArgumentError | sa_exc.NoSuchModuleError):
        return f"Not a database URL Arbiter can use: {_first_line(str(exc))} (check --db or DATABASE_URL)."
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError) and exc.filename:
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    return None


class ArbiterGroup(TyperGroup):
    """The top-level command group: an error a user can act on becomes one line and exit 2, whichever
    command raised it; anything else (a bug) keeps its traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, ClickException, KeyboardInterrupt):
            raise
        except Exception as exc:
            message = user_error_message(exc)
            if message is None:
                raise
            print_error(message)
            raise typer.Exit(2) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with each command's first sentence whole (wrapped, never cut with "...")."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class ArbiterCommand(TyperCommand):
    """Plain help: arguments listed by name without a type (options carry a metavar such as DIR or N)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        args: list[tuple[str, str]] = []
        opts: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append((record[0].split(" ", 1)[0], record[1]))
            else:
                opts.append(record)
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def require_database(url: str, message: str = NO_DATABASE) -> None:
    """ConfigError (`message`) unless `url` names an existing Arbiter database (commands that only read, or
    write to one, must never create an empty one). A SQLite file is checked without opening it; a server is
    asked for the schema's migration revision (an unreachable server fails here, in one line)."""
    import sqlalchemy as sa

    from arbiter.store.db import resolve_url

    resolved = sa.make_url(resolve_url(url))
    if resolved.get_backend_name() == "sqlite":
        database = resolved.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return
        if not Path(database).is_file():
            raise ConfigError(message.format(where=database, arbiter=command_name()))
        return
    from arbiter.store.db import Database

    db = Database(url)
    try:
        revision = db.current_revision()
    finally:
        db.dispose()
    if revision is None:
        raise ConfigError(message.format(where=hide_password(url), arbiter=command_name()))


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: MESSAGE` and return the Exit to raise (exit 2 unless told)."""
    print_error(message)
    return typer.Exit(code)
