"""`arbiter llm check`: prove the LLM configuration with one minimal structured-output call (registered in cli.py)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer

from arbiter.cli.support import ArbiterGroup, print_error
from arbiter.errors import UserError
from arbiter.llm.config import DEFAULT_MODEL

llm_app = typer.Typer(
    help="Check the language-model backend.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=ArbiterGroup,
)


@llm_app.command("check")
def check(
    llm: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="gemini | openai (default: $ARBITER_LLM)."),
    ] = None,
    llm_model: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help=f"Model name (default: $ARBITER_LLM_MODEL, else {DEFAULT_MODEL}; none for openai).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """One minimal structured-output call proving the key, the model, the API version and schema support.

    Exit 0 when it passes; 2 with the reason and what to change when it does not.
    """
    from arbiter.llm.config import LLMSettings
    from arbiter.llm.preflight import LIVE_BACKENDS
    from arbiter.llm.preflight import check as run_check

    try:
        settings = LLMSettings.from_env(backend=llm, model=llm_model)
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    if settings.backend not in LIVE_BACKENDS:
        print_error(
            f"nothing to check: the LLM backend is {settings.backend!r}; "
            "pass --llm gemini or --llm openai (or set ARBITER_LLM)."
        )
        raise typer.Exit(2)
    result = run_check(settings)
    if as_json:
        typer.echo(json.dumps(asdict(result), indent=2))
    elif result.ok:
        typer.echo(result.line())
    else:
        print_error(result.line())  # one line, however wide: a script greps it
    raise typer.Exit(0 if result.ok else 2)
