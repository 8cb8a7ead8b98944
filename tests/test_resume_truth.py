"""Issues 14.3 and 14.13 on both databases: the database is the source of truth. A document committed to
the database whose files a kill never wrote gets them on resume (and from `export --mirrors`); summaries
count from the database; a result an internal or infrastructure error caused is never a reason to skip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.classify import get_classifier
from arbiter.contracts import DocumentRecord
from arbiter.contracts.profile import load_profile
from arbiter.ingest import IngestResult, ingest_pdf
from arbiter.record.mirrors import export_mirrors
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, InputDoc, discover, new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import Store
from tests.conftest import FIXTURES

# One escalated by the demo classifications, one accepted.
DOCS = ("path-breast-02", "gen-foundation-01")


def inputs(tmp_path: Path) -> Path:
    pdfs, cls = tmp_path / "in", tmp_path / "cls"
    pdfs.mkdir()
    cls.mkdir()
    for doc in DOCS:
        shutil.copy(FIXTURES / "pdfs" / f"{doc}.pdf", pdfs / f"{doc}.pdf")
        shutil.copy(FIXTURES / "demo" / f"{doc}.json", cls / f"{doc}.json")
    return tmp_path


def pipeline(root: Path, sink: DatabaseResultStore, ingest=None) -> Pipeline:  # type: ignore[no-untyped-def]
    return Pipeline(
        profile=load_profile(),
        classifier=get_classifier("file", classifications_dir=root / "cls"),
        store=sink,
        run_id=new_run_id(),
        ingest=ingest or (lambda path, doc_id: ingest_pdf(path, doc_id=doc_id)),
    )


class KilledAfterCommit(DatabaseResultStore):
    """kill -9 between the database commit and the mirror files."""

    def save(self, record: DocumentRecord) -> None:
        self.store.records.record(record)
        raise KeyboardInterrupt


def decision_files(out: Path, doc: str) -> list[Path]:
    return [out / "index" / f"{doc}.json", out / "agent_outputs" / doc / "arbiter_decision.json"]


def test_resume_rebuilds_the_files_of_a_document_the_database_holds(store: Store, tmp_path: Path) -> None:
    root = inputs(tmp_path)
    out = tmp_path / "out"
    docs = discover([root / "in"])
    killed = KilledAfterCommit(store, out)
    with pytest.raises(KeyboardInterrupt):
        BatchRunner(pipeline(root, killed), killed, workers=1).run(docs)
    held = [d.doc_id for d in docs if store.records.completed_key(d.doc_id) is not None]
    assert held
    first = held[0]
    assert not any(p.exists() for d in held for p in decision_files(out, d))

    sink = DatabaseResultStore(store, out)
    summary = BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    assert (summary["skipped_unchanged"], summary["processed"]) == (len(held), 2 - len(held))
    for doc in DOCS:
        assert all(p.is_file() for p in decision_files(out, doc)), doc
        # The files only the first run had (the bundle, the primary's answer) are there too (issue 32.4).
        assert (out / "bundles" / f"{doc}.json").is_file(), doc
        assert (out / "agent_outputs" / doc / "classification.json").read_bytes() == (
            root / "cls" / f"{doc}.json"
        ).read_bytes()
    assert (out / "sme_packets" / "sme_packet_path-breast-02.json").is_file()
    assert (out / "ground_truth" / "gt_gen-foundation-01.json").is_file()
    assert (out / "ground_truth" / "history" / "gen-foundation-01" / "v0001.json").is_file()
    # Counted from the database: the skipped escalation keeps its real reason, never "unspecified".
    assert "unspecified" not in summary["escalated_by_reason"]
    assert summary["escalated"] == 1
    assert summary["accepted_first_time"] + summary["accepted_after_fixes"] == 1
    entry = json.loads((out / "index" / f"{first}.json").read_text())
    assert entry["skip_key"] == store.records.completed_key(first)


def test_export_mirrors_rebuilds_every_missing_file(store: Store, tmp_path: Path) -> None:
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    for name in ("index", "agent_outputs", "sme_packets", "ground_truth"):
        shutil.rmtree(out / name)
    counts = export_mirrors(store, out)
    assert counts["documents"] == 2
    for doc in DOCS:
        assert all(p.is_file() for p in decision_files(out, doc)), doc
    assert (out / "sme_packets" / "sme_packet_path-breast-02.json").is_file()
    assert (out / "ground_truth" / "history" / "gen-foundation-01" / "v0001.json").is_file()


def test_an_internal_error_is_never_a_reason_to_skip(store: Store, tmp_path: Path) -> None:
    """A document that met an internal fault (here the extraction crashing, as during a database lock) is
    recorded as an internal_error escalation, and a plain re-run decides it again."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)

    def broken(path: Path, doc_id: str) -> IngestResult:
        raise RuntimeError("database is locked")

    docs = discover([root / "in"])
    first = BatchRunner(pipeline(root, sink, broken), sink, workers=1).run(docs)
    assert first["errors_by_reason"] == {"internal_error": 2}
    again = BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    assert (again["skipped_unchanged"], again["processed"], again["errors"]) == (0, 2, 0)
    third = BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    assert third["skipped_unchanged"] == 2  # a real result is skipped as before


def test_a_stale_index_file_after_a_crash_is_rewritten_and_changes_no_count(
    store: Store, tmp_path: Path
) -> None:
    """After a kill between the commit and the files, the mirror still names an earlier run with the same skip
    key (here an internal error): the resumed run counts the skipped document from the database and rewrites
    its index entry and decision file from it."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    docs = discover([root / "in"])

    def broken(path: Path, doc_id: str) -> IngestResult:
        raise RuntimeError("extraction crashed")

    BatchRunner(pipeline(root, sink, broken), sink, workers=1).run(docs)
    killed = KilledAfterCommit(store, out)
    with pytest.raises(KeyboardInterrupt):
        BatchRunner(pipeline(root, killed), killed, workers=1).run(docs)
    committed = [d.doc_id for d in docs if store.records.completed_key(d.doc_id) is not None]
    assert committed
    held = committed[0]
    stale = json.loads((out / "index" / f"{held}.json").read_text())
    assert stale["error"] == "internal_error"  # the mirror a crash left behind

    summary = BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    skipped = len(committed)
    assert (summary["skipped_unchanged"], summary["processed"], summary["errors"]) == (
        skipped,
        2 - skipped,
        0,
    )
    assert summary["escalated"] + summary["accepted_first_time"] + summary["accepted_after_fixes"] == 2
    newest = store.records.document(held)
    assert newest is not None
    entry = json.loads((out / "index" / f"{held}.json").read_text())
    assert (entry["run_id"], entry["error"]) == (newest.run_id, None)
    decision = json.loads((out / "agent_outputs" / held / "arbiter_decision.json").read_text())
    assert decision["final_decision"] == str(newest.outcome.final_decision)
    assert decision["escalation_reason"] != "internal_error"


def written(out: Path) -> dict[str, object]:
    """Every file under the output root but the run summaries, by relative path: the primary's answer as bytes,
    the others as JSON (PostgreSQL's JSONB keeps no key order), a bundle without the time it was extracted at
    (one rebuilt from the PDF is extracted again)."""
    found: dict[str, object] = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.parts[len(out.parts)] not in ("runs", "arbiter.db"):
            name = str(p.relative_to(out))
            found[name] = p.read_bytes() if p.name == "classification.json" else json.loads(p.read_bytes())
            if p.parent.name == "bundles":
                found[name] = json.loads(p.read_bytes()) | {"processing_timestamp": None}
    return found


def run_once(store: Store, tmp_path: Path) -> tuple[Path, Path, DatabaseResultStore, list[InputDoc]]:
    """The two documents decided once into tmp_path/out: the inputs' root, the output, the sink, the inputs."""
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    docs = discover([root / "in"])
    BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    return root, out, sink, docs


@pytest.mark.parametrize("lost", ["everything", "bundles", "classification"])
def test_a_rerun_restores_the_deleted_files_of_a_done_document(
    store: Store, tmp_path: Path, lost: str
) -> None:
    """Issue 32.4: a done document whose files are gone (all of them, its bundle, or its classification.json)
    gets them back byte for byte on a plain re-run, which skips it with the same decision and no new row."""
    root, out, sink, docs = run_once(store, tmp_path)
    before = written(out)
    decided = {d: store.records.document(d) for d in DOCS}
    if lost == "everything":
        for name in ("bundles", "agent_outputs", "sme_packets", "ground_truth", "index"):
            shutil.rmtree(out / name)
    elif lost == "bundles":
        shutil.rmtree(out / "bundles")
    else:
        for doc in DOCS:
            (out / "agent_outputs" / doc / "classification.json").unlink()
    again = BatchRunner(pipeline(root, DatabaseResultStore(store, out)), sink, workers=1).run(docs)
    assert (again["skipped_unchanged"], again["processed"]) == (2, 0)
    assert written(out) == before
    for doc in DOCS:
        now = store.records.document(doc)
        assert now is not None
        was = decided[doc]
        assert was is not None
        assert (now.run_id, now.outcome) == (was.run_id, was.outcome)  # not decided again


@pytest.mark.parametrize(
    ("damage", "relative"),
    [
        ("empty", "bundles/{doc}.json"),
        ("empty", "agent_outputs/{doc}/arbiter_decision.json"),
        ("empty", "agent_outputs/{doc}/classification.json"),
        ("short", "agent_outputs/{doc}/v3_trap_detection.json"),
        ("short", "bundles/{doc}.json"),
        ("empty", "ground_truth/history/gen-foundation-01/v0001.json"),
    ],
)
def test_a_rerun_rebuilds_a_file_a_crash_left_empty_or_short(
    store: Store, tmp_path: Path, damage: str, relative: str
) -> None:
    """Mirrors are not fsynced: a file renamed into place but never written out (empty, or cut short against
    the size its index entry records) is rebuilt byte for byte by a plain re-run, with the same decision."""
    root, out, sink, docs = run_once(store, tmp_path)
    before = written(out)
    for doc in DOCS:
        path = out / relative.format(doc=doc)
        if path.is_file():
            data = path.read_bytes()
            path.write_bytes(b"" if damage == "empty" else data[: len(data) // 2])
    again = BatchRunner(pipeline(root, DatabaseResultStore(store, out)), sink, workers=1).run(docs)
    assert (again["skipped_unchanged"], again["processed"]) == (2, 0)
    assert written(out) == before


def test_mirrors_of_the_database_are_not_fsynced_and_list_their_sizes(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's mirror files skip fsync (the database commit is the durable record) and its index entries record
    every listed file's size; FileStore on its own, the only copy, still fsyncs each file."""
    import os

    from arbiter.record.mirrors import FileStore

    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    BatchRunner(pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    folders = ("bundles", "agent_outputs", "sme_packets", "ground_truth", "index")
    mirrored = [p for p in synced if Path(p).relative_to(out).parts[0] in folders]
    for doc in DOCS:
        entry = json.loads((out / "index" / f"{doc}.json").read_text())
        assert list(entry["sizes"]) == entry["files"][:-1]
        assert all((out / f).stat().st_size == n for f, n in entry["sizes"].items())
    record = store.records.document(DOCS[1])
    assert record is not None
    synced.clear()
    FileStore(tmp_path / "alone").save(record)
    assert mirrored == []
    assert len(synced) == len({p.stat().st_ino for p in (tmp_path / "alone").rglob("*.json")})  # one a file


def test_a_classification_the_database_never_kept_is_decided_again(store: Store, tmp_path: Path) -> None:
    """A document recorded before the database kept the primary's answer (migration 0009) whose
    classification.json is gone cannot be repaired: it is decided again, not counted as done without it."""
    import sqlalchemy as sa

    root = inputs(tmp_path)
    out = tmp_path / "out"
    sink = DatabaseResultStore(store, out)
    docs = discover([root / "in"])
    BatchRunner(pipeline(root, sink), sink, workers=1).run(docs)
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE outcomes SET primary_raw = NULL"))
    (out / "agent_outputs" / DOCS[0] / "classification.json").unlink()
    again = BatchRunner(pipeline(root, DatabaseResultStore(store, out)), sink, workers=1).run(docs)
    assert (again["skipped_unchanged"], again["processed"]) == (1, 1)
    assert (out / "agent_outputs" / DOCS[0] / "classification.json").is_file()
