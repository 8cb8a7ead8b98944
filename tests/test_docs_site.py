"""The documentation site (issue 34): MkDocs builds it in strict mode with the reference pages generated
from the code, a broken internal link fails the build, and the generated pages follow the code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from pydantic import Field
from typer.models import CommandInfo

from arbiter.cli import environment
from arbiter.cli.main import app
from arbiter.cli.reference_pages import codes_page, environment_page, pages, profile_table
from arbiter.contracts import Severity
from arbiter.contracts.profile import Profile
from arbiter.verifiers.codes import CODES, CodeSpec
from tests.conftest import REPO

pytestmark = pytest.mark.slow


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the site whose mkdocs.yml is in `root`, as `make docs` runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_of_the_site(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "docs", root / "docs")
    for name in ("mkdocs.yml", "SECURITY.md", "CHANGELOG.md"):
        shutil.copy(REPO / name, root / name)
    return root


def test_the_site_builds_strict_with_the_generated_reference(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds with no warning, and the reference pages are in the site."""
    result = build(REPO, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
    for page in pages():
        html = tmp_path / "site" / page.removesuffix(".md") / "index.html"
        assert html.is_file(), page
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "arbiter run" in cli
    assert "--classifications" in cli
    security = (tmp_path / "site" / "security" / "index.html").read_text(encoding="utf-8")
    assert "What Arbiter promises" in security  # SECURITY.md included whole


def warnings_in(stderr: str) -> list[str]:
    """mkdocs' WARNING records, each with its continuation lines (a list of pages follows on its own lines)."""
    return [r for r in re.split(r"\n(?=[A-Z]+ +- )", stderr) if r.startswith("WARNING")]


def test_a_broken_internal_link_and_a_page_left_out_of_the_navigation_each_fail_the_build(
    tmp_path: Path,
) -> None:
    """A link to a page that does not exist and a page under docs/ that the navigation does not list, planted
    in one copy of the docs (a build of its own each would only repeat the rest), are each a warning of their
    own, so the strict build fails."""
    root = copy_of_the_site(tmp_path)
    page = root / "docs" / "getting-started.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [the missing page](no-such-page.md).\n")
    (root / "docs" / "orphan.md").write_text("# Orphan\n")
    result = build(root, tmp_path / "site")
    assert result.returncode != 0
    found = warnings_in(result.stderr)
    assert len(found) == 2, result.stderr  # the unchanged site builds with none (the test above)
    assert any("no-such-page.md" in w for w in found), result.stderr
    assert any("orphan.md" in w and "nav" in w for w in found), result.stderr


def test_a_new_option_changes_the_cli_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command added to the CLI shows on the generated CLI page with its option and help."""

    def frobnicate(
        level: int = typer.Option(3, "--frob-level", help="How hard to frobnicate.", envvar="ARBITER_FROB"),
    ) -> None:
        """Frobnicate the output folder."""

    before = pages()["reference/cli.md"]
    monkeypatch.setattr(
        app, "registered_commands", [*app.registered_commands, CommandInfo(name="frob", callback=frobnicate)]
    )
    after = pages()["reference/cli.md"]
    assert "--frob-level" not in before
    assert "#### `arbiter frob [OPTIONS]`" in after
    assert "How hard to frobnicate." in after
    assert "ARBITER_FROB" in after


def test_a_new_profile_field_changes_the_profile_page() -> None:
    """A field added to a copy of the profile model shows on the generated table with default and meaning."""

    class WiderProfile(Profile):
        frob_level: int = Field(default=7, description="How hard to frobnicate.")

    before = profile_table(Profile, "medical.toml")
    after = profile_table(WiderProfile, "medical.toml")
    assert "frob_level" not in before
    row = next(line for line in after.splitlines() if "`frob_level`" in line)
    assert "`7`" in row
    assert "How hard to frobnicate." in row
    assert "not set" in row  # the bundled profile does not set it


def test_a_new_issue_code_and_variable_change_their_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """An issue code added to the catalogue, and a variable added to the table, show on their pages."""
    spec = CodeSpec("V3.FROBNICATED", Severity.MAJOR, True, "The document was frobnicated.")
    assert "V3.FROBNICATED" not in codes_page()
    monkeypatch.setitem(CODES, spec.code, spec)
    assert "| `V3.FROBNICATED` | MAJOR | yes | The document was frobnicated. |" in codes_page()
    variable = environment.Variable("`ARBITER_FROB`", "how hard to frobnicate", "3")
    monkeypatch.setattr(environment, "VARIABLES", (*environment.VARIABLES, variable))
    assert "| `ARBITER_FROB` | how hard to frobnicate | 3 |" in environment_page()


def test_the_reference_covers_every_command_code_field_and_schema() -> None:
    """The generated pages name every issue code of every kind, every profile table and every schema."""
    from arbiter.cli.reference_pages import schemas
    from arbiter.kinds import KINDS

    generated = pages()
    for kind in KINDS.values():
        for code in kind.catalogue():
            assert f"`{code}`" in generated["reference/codes.md"]
    for name in schemas():
        assert f"`arbiter schema {name}`" in generated["reference/schemas.md"]
    for table in (
        "[tolerances]",
        "[sampling.risk]",
        "[[arbiter.rules]]",
        "[limits]",
        "[drift]",
        "[thresholds]",
    ):
        assert f"`{table}`" in generated["reference/profile.md"], table


def test_getting_started_batch_and_export_run_as_written(tmp_path: Path) -> None:
    """The first-batch and export commands of Getting started, run as printed on two of the demo's inputs,
    record the batch and export its ground truth."""
    import csv
    import re

    page = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    section = page.split("## Your first batch, review and export", 1)[1].split("\n## ", 1)[0]
    lines = [
        line.split("#", 1)[0].strip()
        for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
        for line in block.splitlines()
    ]
    run = next(line for line in lines if " run " in f" {line} ")
    export = next(line for line in lines if " export " in f" {line} ")
    demo = tmp_path / "output" / "demo"
    for stem in ("lab-quest-01", "admin-facsimile-04"):
        (demo / "pdfs").mkdir(parents=True, exist_ok=True)
        (demo / "classifications").mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "fixtures" / "pdfs" / f"{stem}.pdf", demo / "pdfs")
        shutil.copy(REPO / "fixtures" / "demo" / f"{stem}.json", demo / "classifications")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for line in (run, export):
        command = line.replace(".venv/bin/arbiter", f"{sys.executable} -m arbiter.cli.main")
        done = subprocess.run(
            ["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
    exported = list((tmp_path / "output" / "first" / "exports").glob("latest-*/*.csv"))
    assert len(exported) == 1
    with exported[0].open(encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) >= 1
