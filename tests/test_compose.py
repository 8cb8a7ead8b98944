"""The composition root (arbiter/run/compose.py): a run's parts built from settings in one place, and the
single-document path that shares the run's outcomes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.classify import BaselineClassifier, GeminiClassifier
from arbiter.contracts import VerificationOutcome
from arbiter.errors import ConfigError
from arbiter.ingest import IngestFailure, ingest_pdf
from arbiter.llm.config import LLMSettings
from arbiter.record.mirrors import DocumentRecord, FileStore
from arbiter.run.compose import PipelineParts, build_engine, llm_client, pipeline
from arbiter.run.document import DocResult, for_document
from arbiter.run.worker import verify_one
from tests.conftest import FIXTURES, REPO
from tests.llm_fakes import FakeLLM
from tests.phase_fakes import answer

NOT_A_PDF = FIXTURES / "damaged" / "not-really-a-pdf.pdf"


def batch_replay(tmp_path: Path) -> LLMSettings:
    """The replay backend with --llm-mode batch asked for."""
    return LLMSettings(
        backend="replay", replay_dir=FIXTURES / "llm_replays", cache_dir=tmp_path / "cache", mode="batch"
    )


class Capture(FileStore):
    """A FileStore that keeps every record it saves."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.records: list[DocumentRecord] = []

    def save(self, record: DocumentRecord) -> None:
        super().save(record)
        self.records.append(record)


def test_classifications_imply_the_file_classifier() -> None:
    """A folder of classifications and no classifier name builds the file classifier."""
    engine = build_engine(classifications=FIXTURES / "demo")
    assert engine.classifier_name == "file"
    assert engine.llm is None


def test_classifications_with_another_classifier_are_refused() -> None:
    """--classifications with --classifier baseline is a ConfigError naming both."""
    with pytest.raises(ConfigError, match="implies --classifier file"):
        build_engine(classifier="baseline", classifications=FIXTURES / "demo")


def test_gemini_classifier_without_a_model_is_refused() -> None:
    """The gemini classifier with the LLM backend "none" is a ConfigError."""
    with pytest.raises(ConfigError, match="needs an LLM backend"):
        build_engine(LLMSettings(backend="none"), classifier="gemini")


def test_batch_mode_needs_gemini(tmp_path: Path) -> None:
    """Batch mode with any backend but gemini is a ConfigError."""
    with pytest.raises(ConfigError, match="needs --llm gemini"):
        llm_client(batch_replay(tmp_path))


def test_a_single_document_engine_answers_online_without_a_disk_cache(tmp_path: Path) -> None:
    """The engine of `arbiter verify` answers online even in batch mode, and never touches the disk cache."""
    engine = build_engine(batch_replay(tmp_path), with_classifier=False, disk_cache=False)
    assert engine.classifier is None
    assert engine.collector is None
    assert engine.llm is not None
    assert engine.llm.cache is None


def test_a_pipeline_needs_a_classifier() -> None:
    """An engine built without a classifier cannot make a pipeline."""
    parts = PipelineParts(
        store=FileStore(Path("unused")), ingest=lambda p, d: ingest_pdf(p, doc_id=d), run_id="r"
    )
    with pytest.raises(ConfigError, match="needs a classifier"):
        pipeline(build_engine(with_classifier=False), parts)


def test_verify_one_escalates_an_unreadable_pdf_as_a_run_does(tmp_path: Path) -> None:
    """`arbiter verify` on a file that is not a PDF gives the outcome a run records for it."""
    bundle = ingest_pdf(NOT_A_PDF)
    assert isinstance(bundle, IngestFailure)
    engine = build_engine(classifications=FIXTURES / "demo")
    alone = verify_one(bundle, b"{}", profile=engine.profile)
    store = Capture(tmp_path / "out")
    parts = PipelineParts(store=store, ingest=lambda p, d: ingest_pdf(p, doc_id=d), run_id="r")
    result = pipeline(engine, parts).process(NOT_A_PDF, bundle.doc_id, force=True)
    in_run: VerificationOutcome = store.records[-1].outcome
    assert result.error == alone.escalation_reason == f"pdf_{bundle.kind}"
    assert alone == in_run


def test_a_model_classifier_asks_through_the_documents_llm() -> None:
    """A classifier that asks a model is given the document's LLM; one that does not is used as it is."""
    run_llm, doc_llm = FakeLLM(default=answer()), FakeLLM(default=answer())
    gemini = GeminiClassifier(run_llm, "gemini-test")
    per_doc = for_document(gemini, doc_llm)
    assert isinstance(per_doc, GeminiClassifier)
    assert per_doc.llm is doc_llm
    assert per_doc.model == "gemini-test"
    baseline = BaselineClassifier()
    assert for_document(baseline, doc_llm) is baseline
    assert for_document(gemini, None) is gemini


def test_doc_result_is_built_by_keyword() -> None:
    """DocResult takes keywords only: eight positional values are refused."""
    with pytest.raises(TypeError):
        DocResult("d", "d.pdf", "SKIPPED", None, False, None, True, 1.0)  # type: ignore[misc]
    skipped = DocResult.skipped_unchanged("d", Path("d.pdf"), 1.0)
    assert skipped.skipped
    assert skipped.final_decision == "SKIPPED"
    assert skipped.error is None


def test_the_cli_loads_no_pdf_library_until_a_command_needs_it() -> None:
    """Importing the CLI (`arbiter --help`, `arbiter users ...`) loads neither the composition root nor
    the PDF and image libraries it wires in."""
    probe = (
        "import sys, arbiter.cli.main; "
        "print(sorted(m for m in ('arbiter.run.compose', 'pypdfium2', 'PIL') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
