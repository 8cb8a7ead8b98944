"""Test-wide settings: hypothesis without per-example deadlines (CI machines vary), and shared paths."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CORPORA = REPO.parent / "shared" / "corpora"

settings.register_profile(
    "arbiter", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("arbiter")
