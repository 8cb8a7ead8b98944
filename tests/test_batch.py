"""Batch runs: discovery, every document gets a result, resume after a kill, skip when unchanged — on the
database sink production uses (arbiter.record.sink), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.classify import get_classifier
from arbiter.contracts import DocumentRecord
from arbiter.contracts.profile import load_profile
from arbiter.errors import InputError
from arbiter.ingest import IngestResult, ingest_pdf
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, discover, doc_id_for, new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import Store
from tests.conftest import FIXTURES


def fixture_pdfs(tmp_path: Path, n: int) -> Path:
    """A directory with the first n fixture PDFs and their demo classifications."""
    pdfs, cls = tmp_path / "in", tmp_path / "cls"
    pdfs.mkdir()
    cls.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:n]:
        shutil.copy(pdf, pdfs / pdf.name)
        shutil.copy(FIXTURES / "demo" / f"{pdf.stem}.json", cls / f"{pdf.stem}.json")
    return tmp_path


def make_pipeline(root: Path, store: DatabaseResultStore, ingest=None) -> Pipeline:  # type: ignore[no-untyped-def]
    return Pipeline(
        profile=load_profile(),
        classifier=get_classifier("file", classifications_dir=root / "cls"),
        store=store,
        run_id=new_run_id(),
        ingest=ingest or (lambda path, doc_id: ingest_pdf(path, doc_id=doc_id)),
    )


def test_discover_recurses_and_uses_stems(tmp_path: Path) -> None:
    """Directories are searched recursively for PDFs; doc_id is the file stem."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one.pdf").write_bytes(b"%PDF")
    (tmp_path / "a" / "b" / "two.PDF").write_bytes(b"%PDF")
    (tmp_path / "a" / "notes.txt").write_text("x")
    assert sorted(d.doc_id for d in discover([tmp_path / "a"])) == ["one", "two"]


@pytest.mark.parametrize(
    ("name", "doc_id"),
    [("report.pdf", "report"), ("...pdf", "doc_"), (".hidden.pdf", "doc_hidden"), ("a b.pdf", "a b")],
)
def test_doc_ids_stay_inside_the_output_root(name: str, doc_id: str) -> None:
    """A doc_id never starts with a dot, so no output path can climb out of its folder."""
    assert doc_id_for(Path("/in") / name) == doc_id


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "does not exist"),
        ("empty", "No PDF files"),
        ("clash", "share a document id"),
    ],
)
def test_discover_usage_errors(tmp_path: Path, setup: str, message: str) -> None:
    """Missing inputs, no PDFs and two files with one doc_id are clear usage errors."""
    if setup == "missing":
        inputs = [tmp_path / "nope"]
    elif setup == "empty":
        inputs = [tmp_path]
    else:
        for sub in ("x", "y"):
            (tmp_path / sub).mkdir()
            (tmp_path / sub / "same.pdf").write_bytes(b"%PDF")
        inputs = [tmp_path]
    with pytest.raises(InputError, match=message):
        discover(inputs)


def test_every_document_gets_a_result_and_files(store: Store, tmp_path: Path) -> None:
    """A batch writes docs/design.md §4's files for every document and a summary that adds up."""
    root = fixture_pdfs(tmp_path, 6)
    sink = DatabaseResultStore(store, tmp_path / "out")
    summary = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(discover([root / "in"]))
    assert summary["documents"] == summary["processed"] == 6
    assert (
        summary["accepted_first_time"]
        + summary["accepted_after_fixes"]
        + summary["escalated"]
        + summary["errors"]
        == 6
    )
    for pdf in (root / "in").glob("*.pdf"):
        agent = sink.files.agent_dir(pdf.stem)
        assert (agent / "arbiter_decision.json").is_file()
        assert (agent / "classification.json").is_file()
        for name in (
            "v1_schema_validation",
            "v2_consistency_check",
            "v3_trap_detection",
            "v4_evidence_quality",
        ):
            assert (agent / f"{name}.json").is_file(), name
        decision = json.loads((agent / "arbiter_decision.json").read_text())
        if decision["final_decision"] == "AUTO_ACCEPT":
            gt = json.loads(sink.files.ground_truth_path(pdf.stem).read_text())
            assert gt["ground_truth_source"] == "PRIMARY_AGENT_AUTO_ACCEPT"
        else:
            packet = json.loads(sink.files.packet_path(pdf.stem).read_text())
            assert packet["review_status"] == "PENDING"
    assert (sink.root / "runs" / summary["run_id"] / "summary.json").is_file()


def test_rerun_skips_unchanged_and_force_redoes(store: Store, tmp_path: Path) -> None:
    """A second run skips every unchanged document; --force redoes them without new ground-truth versions."""
    root = fixture_pdfs(tmp_path, 4)
    sink = DatabaseResultStore(store, tmp_path / "out")
    docs = discover([root / "in"])
    first = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(docs)
    second = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(docs)
    assert second["skipped_unchanged"] == 4
    assert second["processed"] == 0
    assert second["accepted_first_time"] == first["accepted_first_time"]
    forced = BatchRunner(make_pipeline(root, sink), sink, workers=2, force=True).run(docs)
    assert forced["processed"] == 4
    histories = list((sink.root / "ground_truth" / "history").glob("*"))
    assert len(histories) == first["accepted_first_time"] + first["accepted_after_fixes"] > 0
    for history in histories:
        assert [p.name for p in history.iterdir()] == ["v0001.json"]


def test_summary_counts_accepts_by_semantic_checks(store: Store, tmp_path: Path) -> None:
    """Without an LLM every accept is on rules only; a skipped rerun counts them again from the database,
    whatever an index file says (here one edited as if written before semantic checks were recorded)."""
    root = fixture_pdfs(tmp_path, 4)
    sink = DatabaseResultStore(store, tmp_path / "out")
    docs = discover([root / "in"])
    first = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(docs)
    accepted = first["accepted_first_time"] + first["accepted_after_fixes"]
    assert accepted > 0
    assert first["accepted_by_semantic_checks"] == {"rules_only": accepted, "rules_and_model": 0}
    entries = [json.loads(p.read_text()) for p in (sink.root / "index").glob("*.json")]
    assert {e["semantic_checks"] for e in entries} == {"rules_only"}
    old = sink.files.index_path(docs[0].doc_id)
    old.write_text(
        json.dumps({k: v for k, v in json.loads(old.read_text()).items() if k != "semantic_checks"})
    )
    second = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(docs)
    assert second["skipped_unchanged"] == 4
    assert second["accepted_by_semantic_checks"] == first["accepted_by_semantic_checks"]


def test_changed_classification_is_redone(store: Store, tmp_path: Path) -> None:
    """Changing a document's classification input makes the next run redo that document only."""
    root = fixture_pdfs(tmp_path, 3)
    sink = DatabaseResultStore(store, tmp_path / "out")
    docs = discover([root / "in"])
    BatchRunner(make_pipeline(root, sink), sink, workers=1).run(docs)
    target = sorted((root / "cls").glob("*.json"))[0]
    target.write_text(target.read_text() + "\n")
    again = BatchRunner(make_pipeline(root, sink), sink, workers=1).run(docs)
    assert (again["processed"], again["skipped_unchanged"]) == (1, 2)


def test_interrupted_run_resumes_without_loss_or_duplicates(store: Store, tmp_path: Path) -> None:
    """A run interrupted mid-way leaves finished documents intact; the next run does only the rest."""
    root = fixture_pdfs(tmp_path, 6)
    sink = DatabaseResultStore(store, tmp_path / "out")
    docs = discover([root / "in"])
    seen: list[str] = []

    def flaky_ingest(path: Path, doc_id: str) -> IngestResult:
        seen.append(doc_id)
        if len(seen) >= 4:
            raise KeyboardInterrupt
        return ingest_pdf(path, doc_id=doc_id)

    with pytest.raises(KeyboardInterrupt):
        BatchRunner(make_pipeline(root, sink, flaky_ingest), sink, workers=1).run(docs)
    done = {p.stem for p in (sink.root / "index").glob("*.json")}
    assert len(done) == 3
    resumed = BatchRunner(make_pipeline(root, sink), sink, workers=1).run(docs)
    assert resumed["skipped_unchanged"] == 3
    assert resumed["processed"] == 3
    assert {p.stem for p in (sink.root / "index").glob("*.json")} == {d.doc_id for d in docs}


def test_crash_before_the_database_commit_redoes_that_document(store: Store, tmp_path: Path) -> None:
    """A kill before a document reaches the database makes the next run redo it, not skip it."""
    root = fixture_pdfs(tmp_path, 2)

    class DyingSink(DatabaseResultStore):
        def save(self, record: DocumentRecord) -> None:
            raise KeyboardInterrupt

    dying = DyingSink(store, tmp_path / "out")
    with pytest.raises(KeyboardInterrupt):
        BatchRunner(make_pipeline(root, dying), dying, workers=1).run(discover([root / "in"]))
    sink = DatabaseResultStore(store, tmp_path / "out")
    resumed = BatchRunner(make_pipeline(root, sink), sink, workers=1).run(discover([root / "in"]))
    assert resumed["processed"] == 2


def test_unreadable_pdf_escalates_and_batch_goes_on(store: Store, tmp_path: Path) -> None:
    """A broken PDF and a non-PDF escalate with a plain reason while the other documents finish."""
    root = fixture_pdfs(tmp_path, 2)
    (root / "in" / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj <<>>\ntrailer garbage")
    (root / "in" / "notes.pdf").write_text("just text, not a PDF")
    sink = DatabaseResultStore(store, tmp_path / "out")
    summary = BatchRunner(make_pipeline(root, sink), sink, workers=2).run(discover([root / "in"]))
    assert summary["documents"] == 4
    assert summary["errors"] == 2
    for doc in ("broken", "notes"):
        packet = json.loads(sink.files.packet_path(doc).read_text())
        assert packet["escalation_reason"].startswith("pdf_")
        assert packet["escalation_message"]
        assert packet["priority"] == 0


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt, GeneratorExit], ids=lambda e: e.__name__)
def test_a_check_raising_a_base_exception_escalates_and_the_run_goes_on(
    store: Store, tmp_path: Path, error: type[BaseException]
) -> None:
    """Issue 14.7: a verifier raising SystemExit, KeyboardInterrupt or GeneratorExit is ERRORED: every document
    is escalated (never accepted), recorded, and the run ends with its summary."""
    from arbiter.verifiers import default_verifiers
    from tests.governor_helpers import CrashingVerifier

    root = fixture_pdfs(tmp_path, 3)
    sink = DatabaseResultStore(store, tmp_path / "out")
    pipeline = make_pipeline(root, sink)
    pipeline.verifiers = [*default_verifiers(), CrashingVerifier("V9", error=error)]  # type: ignore[arg-type]
    summary = BatchRunner(pipeline, sink, workers=2).run(discover([root / "in"]))
    assert (summary["processed"], summary["escalated"], summary["interrupted"]) == (3, 3, False)
    assert summary["accepted_first_time"] + summary["accepted_after_fixes"] == 0
    assert (sink.root / "runs" / pipeline.run_id / "summary.json").is_file()
    assert len(list((sink.root / "index").glob("*.json"))) == 3


@pytest.mark.parametrize("error", [SystemExit, GeneratorExit], ids=lambda e: e.__name__)
def test_a_base_exception_outside_the_checks_escalates_that_document(
    store: Store, tmp_path: Path, error: type[BaseException]
) -> None:
    """The same raised by ingestion (or anything else in a document's chain): an internal_error escalation."""
    root = fixture_pdfs(tmp_path, 2)
    sink = DatabaseResultStore(store, tmp_path / "out")

    def ingest(path: Path, doc_id: str) -> IngestResult:
        raise error()

    summary = BatchRunner(make_pipeline(root, sink, ingest), sink, workers=1).run(discover([root / "in"]))
    assert summary["errors_by_reason"] == {"internal_error": 2}


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt], ids=lambda e: e.__name__)
def test_an_interrupt_ends_the_run_as_interrupted_with_a_summary(
    store: Store, tmp_path: Path, error: type[BaseException]
) -> None:
    """Ctrl+C (or a SystemExit reaching the batch loop) stops the run: summary.json says interrupted, and the
    caller gets a KeyboardInterrupt (the CLI exits non-zero)."""
    root = fixture_pdfs(tmp_path, 4)
    sink = DatabaseResultStore(store, tmp_path / "out")
    pipeline = make_pipeline(root, sink)

    def progress(_result: object) -> None:
        raise error()

    with pytest.raises(KeyboardInterrupt):
        BatchRunner(pipeline, sink, workers=1).run(discover([root / "in"]), progress=progress)
    summary = json.loads((sink.root / "runs" / pipeline.run_id / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["processed"] >= 1
