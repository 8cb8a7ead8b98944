"""A grounded-answer run records like a PDF run: the database first (documents, outcomes, escalations queued
as packets that carry the question and chunks, accepts as automatic ground truth of the answer), the same
decisions on SQLite, PostgreSQL and PostgreSQL as the application role, and an unchanged re-run skips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from store_fixtures import pg_app_role_urls_fixture, pg_server_url_fixture, store_fixture  # noqa: F401

from arbiter.contracts import DEFAULT_KIND, GroundTruthSource, PacketKind
from arbiter.demo.grounded.build import demo_items, write_jsonl
from arbiter.kinds import GROUNDED, kind
from arbiter.run.item_batch import run_items, split_item
from arbiter.store import Store
from arbiter.store.models import documents, packets


@pytest.fixture(scope="module", name="items")
def items_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(demo_items(), tmp_path_factory.mktemp("items") / "items.jsonl")


def _decisions(out: Path) -> dict[str, str]:
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8"))["final_decision"]
        for p in (out / "index").glob("*.json")
    }


@pytest.fixture(scope="module", name="sqlite_decisions")
def sqlite_decisions_fixture(items: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("local")
    run_items(kind(GROUNDED), [items], out)
    return _decisions(out)


def test_grounded_decisions_are_the_same_on_every_database(
    store: Store, items: Path, sqlite_decisions: dict[str, str], tmp_path: Path
) -> None:
    """The same items give the same decision per item whatever database records them."""
    summary = run_items(kind(GROUNDED), [items], tmp_path / "out", db=store.url)
    assert summary["documents"] == len(sqlite_decisions) == 45
    assert _decisions(tmp_path / "out") == sqlite_decisions
    with store.read() as conn:
        kinds = conn.execute(sa.select(documents.c.answer_kind).distinct()).scalars().all()
    assert kinds == [GROUNDED]


def test_escalations_become_packets_with_their_context(store: Store, items: Path, tmp_path: Path) -> None:
    """Every escalated item waits in the queue as a packet of the grounded kind holding the answer under
    review and the question and chunks it rests on; nothing else."""
    summary = run_items(kind(GROUNDED), [items], tmp_path / "out", db=store.url)
    with store.read() as conn:
        rows = conn.execute(
            sa.select(packets.c.packet_id, packets.c.answer_kind).where(
                packets.c.kind == PacketKind.ESCALATION.value
            )
        ).all()
    assert len(rows) == summary["escalated"] > 0
    for packet_id, answer_kind in rows:
        assert answer_kind == GROUNDED
        packet = store.queue.get(packet_id)
        assert packet.answer_kind == GROUNDED
        assert packet.context is not None
        assert packet.context["question"]["text"]
        assert packet.context["chunks"]
        assert packet.primary_agent_classification is not None
        assert "statements" in packet.primary_agent_classification
        assert "chunks" not in packet.primary_agent_classification  # the answer alone, not the item
        assert packet.total_pages == len(packet.context["chunks"])


def test_accepts_become_ground_truth_of_the_answer(store: Store, items: Path, tmp_path: Path) -> None:
    """An accepted item's automatic ground truth is the (possibly fixed) answer, marked with its kind."""
    run_items(kind(GROUNDED), [items], tmp_path / "out", db=store.url)
    accepted = [d for d, v in _decisions(tmp_path / "out").items() if v == "AUTO_ACCEPT"]
    assert accepted
    for doc_id in accepted:
        truth = store.ground_truth.latest(doc_id)
        assert truth is not None
        assert truth.answer_kind == GROUNDED
        assert truth.ground_truth_source == GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT
        assert set(truth.ground_truth_classification) >= {"statements", "quotes"}


def test_an_unchanged_rerun_skips_every_item(tmp_path: Path, items: Path) -> None:
    """A second run over the same items decides nothing again and adds no ground-truth version."""
    out = tmp_path / "out"
    first = run_items(kind(GROUNDED), [items], out)
    second = run_items(kind(GROUNDED), [items], out)
    assert first["processed"] == 45
    assert second["skipped_unchanged"] == 45
    assert second["processed"] == 0


def test_a_deleted_mirror_is_rebuilt_on_rerun(tmp_path: Path, items: Path) -> None:
    """A re-run rebuilds an item's deleted files (bundle of chunks included) from the database, deciding
    nothing again."""
    out = tmp_path / "out"
    run_items(kind(GROUNDED), [items], out)
    victim = next((out / "index").glob("*.json")).stem
    (out / "bundles" / f"{victim}.json").unlink()
    (out / "agent_outputs" / victim / "arbiter_decision.json").unlink()
    second = run_items(kind(GROUNDED), [items], out)
    assert second["skipped_unchanged"] == 45
    assert (out / "bundles" / f"{victim}.json").is_file()
    assert (out / "agent_outputs" / victim / "arbiter_decision.json").is_file()


@pytest.mark.parametrize(
    ("data", "answer", "context_keys"),
    [
        ({"item_id": "a", "question": {"text": "q"}, "chunks": [], "answer": {"statements": []}}, True, 3),
        ({"item_id": "a", "answer": "not an object"}, False, 1),
        (None, False, 0),
        ([], False, 0),
    ],
)
def test_split_item(data: Any, answer: bool, context_keys: int) -> None:
    """An item splits into its answer (an object, else None) and its context keys (None when there are none)."""
    got_answer, context = split_item(data)
    assert (got_answer is not None) == answer
    assert len(context or {}) == context_keys


def test_pdf_rows_keep_the_default_kind() -> None:
    """Rows written without a kind (every row before migration 0013) are medical classifications."""
    assert DEFAULT_KIND == "medical-classification"
    assert documents.c.answer_kind.server_default.arg == DEFAULT_KIND
