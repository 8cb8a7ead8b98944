"""Issue 14.14: the review app on a database fault. SQLite locked for real by another process, and a
PostgreSQL server the test started itself stopped and restarted: no Streamlit error page, a plain message,
the draft kept and the packet still the reviewer's; the submit goes through once the database is back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_server import OwnServer, own_pg_server
from review_helpers import PASSWORD, app_on, app_test, run_fixtures, sign_in
from test_db_faults import finish, lock_sqlite

from arbiter.review.settings import ENV_DB, ENV_DB_RETRY
from arbiter.store import Store


def _texts(elements: Any) -> str:
    return " ".join(str(e.value) for e in elements)


def test_agree_while_sqlite_is_locked_keeps_the_draft_and_saves_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DB_RETRY, "1")
    with app_on(tmp_path, monkeypatch) as data:
        at = sign_in(app_test())
        at.button(key="claim_next").click().run()
        packet_id = str(at.session_state["arbiter_packet_id"])
        at.text_area(key=f"agree_notes_{packet_id}").input("Right as it is.")
        holder = lock_sqlite(tmp_path / "arbiter.db", 60)
        try:
            at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
            assert not at.exception
            assert "not saved yet" in _texts(at.error)
            assert at.session_state["arbiter_drafts"][packet_id]["agree"]["notes"] == "Right as it is."
            assert str(at.session_state["arbiter_packet_id"]) == packet_id
        finally:
            finish(holder)
        packet = data.store.queue.get(packet_id)
        assert (packet.review_status, packet.claimed_by) == ("IN_REVIEW", "alice")
        at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
        assert not at.exception
        assert data.store.queue.get(packet_id).review_status == "COMPLETED"
        assert len(data.store.ground_truth.history(packet.doc_id)) == 1


def test_claim_next_while_sqlite_is_locked_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DB_RETRY, "1")
    with app_on(tmp_path, monkeypatch):
        at = sign_in(app_test())
        holder = lock_sqlite(tmp_path / "arbiter.db", 60)
        try:
            at.button(key="claim_next").click().run()
        finally:
            finish(holder)
        assert not at.exception
        assert "not answering" in _texts(at.info) + _texts(at.error)


@pytest.fixture(name="server")
def server_fixture() -> Iterator[OwnServer]:
    with own_pg_server() as own:
        yield own


def test_postgresql_restart_and_outage_in_the_app(
    server: OwnServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart between two clicks is not noticed; while the server is down the page says so plainly
    (no error page) and keeps the session; when it is back, the submit saves."""
    with app_on(tmp_path, monkeypatch):
        store = Store(server.url)
        store.migrate()
        for record in run_fixtures(tmp_path / "pg-out", ("note-injection-03",)):
            store.records.record(record)
        store.users.add("alice", "reviewer", PASSWORD)
        store.dispose()
        monkeypatch.setenv(ENV_DB, server.url)
        monkeypatch.setenv(ENV_DB_RETRY, "1")
        import streamlit as st

        st.cache_resource.clear()
        at = sign_in(app_test())
        at.button(key="claim_next").click().run()
        packet_id = str(at.session_state["arbiter_packet_id"])
        server.restart(down_s=0.5)
        at.run()  # a restart between clicks: reconnected, nothing shown
        assert not at.exception
        assert "not answering" not in _texts(at.error) + _texts(at.warning)
        server.stop("immediate")
        try:
            at.run()
            assert not at.exception
            assert "not answering" in _texts(at.error) + _texts(at.warning)
            at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
            assert not at.exception
            assert "not saved yet" in _texts(at.error)
        finally:
            server.start()
        at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
        assert not at.exception
        check = Store(server.url)
        assert check.queue.get(packet_id).review_status == "COMPLETED"
        check.dispose()
        from arbiter.review_app import state

        state.store(
            server.url
        ).dispose()  # the app's cached engine: close its connections before the server goes
