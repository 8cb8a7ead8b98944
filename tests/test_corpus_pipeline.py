"""The whole chain over real-world PDFs nobody here wrote: every file gets a result, nothing crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbiter.classify import get_classifier
from arbiter.contracts.profile import load_profile
from arbiter.ingest import IsolatedIngestor
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import BatchRunner, discover, new_run_id
from arbiter.run.document import Pipeline
from arbiter.store import Store
from tests.conftest import CORPORA, corpora_missing

pytestmark = pytest.mark.corpus

LEAVES = sorted(p for p in (CORPORA / "robustness").glob("*/*") if p.is_dir()) if CORPORA.is_dir() else []


@pytest.fixture(autouse=True)
def _text_layer_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """OCR off in the workers: tests/test_ingest_corpus.py already sweeps the corpora with OCR on."""
    monkeypatch.setenv("ARBITER_OCR", "off")


def sink(out: Path) -> DatabaseResultStore:
    """The database sink `arbiter run` uses, on a SQLite file under `out`."""
    database = Store(f"sqlite:///{out / 'arbiter.db'}")
    database.migrate()
    return DatabaseResultStore(database, out)


@pytest.mark.skipif(corpora_missing(), reason="../shared/corpora is not beside this checkout")
@pytest.mark.parametrize("leaf", LEAVES, ids=[f"{p.parent.name}/{p.name}" for p in LEAVES])
def test_every_corpus_file_gets_a_result(leaf: Path, tmp_path: Path) -> None:
    """Each robustness file ends accepted or escalated with a reason; encrypted and broken ones escalate."""
    docs = discover([leaf])
    store = sink(tmp_path / "out")
    with IsolatedIngestor(workers=2, timeout_s=30) as ingestor:
        pipeline = Pipeline(
            profile=load_profile(),
            classifier=get_classifier("baseline"),
            store=store,
            run_id=new_run_id(),
            ingest=lambda path, doc_id: ingestor.ingest(path, doc_id=doc_id),
        )
        summary = BatchRunner(pipeline, store, workers=2).run(docs)
    assert summary["processed"] == len(docs)
    for doc in docs:
        entry = json.loads(store.files.index_path(doc.doc_id).read_text())
        assert entry["final_decision"] in ("AUTO_ACCEPT", "ESCALATE_TO_SME")
        if entry["final_decision"] == "ESCALATE_TO_SME":
            assert entry["escalation_reason"]
        assert entry["error"] != "internal_error", doc.path


@pytest.mark.skipif(corpora_missing(), reason="../shared/corpora is not beside this checkout")
def test_real_lab_report_is_verified(tmp_path: Path) -> None:
    """The real LabCorp sample report is classified as a lab report, or not accepted as anything else."""
    pdf = CORPORA / "medical" / "164947.pdf"
    store = sink(tmp_path / "out")
    with IsolatedIngestor(workers=1, timeout_s=30) as ingestor:
        pipeline = Pipeline(
            profile=load_profile(),
            classifier=get_classifier("baseline"),
            store=store,
            run_id=new_run_id(),
            ingest=lambda path, doc_id: ingestor.ingest(path, doc_id=doc_id),
        )
        BatchRunner(pipeline, store, workers=1).run(discover([pdf]))
    classification = json.loads((store.files.agent_dir("164947") / "classification.json").read_text())
    entry = json.loads(store.files.index_path("164947").read_text())
    assert classification["dominant_type"] == "LAB_REPORT" or entry["final_decision"] == "ESCALATE_TO_SME"
