"""`arbiter schema`: the contracts' JSON Schemas."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console

from arbiter.cli.support import fail
from arbiter.errors import UserError

out = Console()


def schema(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Contract name; omit to list them.")
    ] = None,
) -> None:
    """Print a contract's JSON Schema (or list the contracts). `arbiter schema classification` is the
    input format of --classifications and --classification; `arbiter demo` writes examples to
    OUT/demo/classifications/."""
    from arbiter.contracts.schemas import SCHEMAS, json_schema

    if name is None:
        for key, model in SCHEMAS.items():
            out.print(f"{key:16} {model.__name__}")
        return
    try:
        sys.stdout.write(json.dumps(json_schema(name), indent=2) + "\n")
    except UserError as exc:
        raise fail(str(exc)) from None
