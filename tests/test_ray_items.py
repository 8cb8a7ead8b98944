"""Issue 30: `arbiter run --kind grounded-answer --engine ray` on a real two-node Ray cluster (`ray start` on
127.0.0.2 / 127.0.0.3 with token auth, tests/test_ray_cli_cluster.py's two_nodes) and PostgreSQL: the same
per-item decisions as the local engine on the demo corpus, every item recorded through the database sink by the
Ray workers, and a second run skips every unchanged item. One Ray run (and its re-run) and one local run, for
the module; an item no task finished is recorded by the driver as a plain-spoken escalation."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import sqlalchemy as sa
from store_fixtures import create_pg_database, drop_pg_database

from arbiter.contracts import PacketKind
from arbiter.demo.grounded.build import demo_items, write_jsonl
from arbiter.kinds import GROUNDED, kind
from arbiter.record.sink import DatabaseResultStore
from arbiter.run.batch import InputDoc
from arbiter.run.item_batch import ItemPipeline, run_items
from arbiter.run.items import RawItem, read_items
from arbiter.run.ray_items import TASK_BYTES, TASK_ITEMS, ItemSpec, RayItemRunner
from arbiter.store import Store
from arbiter.store.models import packets
from testing.recorded import decisions
from tests.test_ray_cli_cluster import RAY, two_nodes

COUNTED = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")


def queued(url: str) -> int:
    store = Store(url)
    try:
        with store.read() as conn:
            query = sa.select(sa.func.count()).where(packets.c.kind == PacketKind.ESCALATION.value)
            return int(conn.execute(query).scalar_one())
    finally:
        store.dispose()


@pytest.fixture(scope="module", name="runs")
def runs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The demo items run twice through the CLI on two Ray nodes into one PostgreSQL database, and once on
    the local engine into another."""
    assert RAY.exists(), "needs the `ray` command: run `make test` (it installs arbiter[ray])"
    tmp = tmp_path_factory.mktemp("ray-items")
    items = write_jsonl(demo_items(), tmp / "items.jsonl")
    ray_db, local_db = (
        create_pg_database(prefix="arbiter_rayitems"),
        create_pg_database(prefix="arbiter_items"),
    )
    root = Path(tempfile.mkdtemp(prefix="arb-ri-", dir="/tmp"))  # short: Ray's socket paths live in it
    try:
        with two_nodes(root) as (address, env):
            command = [
                sys.executable, "-m", "arbiter.cli.main", "run", str(items), "--kind", GROUNDED, "--out",
                str(tmp / "ray"), "--engine", "ray", "--ray-address", address, "--db", ray_db, "--quiet",
            ]  # fmt: skip
            summaries = []
            for _ in range(2):
                done = subprocess.run(
                    command, capture_output=True, text=True, env=env, cwd=tmp, timeout=600, check=False
                )
                assert done.returncode == 0, done.stderr[-2000:]
                newest = max((tmp / "ray" / "runs").glob("*/summary.json"), key=lambda p: p.stat().st_mtime)
                summaries.append(json.loads(newest.read_text()))
        local = run_items(kind(GROUNDED), [items], tmp / "local", db=local_db, workers=2)
        yield {
            "tmp": tmp,
            "ray_db": ray_db,
            "local_db": local_db,
            "first": summaries[0],
            "second": summaries[1],
            "local": local,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
        drop_pg_database(ray_db)
        drop_pg_database(local_db)


def test_ray_decides_every_item_as_the_local_engine(runs: dict[str, Any]) -> None:
    """Across two nodes, on PostgreSQL: the local engine's decision for every item (attempts, issue codes,
    fixed answer), the same summary, the same escalations queued, and the mirrors written by the workers."""
    first, local = runs["first"], runs["local"]
    assert first["engine"]["name"] == "ray"
    assert first["engine"]["nodes"] == 2
    assert first["kind"] == GROUNDED
    assert first["failed_on_every_try"] == 0
    assert {k: first[k] for k in COUNTED} == {k: local[k] for k in COUNTED}
    assert first["documents"] == 45
    assert first["escalated"] > 0
    assert first["errors"] == 0
    for key in ("escalated_by_reason", "blind_samples", "accepted_by_semantic_checks"):
        assert first[key] == local[key], key
    got, want = decisions(runs["ray_db"]), decisions(runs["local_db"])
    assert len(want) == 45
    assert got == want
    assert queued(runs["ray_db"]) == queued(runs["local_db"]) == first["escalated"]
    assert len(list((runs["tmp"] / "ray" / "index").glob("*.json"))) == 45


def test_a_second_ray_run_skips_every_unchanged_item(runs: dict[str, Any]) -> None:
    """The same items again through Ray: nothing decided again, the summary counts the recorded decisions."""
    second, first = runs["second"], runs["first"]
    assert (second["skipped_unchanged"], second["processed"]) == (45, 0)
    assert {k: second[k] for k in ("escalated", "accepted_first_time", "accepted_after_fixes")} == {
        k: first[k] for k in ("escalated", "accepted_first_time", "accepted_after_fixes")
    }


def test_an_item_no_task_finished_is_escalated_in_plain_words(tmp_path: Path) -> None:
    """When every try of an item's task is lost (its node died), the driver records the item as an internal
    error: an escalation queued for a person, its message naming what happened; the next run redoes it."""
    items = read_items([write_jsonl(demo_items()[:2], tmp_path / "items.jsonl")])
    store = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
    store.migrate()
    try:
        sink = DatabaseResultStore(store, tmp_path / "out")
        spec = kind(GROUNDED)
        pipeline = ItemPipeline(spec, spec.load_profile(None), sink, {i.item_id: i for i in items})
        run_spec = ItemSpec(
            run_id=pipeline.run_id, db_url=store.url, out_dir=str(tmp_path / "out"), kind=GROUNDED
        )
        runner = RayItemRunner(pipeline, run_spec, items, workers=1, force=False)
        lost = items[0]
        result = runner._lost(InputDoc(lost.item_id, Path(lost.origin)), "WorkerCrashedError on a Ray worker")
        assert (result.final_decision, result.error, runner.lost) == ("ESCALATE_TO_SME", "internal_error", 1)
        record = store.records.document(lost.item_id)
        assert record is not None
        assert record.packet is not None
        assert record.outcome.escalation_message == (
            "Arbiter failed on this item (WorkerCrashedError on a Ray worker); it needs a person to review it."
        )
        assert sink.completed_key(lost.item_id) is None  # redone by the next run
    finally:
        store.dispose()


def test_items_go_to_tasks_in_bounded_batches() -> None:
    """A task holds at most TASK_ITEMS items and about TASK_BYTES of their text (a larger item alone), in
    order, every item once."""
    raws = [
        RawItem(f"i{n}", json.dumps({"item_id": f"i{n}", "pad": "x" * 100}), f"in.jsonl:{n}")
        for n in range(300)
    ]
    raws[100] = RawItem("big", "x" * (TASK_BYTES + 1), "in.jsonl:100")
    raws[200] = RawItem("half", "x" * (TASK_BYTES // 2), "in.jsonl:200")
    spec = kind(GROUNDED)
    pipeline = ItemPipeline(spec, spec.load_profile(None), cast(Any, None), {})
    runner = RayItemRunner(pipeline, cast(Any, None), raws, workers=1, force=False)
    plan = list(runner._plan([InputDoc(i.item_id, Path(i.origin)) for i in raws]))
    assert [d.doc_id for batch in plan for d in batch] == [i.item_id for i in raws]
    assert max(len(batch) for batch in plan) == TASK_ITEMS
    assert ["big"] in [[d.doc_id for d in batch] for batch in plan]
    for batch in plan:
        if len(batch) > 1:
            assert (
                sum(max(TASK_BYTES // TASK_ITEMS, len(runner.items[d.doc_id].raw)) for d in batch)
                <= TASK_BYTES
            )
