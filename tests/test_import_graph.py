"""Arbiter's modules import each other without a cycle, counting imports inside functions too (an import
moved into a function to dodge a cycle still makes one)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("arbiter", "verifiers")


def modules(root: Path = REPO) -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    """Module -> the modules of the packages it imports anywhere in its body (TYPE_CHECKING blocks too)."""
    known = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*kept, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for target in targets:
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                if target in known and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_module_import_graph_has_no_cycle() -> None:
    """No module of arbiter/ or verifiers/ imports, directly or through others, a module that imports it."""
    graph = import_graph()
    assert len(graph) > 100  # the walk found the packages
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    """The check itself: a three-module loop is reported; a chain is not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_function_level_imports_count(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function (or a relative one) is found like any other."""
    package = tmp_path / "arbiter"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text(
        "def build():\n    from arbiter.client import Client\n    return Client\n"
    )
    (package / "client.py").write_text("from . import config\n\nclass Client: ...\n")
    graph = import_graph(tmp_path)
    assert graph["arbiter.config"] == {"arbiter.client"}
    assert cycles(graph) == [["arbiter.client", "arbiter.config"]]
