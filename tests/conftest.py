"""Test-wide settings: hypothesis without per-example deadlines (CI machines vary), shared paths, and the
fixtures several test files use (a seeded review store, the review app pointed at it, Chromium present)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings
from store_fixtures import pg_app_role_urls_fixture  # noqa: F401  (the `store` fixture's application-role case)

if TYPE_CHECKING:
    from review_helpers import Seeded

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


# Modules that start Ray of their own (a cluster from `ray start`, or a local instance): under pytest-xdist
# (`make test` runs two workers) they share one worker, one after another, so two clusters never compete for
# Ray's ports and the machine's two cores at once.
RAY_MODULES = frozenset(
    {"test_ray_engine", "test_ray_items", "test_ray_cli_cluster", "test_ray_setup", "test_bench_ray_smoke"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The Ray modules' tests go to one xdist worker (`--dist loadgroup`); without xdist the mark does nothing."""
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rsplit(".", 1)[-1] in RAY_MODULES:
            item.add_marker(pytest.mark.xdist_group("ray"))


def corpora_missing() -> bool:
    """True when ../shared/corpora is absent on a developer checkout; in CI (where it is always beside
    the clone) its absence is a failure, never a silent skip."""
    if CORPORA.is_dir():
        return False
    assert not os.environ.get("CI"), f"CI must have the shared corpora at {CORPORA}"
    return True


@pytest.fixture(name="seeded")
def seeded_fixture(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Seeded]:
    """A migrated SQLite store holding the review fixtures' packets and four accounts (review_helpers.seed),
    disposed after the test; the documents cache emptied first. A module marked
    `pytest.mark.seed(doc_ids=..., sample_all=...)` seeds those documents that way; one marked
    `pytest.mark.seeded_app` also has the review app (Streamlit's AppTest) pointed at the store, its caches
    emptied around the test (review_helpers.app_pointed)."""
    from review_helpers import app_pointed, seed

    from arbiter.review import documents

    marker = request.node.get_closest_marker("seed")
    documents.clear_cache()
    data = seed(tmp_path, **(marker.kwargs if marker else {}))
    try:
        if request.node.get_closest_marker("seeded_app"):
            with app_pointed(data, monkeypatch):
                yield data
        else:
            yield data
    finally:
        data.store.dispose()


@pytest.fixture(name="pgbouncer_present")
def pgbouncer_present_fixture() -> None:
    """The PgBouncer tests never skip: without the program they fail and say how to get it."""
    from testing.pgbouncer import binary

    assert binary() is not None, "needs Debian's pgbouncer: run `make test` (.ci/system-deps.sh installs it)"


@pytest.fixture(name="chromium_present")
def chromium_present_fixture() -> None:
    """The browser tests never skip: without Chromium they fail and say how to get it. A module of browser
    tests says `pytestmark = pytest.mark.usefixtures("chromium_present")`."""
    from browser_helpers import CHROMIUM

    assert CHROMIUM.exists(), "needs Debian's chromium at /usr/bin/chromium: run `make test` (it installs it)"
