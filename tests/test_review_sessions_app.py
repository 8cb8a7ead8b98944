"""Sessions and drafts in the review app, headless with AppTest: a new AppTest with the browser's session
cookie is a browser reload (session state gone, the cookie kept; AppTest cannot send cookies, so
`session.browser_cookie` reads a jar); drafts come back from the server."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.review import desk
from arbiter.review_app import session

JAR: dict[str, str] = {}  # the browser's cookies, as a reload would send them

FIXED = {0: {"dominant_type": "ADMINISTRATIVE", "ADMINISTRATIVE": 1.0, "GENOMIC_REPORT": 0.0}}


pytestmark = pytest.mark.seeded_app


@pytest.fixture(autouse=True)
def _cookie_jar(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty cookie jar per test, read by the app as the browser's cookies."""
    JAR.clear()
    monkeypatch.setattr(session, "browser_cookie", lambda: JAR.get(session.COOKIE))


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _scripts(at: Any) -> str:
    return "\n".join(str(e.value) for e in at.get("html"))


def _token(at: Any) -> str:
    """The session token this page keeps, which its script writes into the browser's cookie."""
    token = at.session_state["arbiter_session_token"]
    assert isinstance(token, str)
    assert token
    assert token in _scripts(at) or JAR.get(session.COOKIE) == token
    return token


def _reload(at: Any) -> Any:
    """A browser reload: a fresh session sending the cookie the page set (and the same address)."""
    JAR[session.COOKIE] = _token(at)
    fresh = app_test()
    fresh.query_params = dict(at.query_params)
    return fresh.run()


def _on_sign_in_page(at: Any) -> bool:
    return [b.label for b in at.button] == ["Sign in"] and "arbiter_signed_in" not in at.session_state


def _claim_next(at: Any) -> str:
    at.button(key="claim_next").click().run()
    assert not at.exception
    return str(at.session_state["arbiter_packet_id"])


def test_a_reload_keeps_the_reviewer_signed_in(seeded: Seeded) -> None:
    """After sign-in a cookie holds the session token; a reload with it shows the queue, no password asked."""
    at = sign_in(app_test())
    script = _scripts(at)
    assert f"{session.COOKIE}={_token(at)}; Max-Age=" in script
    assert "Path=/; SameSite=Strict" in script
    assert "'; Secure'" in script
    again = _reload(at)
    assert not again.exception
    assert "Review queue" in _texts(again.title)
    assert again.session_state["arbiter_signed_in"].name == "alice"
    assert _token(again) == _token(at)
    assert session.COOKIE not in _scripts(again)  # the cookie is already there


def test_the_address_carries_no_credential_and_a_copied_link_asks_for_sign_in(seeded: Seeded) -> None:
    """No token rides in the URL; an address with an old `?session=` token opens the sign-in page."""
    at = sign_in(app_test())
    token = _token(at)
    assert token not in repr(dict(at.query_params))
    pasted = app_test()
    pasted.query_params = {"session": token}
    pasted.run()
    assert _on_sign_in_page(pasted)
    assert "session" not in pasted.query_params


def test_without_a_token_a_reload_asks_for_sign_in(seeded: Seeded) -> None:
    """A fresh page without the token shows the sign-in form."""
    sign_in(app_test())
    assert _on_sign_in_page(app_test().run())


@pytest.mark.parametrize(
    "spoil",
    [lambda t: t[:-3] + "abc", lambda t: t.replace("v1.", "v2.", 1), lambda t: "garbage"],
    ids=["signature", "version", "garbage"],
)
def test_a_tampered_token_asks_for_sign_in(seeded: Seeded, spoil: Any) -> None:
    """A token changed by hand signs nobody in and leaves the URL."""
    at = sign_in(app_test())
    JAR[session.COOKIE] = spoil(_token(at))
    fresh = app_test().run()
    assert _on_sign_in_page(fresh)
    assert "Max-Age=0" in _scripts(fresh)  # the spoiled cookie is cleared


def test_sign_out_clears_the_cookie_and_revokes_the_session(seeded: Seeded) -> None:
    """Sign out clears the cookie and revokes the token: a copy of the old cookie asks for sign-in."""
    at = sign_in(app_test())
    old = _token(at)
    JAR[session.COOKIE] = old  # this connection came with the cookie (as after a reload)
    at.button(key="sign_out").click().run()
    assert _on_sign_in_page(at)
    assert f"{session.COOKIE}=; Max-Age=0; Path=/; SameSite=Strict" in _scripts(at)
    assert not any("Your session has ended" in t for t in _texts(at.info))
    assert seeded.store.sessions.check(old) is None
    at.run()  # the connection still carries the old cookie: it is not taken again
    assert _on_sign_in_page(at)
    fresh = app_test().run()  # a browser that kept a copy
    assert _on_sign_in_page(fresh)
    assert any("Your session has ended" in t for t in _texts(fresh.info))


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.users.set_active("alice", False, actor="root"),
        lambda s: s.users.set_password("alice", "a-new-password-9", actor="root"),
    ],
    ids=["deactivated", "password-reset"],
)
def test_an_admin_change_ends_open_sessions(seeded: Seeded, change: Any) -> None:
    """Deactivating the account or resetting its password signs an open browser out at its next click."""
    at = sign_in(app_test())
    change(seeded.store)
    at.run()
    assert _on_sign_in_page(at)


def test_the_correction_draft_survives_a_reload(seeded: Seeded) -> None:
    """Edited segments, notes, reasons and the decision are back after a reload, from the server."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    at.radio(key=f"decision_{packet_id}").set_value("Correct").run()
    at.session_state[f"seg_editor_{packet_id}"] = {"edited_rows": FIXED, "added_rows": [], "deleted_rows": []}
    at.run()
    at.text_area(key=f"correct_notes_{packet_id}").input("Requisition, not a report.").run()
    at.multiselect(key=f"reasons_{packet_id}").select("WRONG_DOCUMENT_TYPE").run()
    at.slider(key=f"correct_conf_{packet_id}").set_value(0.7).run()
    assert not at.exception

    again = _reload(at)
    again.switch_page("views/packet.py").run()
    assert not again.exception
    assert again.radio(key=f"decision_{packet_id}").value == "Correct"
    assert again.text_area(key=f"correct_notes_{packet_id}").value == "Requisition, not a report."
    assert again.multiselect(key=f"reasons_{packet_id}").value == ["WRONG_DOCUMENT_TYPE"]
    assert again.slider(key=f"correct_conf_{packet_id}").value == pytest.approx(0.7)
    assert any("Document: ADMINISTRATIVE" in t for t in _texts(again.caption))

    again.button(key="save_correction").click().run()
    assert seeded.store.queue.get(packet_id).review_status == "COMPLETED"
    assert seeded.store.drafts.get(packet_id, "alice") is None


def test_agree_notes_are_saved_as_they_are_typed(seeded: Seeded) -> None:
    """The agree notes reach the server draft before Agree is pressed, and come back after a reload."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    at.text_area(key=f"agree_notes_{packet_id}").input("Checked page 1.").run()
    assert seeded.store.drafts.get(packet_id, "alice") is not None
    again = _reload(at)
    again.switch_page("views/packet.py").run()
    assert again.text_area(key=f"agree_notes_{packet_id}").value == "Checked page 1."


def test_another_reviewer_never_gets_the_draft(seeded: Seeded) -> None:
    """When an admin hands Alice's packet to Bob, Bob's page starts clean: none of Alice's draft."""
    alice = sign_in(app_test())
    packet_id = _claim_next(alice)
    alice.radio(key=f"decision_{packet_id}").set_value("Correct").run()
    alice.text_area(key=f"correct_notes_{packet_id}").input("alice-private-note").run()
    seeded.store.queue.reassign(packet_id, "bob", "root")
    bob = sign_in(app_test(), "bob")
    bob.switch_page("views/packet.py").run()
    assert str(bob.session_state["arbiter_packet_id"]) == packet_id
    assert bob.radio(key=f"decision_{packet_id}").value == "Agree"
    assert bob.text_area(key=f"agree_notes_{packet_id}").value == ""
    assert "alice-private-note" not in repr(bob.session_state)


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def test_time_per_packet_counts_from_the_claim_across_a_reload(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claimed at t, reloaded, agreed at t+120 s on a fake clock: the review records 120 s."""
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    monkeypatch.setattr(desk, "utc_now", clock)
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    claimed_at = clock.now
    clock.now = claimed_at + timedelta(seconds=120)
    again = _reload(at)
    again.switch_page("views/packet.py").run()
    again.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
    assert not again.exception
    saved = seeded.store.reviews.get(packet_id)
    assert saved is not None
    assert (saved.submitted_at - saved.started_at).total_seconds() == 120.0
    assert saved.started_at == claimed_at
