"""Smoke test of the export benchmark at a toy size: every variant runs in its own process and reports the
documented JSON shape. Timings are measured by bench/export_speed.py, never asserted here."""

from __future__ import annotations

from pathlib import Path

from bench import export_speed

FIGURES = {"seconds", "records", "records_per_s", "cpu_s", "peak_rss_mb", "rss_at_start_mb", "bytes_written"}


def test_export_speed_shape(tmp_path: Path) -> None:
    """A tiny run seeds its database, exports in every variant, compares with the baseline and keeps the file."""
    result = export_speed.run(records=200, repeats=1, data_dir=tmp_path)
    sqlite = result["results"]["sqlite"]
    assert set(sqlite["variants"]) == {
        "arbiter_parquet",
        "arbiter_jsonl",
        "arbiter_csv",
        "arbiter_all",
        "baseline_naive_parquet",
    }
    for figures in sqlite["variants"].values():
        assert set(figures) >= FIGURES, figures
        assert figures["records"] == 200
    assert sqlite["versions"] >= 200
    assert sqlite["seed_s"] is not None
    assert sqlite["speedup_vs_baseline"] > 0
    assert set(sqlite["met"]) == {"parquet_records_per_s"}
    assert isinstance(result["all_met"], bool)
    with export_speed.database("sqlite", 200, tmp_path) as (_, seeded):  # the kept database is reused
        assert seeded is None
    assert len(list(tmp_path.glob("export_gt_200_*.db"))) == 1
