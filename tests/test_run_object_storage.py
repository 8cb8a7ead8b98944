"""`arbiter run --out s3://…`: a run's files go to object storage through fsspec (a real S3 API on 127.0.0.1,
moto's server), its lock and caches stay in a local work folder, and it decides as a run into a folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import fsspec
import pytest
from s3_helpers import s3_server
from store_fixtures import pg_server_url_fixture  # noqa: F401  (fixture)
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.errors import ConfigError
from arbiter.ingest.isolated import IsolatedIngestor
from arbiter.outputs import is_url, location, work_dir
from arbiter.run.job import RunOptions, execute
from arbiter.store import Store
from arbiter.whatif.reverify import load_bundle
from tests.conftest import FIXTURES

COUNTED = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")


@pytest.fixture(name="s3")
def s3_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[fsspec.AbstractFileSystem]:
    monkeypatch.setenv("ARBITER_WORK_DIR", str(tmp_path / "work"))
    with s3_server("night") as endpoint:
        yield fsspec.filesystem("s3", endpoint_url=endpoint, skip_instance_cache=True)


def _few_pdfs(tmp_path: Path, n: int = 4) -> Path:
    """A folder of the first n fixture PDFs: enough documents to show where each one's files go."""
    folder = tmp_path / "few"
    folder.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:n]:
        shutil.copy(pdf, folder)
    return folder


def _options(out: str, db: str, **more: object) -> RunOptions:
    return RunOptions(
        inputs=[str(FIXTURES / "pdfs"), str(FIXTURES / "damaged")],
        classifications=str(FIXTURES / "demo"),
        out_dir=out,
        db=db,
        workers=2,
        **more,  # type: ignore[arg-type]
    )


def test_a_run_into_object_storage_decides_as_one_into_a_folder(
    s3: fsspec.AbstractFileSystem, tmp_path: Path
) -> None:
    """The fixtures run with --out s3://night/run1 write bundles, decisions, packets, the index, the results
    journal and the summary as objects, decide exactly as a run into a folder, and a second run skips all."""
    folder = execute(_options(str(tmp_path / "folder"), f"sqlite:///{tmp_path / 'folder.db'}"))
    url = f"sqlite:///{tmp_path / 's3.db'}"
    remote = execute(_options("s3://night/run1", url))
    assert {k: remote[k] for k in COUNTED} == {k: folder[k] for k in COUNTED}
    assert remote["escalated_by_reason"] == folder["escalated_by_reason"]
    local_files = sorted(
        str(p.relative_to(tmp_path / "folder"))
        for sub in ("bundles", "index", "agent_outputs", "sme_packets", "ground_truth")
        for p in (tmp_path / "folder" / sub).rglob("*.json")
    )
    objects = sorted(
        key.removeprefix("night/run1/")
        for sub in ("bundles", "index", "agent_outputs", "sme_packets", "ground_truth")
        for key in s3.find(f"night/run1/{sub}")
    )
    assert objects == local_files
    assert len(objects) > 100
    run_dir = f"night/run1/runs/{remote['run_id']}"
    assert json.loads(s3.cat_file(f"{run_dir}/summary.json"))["processed"] == remote["processed"]
    journal = s3.cat_file(f"{run_dir}/results.jsonl").decode().splitlines()
    assert len(journal) == remote["documents"]
    store = Store(url)
    try:
        packets = [store.queue.get(p.packet_id) for p in store.queue.page(limit=50)]
        full = next(p for p in packets if p.document_bundle_path)
    finally:
        store.dispose()
    assert full.document_bundle_path is not None
    assert full.document_bundle_path.startswith("s3://night/run1/bundles/")
    bundle = load_bundle(full.document_bundle_path)  # the what-if re-reads bundles from the bucket
    assert bundle is not None
    assert bundle.doc_id == full.doc_id
    assert (tmp_path / "work" / "cache" / "bundles").is_dir()  # caches on local disk, not in the bucket
    assert not s3.exists("night/run1/cache")
    again = execute(_options("s3://night/run1", url))
    assert (again["skipped_unchanged"], again["processed"]) == (remote["documents"], 0)


def test_object_storage_with_postgresql_through_the_cli(
    s3: fsspec.AbstractFileSystem, pg_server_url: str, tmp_path: Path
) -> None:
    """`arbiter run … --out s3://… --db postgresql://…` from the command line records every document in
    PostgreSQL and its files in the bucket."""
    from store_fixtures import reset

    empty = Store(pg_server_url)
    reset(empty)
    empty.dispose()
    pdfs = _few_pdfs(tmp_path)
    args = ["run", str(pdfs), "--classifications", str(FIXTURES / "demo"), "--workers", "2"]
    result = CliRunner().invoke(app, [*args, "--out", "s3://night/cli", "--db", pg_server_url, "--quiet"])
    assert result.exit_code == 0, result.output
    store = Store(pg_server_url)
    try:
        recorded = len(store.records.doc_ids())
    finally:
        store.dispose()
    assert recorded == len(s3.find("night/cli/index")) == len(list(pdfs.glob("*.pdf"))) > 1


def test_workers_from_a_fork_server_started_before_the_storage_was_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose workers fork from a server that imported fsspec before FSSPEC_S3_ENDPOINT_URL was set
    (an earlier ingestor's, still open) writes every document to the configured storage all the same."""
    monkeypatch.setenv("ARBITER_WORK_DIR", str(tmp_path / "work"))
    with IsolatedIngestor(workers=1), s3_server("early") as endpoint:
        options = _options("s3://early/run", f"sqlite:///{tmp_path / 'run.db'}")
        pdfs = _few_pdfs(tmp_path)
        summary = execute(replace(options, inputs=[str(pdfs)]))
        s3 = fsspec.filesystem("s3", endpoint_url=endpoint, skip_instance_cache=True)
        stored = len(s3.find("early/run/bundles"))
    assert (summary["errors"], summary["processed"]) == (0, summary["documents"])
    assert stored == summary["documents"] == len(list(pdfs.glob("*.pdf"))) > 1


def test_object_storage_without_a_database_server_is_refused(
    s3: fsspec.AbstractFileSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run into object storage with no --db (and no DATABASE_URL) stops before any work and says why:
    the default SQLite file cannot live in a bucket."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with pytest.raises(ConfigError, match="cannot hold the run's SQLite database"):
        execute(_options("s3://night/nodb", None))  # type: ignore[arg-type]
    assert not s3.exists("night/nodb")


@pytest.mark.parametrize(
    ("value", "url", "local"),
    [
        ("output", False, "output"),
        ("/data/out", False, "/data/out"),
        ("file:///data/out", False, "/data/out"),
        ("s3://bucket/x", True, None),
        ("gs://bucket/x", True, None),
    ],
)
def test_what_counts_as_object_storage(value: str, url: bool, local: str | None) -> None:
    """Plain paths and file:// URLs are folders on this machine (their own work folder); other URLs are storage
    with a work folder in the user's cache."""
    assert is_url(value) is url
    if local is not None:
        assert work_dir(value) == Path(local)
    else:
        assert "arbiter" in work_dir(value).parts


def test_a_storage_library_that_is_missing_is_named() -> None:
    """A URL whose protocol no installed library serves is a ConfigError that says what to install."""
    with pytest.raises(ConfigError, match="gcsfs"):
        location("gs://bucket/x")
    with pytest.raises(ConfigError, match="Cannot write to nosuchproto://"):
        location("nosuchproto://bucket/x")
