"""Smoke test of the LLM concurrency benchmark in quick mode: it runs and reports the documented JSON shape.

Timings are measured by `bench/llm_concurrency.py`, never asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench import llm_concurrency, llm_fake
from bench import run as bench_run


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return llm_concurrency.run(
        quick=True, latency_ms=10, jitter_ms=2, docs_limit=3, workdir=tmp_path_factory.mktemp("bench-llm")
    )


def test_report_is_one_json_object(report: dict[str, Any]) -> None:
    """The report serialises to JSON and names the benchmark, its mode and the fake model."""
    assert json.loads(json.dumps(report))["benchmark"] == "llm_concurrency"
    assert report["mode"] == "quick"
    assert report["fake_model"]["latency_ms"] == 10
    assert set(report["wiring"]) == {"classifier", "llm_phases", "client"}


def test_headline_figures_are_at_the_top(report: dict[str, Any]) -> None:
    """`ratio`, `share_of_bound` and `all_met` summarise the sections for bench/run.py."""
    assert report["ratio"] == report["per_document"]["ratio_to_critical_path"]
    assert report["share_of_bound"] == min(
        report["throughput"][name]["share_of_bound"] for name in ("concurrency_bound", "rpm_bound")
    )
    assert isinstance(report["all_met"], bool)


def test_per_document_compares_shipped_serial_and_critical_path(report: dict[str, Any]) -> None:
    """(a)+(b): wall time, critical path and their ratio for the shipped design and the seed's serial one."""
    per_doc = report["per_document"]
    for design in ("shipped", "seed_serial"):
        figures = per_doc[design]
        assert figures["docs"] == report["docs"] == 3
        assert figures["wall_ms_median"] > 0
        assert figures["critical_path_ms_median"] > 0
        assert figures["ratio_median"] > 0
    assert per_doc["target_ratio_to_critical_path"] == 1.2
    assert isinstance(per_doc["met"], bool)


def test_throughput_reports_both_bounds(report: dict[str, Any]) -> None:
    """(c): docs/s against the concurrency bound and against an rpm bound, with the share of each."""
    throughput = report["throughput"]
    for name in ("concurrency_bound", "rpm_bound"):
        figures = throughput[name]
        assert figures["docs_per_s"] > 0
        assert figures["bound_docs_per_s"] > 0
        assert figures["share_of_bound"] == pytest.approx(
            figures["docs_per_s"] / figures["bound_docs_per_s"], rel=0.01
        )
        assert figures["calls"] > 0
    assert throughput["rpm_bound"]["rpm"] > 0
    assert throughput["target_share_of_bound"] == 0.9


def test_calls_per_document_are_counted_by_purpose(report: dict[str, Any]) -> None:
    """(d): every document made a classify call, and calls per document add up."""
    calls = report["calls"]
    assert calls["by_purpose"]["classify"] == report["docs"]
    assert calls["per_doc_mean"] == pytest.approx(
        sum(calls["by_purpose"].values()) / report["docs"], abs=0.01
    )


def test_second_run_over_the_cache_makes_no_calls(report: dict[str, Any]) -> None:
    """(e): the same documents again over the same cache cost zero model calls."""
    assert report["rerun"]["calls"] == 0
    assert report["rerun"]["met"] is True


def test_no_fault_in_the_benchmark_run(report: dict[str, Any]) -> None:
    """The fake's answers fit every schema, so no phase errored and the correct fixtures are accepted."""
    assert report["per_document"]["shipped"]["errored_phases"] == {}
    assert report["per_document"]["shipped"]["decisions"] == {"AUTO_ACCEPT": 3}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"issues": {"type": "array"}}, "required": ["issues"]},
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"type": ["integer", "null"], "minimum": 2}},
            "required": ["a", "b"],
            "$defs": {"A": {"type": "string", "enum": ["x", "y"]}},
        },
        {"anyOf": [{"type": "array", "minItems": 2, "items": {"type": "boolean"}}, {"type": "null"}]},
    ],
)
def test_fake_model_answers_fit_their_schema(schema: dict[str, Any]) -> None:
    """The fake's smallest instance validates against the schema it was built from."""
    jsonschema.validate(llm_fake.minimal_instance(schema), schema)


def test_cli_prints_json_and_writes_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--quick --out FILE` prints the JSON object and writes the same text to FILE."""
    out = tmp_path / "llm.json"
    assert llm_concurrency.main(["--quick", "--latency-ms", "5", "--copies", "1", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text(encoding="utf-8")) == printed


def test_bench_run_only_llm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bench/run.py --only llm` runs this benchmark and reports its target and met flag."""
    out = tmp_path / "bench.json"
    assert bench_run.main(["--tiny", "--only", "llm", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["met"]) == {"llm_concurrency"}
    assert printed["targets"]["llm_concurrency"]["figure"] == "llm_concurrency.ratio"
    assert printed["results"]["llm_concurrency"]["benchmark"] == "llm_concurrency"
