"""Drift alarms on the type mix (record/drift.py TYPE_MIX): the type the content check's page reader reads each
document as (verifiers/v2_reader.py `read_as`), stored as `documents.read_type` (migration 0015), followed per
producer and type by the monitor, the run's seeding and the metrics' replay."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_fixtures import T0, accepted, create_pg_database, drop_pg_database, escalated

from arbiter.contracts.sampling_profile import DriftPolicy
from arbiter.record.drift import ESCALATION, TYPE_MIX, DriftMonitor, alarm_line
from arbiter.store import Store
from bench import drift as bench
from tests.conftest import FIXTURES


def _types(monitor: DriftMonitor, shares: dict[str, int], producer: str = "p", times: int = 1) -> None:
    """Feed the monitor `times` rounds of documents of `producer`: `shares[t]` read as t in each round."""
    for _ in range(times):
        for doc_type, n in shares.items():
            for _ in range(n):
                monitor.observe(producer, escalated=False, risk=0.01, read_type=doc_type)


def _read_types(store: Store) -> dict[str, str | None]:
    """Each stored document's read type, by doc_id."""
    with store.read() as conn:
        rows = conn.execute(sa.text("SELECT doc_id, read_type FROM documents")).all()
    return {str(row[0]): row[1] for row in rows}


def _seeded(history: int = 1_000) -> DriftMonitor:
    """A monitor whose producer p read 6 % GENOMIC_REPORT and 94 % LAB_REPORT in `history` earlier documents."""
    monitor = DriftMonitor(DriftPolicy())
    genomic = history * 6 // 100
    monitor.seed(
        {
            ("p", ESCALATION): (history, history // 10),
            ("p", TYPE_MIX, "GENOMIC_REPORT"): (history, genomic),
            ("p", TYPE_MIX, "LAB_REPORT"): (history, history - genomic),
        }
    )
    return monitor


@pytest.mark.parametrize(
    ("genomic_per_50", "alarmed"),
    [
        (15, {("p", TYPE_MIX, "GENOMIC_REPORT")}),  # 30 %: five times its 6 %
        (3, set()),  # its usual 6 %
    ],
)
def test_monitor_alarms_on_a_planted_shift_and_not_on_a_stable_mix(
    genomic_per_50: int, alarmed: set[tuple[str, str, str]]
) -> None:
    """A producer whose documents read as GENOMIC_REPORT at 30 % instead of its 6 % raises a type-mix alarm naming
    it and the type, and raises its audits; the same producer at its usual share raises none."""
    monitor = _seeded()
    _types(monitor, {"GENOMIC_REPORT": genomic_per_50, "LAB_REPORT": 50 - genomic_per_50}, times=4)
    assert {(a.stratum, a.test, a.read_type) for a in monitor.alarms()} == alarmed
    assert monitor.boost("p") == (3.0 if alarmed else 1.0)


def test_type_mix_alarm_line_names_the_producer_and_the_type() -> None:
    """The plain sentence of a type-mix alarm names the producer, the type, its share and the baseline."""
    monitor = _seeded()
    _types(monitor, {"GENOMIC_REPORT": 15, "LAB_REPORT": 35}, times=4)
    [alarm] = monitor.alarms()
    line = alarm_line(alarm)
    assert line.startswith("Drift alarm: producer p's share of documents read as GENOMIC_REPORT rose to ")
    assert "(baseline 7%)" in line
    assert line.endswith("(standing: its audits are raised).")
    assert monitor.summary()["standing"] == ["p"]
    assert monitor.summary()["alarms"][0]["read_type"] == "GENOMIC_REPORT"


@pytest.mark.parametrize(
    ("alarm", "sentence"),
    [
        (
            {"test": "escalation_rate", "rate": 0.4, "baseline": 0.1},
            "Drift alarm: producer X's escalation rate rose to 40% (baseline 10%) by document 412 in run r2, "
            "after 30 of its documents (settled since).",
        ),
        (
            {"test": "risk_mix", "rate": 0.5, "baseline": 0.12},
            "Drift alarm: producer X's share of high-risk accepts rose to 50% (baseline 12%) by document 412 "
            "in run r2, after 30 of its documents (settled since).",
        ),
        (
            {"test": "type_mix", "rate": 0.31, "baseline": 0.06, "read_type": "GENOMIC_REPORT"},
            "Drift alarm: producer X's share of documents read as GENOMIC_REPORT rose to 31% (baseline 6%) by "
            "document 412 in run r2, after 30 of its documents (settled since).",
        ),
    ],
)
def test_alarm_line_of_each_test(alarm: dict[str, object], sentence: str) -> None:
    """Each test's alarm reads as one plain sentence, the same in the run summary and `arbiter metrics`."""
    common = {"stratum": "X", "raised_at": 412, "run_id": "r2", "stratum_documents": 30, "standing": False}
    assert alarm_line({**common, **alarm}) == sentence


def test_documents_without_a_read_type_are_left_out_of_the_type_mix() -> None:
    """A document with no read type (recorded before 0015, or no page read as any type) counts for the
    escalation rate only; with `type_mix = false` no document counts for the type mix."""
    monitor = DriftMonitor(DriftPolicy())
    monitor.observe("p", escalated=True, read_type=None)
    off = DriftMonitor(DriftPolicy(type_mix=False))
    off.observe("p", escalated=True, read_type="LAB_REPORT")
    for m in (monitor, off):
        assert {k[1] for k in m._charts} == {ESCALATION}


def test_a_type_read_for_the_first_time_counts_the_documents_before_it() -> None:
    """A producer's type charts share one count of documents read: a type first read at the 11th document has
    10 non-events before it, in this run, in the earlier runs' history and in the pooled counts."""
    monitor = DriftMonitor(DriftPolicy())
    monitor.seed({("q", TYPE_MIX, "LAB_REPORT"): (40, 40)})
    _types(monitor, {"LAB_REPORT": 10})
    _types(monitor, {"GENOMIC_REPORT": 1})
    chart = monitor._charts[("p", TYPE_MIX, "GENOMIC_REPORT")].seen
    assert (chart.n, chart.events) == (11, 1)
    assert monitor._history[("q", TYPE_MIX, "GENOMIC_REPORT")].n == 40
    pooled = monitor._pooled[(TYPE_MIX, "GENOMIC_REPORT")]
    assert (pooled.n, pooled.events) == (51, 1)


def test_seeding_fills_the_types_a_producer_never_read() -> None:
    """Seeded history names only the types a producer was read as; the others count 0 of its documents read."""
    monitor = DriftMonitor(DriftPolicy())
    monitor.seed({("p", TYPE_MIX, "A"): (100, 100), ("q", TYPE_MIX, "B"): (30, 30)})
    got = {k: (c.n, c.events) for k, c in monitor._history.items()}
    assert got == {
        ("p", TYPE_MIX, "A"): (100, 100),
        ("p", TYPE_MIX, "B"): (100, 0),
        ("q", TYPE_MIX, "A"): (30, 0),
        ("q", TYPE_MIX, "B"): (30, 30),
    }
    assert monitor._pooled[(TYPE_MIX, "A")].n == monitor._pooled[(TYPE_MIX, "B")].n == 130


def test_type_mix_threshold_is_raised_by_the_log_of_the_types_followed() -> None:
    """A producer with a track record alarms at `threshold` + ln(k) on the type mix (k types followed), at
    `threshold` on its escalation rate."""
    monitor = _seeded()
    policy = monitor.policy
    assert monitor._threshold(("p", ESCALATION)) == policy.threshold
    assert monitor._threshold(("p", TYPE_MIX, "LAB_REPORT")) == pytest.approx(policy.threshold + math.log(2))


def test_bench_planted_type_shift_is_named_within_500_documents() -> None:
    """bench/drift.py: a known producer's GENOMIC_REPORT share rising from 6 % to 30 % from a run's first
    document is named (producer and type) within 500 documents in at least 95 of 100 seeded runs."""
    delays = [bench.type_delay(bench.simulate(s, 500, shifted=False, type_shift=True)) for s in range(100)]
    assert sum(d is not None for d in delays) >= 95


@pytest.mark.parametrize("history", [1_000, 0])
def test_bench_unshifted_runs_raise_at_most_one_type_mix_alarm_in_100(history: int) -> None:
    """100 seeded unshifted runs of 500 documents raise a type-mix alarm in at most one of them, with the
    producers' history and in a database's first run."""
    runs = [bench.simulate(s, 500, shifted=False, history=history) for s in range(100)]
    assert sum(bench.type_alarmed(m) for m in runs) <= 1


@pytest.mark.parametrize(
    ("doc_id", "reader", "lexicons"),
    [
        ("gen-foundation-01", "GENOMIC_REPORT", "GENOMIC_REPORT"),
        ("lab-quest-01", "LAB_REPORT", "LAB_REPORT"),
        ("admin-faxcover-01", "ADMINISTRATIVE", "ADMINISTRATIVE"),  # lexicons: no page clear, its one page
        ("path-lung-01", "PATHOLOGY_REPORT", "PATHOLOGY_REPORT"),
        ("packet-01", "GENOMIC_REPORT", "GENOMIC_REPORT"),  # 3 genomic pages, 2 administrative
        # 3 clinical-note pages, 2 pathology, 1 administrative; to the lexicons 2 clear pathology pages, 1 note
        ("packet-03", "CLINICAL_NOTE", "PATHOLOGY_REPORT"),
        ("packet-07-scanned", "PATHOLOGY_REPORT", "PATHOLOGY_REPORT"),  # two pages without text
    ],
)
def test_read_as_is_the_type_most_pages_read_as(doc_id: str, reader: str, lexicons: str) -> None:
    """The read type of a fixture is the type most of its pages read as to the profile's page reader, or,
    without one, the type most of its clearly scored pages read as to the lexicons."""
    from arbiter.contracts import DocumentBundle
    from arbiter.contracts.profile import load_profile
    from arbiter.ingest import ingest_pdf
    from arbiter.verifiers.v2_reader import read_as

    profile = load_profile()
    bundle = ingest_pdf(FIXTURES / "pdfs" / f"{doc_id}.pdf", doc_id=doc_id)
    assert isinstance(bundle, DocumentBundle)
    assert read_as(bundle, profile) == reader
    no_reader = profile.model_copy(update={"content": profile.content.model_copy(update={"reader": None})})
    assert read_as(bundle, no_reader) == lexicons


@pytest.mark.parametrize("in_workers", [True, False])
def test_a_run_records_the_read_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_workers: bool
) -> None:
    """`arbiter run` stores each decided document's read type, the same whether the ingestion workers or the
    parent check it (the Ray engine runs the same Pipeline: tests/test_ray_engine.py compares records)."""
    from arbiter.run import job as run_job
    from arbiter.run.job import RunOptions, execute

    if not in_workers:
        monkeypatch.setattr(run_job, "worker_job", lambda *args, **kwargs: None)
    docs = {
        "lab-quest-01": "LAB_REPORT",
        "gen-foundation-01": "GENOMIC_REPORT",
        "admin-faxcover-01": "ADMINISTRATIVE",
    }
    inputs = [str(FIXTURES / "pdfs" / f"{d}.pdf") for d in docs]
    out = tmp_path / "out"
    summary = execute(
        RunOptions(inputs=inputs, classifications=str(FIXTURES / "demo"), out_dir=str(out), workers=2)
    )
    assert summary["processed"] == 3
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    stored = _read_types(store)
    records = {d: store.records.document(d) for d in docs}
    store.dispose()
    assert stored == docs
    assert {d: r.read_type for d, r in records.items() if r is not None} == docs


def test_drift_history_counts_the_types_read(tmp_path: Path) -> None:
    """The database's drift history holds, per producer and type read, its documents read and those read as
    the type; documents without a read type, errors and unnamed producers are left out."""
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    rows = [
        ("d1", "m", "LAB_REPORT", None),
        ("d2", "m", "LAB_REPORT", None),
        ("d3", "m", "GENOMIC_REPORT", None),
        ("d4", "m", None, None),
        ("d5", "m", "GENOMIC_REPORT", "pdf_encrypted"),
        ("d6", None, "LAB_REPORT", None),
    ]
    for doc_id, producer, read_type, error in rows:
        record = dataclasses.replace(
            accepted(doc_id, "r1"), producer=producer, read_type=read_type, error=error
        )
        store.records.record(record, now=T0)
    history = store.records.drift_history(0.1)
    store.dispose()
    assert {k: v for k, v in history.items() if k[1] == TYPE_MIX} == {
        ("m", TYPE_MIX, "LAB_REPORT"): (3, 2),
        ("m", TYPE_MIX, "GENOMIC_REPORT"): (3, 1),
    }


def test_metrics_replay_names_the_type_that_rose(tmp_path: Path) -> None:
    """`arbiter metrics` reads each document's read type back and raises a type-mix alarm naming the producer
    and the type whose share rose in a later run; documents without a read type are left out of it."""
    from arbiter.metrics.drift import alarms

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    store.migrate()
    for i in range(200):  # run 1: every tenth document reads as a genomic report; 40 recorded before 0015
        read = None if i < 40 else ("GENOMIC_REPORT" if i % 10 == 0 else "LAB_REPORT")
        record = accepted(f"d{i}", "run-1") if i % 10 else escalated(f"d{i}", "run-1")
        store.records.record(dataclasses.replace(record, producer="m", risk=0.01, read_type=read), now=T0)
    for i in range(60):  # run 2: half read as genomic reports, the escalation rate unchanged
        read = "GENOMIC_REPORT" if i % 2 else "LAB_REPORT"
        record = accepted(f"e{i}", "run-2") if i % 10 else escalated(f"e{i}", "run-2")
        store.records.record(dataclasses.replace(record, producer="m", risk=0.01, read_type=read), now=T0)
    with store.read() as conn:
        found = alarms(conn)
    store.dispose()
    assert [(a.stratum, a.test, a.read_type, a.run_id, a.standing) for a in found] == [
        ("m", TYPE_MIX, "GENOMIC_REPORT", "run-2", True)
    ]
    assert "share of documents read as GENOMIC_REPORT" in alarm_line(found[0].model_dump())


@pytest.fixture(params=["sqlite", "postgresql"])
def at_0014(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A database of each kind migrated to 0014, before documents kept their read type."""
    url = f"sqlite:///{tmp_path / 'm.db'}" if request.param == "sqlite" else create_pg_database()
    store = Store(url)
    store.migrate("0014")
    yield store
    store.dispose()
    if request.param == "postgresql":
        drop_pg_database(url)


def test_migration_0015_upgrades_an_existing_database(at_0014: Store) -> None:
    """A database at 0014 with a recorded document migrates to 0015: the document keeps its row, its read type
    is NULL and it is left out of the type mix; a new record stores its read type; downgrading drops the
    column again."""
    with at_0014.write() as conn:
        conn.execute(sa.text("INSERT INTO runs (run_id, created_at) VALUES ('r0', :t)"), {"t": T0})
        conn.execute(
            sa.text(
                "INSERT INTO documents (doc_id, run_id, skip_key, pdf_path, pdf_sha256, final_decision, "
                "producer, answer_kind, created_at) VALUES ('old', 'r0', 'k', 'old.pdf', '', 'AUTO_ACCEPT', "
                "'m', 'medical-classification', :t)"
            ),
            {"t": T0},
        )
    at_0014.migrate()
    assert at_0014.current_revision() == "0015"
    record = dataclasses.replace(accepted("new", "r1"), producer="m", read_type="LAB_REPORT")
    assert at_0014.records.record(record, now=T0).recorded
    assert _read_types(at_0014) == {"old": None, "new": "LAB_REPORT"}
    history = at_0014.records.drift_history(0.1)
    assert history[("m", ESCALATION)] == (2, 0)
    assert history[("m", TYPE_MIX, "LAB_REPORT")] == (1, 1)
    at_0014.downgrade("0014")
    columns = {c["name"] for c in sa.inspect(at_0014.engine).get_columns("documents")}
    assert "read_type" not in columns
    assert "producer" in columns
