"""`arbiter policy simulate` and `arbiter policy diff`: try a candidate profile on the recorded history
before changing the real one. Both only read."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arbiter import atomic
from arbiter.cli.review import DbOpt, OutOpt
from arbiter.cli.support import ArbiterCommand, ArbiterGroup, fail
from arbiter.errors import UserError
from arbiter.outputs import location

out = Console()
console = Console(stderr=True)

policy_app = typer.Typer(
    cls=ArbiterGroup,
    no_args_is_help=True,
    help="Try a candidate profile on the recorded history (what-if), or compare two profiles.",
)

ProfileArg = Annotated[Path, typer.Argument(metavar="PROFILE.toml", help="A profile file.")]


def _load(path: Path | None) -> object:
    from arbiter.contracts.profile import load_profile

    try:
        return load_profile(path)
    except UserError as exc:
        raise fail(str(exc)) from None


def _plain_table(head: tuple[str, ...], rows: Sequence[Sequence[str]], title: str | None = None) -> Table:
    table = Table(title=title)
    for name in head:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(str(v)) for v in row))  # Text: document values are never markup
    return table


@policy_app.command(cls=ArbiterCommand)
def simulate(
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            metavar="CANDIDATE.toml",
            help="The candidate profile to try (with --model: the profile whose reader it replaces; "
            "default the current one).",
        ),
    ] = None,
    model: Annotated[
        Path | None,
        typer.Option(
            "--model",
            metavar="FILE",
            help="Try this page reader file (arbiter model train): the candidate is the profile with "
            "[content.reader] pinning FILE by its sha256.",
        ),
    ] = None,
    current: Annotated[
        Path | None,
        typer.Option(
            "--current",
            metavar="FILE",
            help="The profile the history was decided with (default: the bundled medical profile).",
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", metavar="TIME", help="Only what existed at this time (ISO 8601, UTC when no zone)."
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="FILE_OR_URL",
            help="Write the comparison as an HTML page (a file or an object URL).",
        ),
    ] = None,
    out_dir: OutOpt = "output",
    db: DbOpt = None,
) -> None:
    """Decide every recorded document again under CANDIDATE.toml and compare with what was decided.

    Read-only, and no language-model call: stored issues are decided again when only the policy changes;
    the rules-only verifiers and the retry governor run again from the stored bundle and the primary's
    classification when verifier settings change (stored model findings are reused). With --model FILE,
    the candidate is the profile with its page reader replaced by FILE: no profile file is written."""
    from arbiter.cli.support import require_database
    from arbiter.contracts.profile import Profile
    from arbiter.metrics.as_of import parse_time
    from arbiter.run.compose import database_url
    from arbiter.whatif.diff import diff_profiles
    from arbiter.whatif.history import reading
    from arbiter.whatif.report import figure_rows, flip_rows, headline, render_html, strata_rows
    from arbiter.whatif.simulate import simulate as run_simulation

    if profile is None and model is None:
        raise fail("Name the candidate: --profile CANDIDATE.toml, or --model FILE (a page reader to try).")
    base = _load(current)
    candidate = _load(profile) if profile is not None else base
    if model is not None:
        candidate = _with_model(candidate, model)
    assert isinstance(candidate, Profile)
    assert isinstance(base, Profile)
    try:
        when = parse_time(as_of) if as_of else None
    except ValueError as exc:
        raise fail(str(exc)) from None
    url = database_url(db, out_dir)
    try:
        require_database(url)
    except UserError as exc:
        raise fail(str(exc)) from None

    def progress(done: int, total: int) -> None:
        if done % 10_000 == 0:
            console.print(f"{done:,} of {total:,} documents decided again", highlight=False)

    with reading(url) as conn:
        report = run_simulation(conn, base, candidate, as_of=when, out_dir=out_dir, progress=progress)
    changes = diff_profiles(base, candidate)
    report["changes"] = changes
    if html is not None:
        try:
            atomic.write_text(location(html), render_html(report, changes))
        except (OSError, UserError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else None
            raise fail(f"Could not write {html}: {reason or exc}.") from None
        console.print(f"Wrote {html}", highlight=False, markup=False)
    if json_out:
        sys.stdout.write(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        return
    if html is not None:
        return
    for line in headline(report):
        out.print(Text(line))
    out.print(
        _plain_table(
            ("figure", "current", "candidate"), figure_rows(report), "Current policy beside the candidate"
        )
    )
    out.print(
        _plain_table(
            ("group", "accepted", "false accepts among the reviewed"),
            strata_rows(report),
            "Candidate's blind-audit estimate",
        )
    )
    rows = flip_rows(report)
    if rows:
        out.print(_plain_table(("doc_id", "from", "to", "candidate's rule", "current rule"), rows, "Flips"))
        if len(report["flips"]) > len(rows):
            out.print(Text(f"… and {len(report['flips']) - len(rows):,} more (--json or --html lists all)."))
    out.print(Text(f"Done in {report['seconds']['total']:.2f} s."))


def _with_model(profile: object, path: Path) -> object:
    """The profile with its page reader replaced by the file (pinned by the sha256 read now)."""
    from arbiter.contracts.profile import Profile
    from arbiter.reader.adopt import with_reader
    from arbiter.reader.model import PageReader, ReaderError

    assert isinstance(profile, Profile)
    try:
        return with_reader(profile, path, PageReader.load(path))
    except ReaderError as exc:
        raise fail(str(exc)) from None


@policy_app.command(cls=ArbiterCommand)
def diff(a: ProfileArg, b: ProfileArg) -> None:
    """Say what changes from profile A to profile B: rule by rule, then threshold by threshold."""
    from arbiter.contracts.profile import Profile
    from arbiter.whatif.diff import diff_profiles

    first, second = _load(a), _load(b)
    assert isinstance(first, Profile)
    assert isinstance(second, Profile)
    lines = diff_profiles(first, second)
    if not lines:
        out.print(Text("The two profiles decide alike: no difference."))
    for line in lines:
        out.print(Text(f"- {line}"))
