"""What a run's processes load: nothing for object storage, migrations or a model server the run does not use."""

from __future__ import annotations

import subprocess
import sys

import pytest

UNUSED = ("fsspec", "upath", "alembic", "httpx", "pygments")


@pytest.mark.parametrize(
    "modules",
    [
        ("arbiter.cli.main", "arbiter.run.job"),  # the CLI process of `arbiter run`
        ("arbiter.ingest.isolated", "arbiter.run.worker"),  # what its workers' fork server preloads
    ],
)
def test_a_local_run_loads_no_library_it_does_not_use(modules: tuple[str, ...]) -> None:
    """Importing a local run's modules loads no object storage (fsspec: 11 MB with asyncio), Alembic or httpx."""
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"print([m for m in {UNUSED!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


def test_a_url_still_opens_object_storage() -> None:
    """A storage URL loads fsspec when it is named: memory:// gives a path that writes and reads."""
    from arbiter.outputs import location

    where = location("memory://arbiter-import-weight/out")
    (where / "a.txt").write_text("x")
    assert (where / "a.txt").read_text() == "x"
