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
    OUT/demo/classifications/. `arbiter schema grounded-answer` is one item of `arbiter run --kind
    grounded-answer`."""
    from arbiter.contracts.schemas import SCHEMAS, json_schema
    from arbiter.kinds import contracts, resolve

    # The registry's contracts (arbiter/kinds) beside the medical kind's records; one name, one schema.
    extra = {key: resolve(c.model) for key, (_, c) in contracts().items() if key not in SCHEMAS}
    if name is None:
        for key, model in {**SCHEMAS, **extra}.items():
            out.print(f"{key:24} {model.__name__}")
        return
    try:
        schema = extra[name].model_json_schema() if name in extra else json_schema(name)
        sys.stdout.write(json.dumps(schema, indent=2) + "\n")
    except UserError as exc:
        raise fail(str(exc)) from None
