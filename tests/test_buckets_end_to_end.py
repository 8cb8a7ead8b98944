"""Issue 32.5, buckets end to end on a real S3 API on 127.0.0.1 (moto's server) and PostgreSQL: a run into
`s3://`, an SME review, then `export`, `metrics`, `policy simulate` and the review app's bundle reader all
read and write the bucket wherever they take `--out` (and `verify` reads its inputs from it); nothing lands in a
local folder named `s3:`."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from s3_helpers import s3_server
from store_fixtures import pg_server_url_fixture, reset  # noqa: F401  (fixture)
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import SMEPacket
from arbiter.outputs import url_inside
from arbiter.review import documents
from arbiter.review.settings import AppSettings
from arbiter.store import Store
from arbiter.whatif import paths
from tests.conftest import FIXTURES
from tests.whatif_helpers import review

runner = CliRunner()
OUT = "s3://night/e2e"
MEDICAL_TOML = Path(__file__).resolve().parents[1] / "arbiter" / "profiles" / "medical.toml"


@pytest.fixture(name="world", scope="class")
def world_fixture(
    tmp_path_factory: pytest.TempPathFactory, pg_server_url: str
) -> Iterator[tuple[fsspec.AbstractFileSystem, str]]:
    """A bucket, an empty PostgreSQL and a run of the fixtures into the bucket (from a scratch working folder),
    made once for the tests of a class: the run is the expensive part, and they only add to what it wrote."""
    tmp_path = tmp_path_factory.mktemp("world")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("ARBITER_WORK_DIR", str(tmp_path / "work"))
        monkeypatch.delenv("DATABASE_URL", raising=False)
        monkeypatch.chdir(tmp_path)
        store = Store(pg_server_url)
        reset(store)
        store.dispose()
        with s3_server("night") as endpoint:
            s3 = fsspec.filesystem("s3", endpoint_url=endpoint, skip_instance_cache=True)
            args = [
                "run",
                str(FIXTURES / "pdfs"),
                "--classifications",
                str(FIXTURES / "demo"),
                "--workers",
                "2",
            ]
            ran = runner.invoke(app, [*args, "--out", OUT, "--db", pg_server_url, "--quiet"])
            assert ran.exit_code == 0, ran.output
            yield s3, pg_server_url
    assert not (tmp_path / "s3:").exists()  # nothing went to a local folder named after the URL


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


class TestOneRunInABucket:
    """Two tests over one run into the bucket (the class-scoped `world`); neither undoes what the other checks."""

    def test_run_review_export_metrics_simulate_from_a_bucket(
        self, world: tuple[fsspec.AbstractFileSystem, str], tmp_path: Path
    ) -> None:
        """After a run into s3://, a review; `export --format` and `--mirrors`, `metrics --html` and `policy simulate`
        with `--out s3://…` read and write the bucket, and the simulation re-verifies every document from its
        bundle there (accepted ones included, whose bundle no packet names)."""
        s3, db = world
        store = Store(db)
        try:
            packet = store.queue.page(status="PENDING", limit=1)[0]
            answer = store.queue.get(packet.packet_id).final_classification
            assert answer is not None
            review(store, packet.packet_id, copy.deepcopy(answer), agrees=True, reviewer="sme-1")
            documents_recorded = len(store.records.doc_ids())
        finally:
            store.dispose()

        _cli("export", "--format", "csv,jsonl", "--out", OUT, "--db", db)
        exported = s3.find("night/e2e/exports")
        manifest = next(k for k in exported if k.endswith("/manifest.json"))
        listed = json.loads(s3.cat_file(manifest))
        _cli("export", "--format", "csv,jsonl", "--to", str(tmp_path / "local"), "--db", db)
        here = json.loads((tmp_path / "local" / "manifest.json").read_text())
        assert listed["records"] == here["records"] > 0
        assert listed["files"] == here["files"]  # the same bytes (sizes, rows, SHA-256) as to a folder
        for entry in listed["files"]:
            assert s3.size(f"{manifest.rsplit('/', 1)[0]}/{entry['name']}") == entry["bytes"]
        _cli("export", "--format", "parquet", "--to", "s3://night/exports/feb", "--out", OUT, "--db", db)
        assert s3.exists("night/exports/feb/ground_truth.parquet")
        assert s3.exists("night/exports/feb/manifest.json")
        s3.rm("night/e2e/index", recursive=True)
        _cli("export", "--mirrors", "--out", OUT, "--db", db)
        assert len(s3.find("night/e2e/index")) == documents_recorded

        _cli("metrics", "--out", OUT, "--db", db, "--html", "s3://night/e2e/report.html")
        assert b"false-accept" in s3.cat_file("night/e2e/report.html").lower()

        text = MEDICAL_TOML.read_text(encoding="utf-8")
        assert text.count('"Quest Diagnostics", ') == 1
        candidate = tmp_path / "looser.toml"
        candidate.write_text(text.replace('"Quest Diagnostics", ', ""), encoding="utf-8")
        report = json.loads(
            _cli("policy", "simulate", "--profile", str(candidate), "--out", OUT, "--db", db, "--json")
        )
        assert report["paths"] == {paths.REVERIFIED: documents_recorded}
        _cli(
            "policy",
            "simulate",
            "--profile",
            str(candidate),
            "--out",
            OUT,
            "--db",
            db,
            "--html",
            f"{OUT}/w.html",
        )
        assert s3.exists("night/e2e/w.html")

    def test_the_review_app_reads_bundles_from_the_run_bucket_only(
        self, world: tuple[fsspec.AbstractFileSystem, str], tmp_path: Path
    ) -> None:
        """`arbiter review --out s3://…` hands the app the bucket: a packet's bundle is read from there (no PDF
        needed); a bundle URL outside the run's prefix is refused and the PDF read instead (here: none)."""
        _, db = world
        settings = AppSettings.from_env(
            AppSettings(db_url=db, docs_root=tmp_path, output_root=None, output_url=OUT).to_env()
        )
        assert (settings.output_root, settings.bundle_urls) == (None, (OUT,))
        store = Store(db)
        try:
            summary = store.queue.page(status="PENDING", limit=1)[0]
            packet: SMEPacket = store.queue.get(summary.packet_id)
        finally:
            store.dispose()
        assert packet.document_bundle_path is not None
        assert packet.document_bundle_path.startswith(f"{OUT}/bundles/")
        documents.clear_cache()
        bundle = documents.bundle_of(packet, settings.roots, settings.bundle_urls)
        assert bundle is not None
        assert bundle.doc_id == packet.doc_id
        documents.clear_cache()
        elsewhere = packet.model_copy(update={"document_bundle_path": "s3://night/other/bundles/x.json"})
        assert documents.bundle_of(elsewhere, settings.roots, settings.bundle_urls) is None
        documents.clear_cache()


@pytest.mark.parametrize(
    ("url", "inside"),
    [
        (f"{OUT}/bundles/a.json", True),
        (f"{OUT}x/bundles/a.json", False),
        (f"{OUT}/../other/a.json", False),
        (f"{OUT}//a.json", False),
        ("gs://night/e2e/bundles/a.json", False),
        ("/etc/passwd", False),
    ],
)
def test_a_bundle_url_must_lie_under_the_run_prefix(url: str, inside: bool) -> None:
    """Only keys below the configured prefix, with no `..` or empty segment, are read."""
    assert url_inside(url, [OUT]) is inside


def test_verify_reads_its_pdf_and_classification_from_a_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arbiter verify --pdf s3://… --classification s3://…` decides as it does from local files."""
    doc = "path-breast-02"
    local = _cli(
        "verify",
        "--pdf",
        str(FIXTURES / "pdfs" / f"{doc}.pdf"),
        "--classification",
        str(FIXTURES / "demo" / f"{doc}.json"),
        "--json",
    )
    with s3_server("inputs") as endpoint:
        s3 = fsspec.filesystem("s3", endpoint_url=endpoint, skip_instance_cache=True)
        s3.put_file(str(FIXTURES / "pdfs" / f"{doc}.pdf"), f"inputs/in/{doc}.pdf")
        s3.put_file(str(FIXTURES / "demo" / f"{doc}.json"), f"inputs/in/{doc}.json")
        remote = _cli(
            "verify",
            "--pdf",
            f"s3://inputs/in/{doc}.pdf",
            "--classification",
            f"s3://inputs/in/{doc}.json",
            "--json",
        )
        missing = runner.invoke(
            app,
            ["verify", "--pdf", "s3://inputs/in/nope.pdf", "--classification", f"s3://inputs/in/{doc}.json"],
        )
    assert missing.exit_code == 2
    assert "does not exist" in missing.output

    def decided(text: str) -> tuple[object, ...]:
        o = json.loads(text)
        return (
            o["doc_id"],
            o["final_decision"],
            o["escalation_reason"],
            [a["decision"]["rule"] for a in o["attempts"]],
        )

    assert decided(remote) == decided(local)


def test_a_bucket_out_without_a_database_server_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out s3://…` with no --db (and no DATABASE_URL) on a reading command is one `error:` line, exit 2."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["metrics", "--out", OUT])
    assert result.exit_code == 2
    assert "object storage" in result.output
    assert "--db" in result.output
    assert not (tmp_path / "s3:").exists()
