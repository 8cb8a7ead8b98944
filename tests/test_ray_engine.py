"""`arbiter run --engine ray` on a real two-node Ray cluster on this machine (every process on 127.0.0.1,
started once for the module and stopped by it): the same decisions as the local engine, every document
recorded exactly once when a node dies mid-run or the driver is interrupted, one LLM budget for the cluster."""

from __future__ import annotations

import os

# Before Ray is imported anywhere: every node on 127.0.0.1, no usage report (see ENGINEERING_NOTES, Ray).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
import sqlalchemy as sa
from ray.cluster_utils import Cluster
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from s3_helpers import s3_server
from store_fixtures import pg_server_url_fixture, reset  # noqa: F401  (fixture)

from arbiter.errors import ConfigError
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.port import BudgetExhausted
from arbiter.record.mirrors import FileStore
from arbiter.run.batch import discover
from arbiter.run.compose import build_engine
from arbiter.run.job import RunOptions, execute
from arbiter.run.ray_engine import execute_on_ray
from arbiter.run.ray_limits import share_limits, start_limits
from arbiter.run.ray_worker import WorkerSpec, process_document
from arbiter.store import Store, pooling
from testing.pgbouncer import ServerConnections, pgbouncer
from testing.recorded import decisions
from tests.conftest import FIXTURES, REPO
from tests.llm_fakes import FakeBackend

MB = 2**20
NODE = {"num_cpus": 1, "object_store_memory": 100 * MB}
# Node deaths noticed within a second or two, not the default tens of seconds.
FAST_HEALTH = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 200,
    "health_check_failure_threshold": 3,
}
INPUTS = [FIXTURES / "pdfs", FIXTURES / "damaged"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CLIENT_PORT = free_port()  # the head's Ray Client server (ray://127.0.0.1:CLIENT_PORT)


@pytest.fixture(scope="module", name="cluster")
def cluster_fixture() -> Iterator[Cluster]:
    """A head and a worker node, one CPU each; Ray workers import this checkout (and these tests), and reach
    the S3 server started first (its endpoint is in the environment the nodes inherit)."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), str(REPO / "tests"), saved) if p)
    # Runs into a bucket keep their lock and each node's bundle cache in a local work folder: a temporary
    # one, not the user's ~/.cache (the nodes inherit it).
    work = tempfile.TemporaryDirectory(prefix="arbiter-ray-work-")
    saved_work = os.environ.get("ARBITER_WORK_DIR")
    os.environ["ARBITER_WORK_DIR"] = work.name
    storage = s3_server("night")
    storage.__enter__()
    with warnings.catch_warnings():
        # Ray leaves its client server's log files open (a ResourceWarning that is not ours to fix).
        warnings.simplefilter("ignore", ResourceWarning)
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                **NODE,
                "include_dashboard": False,
                "ray_client_server_port": CLIENT_PORT,
                "_system_config": FAST_HEALTH,
            },
        )
    try:
        cluster.add_node(**NODE)
        ray.init(address=cluster.address, logging_level="WARNING")
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        storage.__exit__(None, None, None)
        if saved_work is None:
            os.environ.pop("ARBITER_WORK_DIR", None)
        else:
            os.environ["ARBITER_WORK_DIR"] = saved_work
        work.cleanup()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def input_ids() -> list[str]:
    return [p.stem for folder in INPUTS for p in folder.glob("*.pdf")]


def test_ray_engine_decides_the_fixtures_as_the_local_engine(cluster: Cluster, tmp_path: Path) -> None:
    """The fixtures run as Ray tasks across two nodes get exactly the local engine's decisions (and read types)
    and summary, and the progress callback hears of every document once."""
    common = {"inputs": [str(p) for p in INPUTS], "classifications": str(FIXTURES / "demo"), "workers": 2}
    local = execute(RunOptions(out_dir=str(tmp_path / "local"), **common))  # type: ignore[arg-type]
    ticks: list[tuple[int, str]] = []

    def progress(total: int) -> Any:
        return lambda result: ticks.append((total, result.doc_id))

    on_ray = execute(
        RunOptions(out_dir=str(tmp_path / "ray"), engine="ray", ray_address=cluster.address, **common),  # type: ignore[arg-type]
        progress=progress,
    )
    assert sorted(ticks) == sorted((35, doc_id) for doc_id in input_ids())  # the bar moves per document
    counted = ("documents", "processed", "accepted_first_time", "accepted_after_fixes", "escalated", "errors")
    assert {k: on_ray[k] for k in counted} == {k: local[k] for k in counted}
    for key in ("escalated_by_reason", "errors_by_reason", "blind_samples", "accepted_by_semantic_checks"):
        assert on_ray[key] == local[key], key
    assert on_ray["engine"]["nodes"] == 2
    # The drift alarms: replayed from the database on Ray (the driver decides nothing), as the local monitor saw.
    assert on_ray["drift"] == local["drift"], on_ray["drift"]
    assert on_ray["drift"]["documents"] == 31
    got = decisions(f"sqlite:///{tmp_path / 'ray' / 'arbiter.db'}")
    want = decisions(f"sqlite:///{tmp_path / 'local' / 'arbiter.db'}")
    assert len(want) == 35
    assert got == want
    assert any(d[-1] for d in got.values())  # the read types (migration 0015), the same on both engines
    again = execute(
        RunOptions(out_dir=str(tmp_path / "ray"), engine="ray", ray_address=cluster.address, **common)  # type: ignore[arg-type]
    )
    assert (again["skipped_unchanged"], again["processed"]) == (35, 0)


def test_ray_engine_with_a_model_spends_as_the_local_engine(cluster: Cluster, tmp_path: Path) -> None:
    """With replayed model answers, the Ray run decides as the local one and its summary counts the same
    requests, and their tokens, summed from every node, through the run's one limiter actor."""
    pdfs = tmp_path / "in"
    pdfs.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:8]:
        shutil.copy(pdf, pdfs / pdf.name)
    common = {
        "inputs": [str(pdfs)],
        "classifications": str(FIXTURES / "demo"),
        "workers": 2,
        "llm": {"backend": "replay"},
    }
    local = execute(RunOptions(out_dir=str(tmp_path / "local"), **common))  # type: ignore[arg-type]
    on_ray = execute(
        RunOptions(out_dir=str(tmp_path / "ray"), engine="ray", ray_address=cluster.address, **common)  # type: ignore[arg-type]
    )

    def asked(summary: dict[str, Any]) -> int:
        # Two documents may send the same request at once on either engine: a cache hit or a second call.
        return int(summary["llm"]["calls"] + summary["llm"]["cache_hits"])

    assert local["llm"]["calls"] > 0
    assert asked(on_ray) == asked(local)
    assert on_ray["llm"]["errors"] == local["llm"]["errors"] == {}
    assert on_ray["llm"]["input_tokens"] > 0  # the nodes' tokens reach the driver's summary
    assert on_ray["accepted_by_semantic_checks"] == local["accepted_by_semantic_checks"]
    got = decisions(f"sqlite:///{tmp_path / 'ray' / 'arbiter.db'}")
    assert got == decisions(f"sqlite:///{tmp_path / 'local' / 'arbiter.db'}")


def gated(spec: WorkerSpec, pdf: str, doc_id: str, force: bool) -> tuple[Any, dict[str, Any]]:
    """The real task, held at a gate (before or after its commit) until the test opens it; says which node
    it runs on first. Runs on a Ray worker."""
    gate = Path(spec.out_dir) / "gate"
    node = ray.get_runtime_context().get_node_id()
    marker = gate / "started" / f"{doc_id}.{os.getpid()}"
    marker.write_text(node)
    if (gate / "after_commit").exists():
        result = process_document(spec, pdf, doc_id, force)
        (gate / "committed" / f"{doc_id}.{os.getpid()}").write_text(node)
    while not (gate / "open").exists():
        time.sleep(0.05)
    return result if (gate / "after_commit").exists() else process_document(spec, pdf, doc_id, force)


def wait_for(condition: Any, what: str, limit_s: float = 120.0) -> Any:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.mark.parametrize("when", ["before_commit", "after_commit"])
def test_a_node_killed_mid_run_leaves_every_document_recorded_once(
    cluster: Cluster, tmp_path: Path, pg_server_url: str, when: str
) -> None:
    """A node removed while its task holds a document (not yet recorded, or recorded but its files lost) has
    the document retried on another node: every document recorded exactly once, on PostgreSQL, its files there."""
    store = Store(pg_server_url)
    reset(store)
    store.dispose()
    out = tmp_path / "out"
    gate = out / "gate"
    for sub in ("started", "committed"):
        (gate / sub).mkdir(parents=True)
    if when == "after_commit":
        (gate / "after_commit").touch()
    victim = cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    victim_id = victim.node_id
    options = RunOptions(
        inputs=[str(FIXTURES / "pdfs")],
        classifications=str(FIXTURES / "demo"),
        out_dir=str(out),
        db=pg_server_url,
        workers=3,
        engine="ray",
        ray_address=cluster.address,
    )
    engine = build_engine(classifications=FIXTURES / "demo")
    docs = discover([FIXTURES / "pdfs"])[:8]
    outcome: dict[str, Any] = {}

    def drive() -> None:
        try:
            outcome["summary"] = execute_on_ray(
                options, engine, docs, pg_server_url, password=None, progress=None, task=gated
            )
        except BaseException as exc:
            outcome["error"] = exc

    driver = threading.Thread(target=drive)
    driver.start()
    folder = "committed" if when == "after_commit" else "started"
    held = wait_for(
        lambda: [p for p in (gate / folder).iterdir() if p.read_text() == victim_id],
        f"a document {when.replace('_', ' ')} on the victim node",
    )
    cluster.remove_node(victim, allow_graceful=False)
    if when == "after_commit":  # the node died after the commit, before its files (issue 32.4)
        lost = held[0].name.split(".")[0]
        (out / "bundles" / f"{lost}.json").unlink()
        shutil.rmtree(out / "agent_outputs" / lost)
        (out / "index" / f"{lost}.json").unlink()
    (gate / "open").touch()
    driver.join(timeout=300)
    assert not driver.is_alive()
    assert "error" not in outcome, outcome.get("error")
    summary = outcome["summary"]
    assert summary["processed"] == 8
    assert summary["errors"] == 0
    db = sa.create_engine(pg_server_url)
    try:
        with db.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT doc_id, count(*) FROM documents WHERE run_id = :r GROUP BY doc_id"),
                {"r": summary["run_id"]},
            ).all()
            audits = conn.execute(
                sa.text("SELECT count(*) FROM audit_log WHERE action = 'document.record'")
            ).scalar()
    finally:
        db.dispose()
    assert dict(rows) == {d.doc_id: 1 for d in docs}
    assert audits == 8
    files = FileStore(out)
    for doc in docs:  # every document's files beside its rows
        entry = files.index_entry(doc.doc_id)
        assert entry is not None, doc.doc_id
        assert f"bundles/{doc.doc_id}.json" in entry["files"]
        assert files.present(entry["files"]), doc.doc_id
    tries = Counter(p.name.split(".")[0] for p in (gate / "started").iterdir())
    assert max(tries.values()) == 2  # the victim's document ran again on another node


def crashing(spec: WorkerSpec, pdf: str, doc_id: str, force: bool) -> tuple[Any, dict[str, Any]]:
    """The real task, except that the worker process dies on the first document, on every try."""
    if doc_id == sorted(p.stem for p in (FIXTURES / "pdfs").glob("*.pdf"))[0]:
        os._exit(1)
    return process_document(spec, pdf, doc_id, force)


def refusing(spec: WorkerSpec, pdf: str, doc_id: str, force: bool) -> tuple[Any, dict[str, Any]]:
    """A node that cannot build the run: the classifications folder it was given is not there."""
    raise ConfigError(f"--classifications {spec.classifications}x is not a directory.")


def small_run(tmp_path: Path, cluster: Cluster, n: int) -> tuple[RunOptions, Any, list[Any]]:
    options = RunOptions(
        inputs=[str(FIXTURES / "pdfs")],
        classifications=str(FIXTURES / "demo"),
        out_dir=str(tmp_path / "out"),
        workers=2,
        engine="ray",
        ray_address=cluster.address,
    )
    return options, build_engine(classifications=FIXTURES / "demo"), discover([FIXTURES / "pdfs"])[:n]


def test_a_document_that_kills_its_worker_on_every_try_is_recorded_not_lost(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A document whose worker dies on every retry is recorded as an internal error (redone by the next run);
    the others are decided as usual."""
    options, engine, docs = small_run(tmp_path, cluster, 3)
    url = f"sqlite:///{tmp_path / 'out' / 'arbiter.db'}"
    summary = execute_on_ray(options, engine, docs, url, password=None, progress=None, task=crashing)
    assert (summary["processed"], summary["errors"]) == (3, 1)
    assert summary["errors_by_reason"] == {"internal_error": 1}
    assert summary["failed_on_every_try"] == 1
    store = Store(url)
    try:
        assert store.records.completed_key(docs[0].doc_id) is None  # the next run redoes it
        assert all(store.records.completed_key(d.doc_id) for d in docs[1:])
    finally:
        store.dispose()


def test_a_node_that_cannot_build_the_run_stops_it_with_one_message(cluster: Cluster, tmp_path: Path) -> None:
    """A user mistake met on a Ray worker stops the run with that message, not an internal error per document."""
    options, engine, docs = small_run(tmp_path, cluster, 2)
    url = f"sqlite:///{tmp_path / 'out' / 'arbiter.db'}"
    with pytest.raises(ConfigError, match=r"A Ray worker could not run .*is not a directory"):
        execute_on_ray(options, engine, docs, url, password=None, progress=None, task=refusing)


def test_an_interrupted_ray_run_resumes_with_every_document_recorded_once(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Ctrl+C on the driver cancels the tasks in flight; the same command then does only the rest, and no
    document is recorded twice across the two runs."""
    options, engine, docs = small_run(tmp_path, cluster, 8)
    url = f"sqlite:///{tmp_path / 'out' / 'arbiter.db'}"
    seen: list[str] = []

    def stop_after_three(_total: int) -> Any:
        def tick(result: Any) -> None:
            seen.append(result.doc_id)
            if len(seen) == 3:
                raise KeyboardInterrupt

        return tick

    with pytest.raises(KeyboardInterrupt):
        execute_on_ray(options, engine, docs, url, password=None, progress=stop_after_three)
    resumed = execute_on_ray(options, engine, docs, url, password=None, progress=None)
    assert resumed["skipped_unchanged"] >= 3
    assert resumed["skipped_unchanged"] + resumed["processed"] == 8
    store = Store(url)
    try:
        with store.read() as conn:
            rows = conn.execute(sa.text("SELECT doc_id, count(*) FROM documents GROUP BY doc_id")).all()
    finally:
        store.dispose()
    assert dict(rows) == {d.doc_id: 1 for d in docs}


def test_one_run_token_budget_for_the_whole_cluster(cluster: Cluster) -> None:
    """Tasks on two different nodes spend from the one run budget held by the run's actor."""
    settings = LLMSettings(backend="replay", run_token_budget=1000)
    limits = start_limits(LLMClient(FakeBackend(), settings))

    @ray.remote(num_cpus=0)
    def spend(tokens: int) -> str:
        client = LLMClient(FakeBackend(), settings)
        share_limits(client, limits)
        try:
            client.run_budget.reserve(tokens)
        except BudgetExhausted:
            return "refused"
        return "held"

    nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]][:2]
    assert len(nodes) == 2
    answers = [
        ray.get(
            spend.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(400)
        )
        for node in (*nodes, nodes[0])
    ]
    ray.kill(limits)
    assert answers == ["held", "held", "refused"]


def test_cli_through_ray_client_decides_as_the_local_engine(cluster: Cluster, tmp_path: Path) -> None:
    """`arbiter run … --engine ray --ray-address ray://HOST:PORT` from a separate process (Ray Client) runs on
    the cluster and decides the fixtures as the local engine."""
    args = [str(FIXTURES / "pdfs"), "--classifications", str(FIXTURES / "demo"), "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "arbiter.cli.main", "run", *args, "--out", str(tmp_path / "ray")),
            *("--engine", "ray", "--ray-address", f"ray://127.0.0.1:{CLIENT_PORT}"),
        ],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    execute(RunOptions(inputs=args[:1], classifications=args[2], out_dir=str(tmp_path / "local")))
    got = decisions(f"sqlite:///{tmp_path / 'ray' / 'arbiter.db'}")
    assert len(got) == 31
    assert got == decisions(f"sqlite:///{tmp_path / 'local' / 'arbiter.db'}")


def test_ray_engine_writes_to_object_storage_every_node_reaches(cluster: Cluster, tmp_path: Path) -> None:
    """With --out s3://…, the tasks on both nodes put each document's files in the bucket (no shared folder)
    and decide as the local engine into a folder."""
    import fsspec

    common = {"inputs": [str(FIXTURES / "pdfs")], "classifications": str(FIXTURES / "demo"), "workers": 2}
    local = execute(RunOptions(out_dir=str(tmp_path / "local"), **common))  # type: ignore[arg-type]
    url = f"sqlite:///{tmp_path / 'ray.db'}"
    on_ray = execute(
        RunOptions(out_dir="s3://night/ray", db=url, engine="ray", ray_address=cluster.address, **common)  # type: ignore[arg-type]
    )
    assert on_ray["engine"]["nodes"] == 2
    assert decisions(url) == decisions(f"sqlite:///{tmp_path / 'local' / 'arbiter.db'}")
    s3 = fsspec.filesystem("s3", skip_instance_cache=True)
    assert len(s3.find("night/ray/index")) == local["documents"]
    assert len(s3.find("night/ray/bundles")) == len(list((tmp_path / "local" / "bundles").glob("*.json")))
    assert s3.exists(f"night/ray/runs/{on_ray['run_id']}/summary.json")


@pytest.mark.usefixtures("pgbouncer_present")
def test_a_ray_run_through_pgbouncer_with_more_workers_than_server_connections(
    cluster: Cluster, tmp_path: Path, pg_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32.3: four workers on the two nodes, through PgBouncer in transaction pooling mode capped at two
    server connections, under a cluster budget: every document decided, never more than two server
    connections (the workers get the pooling mode and their share of the budget from the driver)."""
    store = Store(pg_server_url)
    reset(store)
    store.dispose()
    pdfs = tmp_path / "in"
    pdfs.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:8]:
        shutil.copy(pdf, pdfs / pdf.name)
    monkeypatch.setenv(pooling.ENV_POOLING, "transaction")
    monkeypatch.setenv(pooling.ENV_SESSION_URL, pg_server_url)
    monkeypatch.setenv(pooling.ENV_POOL, "2")
    monkeypatch.setenv(pooling.ENV_BUDGET, "11")  # driver 2 + lock 1, then 2 for each of the 4 workers
    with pgbouncer(pg_server_url, server_connections=2) as url, ServerConnections(pg_server_url) as seen:
        summary = execute(
            RunOptions(
                inputs=[str(pdfs)],
                classifications=str(FIXTURES / "demo"),
                out_dir=str(tmp_path / "out"),
                db=url,
                workers=4,
                engine="ray",
                ray_address=cluster.address,
            )
        )
    assert (summary["processed"], summary["errors"]) == (8, 0)
    assert 1 <= seen.peak <= 2
