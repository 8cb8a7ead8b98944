"""Issue 32.1 on both databases: a run may write only each document's bundle and index entry
(`--mirrors bundles`: the database holds the rest); a later run asked for every file writes the rest
without deciding again; `export --mirrors` writes them too; the newest ground-truth file shares the
history file's bytes (one file, two names) and a later version never changes an earlier one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from arbiter import atomic
from arbiter.cli.main import app
from arbiter.errors import ConfigError
from arbiter.record.mirrors import FileStore, export_mirrors
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, discover
from arbiter.store import Store
from tests.test_resume_truth import DOCS, inputs, pipeline


def files_under(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def test_a_bundles_run_writes_bundles_and_index_entries_only(store: Store, tmp_path: Path) -> None:
    """--mirrors bundles: per document its bundle and its index entry (listing them), and nothing else."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out, mirrors="bundles")
    summary = BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    assert summary["processed"] == 2
    written = {f for f in files_under(out) if not f.startswith("runs/")}
    assert written == {f"{kind}/{doc}.json" for doc in DOCS for kind in ("bundles", "index")}
    for doc in DOCS:
        entry = json.loads((out / "index" / f"{doc}.json").read_text())
        assert entry["files"] == [f"bundles/{doc}.json", f"index/{doc}.json"]
        assert entry["mirrors"] == "bundles"
        assert store.records.completed_key(doc) == entry["skip_key"]


def test_a_full_run_after_a_bundles_run_writes_the_rest_without_deciding_again(
    store: Store, tmp_path: Path
) -> None:
    """A run asked for every file after a bundles-only run skips both documents and writes their files."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    docs = discover([root / "in"])
    lean = DatabaseResultStore(store, out, mirrors="bundles")
    BatchRunner(pipeline(root, lean), lean, workers=1).run(docs)
    again = DatabaseResultStore(store, out, mirrors="bundles")
    assert BatchRunner(pipeline(root, again), again, workers=1).run(docs)["skipped_unchanged"] == 2
    assert not (out / "agent_outputs").exists()

    full = DatabaseResultStore(store, out)
    summary = BatchRunner(pipeline(root, full), full, workers=1).run(docs)
    assert (summary["skipped_unchanged"], summary["processed"]) == (2, 0)
    for doc in DOCS:
        assert (out / "agent_outputs" / doc / "arbiter_decision.json").is_file()
        assert (out / "agent_outputs" / doc / "classification.json").read_bytes() == (
            root / "cls" / f"{doc}.json"
        ).read_bytes()
        assert "mirrors" not in json.loads((out / "index" / f"{doc}.json").read_text())
    assert (out / "sme_packets" / "sme_packet_path-breast-02.json").is_file()
    assert (out / "ground_truth" / "history" / "gen-foundation-01" / "v0001.json").is_file()


def test_export_mirrors_writes_what_a_bundles_run_left_out(store: Store, tmp_path: Path) -> None:
    """`arbiter export --mirrors` after a bundles-only run: the decision, packet and ground-truth files."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out, mirrors="bundles")
    BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    assert export_mirrors(store, out)["documents"] == 2
    for doc in DOCS:
        assert (out / "agent_outputs" / doc / "arbiter_decision.json").is_file()
    assert (out / "ground_truth" / "gt_gen-foundation-01.json").is_file()


def test_the_newest_ground_truth_file_is_the_history_file_under_a_second_name(
    store: Store, tmp_path: Path
) -> None:
    """An accepted document's gt file and its history v0001 are one file (no second copy written)."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    latest = out / "ground_truth" / "gt_gen-foundation-01.json"
    kept = out / "ground_truth" / "history" / "gen-foundation-01" / "v0001.json"
    assert latest.read_bytes() == kept.read_bytes()
    assert os.path.samefile(latest, kept)
    assert not [p for p in latest.parent.iterdir() if p.name.endswith(".link")]


def test_a_later_version_replaces_the_newest_file_and_leaves_the_earlier_one(tmp_path: Path) -> None:
    """link_over puts a new file under the newest name; the file the name had before keeps its bytes."""
    first, second, latest = tmp_path / "v1.json", tmp_path / "v2.json", tmp_path / "gt.json"
    first.write_text("one")
    second.write_text("two")
    assert atomic.link_over(first, latest)
    assert atomic.link_over(second, latest)
    assert (latest.read_text(), first.read_text()) == ("two", "one")


def test_link_over_says_no_where_no_link_can_be_made(tmp_path: Path) -> None:
    """A source that does not exist (or object storage) leaves the target alone and returns False."""
    target = tmp_path / "gt.json"
    target.write_text("kept")
    assert not atomic.link_over(tmp_path / "missing.json", target)
    assert target.read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["gt.json"]


def test_an_unknown_mirror_mode_is_refused() -> None:
    """A mirror mode other than all or bundles is a ConfigError naming the two."""
    with pytest.raises(ConfigError, match="all or bundles"):
        FileStore("out", mirrors="none")


def test_the_cli_refuses_an_unknown_mirror_mode(tmp_path: Path) -> None:
    """`arbiter run --mirrors X` exits 2 with the modes named, before any document is read."""
    result = CliRunner().invoke(
        app, ["run", str(tmp_path), "--out", str(tmp_path / "out"), "--mirrors", "some"]
    )
    assert result.exit_code == 2, result.output
    assert "all or bundles" in result.output
    assert not (tmp_path / "out" / "index").exists()


def test_a_ray_run_sends_its_mirror_mode_to_every_task(tmp_path: Path) -> None:
    """The Ray driver's WorkerSpec carries --mirrors, so every node's sink writes what the run asked for."""
    pytest.importorskip("ray")
    from arbiter.run.compose import build_engine
    from arbiter.run.job import RunOptions
    from arbiter.run.ray_engine import _spec

    options = RunOptions(inputs=[str(tmp_path)], out_dir=str(tmp_path / "out"), mirrors="bundles")
    spec = _spec(options, build_engine(), "run-1", "sqlite:///x.db", None, None, tmp_path / "out")
    assert spec.mirrors == "bundles"


def test_a_bundle_mirror_is_compact_json_and_the_decision_files_are_indented(
    store: Store, tmp_path: Path
) -> None:
    """A bundle mirror is the whole bundle as one line of JSON (programs read it); the files people open
    (decision, verifiers, index) stay indented."""
    from arbiter.contracts import DocumentBundle

    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    for doc in DOCS:
        text = (out / "bundles" / f"{doc}.json").read_text(encoding="utf-8")
        assert text.count("\n") == 1
        assert text.endswith("}\n")
        bundle = DocumentBundle.model_validate_json(text)
        assert bundle.doc_id == doc
        assert any(page.text for page in bundle.pages)
        assert "\n  " in (out / "agent_outputs" / doc / "arbiter_decision.json").read_text(encoding="utf-8")
