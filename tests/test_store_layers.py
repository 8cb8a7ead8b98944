"""Dependencies point down the flow: the store needs nothing from the layers that write into it or read from
it, and the shipped packages never import the seeding code in testing/ (which is not shipped)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ABOVE_THE_STORE = ("arbiter.record", "arbiter.run", "arbiter.review", "arbiter.cli", "arbiter.export")


def test_the_store_imports_nothing_from_the_layers_above_it() -> None:
    """Importing arbiter.store loads no module of record/, run/, review/, cli/ or export/."""
    code = (
        "import sys, arbiter.store\n"
        f"print(sorted(m for m in sys.modules if m.startswith({ABOVE_THE_STORE!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_shipped_packages_never_import_testing() -> None:
    """No module of arbiter/, verifiers/ or review_app/ imports testing (seeding stays out of the package)."""
    offenders = []
    for package in ("arbiter", "verifiers", "review_app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                if any(n == "testing" or n.startswith("testing.") for n in names):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
