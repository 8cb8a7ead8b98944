"""Arbiter's modules import each other without a cycle, counting imports inside functions too (an import
moved into a function to dodge a cycle still makes one), and only downwards: the contracts import nothing
above them, the review layer and the review app never reach into the CLI, the LLM layer never into the demo."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("arbiter", "verifiers")
LAYERED = (*PACKAGES, "review_app")  # the layer rules also cover the review app
# The folders verifiers/ and review_app/ are the packages arbiter.verifiers and arbiter.review_app (linked
# inside arbiter/ in the checkout, installed inside it).
DOTTED = {"arbiter": "arbiter", "verifiers": "arbiter.verifiers", "review_app": "arbiter.review_app"}


def modules(root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for top in packages:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root / top).with_suffix("").parts)
            if parts[0] in DOTTED and top == "arbiter" and (root / top / parts[0]).is_symlink():
                continue  # arbiter/verifiers -> ../verifiers: walked as its own folder
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([DOTTED.get(top, top), *parts])] = path
    return found


def import_graph(root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules of the packages it imports anywhere in its body (TYPE_CHECKING blocks too)."""
    known = modules(root, packages)
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


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    """Whether `module` is one of `prefixes` or inside one of them."""
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# (importers, what they may not import, exceptions among the importers): the layers point one way.
LAYER_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    # Nothing below the command line and the review app reaches up into them.
    (("arbiter",), ("arbiter.cli", "arbiter.review_app"), ("arbiter.cli", "arbiter.review_app")),
    (("arbiter.review_app",), ("arbiter.cli",), ()),
    # The review layer is driven by the review app; the run layer is handed to it, never imported.
    (("arbiter.review",), ("arbiter.run", "arbiter.demo"), ()),
    # The LLM layer is used by the demo, the runs and the verifiers, never the other way round.
    (("arbiter.llm",), ("arbiter.demo", "arbiter.run", "arbiter.review", "arbiter.verifiers"), ()),
    # The verifiers check; they do not run, review or stage demos.
    (("arbiter.verifiers",), ("arbiter.run", "arbiter.review", "arbiter.demo", "arbiter.decide"), ()),
    # The store keeps contracts; it knows nothing of what fills or reads it.
    (("arbiter.store",), tuple(f"arbiter.{p}" for p in ("run", "review", "llm", "demo", "decide")), ()),
)
# The contracts import only themselves and arbiter.errors. Known exception, to move out: loading a profile
# opens the page reader it pins (arbiter.contracts.profile.load_profile(open_reader=True)).
CONTRACTS_EXCEPTIONS = {
    ("arbiter.contracts.profile", "arbiter.reader.model"),
    ("arbiter.contracts.profile", "arbiter.reader.starts"),
}


def layer_violations(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import (importer, imported) that points up a layer."""
    found: set[tuple[str, str]] = set()
    for importers, forbidden, exempt in LAYER_RULES:
        for name, targets in graph.items():
            if within(name, importers) and not within(name, exempt):
                found.update((name, t) for t in targets if within(t, forbidden))
    for name, targets in graph.items():
        if within(name, ("arbiter.contracts",)):
            found.update(
                (name, t)
                for t in targets
                if not within(t, ("arbiter.contracts", "arbiter.errors"))
                and (name, t) not in CONTRACTS_EXCEPTIONS
            )
    return sorted(found)


def test_the_layers_import_one_way() -> None:
    """The contracts import nothing above them (not the verifiers); arbiter.review and review_app never import
    arbiter.cli (parse_time lives in arbiter.metrics) nor arbiter.review arbiter.run (the retry is passed in);
    arbiter.llm never imports arbiter.demo (SAMPLE_REPLAYS lives in arbiter.llm.config); and so on."""
    graph = import_graph(packages=LAYERED)
    assert any(name.startswith("arbiter.review_app.") for name in graph)  # the walk found the review app
    assert layer_violations(graph) == []


def test_the_layer_check_names_an_upward_import() -> None:
    """The check itself, on the imports this test was written to stop."""
    graph = {
        "arbiter.contracts.schemas": {"arbiter.verifiers.base", "arbiter.errors", "arbiter.contracts.review"},
        "arbiter.review_app.views.metrics": {"arbiter.cli.metrics", "arbiter.metrics.as_of"},
        "arbiter.review.operations_view": {"arbiter.run.operations", "arbiter.store"},
        "arbiter.llm.config": {"arbiter.demo", "arbiter.llm.catalogue"},
        "arbiter.cli.review": {"arbiter.review_app.launch", "arbiter.run.compose"},
    }
    assert layer_violations(graph) == [
        ("arbiter.contracts.schemas", "arbiter.verifiers.base"),
        ("arbiter.llm.config", "arbiter.demo"),
        ("arbiter.review.operations_view", "arbiter.run.operations"),
        ("arbiter.review_app.views.metrics", "arbiter.cli.metrics"),
    ]


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


def test_nothing_imports_the_folders_by_their_top_level_names() -> None:
    """Code, tests and benchmarks import `arbiter.verifiers` and `arbiter.review_app`, never `verifiers` or
    `review_app`: installed, those names belong to other distributions (PyPI's `verifiers`), and in a checkout
    they would load every module a second time."""
    found = []
    for top in ("arbiter", "verifiers", "review_app", "testing", "tests", "bench"):
        for path in sorted((REPO / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                found += [
                    f"{path.relative_to(REPO)}: {n}"
                    for n in names
                    if n.split(".")[0] in DOTTED.keys() - {"arbiter"}
                ]
    assert found == []
