"""Grounded-answer metrics and export (issue 31.3–4): a hand-counted history (tests/grounded_truth_helpers.py) whose
every figure is worked out here and must match, on SQLite, PostgreSQL and the application role; the citation
precision/recall edge cases; the export read back from JSONL, CSV and Parquet; and the medical export and metrics
unchanged, byte for byte and figure for figure, when answer rows are added."""

from __future__ import annotations

import csv
import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from grounded_truth_helpers import I2, accept_answer, seed_answers
from store_fixtures import (  # noqa: F401 (fixtures)
    accepted,
    pg_app_role_urls_fixture,
    pg_server_url_fixture,
    review,
    store_fixture,
    with_sample,
)

from arbiter.contracts import GroundTruthRecord, PacketKind
from arbiter.contracts.grounded import KIND
from arbiter.export.grounded import ITEM_COLUMNS, STATEMENT_COLUMNS, csv_cells, rows_of
from arbiter.export.writer import export_ground_truth
from arbiter.metrics.collect import compute_metrics
from arbiter.metrics.grounded import GroundedReport, compute_grounded, judge, scores
from arbiter.metrics.result import Rate
from arbiter.store import Store
from testing.metrics_reference import comparable

Z = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95 % interval, written out here (not imported) to check the report's."""
    p, z2 = k / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (0.0 if k == 0 else centre - half), (1.0 if k == n else centre + half)


def check(rate: Rate, k: int, n: int) -> None:
    assert (rate.k, rate.n) == (k, n)
    if n == 0:
        assert rate.rate is None
        assert rate.low is None
        assert rate.high is None
        return
    assert rate.rate == pytest.approx(k / n)
    assert (rate.low, rate.high) == pytest.approx(wilson(k, n))


@pytest.fixture(name="report")
def report_fixture(store: Store) -> GroundedReport:
    seed_answers(store)
    return compute_grounded(store)


def test_every_figure_matches_the_hand_count(report: GroundedReport) -> None:
    """Six items. Statements judged per item (supported / corrected / unsupported), cites as (primary, truth,
    matched), the abstain-or-answer choice as (truth, primary) and whether the answer needed no correction:
      i1 accepted, audit agreed (expert-validated): 2 S; cites (2, 2, 2); answer/answer; right
      i2 accepted: 1 S; cites (2, 2, 2); answer/answer; right
      i3 accepted abstention: no statements; abstain/abstain; right
      i4 expert-corrected: S, U changed_number, C (Q3 → Q4); cites (3, 2, 1); answer/answer; wrong
      i5 abstained, the expert answered: no statements; answer/abstain; wrong
      i6 accepted, audit found it wrong: S, U not_in_source; cites (2, 1, 1); answer/answer; wrong
    """
    everything = report.scope("all")
    assert (everything.items, everything.with_primary, everything.unjudged, everything.statements) == (
        6,
        6,
        0,
        8,
    )
    check(everything.groundedness, 2 + 1 + 1 + 1, 8)
    check(everything.kept, 5 + 1, 8)
    assert [(s.label, s.rate.k, s.rate.n) for s in everything.unsupported_reasons] == [
        ("not_in_source", 1, 2),
        ("changed_number", 1, 2),
    ]
    check(everything.citation_precision, 2 + 2 + 1 + 1, 2 + 2 + 3 + 2)
    check(everything.citation_recall, 6, 2 + 2 + 2 + 1)
    assert everything.citation_f1 == pytest.approx(2 * (6 / 9) * (6 / 7) / (6 / 9 + 6 / 7))
    check(everything.abstention_accuracy, 5, 6)
    check(everything.abstained_when_it_should, 1, 1)
    check(everything.answered_when_it_could, 4, 5)
    assert everything.abstention.labels == ["abstain", "answer"]
    assert everything.abstention.counts == [[1, 0], [1, 4]]
    check(everything.answer_accuracy, 3, 6)

    expert = report.scope("sme")  # i1 (validated by its audit), i4, i5, i6
    assert (expert.items, expert.statements) == (4, 7)
    check(expert.groundedness, 2 + 1 + 1, 7)
    check(expert.kept, 5, 7)
    check(expert.citation_precision, 2 + 1 + 1, 2 + 3 + 2)
    check(expert.citation_recall, 4, 2 + 2 + 1)
    check(expert.abstention_accuracy, 3, 4)
    check(expert.abstained_when_it_should, 0, 0)
    check(expert.answered_when_it_could, 3, 4)
    check(expert.answer_accuracy, 1, 4)

    assert (report.totals.items, report.totals.sme_items, report.totals.reviews) == (6, 4, 2)
    audit = report.audit  # i1's audit agreed, i6's did not
    check(audit.false_accept, 1, 2)
    assert (audit.open, audit.too_few) == (0, True)
    assert (audit.false_accept.low, audit.false_accept.high) == pytest.approx((0.0945, 0.9055), abs=1e-4)
    overall = report.guarantees[0]
    # Horvitz–Thompson: 4 accepts, both audits drawn at p = 0.5, one wrong: (1 / 0.5) / 4.
    assert (overall.scope, overall.accepts, overall.reviewed, overall.false_accepts) == ("all", 4, 2, 1)
    assert overall.rate == pytest.approx((1 / 0.5) / 4)


def test_as_of_before_the_reviews(store: Store) -> None:
    """As of before any review: the four accepts as answered (i4 and i5 had no version yet), no audit reviewed."""
    from grounded_truth_helpers import T0

    seed_answers(store)
    early = compute_grounded(store, T0)
    everything = early.scope("all")
    assert (everything.items, everything.statements) == (4, 2 + 1 + 2)
    check(everything.groundedness, 5, 5)
    check(everything.answer_accuracy, 4, 4)
    check(early.audit.false_accept, 0, 0)
    assert early.audit.open == 2


# Citation precision / recall edge cases ----------------------------------------------------------------------
def _record(
    primary: dict[str, Any] | None, truth: dict[str, Any], verdicts: Any, source: str
) -> dict[str, Any]:
    return {
        "doc_id": "x",
        "version": 1,
        "gt_id": "gt-x",
        "ground_truth_source": source,
        "ground_truth_classification": truth,
        "primary_agent_classification": primary,
        "statement_verdicts": verdicts,
    }


def _a(*cites: list[str], abstained: bool = False) -> dict[str, Any]:
    return {
        "statements": [{"text": f"s{i}", "cites": c} for i, c in enumerate(cites)],
        "abstained": abstained,
    }


def _v(*rows: tuple[str, list[str]]) -> list[dict[str, Any]]:
    return [{"index": i, "verdict": v, "cites": c} for i, (v, c) in enumerate(rows)]


AUTO, CORRECTED = "PRIMARY_AGENT_AUTO_ACCEPT", "SME_CORRECTED"


@pytest.mark.parametrize(
    ("primary", "truth", "verdicts", "source", "precision", "recall", "unjudged"),
    [
        pytest.param(_a([]), _a([]), _v(("supported", [])), CORRECTED, (0, 0), (0, 0), 0, id="no-cites"),
        pytest.param(_a(abstained=True), _a(abstained=True), [], CORRECTED, (0, 0), (0, 0), 0, id="abstention"),
        pytest.param(_a(abstained=True), _a(["Q1"]), [], CORRECTED, (0, 0), (0, 0), 0, id="abstained-truth-answers"),
        pytest.param(_a(["Q1", "Q2"]), _a(["Q3"]), _v(("corrected", ["Q3"])), CORRECTED, (0, 2), (0, 1), 0,
                     id="all-wrong"),
        pytest.param(_a(["Q1"]), _a(), _v(("unsupported", [])), CORRECTED, (0, 1), (0, 0), 0,
                     id="unsupported-cites-count-against-precision"),
        pytest.param(_a(["Q1", "Q2"]), _a(["Q2", "Q3"]), _v(("corrected", ["Q2", "Q3"])), CORRECTED, (1, 2), (1, 2), 0,
                     id="half-right"),
        pytest.param(_a(["Q1", "Q1"]), _a(["Q1"]), _v(("supported", ["Q1"])), CORRECTED, (1, 1), (1, 1), 0,
                     id="a-repeated-cite-counts-once"),
        pytest.param(_a(["Q1"], ["Q2"]), _a(["Q1"], ["Q2"]), None, AUTO, (2, 2), (2, 2), 0, id="accepted-as-answered"),
        pytest.param(_a(["Q1"]), _a(["Q9"]), None, CORRECTED, (0, 0), (0, 0), 1, id="expert-change-without-verdicts"),
        pytest.param(_a(["Q1"], ["Q2"]), _a(["Q1"]), _v(("supported", ["Q1"])), CORRECTED, (1, 1), (1, 1), 0,
                     id="a-statement-without-verdict-is-left-out"),
    ],
)  # fmt: skip
def test_citation_precision_and_recall(
    primary: dict[str, Any],
    truth: dict[str, Any],
    verdicts: Any,
    source: str,
    precision: tuple[int, int],
    recall: tuple[int, int],
    unjudged: int,
) -> None:
    figures = scores([judge(_record(primary, truth, verdicts, source))], "all")
    check(figures.citation_precision, *precision)
    check(figures.citation_recall, *recall)
    assert figures.unjudged == unjudged


def test_answer_accuracy_and_abstention_of_single_items() -> None:
    """An accept whose statements and abstention are the primary's is right; an expert's unchanged answer too;
    an item without the primary's answer counts nowhere."""
    same = scores([judge(_record(_a(["Q1"]), _a(["Q1"]), None, "SME_VALIDATED"))], "all")
    check(same.answer_accuracy, 1, 1)
    check(same.groundedness, 1, 1)
    missing = scores([judge(_record(None, _a(["Q1"]), None, AUTO))], "all")
    check(missing.answer_accuracy, 0, 0)
    check(missing.abstention_accuracy, 0, 0)
    wrongly = scores(
        [judge(_record(_a(["Q1"]), _a(abstained=True), _v(("unsupported", [])), CORRECTED))], "all"
    )
    check(wrongly.abstained_when_it_should, 0, 1)
    check(wrongly.answer_accuracy, 0, 1)


# Export ------------------------------------------------------------------------------------------------------
def _read_csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_the_answer_export_reads_back_equal(store: Store, tmp_path: Path) -> None:
    seed_answers(store)
    manifest = export_ground_truth(store, ["jsonl", "csv", "parquet"], tmp_path, kind=KIND)
    assert (manifest["answer_kind"], manifest["layout"], manifest["records"], manifest["statements"]) == (
        KIND,
        "grounded-answer/1",
        6,
        8,
    )
    assert {f["name"]: f["rows"] for f in manifest["files"]} == {
        "ground_truth.jsonl": 6,
        "answers.csv": 6,
        "answer_statements.csv": 8,
        "answers.parquet": 6,
        "answer_statements.parquet": 8,
    }
    # JSONL: the records in force as stored.
    lines = (tmp_path / "ground_truth.jsonl").read_text(encoding="utf-8").splitlines()
    records = [GroundTruthRecord.model_validate_json(line) for line in lines]
    assert records == [store.ground_truth.latest(r.doc_id) for r in records]
    assert [r.doc_id for r in records] == ["i1", "i2", "i3", "i4", "i5", "i6"]
    # Parquet and CSV: the rows judge() gives of those records.
    expected = [rows_of(judge(json.loads(line))) for line in lines]
    items = [row for row, _ in expected]
    statements = [s for _, rows in expected for s in rows]
    assert pq.read_table(tmp_path / "answers.parquet").to_pylist() == items
    assert pq.read_table(tmp_path / "answer_statements.parquet").to_pylist() == statements
    item_csv = _read_csv(tmp_path / "answers.csv")
    statement_csv = _read_csv(tmp_path / "answer_statements.csv")
    assert tuple(item_csv[0]) == ITEM_COLUMNS
    assert tuple(statement_csv[0]) == STATEMENT_COLUMNS
    item_table = pq.read_table(tmp_path / "answers.parquet")
    assert item_csv[1:] == [[str(c) for c in row] for row in csv_cells(item_table)]
    # What the hand count says of i4 and i5.
    i4 = dict(zip(ITEM_COLUMNS, item_csv[4], strict=True))
    assert (
        i4["judged_by"],
        i4["n_statements"],
        i4["n_supported"],
        i4["n_corrected"],
        i4["n_unsupported"],
    ) == (
        "verdicts",
        "3",
        "1",
        "1",
        "1",
    )
    assert (i4["unsupported_reasons"], i4["corrected_citations"], i4["answer_correct"]) == (
        "changed_number",
        "2:Q4",
        "false",
    )
    assert (i4["primary_cites"], i4["truth_cites"], i4["matched_cites"]) == ("3", "2", "1")
    i5 = dict(zip(ITEM_COLUMNS, item_csv[5], strict=True))
    assert (i5["primary_abstained"], i5["abstained"], i5["n_truth_statements"]) == ("true", "false", "1")
    i3 = dict(zip(ITEM_COLUMNS, item_csv[3], strict=True))
    assert i3["missing_evidence"] == "the retention period"


def _seed_medical(store: Store) -> None:
    """Two medical accepts, one audited and corrected."""
    assert store.records.record(accepted("m1")).recorded
    assert store.records.record(with_sample(accepted("m2"))).recorded
    packet = next(p.packet_id for p in store.queue.page(limit=10) if p.kind == PacketKind.AUDIT.value)
    assert store.queue.claim(packet, "carol") is not None
    store.reviews.submit(
        packet,
        "carol",
        review("carol", agrees=False),
        {"dominant_type": "LAB_REPORT"},
        idempotency_key="m2-a",
    )


def test_answer_rows_leave_the_medical_export_and_metrics_unchanged(store: Store, tmp_path: Path) -> None:
    """The medical export's data files are the same bytes and its figures the same before and after the answers
    are added (remove the answer_kind filter from the export or a metrics reader and this fails)."""
    _seed_medical(store)
    before = export_ground_truth(store, ["jsonl", "csv", "parquet"], tmp_path / "before")
    first = compute_metrics(store)
    seed_answers(store)
    accept_answer(store, "i7", I2, audit=True)  # an answer's audit still waiting
    after = export_ground_truth(store, ["jsonl", "csv", "parquet"], tmp_path / "after")
    second = compute_metrics(store)
    assert "answer_kind" not in after
    assert after["records"] == 2
    assert [(f["name"], f["sha256"]) for f in before["files"]] == [
        (f["name"], f["sha256"]) for f in after["files"]
    ]
    for name in ("ground_truth.jsonl", "ground_truth.csv", "ground_truth.parquet"):
        assert (tmp_path / "before" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()
    assert comparable(second) == comparable(first)
    assert [g.model_dump() for g in second.guarantees] == [g.model_dump() for g in first.guarantees]
    assert (second.totals.ground_truth_docs, second.totals.reviews, second.audit.false_accept.n) == (2, 1, 1)
    assert [r.run_id for r in second.runs] == ["run-1"]
    # And the answers' figures leave the medical rows out.
    answers = compute_grounded(store)
    assert (answers.totals.items, answers.audit.open) == (7, 1)


# The commands ------------------------------------------------------------------------------------------------
def test_the_commands_take_the_answer_kind(tmp_path: Path) -> None:
    """`arbiter metrics --kind grounded-answer` prints the hand-counted figures (text and --json); `arbiter export
    --kind grounded-answer` writes the answer layout; an unknown kind is refused before the database is opened."""
    from typer.testing import CliRunner

    from arbiter.cli.main import app

    store = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
    store.migrate()
    seed_answers(store)
    store.dispose()
    runner = CliRunner()
    db = ["--out", str(tmp_path), "--db", f"sqlite:///{tmp_path / 'arbiter.db'}"]
    text = runner.invoke(app, ["metrics", "--kind", KIND, *db], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "Grounded answers: 6 items with ground truth (4 expert-reviewed), 2 reviews." in text.output
    assert "Groundedness: 62.5 %" in text.output
    assert "5 of 8 statements" in text.output
    assert "Arbiter false-accept rate on answers: Too few audits" in text.output
    data = json.loads(runner.invoke(app, ["metrics", "--kind", KIND, "--json", *db]).output)
    assert data["kind"] == KIND
    assert (data["scores"][0]["citation_precision"]["k"], data["scores"][0]["citation_precision"]["n"]) == (
        6,
        9,
    )
    assert (data["audit"]["false_accept"]["k"], data["audit"]["false_accept"]["n"]) == (1, 2)
    to = tmp_path / "answers"
    done = runner.invoke(app, ["export", "--kind", KIND, "--format", "csv", "--to", str(to), *db])
    assert done.exit_code == 0, done.output
    assert "Exported 6 answer items" in done.output
    assert sorted(p.name for p in to.iterdir()) == ["answer_statements.csv", "answers.csv", "manifest.json"]
    for command in (["metrics"], ["export", "--format", "csv"]):
        refused = runner.invoke(app, [*command, "--kind", "poetry", *db])
        assert refused.exit_code != 0
        assert "--kind must be" in refused.output


def test_an_answer_export_retires_the_files_of_the_one_it_replaces(tmp_path: Path) -> None:
    """Exported again into the same folder with fewer formats, the earlier tables go (the manifest lists what is
    there); as of before any version, the export is empty."""
    from grounded_truth_helpers import T0

    store = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
    store.migrate()
    seed_answers(store)
    out = tmp_path / "x"
    export_ground_truth(store, ["csv", "parquet"], out, kind=KIND)
    manifest = export_ground_truth(store, ["jsonl"], out, kind=KIND)
    assert sorted(p.name for p in out.iterdir()) == ["ground_truth.jsonl", "manifest.json"]
    assert [f["table"] for f in manifest["files"]] == ["records"]
    early = export_ground_truth(
        store, ["csv"], tmp_path / "early", as_of=T0 - timedelta(seconds=1), kind=KIND
    )
    assert (early["records"], early["statements"]) == (0, 0)
    assert _read_csv(tmp_path / "early" / "answers.csv") == [list(ITEM_COLUMNS)]
    store.dispose()
