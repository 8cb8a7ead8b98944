"""`arbiter db`: the database owner's commands — migrate the schema, and grant the application role what
`arbiter run` and `arbiter review` need (arbiter.store.roles; SECURITY.md, "PostgreSQL roles")."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from arbiter.cli.review import DbOpt, OutOpt
from arbiter.cli.support import ArbiterCommand, ArbiterGroup, fail

out = Console()

db_app = typer.Typer(
    help="The database owner's commands: migrate, and grant the application role.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=ArbiterGroup,
)


@db_app.command("migrate", cls=ArbiterCommand)
def db_migrate(out_dir: OutOpt = "output", db: DbOpt = None) -> None:
    """Bring the schema up to this version of Arbiter (connect as the role that owns the tables); an empty
    database, or none yet at OUT/arbiter.db, is created and said to be."""
    from arbiter.run.compose import database_url
    from arbiter.store import Store

    store = Store(database_url(db, out_dir))
    try:
        before = store.current_revision()
        store.migrate()
        after = store.current_revision()
    finally:
        store.dispose()
    if before is None:
        out.print(f"Created the Arbiter database at {store.where()}: schema at {after}.", soft_wrap=True)
        return
    out.print(f"schema at {after}" + (f" (was {before})" if before != after else " (already)"))


@db_app.command("grant-app-role", cls=ArbiterCommand)
def db_grant_app_role(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The application role (it must exist).")],
    out_dir: OutOpt = "output",
    db: DbOpt = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="Print the SQL for the DBA instead of running it.")
    ] = False,
) -> None:
    """Grant role NAME what runs and the review app need, and no more (PostgreSQL; run as the owner, again
    after every migration that adds a table). Runs and the app then connect as NAME."""
    import sqlalchemy as sa

    from arbiter.run.compose import database_url
    from arbiter.store.db import Database
    from arbiter.store.roles import grant_app_role, grant_statements

    url = database_url(db, out_dir)
    if print_only:
        database = sa.make_url(url).database or "arbiter"
        for statement in grant_statements(name, database):
            out.print(statement + ";", highlight=False, soft_wrap=True)
        return
    database_ = Database(url)
    try:
        statements = grant_app_role(database_, name)
    except sa.exc.DBAPIError as exc:
        raise fail(f"The grants could not be made ({str(exc.orig).splitlines()[0]}).") from None
    finally:
        database_.dispose()
    for statement in statements:
        out.print(statement + ";", highlight=False, soft_wrap=True)
    out.print(f"{name} may now run `arbiter run` and `arbiter review`; it cannot migrate or erase history.")
