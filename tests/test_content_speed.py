"""The content reading's shortcuts give exactly what the general paths they skip would give."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from arbiter.verifiers import content
from tests.v34_helpers import PROFILE, make_bundle

PAGES = [
    "CBC panel\nTest Result Units Reference Range\nHemoglobin 13.5 g/dL 12.0-16.0\nPage 1 of 2",
    "Final diagnosis\nMargins are negative for carcinoma.\nPage 2 of 2",
]


def test_two_threads_read_a_bundle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """V2 and V4 run at once: the second waits for the first's reading instead of computing it again."""
    calls: list[int] = []
    original = content.read_page

    def slow(page, profile):  # type: ignore[no-untyped-def]
        calls.append(page.page_num)
        time.sleep(0.05)
        return original(page, profile)

    monkeypatch.setattr(content, "read_page", slow)
    bundle = make_bundle(*PAGES)
    start = threading.Barrier(4)

    def read() -> content.ContentReading:
        start.wait()
        return content.read_bundle(bundle, PROFILE)

    with ThreadPoolExecutor(max_workers=4) as pool:
        readings = list(pool.map(lambda _: read(), range(4)))
    assert sorted(calls) == [1, 2]
    assert all(r is readings[0] for r in readings)
    assert not content._PENDING


def test_a_failed_reading_lets_the_next_caller_try(monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = make_bundle(*PAGES)

    def broken(page, profile):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(content, "read_page", broken)
        with pytest.raises(RuntimeError):
            content.read_bundle(bundle, PROFILE)
    assert not content._PENDING
    assert content.read_bundle(bundle, PROFILE).pages[1].readable
