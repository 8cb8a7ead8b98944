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


def pytest_configure(config: object) -> None:
    """No test reaches the network: real LLM backends refuse to call out for the whole session."""
    from arbiter.llm import network

    network.ALLOW_NETWORK = False
