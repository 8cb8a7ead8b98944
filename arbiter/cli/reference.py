"""The CLI reference, generated from the CLI itself so the two cannot disagree: the docs site's
reference/cli.md is made of it when the site is built (arbiter/cli/reference_pages.py).

`python -m arbiter.cli.reference` prints it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any


def _commands(group: Any, ctx: Any, prefix: list[str]) -> Iterator[tuple[list[str], Any, Any]]:
    """(path, command, context) for every command under `group`, in the order --help lists them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = type(ctx)(command, parent=ctx, info_name=name)
        if hasattr(command, "list_commands"):
            if any(p.name != "help" for p in command.params):  # a group that also runs on its own
                yield [*prefix, name], command, sub
            yield from _commands(command, sub, [*prefix, name])
        else:
            yield [*prefix, name], command, sub


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def reference() -> str:
    """Markdown: for each command its usage line, its help and a table of its arguments and options, each
    described exactly as `--help` describes it (defaults, ranges and environment variables included)."""
    import typer

    from arbiter.cli.main import app

    root = typer.main.get_command(app)
    ctx = typer.Context(root, info_name="arbiter")
    parts: list[str] = []
    for path, command, sub in _commands(root, ctx, []):
        usage = " ".join(command.collect_usage_pieces(sub))
        parts.append(f"#### `arbiter {' '.join(path)} {usage}`\n")
        parts.append(_cell(command.help or "") + "\n")
        rows = []
        for param in command.get_params(sub):
            record = param.get_help_record(sub)
            if record is None or param.name == "help":
                continue
            name = record[0].split(" ", 1)[0] if param.param_type_name == "argument" else record[0]
            rows.append(f"| `{name}` | {_cell(record[1])} |")
        if rows:
            parts.append("| argument or option | what it does |\n| --- | --- |\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        sys.stderr.write("usage: python -m arbiter.cli.reference\n")
        return 2
    sys.stdout.write(reference() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
