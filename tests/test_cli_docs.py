"""Docs and `--help` agree (issues 18.6, 34): the docs site's CLI and environment references are generated
from the code, every option and environment variable is in them, and `--help` reads at 80 columns."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from arbiter.cli.environment import INTERNAL, documented
from arbiter.cli.main import app
from arbiter.cli.reference import reference
from arbiter.cli.reference_pages import pages
from tests.conftest import REPO

runner = CliRunner()
README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = pages()
CLI_PAGE = PAGES["reference/cli.md"]
ENV_PAGE = PAGES["reference/environment.md"]


def commands() -> Iterator[tuple[list[str], Any]]:
    root = typer.main.get_command(app)
    ctx = typer.Context(root, info_name="arbiter")

    def walk(group: Any, ctx: Any, prefix: list[str]) -> Iterator[tuple[list[str], Any]]:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            sub = type(ctx)(command, parent=ctx, info_name=name)
            if hasattr(command, "list_commands"):
                yield [*prefix, name], command
                yield from walk(command, sub, [*prefix, name])
            else:
                yield [*prefix, name], command

    yield [], root
    yield from walk(root, ctx, [])


COMMANDS = list(commands())
IDS = [" ".join(path) or "arbiter" for path, _ in COMMANDS]


def test_cli_reference_page_is_generated_from_the_cli() -> None:
    """The site's CLI page holds what `python -m arbiter.cli.reference` makes of the CLI now, a heading for
    every command."""
    assert reference() in CLI_PAGE
    for path, command in COMMANDS:
        if path and not hasattr(command, "list_commands"):
            assert f"#### `arbiter {' '.join(path)} " in CLI_PAGE, path


def test_the_readme_keeps_no_reference() -> None:
    """The README has no hand-kept copy of the CLI or environment reference: it links to the site."""
    assert "#### `arbiter " not in README
    assert "| variable |" not in README
    assert "ARBITER_" not in README


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_option_and_variable_in_help_is_in_the_reference(path: list[str], command: Any) -> None:
    """Each option a command's --help lists is on the CLI page, and each $VARIABLE it names on the
    environment page."""
    result = runner.invoke(app, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    for param in command.params:
        for name in [*param.opts, *param.secondary_opts]:
            if name.startswith("--") and name != "--help":
                found = re.search(rf"[`/ ]{re.escape(name)}(?![\w-])", CLI_PAGE)
                assert found, f"{' '.join(path)} {name} is not in the CLI reference"
    for variable in re.findall(r"\$([A-Z][A-Z0-9_]+)", result.output):
        assert f"`{variable}`" in ENV_PAGE, f"{variable} (in {' '.join(path)} --help) is not documented"


def test_every_variable_the_code_reads_is_in_the_reference() -> None:
    """Every ARBITER_*, GOOGLE_*, GEMINI_*, OPENAI_* or DATABASE_URL variable named in the code is on the
    environment page (the launcher's internal ones as internal)."""
    named: set[str] = set()
    for folder in ("arbiter", "review_app", "verifiers"):
        for source in (REPO / folder).rglob("*.py"):
            if source.name == "environment.py":
                continue  # the table itself
            text = source.read_text(encoding="utf-8")
            named |= set(
                re.findall(r"[\"']((?:ARBITER|GOOGLE|GEMINI|OPENAI)_[A-Z0-9_]+|DATABASE_URL)[\"']", text)
            )
    assert len(named) > 40
    missing = sorted(v for v in named if v not in documented() | set(INTERNAL))
    assert not missing, f"not in arbiter/cli/environment.py: {missing}"
    assert not [v for v in named if f"`{v}`" not in ENV_PAGE]


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_help_reads_at_80_columns(path: list[str], command: Any) -> None:
    """--help fits 80 columns, cuts no text short and shows no type column (metavars such as DIR instead)."""
    result = runner.invoke(app, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines), result.output
    assert "…" not in result.output
    assert not [line for line in lines[1:] if line.rstrip().endswith("...")], result.output
    assert not re.search(
        r"<(str|path|int|float|bool|list)[^>]*>|\b(TEXT|INTEGER|FLOAT|BOOLEAN)\b", result.output
    )
    assert not any(line.startswith(("╭", "│")) for line in lines)  # no boxes
    if command.help:  # the command's whole help text is there, only rewrapped
        assert " ".join(command.help.split()) in " ".join(result.output.split())


@pytest.mark.parametrize("script", ["bench/ocr_speed.py", "bench/run.py"])
def test_bench_help_is_complete(script: str) -> None:
    """A benchmark's --help ends its description on a full sentence and explains each option."""
    result = subprocess.run(
        [sys.executable, script, "--help"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    description = result.stdout.split("\n\n")[1]
    assert description.rstrip().endswith("."), result.stdout
    options = result.stdout.split("options:", 1)[1]
    listed = list(re.finditer(r"^  (--[a-z-]+)(?: [A-Z_]+)?(.*)$", options, re.MULTILINE))
    assert listed, result.stdout
    for match in listed:
        assert match.group(2).strip(), f"{script} {match.group(1)} has no help: {result.stdout}"
    if script == "bench/run.py":
        assert "smoke run" in result.stdout
