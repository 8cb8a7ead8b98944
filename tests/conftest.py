"""Test-wide settings: hypothesis without per-example deadlines (CI machines vary), and shared paths."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from store_fixtures import pg_app_role_urls_fixture  # noqa: F401  (the `store` fixture's application-role case)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CORPORA = REPO.parent / "shared" / "corpora"

settings.register_profile(
    "arbiter", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("arbiter")


def pytest_configure(config: object) -> None:
    """No test reaches the network: real LLM backends and Document AI refuse to call out for the whole session."""
    from arbiter.net import switch

    switch.ALLOW_NETWORK = False


def corpora_missing() -> bool:
    """True when ../shared/corpora is absent on a developer checkout; in CI (where it is always beside
    the clone) its absence is a failure, never a silent skip."""
    if CORPORA.is_dir():
        return False
    assert not os.environ.get("CI"), f"CI must have the shared corpora at {CORPORA}"
    return True
