"""A run without a model classifies and verifies each document in its ingestion worker (arbiter/run/worker.py)
and decides, records and mirrors exactly as when the parent checks it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arbiter.classify.base import ClassificationError
from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import load_profile
from arbiter.ingest.isolated import Handed
from arbiter.run import job as run_job
from arbiter.run.job import RunOptions, execute
from arbiter.run.worker import Prepared, WorkerJob, ingest_and_check
from tests.conftest import FIXTURES

PDFS = FIXTURES / "pdfs"
CLASSIFICATIONS = FIXTURES / "demo"
DOCS = ["lab-quest-01", "gen-foundation-01", "admin-faxcover-01", "path-lung-01"]


def _inputs(tmp_path: Path) -> list[str]:
    paths = [PDFS / f"{doc}.pdf" for doc in DOCS]
    return [str(p) for p in paths if p.is_file()]


def _run(out: Path, inputs: list[str]) -> dict[str, Any]:
    options = RunOptions(inputs=inputs, classifications=str(CLASSIFICATIONS), out_dir=str(out), workers=2)
    return execute(options)


def _untimed(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _untimed(v) for k, v in data.items() if k not in ("timings", "duration_ms")}
    if isinstance(data, list):
        return [_untimed(v) for v in data]
    return data


def _decisions(out: Path) -> dict[str, Any]:
    """Every document's decision file without its timings, and its bundle mirror without its timestamp."""
    found: dict[str, Any] = {}
    for decision in sorted((out / "agent_outputs").glob("*/arbiter_decision.json")):
        found[decision.parent.name] = _untimed(json.loads(decision.read_text(encoding="utf-8")))
    for bundle in sorted((out / "bundles").glob("*.json")):
        data = json.loads(bundle.read_text(encoding="utf-8"))
        data.pop("processing_timestamp", None)
        found[f"bundle:{bundle.stem}"] = data
    return found


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the parent verified a document its worker should have checked")


def test_the_workers_check_and_the_parent_never_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a model the parent process never classifies or verifies: every document is still decided."""
    monkeypatch.setattr("arbiter.run.worker.verify_with_retries", _boom)
    inputs = _inputs(tmp_path)
    summary = _run(tmp_path / "out", inputs)
    assert summary["processed"] == len(inputs) >= 3
    assert summary["errors"] == 0, summary["errors_by_reason"]


def test_worker_checks_decide_and_mirror_as_the_parent_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same documents decided in the workers and in the parent give the same decision and bundle files."""
    inputs = _inputs(tmp_path)
    in_workers = _run(tmp_path / "workers", inputs)
    monkeypatch.setattr(run_job, "worker_job", lambda *args, **kwargs: None)
    in_parent = _run(tmp_path / "parent", inputs)
    keys = ("processed", "accepted_first_time", "accepted_after_fixes", "escalated", "escalated_by_reason")
    assert {k: in_workers[k] for k in keys} == {k: in_parent[k] for k in keys}
    workers, parent = _decisions(tmp_path / "workers"), _decisions(tmp_path / "parent")
    assert workers == parent
    assert len(workers) == 2 * len(inputs)


class _Raises:
    name = "raises"
    version = "1"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def classify(self, bundle: DocumentBundle, profile: Any) -> Any:
        raise self.exc

    def input_digest(self, doc_id: str) -> str:
        return "-"


@pytest.mark.parametrize(
    ("exc", "fault", "error"),
    [
        (RuntimeError("bug"), "RuntimeError", None),
        (ClassificationError("no answer for this document"), None, "no answer for this document"),
    ],
)
def test_a_worker_hands_back_a_fault_or_a_classification_failure(
    tmp_path: Path, exc: BaseException, fault: str | None, error: str | None
) -> None:
    """A check that raises comes back as the fault's type name; a classifier's refusal as its message;
    either way the bundle mirror is written and the hand-back carries no page text."""
    job = WorkerJob(load_profile(None), _Raises(exc), mirror_root=tmp_path)  # type: ignore[arg-type]
    handed = ingest_and_check(PDFS / f"{DOCS[0]}.pdf", job=job, doc_id=DOCS[0])
    assert isinstance(handed, Handed)
    assert isinstance(handed.extra, Prepared)
    assert handed.extra.fault == fault
    checked = handed.extra.checked
    assert (checked.classification_error if checked else None) == error
    assert isinstance(handed.result, DocumentBundle)
    assert all(not p.text for p in handed.result.pages)
    assert handed.result.total_pages > 0
    assert (tmp_path / "bundles" / f"{DOCS[0]}.json").is_file()


def test_a_worker_fault_is_recorded_as_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault in a worker's check escalates that document as an internal error naming the exception."""
    from arbiter.record.mirrors import FileStore
    from arbiter.run.compose import PipelineParts, build_engine, pipeline

    job = WorkerJob(load_profile(None), _Raises(RuntimeError("bug")), mirror_root=tmp_path)  # type: ignore[arg-type]
    engine = build_engine(classifications=CLASSIFICATIONS)
    parts = PipelineParts(
        store=FileStore(tmp_path),
        ingest=lambda path, doc_id: ingest_and_check(path, job=job, doc_id=doc_id),
        run_id="r1",
    )
    result = pipeline(engine, parts).process(PDFS / f"{DOCS[0]}.pdf", DOCS[0])
    assert result.error == "internal_error"
    decision = json.loads((tmp_path / "agent_outputs" / DOCS[0] / "arbiter_decision.json").read_text())
    assert "RuntimeError" in decision["escalation_message"]


def test_importing_the_store_hashes_no_password() -> None:
    """Importing the CLI (as every spawned ingestion worker does) spends no Argon2 hash."""
    import subprocess
    import sys

    code = (
        "import argon2\n"
        "def refuse(*a, **k): raise SystemExit('hashed at import')\n"
        "argon2.PasswordHasher.hash = refuse\n"
        "import arbiter.cli.main, arbiter.store.users\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_keyboard_interrupt_in_a_worker_check_is_errored_with_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In an ingestion worker (SIGINT ignored: the parent takes Ctrl+C), a check raising KeyboardInterrupt
    is ERRORED with a BLOCKER, as SECURITY.md §1 says, not a fault recorded as an internal error."""
    import signal

    from arbiter.contracts import Severity, VerifierStatus
    from arbiter.verifiers import default_verifiers
    from tests.governor_helpers import CrashingVerifier

    monkeypatch.setattr(signal, "getsignal", lambda _sig: signal.SIG_IGN)  # the worker's SIGINT
    crashing = CrashingVerifier("V9", error=KeyboardInterrupt)  # type: ignore[arg-type]
    from arbiter.run.compose import build_engine

    engine_job = WorkerJob(
        load_profile(None),
        build_engine(classifications=CLASSIFICATIONS).classifier,
        mirror_root=tmp_path,
        verifiers=[*default_verifiers(), crashing],  # type: ignore[list-item]
    )
    handed = ingest_and_check(PDFS / f"{DOCS[0]}.pdf", job=engine_job, doc_id=DOCS[0])
    assert isinstance(handed.extra, Prepared)
    assert handed.extra.fault is None
    assert handed.extra.checked is not None
    outcome = handed.extra.checked.outcome
    assert outcome is not None
    assert outcome.final_decision != "AUTO_ACCEPT"
    results = {r.verifier: r for r in outcome.attempts[0].verifier_results}
    assert results["V9"].status == VerifierStatus.ERRORED
    assert [i.severity for i in results["V9"].issues] == [Severity.BLOCKER]
