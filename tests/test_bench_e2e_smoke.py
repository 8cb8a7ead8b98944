"""Smoke test of bench/batch_e2e.py at a tiny size: byte-distinct copies, and the JSON it reports."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bench import batch_e2e


def test_corpus_copies_are_byte_distinct_and_labelled(tmp_path: Path) -> None:
    """Every copy has its own hash and a classification file naming its own doc_id."""
    pdfs, labels = batch_e2e.write_corpus(tmp_path / "c", 4, pages=2)
    paths = sorted(pdfs.glob("*.pdf"))
    assert len({hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}) == len(paths) == 4
    for path in paths:
        assert json.loads((labels / f"{path.stem}.json").read_text())["doc_id"] == path.stem


def test_e2e_reports_run_against_bare_extraction(tmp_path: Path) -> None:
    """(e2e) runs the real CLI and bare pypdfium2 on the same files, in interleaved pairs, and reports both, the
    median pair's ratio beside every pair's, and memory."""
    result = batch_e2e.run(docs=3, pages=2, data_dir=tmp_path, fixture_copies=1, repeats=2, settle_s=0)
    assert result["exit_code"] == 0, result["output_tail"]
    assert result["processed"] == 3
    assert result["decisions"]["errors"] == 0
    assert result["baseline"] == "bare pypdfium2 extraction"
    for key in ("baseline_s", "arbiter_run_s", "ratio", "cpu_ratio", "peak_tree_rss_mb"):
        assert result[key] > 0
    assert result["repeats"] == 2
    assert result["ratio"] == min(result["ratios"])  # of two pairs, the lower middle one
    mix = result["fixture_mix"]  # the short documents' CPU beside it, as shipped and with --mirrors bundles
    assert mix["docs"] == len(list(Path(batch_e2e.doc_cpu.FIXTURES / "pdfs").glob("*.pdf")))
    assert set(mix["variants"]) == {"before", "synced", "after", "bundles"}
    assert mix["shipped"] == "after"
    assert mix["repeats"] == 2  # interleaved rounds, as the 30-page pairs
    disk = mix["new_file_kernel_us"]  # what a new file cost where it wrote, before and after the rounds
    assert disk["waited_s"] < 5
    assert disk["start"] == disk["measured"] >= 0
    assert disk["after_rounds"] >= 0
    for figures in mix["variants"].values():
        assert figures["beyond_extraction_ms_per_doc"] == min(figures["rounds_beyond_extraction_ms_per_doc"])
        assert len(figures["rounds_beyond_extraction_ms_per_doc"]) == 2
        assert figures["beyond_extraction_ms_per_doc"] > 0
