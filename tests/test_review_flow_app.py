"""Issue 12 items 1-3 under AppTest: after Agree the next packet opens on the packet page, the end of the
queue is said there with a link back, several claims are listed and switchable, and the page viewer's
thumbnails and zoom change what is drawn."""

from __future__ import annotations

import re
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.review_app.flow import QUEUE_EMPTY

pytestmark = pytest.mark.seeded_app


def _texts(elements: Any) -> list[str]:
    """What a reader sees: the Markdown escapes the app puts before data-borne characters removed."""
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _open(at: Any, doc_id: str, seeded: Seeded) -> str:
    packet_id = seeded.packet_id(doc_id)
    assert seeded.store.queue.claim(packet_id, "alice") is not None
    at.switch_page("views/packet.py").run()
    assert not at.exception
    return str(packet_id)


def _agree(at: Any, packet_id: str) -> None:
    at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
    assert not at.exception


def test_agree_opens_the_next_packet_with_the_outcome_on_top(seeded: Seeded) -> None:
    """Agree saves, then the next packet is the one on the packet page; the saved message names the next."""
    at = sign_in(app_test())
    first = _open(at, "note-injection-03", seeded)
    _agree(at, first)
    assert seeded.store.queue.get(first).review_status == "COMPLETED"
    following = at.session_state["arbiter_packet_id"]
    assert following != first
    assert seeded.store.queue.get(following).claimed_by == "alice"
    [title] = _texts(at.title)
    assert title == seeded.store.queue.get(following).doc_id
    assert any("Saved" in t and f"Next: {title}." in t for t in _texts(at.success))


def test_the_packet_page_says_when_nothing_is_left(seeded: Seeded) -> None:
    """With every other packet done, moving on leaves the packet page saying the queue is empty, linked."""
    for doc_id in ("admin-requisition-03", "path-breast-02", "gen-guardant-02"):
        packet_id = seeded.packet_id(doc_id)
        seeded.store.queue.claim(packet_id, "bob")  # bob holds the rest: nothing left for alice
    at = sign_in(app_test())
    first = _open(at, "note-injection-03", seeded)
    _agree(at, first)
    assert "arbiter_packet_id" not in at.session_state
    assert QUEUE_EMPTY in _texts(at.success)
    assert [link.label for link in at.get("page_link")] == ["Back to the queue"]


def test_every_claim_is_listed_and_one_can_be_opened(seeded: Seeded) -> None:
    """Holding two packets, the selector lists both by document id; picking the other opens it."""
    at = sign_in(app_test())
    other = seeded.packet_id("path-breast-02")
    assert seeded.store.queue.claim(other, "alice") is not None
    first = _open(at, "note-injection-03", seeded)
    if at.session_state["arbiter_packet_id"] != first:  # the page opens the claim it finds first
        first, other = other, first
    selector = at.selectbox(key=f"claims_{first}")
    assert sorted(selector.options) == ["note-injection-03", "path-breast-02"]
    selector.select(other).run()
    assert not at.exception
    assert at.session_state["arbiter_packet_id"] == other
    assert _texts(at.title) == [seeded.store.queue.get(other).doc_id]


def test_a_single_claim_shows_no_selector(seeded: Seeded) -> None:
    """With one packet claimed there is nothing to choose: no claims selector."""
    at = sign_in(app_test())
    packet_id = _open(at, "note-injection-03", seeded)
    assert not [s for s in at.selectbox if s.key == f"claims_{packet_id}"]


def test_a_thumbnail_opens_its_page(seeded: Seeded) -> None:
    """The page strip has one button per page; clicking page 2's shows page 2 (its button marked)."""
    at = sign_in(app_test())
    packet_id = _open(at, "note-injection-03", seeded)
    assert at.button(key="thumb_2").label == "2"
    at.button(key="thumb_2").click().run()
    assert not at.exception
    assert at.session_state[f"pdf_page_{packet_id}"] == 2
    assert any(t.startswith("Page 2 of 2.") for t in _texts(at.caption))
    assert at.button(key="thumb_2").proto.type == "primary"
    assert at.button(key="thumb_1").proto.type != "primary"
