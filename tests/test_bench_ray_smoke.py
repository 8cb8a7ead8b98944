"""Smoke test of the Ray engine benchmark at a tiny size: it runs both engines and reports the documented shape.

Speed is measured by `bench/ray_engine.py`, never asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import ray_engine
from bench import run as bench_run


def test_ray_engine_bench_shape(tmp_path: Path) -> None:
    """(ray) reports docs/s of the local engine (the baseline) and of Ray on the same PDFs, their ratio and
    whether both decided alike; bench/run.py knows it and its target."""
    result = ray_engine.run(docs=2, pages=1, workers=1, data_dir=tmp_path)
    assert json.loads(json.dumps(result))["baseline"] == "local"
    assert set(result["docs_per_s"]) == set(result["startup_s"]) == set(result["wall_s"]) == {"local", "ray"}
    assert result["ratio"] > 0
    assert result["same_decisions"] is True
    assert result["counts"]["processed"] == 2
    assert bench_run.NAMES["ray"] == "ray_engine"
    assert bench_run._met("ray", result)
