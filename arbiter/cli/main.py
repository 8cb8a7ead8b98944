"""The `arbiter` command line: the top-level group, each command registered from its module of arbiter/cli/.

Commands are registered in the order `arbiter --help` lists them (the docs site's generated CLI reference follows it).
"""

from __future__ import annotations

import logging

import typer

from arbiter.cli.db import db_app
from arbiter.cli.demo import demo
from arbiter.cli.llm import llm_app
from arbiter.cli.metrics import metrics_app
from arbiter.cli.model import model_app
from arbiter.cli.ops import ops_app
from arbiter.cli.policy import policy_app
from arbiter.cli.review import export, review_app, users_app
from arbiter.cli.run import run
from arbiter.cli.schema import schema
from arbiter.cli.support import ArbiterCommand, ArbiterGroup
from arbiter.cli.verify import verify

app = typer.Typer(
    name="arbiter",
    help="Decide whether a machine's classification of a medical-records PDF can be trusted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: readable at 80 columns, no type column
    cls=ArbiterGroup,
)

for command in (run, verify, schema, demo):
    app.command(cls=ArbiterCommand)(command)
app.add_typer(review_app, name="review")
app.command(cls=ArbiterCommand)(export)
app.add_typer(metrics_app, name="metrics")
app.add_typer(users_app, name="users")
app.add_typer(db_app, name="db")
app.add_typer(ops_app, name="ops")
app.add_typer(llm_app, name="llm")
app.add_typer(policy_app, name="policy")
app.add_typer(model_app, name="model")


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
