"""The packet page after the database fails a save (issue 27 item 9): a retried save that goes through shows
"Saved" and no database alert beside it, headless with AppTest."""

from __future__ import annotations

import re
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.store import DatabaseUnavailable
from arbiter.store.queue import Queue
from arbiter.store.reviews import Reviews

pytestmark = pytest.mark.seeded_app


def _alerts(at: Any) -> list[str]:
    return [
        re.sub(r"\\(.)", r"\1", str(e.value))
        for kind in ("error", "warning", "success", "info")
        for e in at.get(kind)
    ]


def _fail_first_submit(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Reviews.submit raises DatabaseUnavailable once, then saves; the calls are logged."""
    real, calls = Reviews.submit, []

    def flaky(self: Reviews, *args: Any, **kwargs: Any) -> Any:
        calls.append("submit")
        if len(calls) == 1:
            raise DatabaseUnavailable("the database is restarting")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Reviews, "submit", flaky)
    return calls


def _agree_twice(at: Any) -> tuple[list[str], list[str]]:
    at.button(key="claim_next").click().run()
    packet_id = str(at.session_state["arbiter_packet_id"])
    button = f"FormSubmitter:agree_{packet_id}-Agree and save"
    at.button(key=button).click().run()
    failed = _alerts(at)
    at.button(key=button).click().run()
    assert not at.exception
    return failed, _alerts(at)


def test_a_retried_agree_shows_saved_without_the_database_alert(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first Agree meets a database away and says so; the retry saves and only "Saved" is shown."""
    _fail_first_submit(monkeypatch)
    failed, retried = _agree_twice(sign_in(app_test()))
    assert any("not answering" in t for t in failed)
    assert any(t.startswith("Saved") for t in retried)
    assert not any("not answering" in t for t in retried), retried


def test_a_retried_save_whose_next_claim_waits_names_no_database_failure(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retry saves but the next claim meets the database away: "Saved" stands without a failure beside it."""
    calls = _fail_first_submit(monkeypatch)
    real = Queue.claim_next

    def claim_after_save(self: Queue, *args: Any, **kwargs: Any) -> Any:
        if len(calls) == 2 and "claimed" not in calls:
            calls.append("claimed")
            raise DatabaseUnavailable("the database is restarting")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Queue, "claim_next", claim_after_save)
    failed, retried = _agree_twice(sign_in(app_test()))
    assert any("not answering" in t for t in failed)
    assert any(t.startswith("Saved") and "Claim next" in t for t in retried), retried
    assert not any("not answering" in t or "Nothing was changed" in t for t in retried), retried
