"""The docs match the code: the docs site's architecture page names every package and top-level folder,
and every design citation in the code points to a section of docs/design.md that exists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

ARCHITECTURE = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
DESIGN = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
SHIPPED = ("arbiter", "verifiers", "review_app")
NOT_SOURCE = {"output", "build", "dist", "venv", "__pycache__"}
CITATION = re.compile(r"docs/design\.md §(\d+(?:\.\d+)?)")


def architecture_section(page: str) -> str:
    """The page's text up to its first second-level heading (the table of stages and folders)."""
    return page.split("\n## ", 1)[0]


def packages_and_folders(root: Path) -> list[str]:
    """Every package of the shipped code (a folder with __init__.py) and every top-level folder."""
    found = {
        p.parent.relative_to(root).as_posix()
        for top in SHIPPED
        if (root / top).is_dir()
        for p in (root / top).rglob("__init__.py")
    }
    found |= {  # folders of source or docs; caches, virtualenvs and build output are not part of the design
        p.name
        for p in root.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and p.name not in NOT_SOURCE
        and not p.name.endswith(".egg-info")
        and (any(p.rglob("*.py")) or any(p.rglob("*.md")))
    }
    return sorted(found)


def unlisted(root: Path, page: str) -> list[str]:
    section = architecture_section(page)
    return [name for name in packages_and_folders(root) if f"`{name}/`" not in section]


def test_architecture_page_lists_every_package_and_folder() -> None:
    """Every package under arbiter/, verifiers/ and review_app/, and every top-level folder, is named in
    the docs site's architecture page (docs/architecture.md) as `path/`."""
    names = packages_and_folders(REPO)
    assert {"arbiter/ingest/documentai", "arbiter/demo", "review_app/views", "fixtures", "docs"} <= set(names)
    assert unlisted(REPO, ARCHITECTURE) == []


def test_a_new_package_fails_the_architecture_check(tmp_path: Path) -> None:
    """Adding a package, or a top-level folder, that the architecture page does not name is caught."""
    (tmp_path / "arbiter" / "ingest").mkdir(parents=True)
    (tmp_path / "arbiter" / "__init__.py").write_text("")
    (tmp_path / "arbiter" / "ingest" / "__init__.py").write_text("")
    (tmp_path / "arbiter" / "newstage").mkdir()
    (tmp_path / "arbiter" / "newstage" / "__init__.py").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("")
    (tmp_path / "htmlcov").mkdir()  # no source: not a folder of the design
    page = "# Architecture\n\n`arbiter/` `arbiter/ingest/`\n\n## Next\n\n`arbiter/newstage/` `tools/`\n"
    assert unlisted(tmp_path, page) == ["arbiter/newstage", "tools"]


def _cited_files() -> list[Path]:
    roots = [*SHIPPED, "tests", "fixtures", "bench"]
    files = [p for r in roots for p in (REPO / r).rglob("*") if p.suffix in {".py", ".md"}]
    pages = [p for p in (REPO / "docs").rglob("*.md") if p.name != "design.md"]  # §11 names its origins
    return [*files, *pages, REPO / "README.md", REPO / "SECURITY.md"]


def design_sections() -> set[str]:
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", DESIGN, re.MULTILINE))


def test_design_citations_name_real_sections() -> None:
    """Every `docs/design.md §N` in code, tests and docs names a numbered section of docs/design.md."""
    sections = design_sections()
    assert {"3.2", "5.1", "6.3", "8.1", "9.2"} <= sections
    cited = {
        (path.relative_to(REPO).as_posix(), number)
        for path in _cited_files()
        for number in CITATION.findall(path.read_text(encoding="utf-8"))
    }
    assert len(cited) > 30
    assert sorted(c for c in cited if c[1] not in sections) == []


def test_nothing_cites_a_design_outside_the_repository() -> None:
    """No comment cites the design notes or seed documents that live outside the repository."""
    outside = re.compile(r"\bDESIGN §|\bseed 00\d|\bseed §")
    hits = [
        f"{path.relative_to(REPO)}:{n}"
        for path in _cited_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if outside.search(line)
    ]
    assert hits == []
