"""Smoke tests of the benchmarks at a tiny size: they run and report the documented JSON shape.

Performance itself is measured by `bench/run.py`, never asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import batch_memory, corpus, ingest_speed, verify_throughput
from bench import run as bench_run


def test_corpus_is_deterministic() -> None:
    """The same doc_id and seed give byte-identical inputs and PDFs."""
    first, second = corpus.make_doc("d-1", pages=3), corpus.make_doc("d-1", pages=3)
    assert corpus.json_pair(first) == corpus.json_pair(second)
    assert corpus.render_pdf(first) == corpus.render_pdf(second)


@pytest.mark.parametrize("defect", [None, *corpus.DEFECTS])
def test_corpus_classification_is_schema_valid(defect: str | None) -> None:
    """Generated classifications (correct or with one fixable defect) pass the contract's schema."""
    from arbiter.contracts import ClassificationOutput, DocumentBundle

    bundle_json, cls_json = corpus.json_pair(corpus.make_doc("d-2"), defect)
    DocumentBundle.model_validate_json(bundle_json)
    assert len(ClassificationOutput.model_validate_json(cls_json).segments) == 3


def test_verify_throughput_shape() -> None:
    """(a) reports docs/s for the floor and each arbiter variant (bundles carrying their reading, and not), their
    ratios, the decision mix, and that a carried reading decides as reading afresh does."""
    result = verify_throughput.run(docs=5, repeats=1, warmup=1)
    assert set(result["docs_per_s"]) == {
        "floor_parse_only",
        "arbiter_default",
        "arbiter_shared_pool",
        "seed_serial",
        "floor_parse_only_uncarried",
        "arbiter_default_uncarried",
    }
    assert result["same_outcomes_uncarried"] is True
    assert result["mean_bundle_bytes"] > result["mean_uncarried_bundle_bytes"]
    assert result["carry_ms_per_doc"] > 0
    assert result["ratio_uncarried"] > 0
    assert all(rate > 0 for rate in result["docs_per_s"].values())
    assert result["ratio"] == result["ratio_to_floor"]["arbiter_default"]
    assert sum(result["decisions"].values()) == 5
    assert result["accepted"] == 5
    assert set(result["verifier_ms_per_doc"]) == {"V1", "V2", "V3", "V4"}


def test_ingest_speed_shape(tmp_path: Path) -> None:
    """(b) reports pages/s for arbiter, pypdf and raw pypdfium2 over the same pages, and the ratio."""
    result = ingest_speed.run(pdfs=2, pages=2, repeats=1, include_fixtures=False, data_dir=tmp_path)
    assert set(result["pages_per_s"]) == {"arbiter", "pypdf", "pypdfium2_raw"}
    assert result["pages"] == 4
    assert result["pages_agree"] is True
    assert result["ratio"] > 0
    assert "arbiter_hot_spots" not in result or isinstance(result["arbiter_hot_spots"], list)


def test_batch_memory_shape(tmp_path: Path) -> None:
    """(c) runs the real CLI on a small batch and reports its memory peaks, speed and decisions."""
    result = batch_memory.run(docs=5, workers=2, data_dir=tmp_path)
    assert result["exit_code"] == 0, result["output_tail"]
    assert result["processed"] == 5
    for key in ("peak_parent_rss_mb", "peak_tree_rss_mb", "ru_maxrss_mb"):
        assert result[key] > 0
    assert result["peak_tree_rss_mb"] >= result["peak_parent_rss_mb"]
    assert 0 < result["peak_tree_pss_mb"] <= result["peak_tree_rss_mb"]  # shared pages counted once
    assert set(result["decisions"]) >= {"accepted_first_time", "escalated", "errors"}


def test_batch_memory_on_the_fixture_mix_decides_copies_of_the_fixtures(tmp_path: Path) -> None:
    """(c) --fixture-mix runs the CLI on byte-distinct copies of the fixtures with their answers, some wrong."""
    result = batch_memory.run(docs=8, workers=2, data_dir=tmp_path, fixture_mix=True)
    assert result["exit_code"] == 0, result["output_tail"]
    assert (result["corpus"], result["processed"], result["decisions"]["errors"]) == ("fixture mix", 8, 0)
    pdfs = sorted(p.stem for p in (tmp_path / "mix-8" / "pdfs").glob("*.pdf"))
    assert len(pdfs) == len({p.rsplit("-c", 1)[0] for p in pdfs}) == 8  # eight fixtures, one copy each
    assert result["decisions"]["escalated"] > 0  # the demo's wrong answers among them
    assert result["peak_tree_rss_mb"] > 0


def test_run_prints_and_writes_one_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench/run.py prints one JSON object with machine info, targets and met flags, and writes it to --out."""
    out = tmp_path / "bench.json"
    code = bench_run.main(["--tiny", "--only", "a", "--out", str(out), "--data-dir", str(tmp_path)])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed == json.loads(out.read_text())
    assert set(printed) >= {"timestamp", "machine", "targets", "met", "all_met", "judged", "results"}
    assert printed["machine"]["cpu_count"] >= 1
    assert set(printed["met"]) == {"verify_throughput"}


def test_small_run_reports_figures_unjudged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run smaller than the full one prints its figures but judges no target: met and all_met are null."""
    bench_run.main(["--tiny", "--only", "a", "--data-dir", str(tmp_path)])
    printed = json.loads(capsys.readouterr().out)
    assert printed["judged"] is False
    assert printed["met"] == {"verify_throughput": None}
    assert printed["all_met"] is None
    assert printed["results"]["verify_throughput"]["ratio"] > 0


def test_full_run_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full run judges every figure against its target."""
    monkeypatch.setitem(bench_run.PRESETS["full"], "a", {"docs": 3, "repeats": 1, "warmup": 0})
    report = bench_run.run(["a"], "full")
    assert report["judged"] is True
    assert isinstance(report["met"]["verify_throughput"], bool)
    assert isinstance(report["all_met"], bool)


def test_run_rejects_unknown_benchmark() -> None:
    """--only with a letter outside a,b,c is a usage error."""
    with pytest.raises(SystemExit) as exc:
        bench_run.main(["--tiny", "--only", "z"])
    assert exc.value.code == 2
