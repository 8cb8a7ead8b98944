"""Ingestion workers' start: from a fork server, with the parent's environment of the moment, stopped with the ingestor."""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import fsspec
import pytest

from arbiter.ingest import isolated
from arbiter.ingest.isolated import Handed, IsolatedIngestor
from arbiter.ingest.reader import IngestFailure


def _environment(path: Path, **kwargs: Any) -> Handed:
    """A target reporting what the worker sees: its environment variable and working directory."""
    failure = IngestFailure(
        doc_id=str(kwargs["doc_id"]), file_path=str(path), file_sha256=None, kind="empty", message="-"
    )
    return Handed(failure, (os.environ.get("ARBITER_TEST_WORKER_ENV"), os.getcwd()))


def test_a_worker_sees_the_environment_of_its_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started after the fork server gets the parent's environment and directory at that moment."""
    with IsolatedIngestor(workers=1, target=_environment):  # the fork server starts with the first one
        monkeypatch.setenv("ARBITER_TEST_WORKER_ENV", "set later")
        monkeypatch.chdir(tmp_path)
        with IsolatedIngestor(workers=1, target=_environment) as ingestor:
            result = ingestor.handed(tmp_path / "a.pdf")
    assert isinstance(result, Handed)
    assert result.extra == ("set later", str(tmp_path))


def _fsspec_conf(path: Path, **kwargs: Any) -> Handed:
    """A target reporting the fsspec configuration the worker would open a URL with."""
    failure = IngestFailure(
        doc_id=str(kwargs["doc_id"]), file_path=str(path), file_sha256=None, kind="empty", message="-"
    )
    return Handed(failure, fsspec.config.conf.get("arbitertest"))


def test_a_worker_reads_fsspec_settings_of_its_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FSSPEC_* variables set after the fork server imported fsspec reach the worker's fsspec configuration,
    and those unset since are gone from it."""
    monkeypatch.setenv("FSSPEC_ARBITERTEST_STALE", "from the server's start")
    with IsolatedIngestor(workers=1, target=_fsspec_conf):  # the server imports fsspec with this environment
        monkeypatch.delenv("FSSPEC_ARBITERTEST_STALE")
        monkeypatch.setenv("FSSPEC_ARBITERTEST_ENDPOINT_URL", "http://127.0.0.1:1")
        with IsolatedIngestor(workers=1, target=_fsspec_conf) as ingestor:
            result = ingestor.handed(tmp_path / "a.pdf")
    assert isinstance(result, Handed)
    assert result.extra == {"endpoint_url": "http://127.0.0.1:1"}


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server")
def test_closing_the_last_ingestor_stops_the_fork_server(tmp_path: Path) -> None:
    """Once every ingestor is closed, no fork server process is left running (its CPU time is reaped)."""
    with IsolatedIngestor(workers=1, target=_environment) as ingestor:
        ingestor.handed(tmp_path / "a.pdf")
        assert _server_pid() is not None
    assert _server_pid() is None


def _server_pid() -> int | None:
    pid: int | None = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return pid


def test_a_run_its_database_stops_closes_its_ingestor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose database cannot be opened (locked, away) closes the ingestor it opened: none is left open."""
    from arbiter.run import job
    from arbiter.store.errors import DatabaseUnavailable
    from tests.conftest import FIXTURES

    def away(url: str) -> None:
        raise DatabaseUnavailable("The database did not answer.")

    monkeypatch.setattr(job, "open_store", away)
    options = job.RunOptions(
        inputs=[str(FIXTURES / "pdfs" / "note-progress-01.pdf")],
        classifications=str(FIXTURES / "demo"),
        out_dir=str(tmp_path / "out"),
    )
    with pytest.raises(DatabaseUnavailable):
        job.execute(options)
    assert isolated._server_users == 0


def test_a_ray_task_whose_database_cannot_be_opened_closes_its_ingestor(tmp_path: Path) -> None:
    """A Ray node that cannot open the run's database closes the ingestor it opened: none is left open."""
    from arbiter.llm.config import LLMSettings
    from arbiter.run.ray_worker import WorkerSpec, _build
    from tests.conftest import FIXTURES

    spec = WorkerSpec(
        run_id="leak",
        db_url="nonsense://nowhere",
        out_dir=str(tmp_path / "out"),
        settings=LLMSettings(),
        classifications=str(FIXTURES / "demo"),
    )
    with pytest.raises(Exception, match="nonsense"):
        _build(spec)
    assert isolated._server_users == 0


def _collector(path: Path, **kwargs: Any) -> Handed:
    """A target reporting the worker's garbage collector: how many objects are set apart, and its thresholds."""
    import gc

    failure = IngestFailure(
        doc_id=str(kwargs["doc_id"]), file_path=str(path), file_sha256=None, kind="empty", message="-"
    )
    return Handed(failure, (gc.get_freeze_count(), gc.get_threshold()))


def test_a_worker_keeps_what_it_starts_with_out_of_the_collectors_passes(tmp_path: Path) -> None:
    """A worker sets apart what it holds at its start and collects its young objects less often (heap.settle)."""
    from arbiter.run.heap import YOUNG

    with IsolatedIngestor(workers=1, target=_collector) as ingestor:
        result = ingestor.handed(tmp_path / "a.pdf")
    assert isinstance(result, Handed)
    frozen, threshold = result.extra
    assert frozen > 1000  # the modules the fork server preloaded, at least
    assert threshold[0] == YOUNG


SCRIPT = """
import os, sys
with open(os.environ["ARBITER_TEST_MAIN_RUNS"], "a") as fh:
    fh.write("ran\\n")


def own(path, **kwargs):
    from arbiter.ingest.isolated import Handed
    from arbiter.ingest.reader import IngestFailure
    failure = IngestFailure(doc_id="a", file_path=str(path), file_sha256=None, kind="empty", message="-")
    return Handed(failure, "own")


if __name__ == "__main__":
    from arbiter.ingest.isolated import IsolatedIngestor
    from tests.test_worker_start import _environment
    target = own if sys.argv[1] == "own" else _environment
    with IsolatedIngestor(workers=1, target=target) as ingestor:
        print(ingestor.handed(sys.argv[2]).extra)
"""


@pytest.mark.parametrize(("target", "runs"), [("module", 1), ("own", 2)])
def test_a_worker_runs_the_main_module_again_only_for_a_target_defined_there(
    tmp_path: Path, target: str, runs: int
) -> None:
    """A worker whose target lives in an importable module does not run the parent's main module again (under
    `arbiter run` that is the whole CLI); a target defined in the main script still works, the script run again."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    marks = tmp_path / "runs.txt"
    env = {**os.environ, "ARBITER_TEST_MAIN_RUNS": str(marks), "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, str(script), target, str(tmp_path / "a.pdf")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert ("own" in done.stdout) is (target == "own")
    assert marks.read_text().count("ran") == runs
