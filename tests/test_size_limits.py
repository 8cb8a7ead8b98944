"""Issue 27.7: size limits from the profile's [limits] on every input. An oversized classification (its
bytes, reasoning, evidence text, segments or evidence items) is escalated as `classification_too_large`
with a plain reason, nothing of it stored, and the batch goes on; the store refuses oversized review notes,
answers and drafts in one line with nothing written (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from store_fixtures import (  # noqa: F401  (fixtures)
    CLASSIFICATION,
    escalated,
    pg_server_url_fixture,
    review,
    row_counts,
    store_fixture,
)

from arbiter.contracts.limits import Limits, classification_problem
from arbiter.contracts.profile import load_profile
from arbiter.ingest import ingest_pdf
from arbiter.run.job import RunOptions, execute
from arbiter.run.worker import verify_one
from arbiter.store import Store, TooLarge
from tests.conftest import FIXTURES

DOCS = ("lab-quest-01", "gen-foundation-01", "note-progress-01")
BIG = 3_000_000  # over the default 2,000,000 bytes (the was 50 MB)


def demo(doc: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "demo" / f"{doc}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_a_run_escalates_oversized_classifications_and_goes_on(tmp_path: Path) -> None:
    """A 3 MB reasoning and a 30,000-character one are each escalated `classification_too_large` with the
    limit named; the other document is decided as usual, and the database holds none of the oversized text."""
    pdfs, cls = tmp_path / "in", tmp_path / "cls"
    pdfs.mkdir()
    cls.mkdir()
    for doc in DOCS:
        shutil.copy(FIXTURES / "pdfs" / f"{doc}.pdf", pdfs / f"{doc}.pdf")
        shutil.copy(FIXTURES / "demo" / f"{doc}.json", cls / f"{doc}.json")
    huge, long = demo(DOCS[0]), demo(DOCS[1])
    huge["segments"][0]["classification_reasoning"] = "x" * BIG
    long["segments"][0]["classification_reasoning"] = "y" * 30_000
    (cls / f"{DOCS[0]}.json").write_text(json.dumps(huge), encoding="utf-8")
    (cls / f"{DOCS[1]}.json").write_text(json.dumps(long), encoding="utf-8")
    out = tmp_path / "out"
    summary = execute(RunOptions(inputs=[str(pdfs)], classifications=str(cls), out_dir=str(out), workers=2))
    assert summary["processed"] == 3
    assert summary["errors_by_reason"] == {"classification_too_large": 2}
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    first, second = (store.records.document(doc) for doc in DOCS[:2])
    assert first is not None
    assert second is not None
    assert "3,001,6" in str(first.outcome.escalation_message)
    assert "classification_bytes" in str(first.outcome.escalation_message)
    assert "reasoning_chars" in str(second.outcome.escalation_message)
    with store.read() as conn:
        stored = sum(
            conn.exec_driver_sql(
                f"SELECT coalesce(sum(length(CAST({column} AS TEXT))), 0) FROM {table}"
            ).scalar_one()
            for table, column in (
                ("outcomes", "outcome"),
                ("packets", "payload"),
                ("ground_truth", "payload"),
            )
        )
    assert stored < 1_000_000
    store.dispose()


@pytest.mark.parametrize(
    ("change", "limit"),
    [
        (lambda d: d["segments"].extend([d["segments"][0]] * 5), "[limits] segments"),
        (
            lambda d: d["segments"][0]["types"][0]["evidence"].extend([{"page": 1, "snippet": "s"}] * 9),
            "evidence_items",
        ),
        (
            lambda d: d["segments"][0]["types"][0]["evidence"].append({"page": 1, "snippet": "z" * 200}),
            "evidence_chars",
        ),
    ],
    ids=["segments", "evidence_items", "evidence_chars"],
)
def test_every_limit_comes_from_the_profile(change: Any, limit: str) -> None:
    """Segments, evidence items and evidence text are each refused over the profile's limit, naming it."""
    data = demo(DOCS[0])
    limits = Limits(segments=3, evidence_items=8, evidence_chars=100)
    assert classification_problem(json.dumps(data), limits) is None
    change(data)
    problem = classification_problem(json.dumps(data), limits)
    assert problem is not None
    assert limit in problem
    assert "\n" not in problem


def test_arbiter_verify_refuses_an_oversized_classification() -> None:
    """`arbiter verify` escalates an oversized classification as classification_too_large without checking it."""
    data = demo(DOCS[0])
    data["segments"][0]["classification_reasoning"] = "x" * BIG
    bundle = ingest_pdf(FIXTURES / "pdfs" / f"{DOCS[0]}.pdf", doc_id=DOCS[0])
    outcome = verify_one(bundle, json.dumps(data), profile=load_profile())
    assert outcome.escalation_reason == "classification_too_large"
    assert outcome.attempts == []


def test_the_store_refuses_oversized_notes_answers_and_drafts(store: Store) -> None:
    """Review notes over review_notes_chars, an answer with an over-long reasoning, and an oversized draft are
    refused with TooLarge in one line, and nothing is written."""
    store.records.record(escalated("doc-1"))
    packet = store.queue.claim_next("alice")
    assert packet is not None
    before = row_counts(store)
    noisy = review("alice").model_copy(update={"review_notes": "n" * 10_001})
    with pytest.raises(TooLarge, match="review notes") as refused:
        store.reviews.submit(packet.packet_id, "alice", noisy, CLASSIFICATION, idempotency_key="k1")
    assert "\n" not in str(refused.value)
    answer = {**CLASSIFICATION, "segments": [{"classification_reasoning": "r" * 20_001, "types": []}]}
    with pytest.raises(TooLarge, match="reasoning_chars"):
        store.reviews.submit(packet.packet_id, "alice", review("alice"), answer, idempotency_key="k2")
    with pytest.raises(TooLarge, match="draft"):
        store.drafts.save(packet.packet_id, "alice", {"notes": "d" * 3_000_000})
    assert row_counts(store) == before
    saved = store.reviews.submit(
        packet.packet_id, "alice", review("alice"), CLASSIFICATION, idempotency_key="k3"
    )
    assert saved.doc_id == "doc-1"
