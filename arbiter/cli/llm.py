"""`arbiter llm check`: prove the LLM configuration with one minimal structured-output call; `arbiter llm models`:
the dated model catalogue (registered in cli.py)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from arbiter.cli.support import ArbiterGroup, print_error
from arbiter.errors import UserError
from arbiter.llm.config import DEFAULT_MODEL

_console = Console(stderr=True)

llm_app = typer.Typer(
    help="Check the language-model backend; list the model catalogue.",
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
    if result.warning and not as_json:
        _console.print(f"[bold yellow]warning:[/] {escape(result.warning)}", soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(asdict(result), indent=2))
    elif result.ok:
        typer.echo(result.line())
    else:
        print_error(result.line())  # one line, however wide: a script greps it
    raise typer.Exit(0 if result.ok else 2)


@llm_app.command("models")
def models(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalogue's rows as JSON.")] = False,
) -> None:
    """The model catalogue: status on today's date, prices, thinking controls and limits of every model.

    Read from arbiter/llm/models.toml, or the file in $ARBITER_MODEL_CATALOGUE.
    """
    from rich.table import Table

    from arbiter.llm.config import LLMSettings

    try:
        catalogue = LLMSettings.from_env().catalogue()
    except UserError as exc:
        _console.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    today = date.today()
    if as_json:
        rows = [
            {**row.model_dump(mode="json"), "status_today": row.lifecycle(today)} for row in catalogue.model
        ]
        head: dict[str, Any] = {
            "checked": catalogue.checked.isoformat(),
            "default_model": catalogue.default_model,
            "high_volume_model": catalogue.high_volume_model,
        }
        typer.echo(json.dumps({**head, "models": rows}, indent=2))
        return
    table = Table(title=f"Model catalogue, checked {catalogue.checked} (USD per million tokens)")
    for column in (
        "service",
        "model",
        "status",
        "in / out / thinking",
        "thinking",
        "output cap",
        "context",
        "notes",
    ):
        table.add_column(column)
    for row in catalogue.model:
        price = row.price(today)
        thinking = row.price_thinking_per_m
        if price is not None:
            prices = f"{price[0]:g} / {price[1]:g} / {thinking if thinking is not None else price[1]:g}"
        else:
            prices = "0 (on-premises)" if row.service in ("vllm", "llamacpp") else "unknown"
        if row.thinking == "levels":
            control = f"{row.thinking_param}: {', '.join(row.levels)} (sends {row.default_level})"
        elif row.thinking == "budget" and row.budget_range:
            control = f"budget {row.budget_range[0]:,}-{row.budget_range[1]:,}"
        else:
            control = "none"
        notes = [
            "default" if row.id == catalogue.default_model and row.service == "gemini" else "",
            "high-volume" if row.id == catalogue.high_volume_model and row.service == "gemini" else "",
            f"deprecated {row.deprecated_on}" if row.deprecated_on else "",
            f"shutdown {row.shutdown_on}" if row.shutdown_on else "",
            f"routed to {row.routed_to}" if row.routed_to else "",
            "" if row.temperature else "no temperature",
            row.structured_output,
        ]
        table.add_row(
            row.service,
            row.id,
            row.lifecycle(today),
            prices,
            control,
            f"{row.output_cap:,}",
            f"{row.context_window:,}",
            "; ".join(note for note in notes if note),
        )
    Console().print(table)
