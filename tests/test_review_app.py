"""Review app flows, headless with Streamlit's AppTest against a SQLite store seeded by the real pipeline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from review_helpers import PASSWORD, Seeded, app_test, sign_in

pytestmark = pytest.mark.seeded_app


def _texts(elements: Any) -> list[str]:
    """What a reader sees: the Markdown escapes the app puts before data-borne characters removed."""
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _claimed(at: Any) -> str:
    return str(at.session_state["arbiter_packet_id"])


def _claim_next(at: Any) -> str:
    at.button(key="claim_next").click().run()
    assert not at.exception
    return _claimed(at)


def _open_correct_form(at: Any, packet_id: str) -> None:
    at.radio(key=f"decision_{packet_id}").set_value("Correct").run()
    assert not at.exception


def _edit_segments(at: Any, packet_id: str, edits: dict[int, dict[str, Any]]) -> None:
    at.session_state[f"seg_editor_{packet_id}"] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception


# admin-requisition-03 is one page, classified GENOMIC_REPORT; the truth is ADMINISTRATIVE.
FIXED = {0: {"dominant_type": "ADMINISTRATIVE", "ADMINISTRATIVE": 1.0, "GENOMIC_REPORT": 0.0}}


def test_every_page_needs_sign_in(seeded: Seeded) -> None:
    """Before signing in, only the sign-in form is shown: no queue, no packet."""
    at = app_test().run()
    assert not at.exception
    assert _texts(at.title) == ["Arbiter review"]
    assert [b.label for b in at.button] == ["Sign in"]


def test_wrong_password_is_refused(seeded: Seeded) -> None:
    """A wrong password keeps the reviewer on the sign-in page with a plain message."""
    at = sign_in(app_test(), "alice", "not-the-password")
    assert "The user name or password is not right." in _texts(at.error)
    assert "arbiter_signed_in" not in at.session_state


def test_sign_in_shows_the_queue(seeded: Seeded) -> None:
    """A reviewer who signs in sees the queue with its counts."""
    at = sign_in(app_test())
    assert not at.exception
    assert "Review queue" in _texts(at.title)
    waiting = next(m for m in at.metric if m.label == "Waiting")
    assert waiting.value == "4"


def test_claim_next_opens_the_most_urgent_packet(seeded: Seeded) -> None:
    """Claim next opens a packet claimed in the database by the signed-in reviewer."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    packet = seeded.store.queue.get(packet_id)
    assert packet.claimed_by == "alice"
    assert packet.priority == 0
    assert packet.doc_id in _texts(at.title)


def test_packet_page_shows_issues_with_text_and_the_page_image(seeded: Seeded) -> None:
    """The packet page lists each issue with its passage and draws the PDF page."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    packet = seeded.store.queue.get(packet_id)
    shown = "\n".join(_texts(at.markdown))
    assert packet.issues_summary[0].code in shown
    assert "TEST REQUISITION FORM" in shown
    assert at.button(key="issue_page_0").label == "Show page 1"
    assert len(at.image) == 1


def test_packet_page_says_how_the_decision_was_earned(seeded: Seeded) -> None:
    """The packet page names the semantic checks behind the escalation in plain text (no LLM here: rules only)."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    assert seeded.store.queue.get(packet_id).semantic_checks == "rules_only"
    assert "Semantic checks: rules only (no model)" in _texts(at.caption)


def test_agree_saves_a_validated_ground_truth(seeded: Seeded) -> None:
    """Agree saves the machine's classification as SME_VALIDATED and completes the packet."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    at.text_area(key=f"agree_notes_{packet_id}").input("Looks right to me.")
    at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
    assert not at.exception
    packet = seeded.store.queue.get(packet_id)
    assert packet.review_status == "COMPLETED"
    [record] = list(seeded.store.ground_truth.history(packet.doc_id))
    assert record.ground_truth_source == "SME_VALIDATED"
    assert record.sme_review is not None
    assert record.sme_review.review_notes == "Looks right to me."
    assert any("ground truth version 1" in t for t in _texts(at.success))


def test_correction_with_a_problem_is_not_saved(seeded: Seeded) -> None:
    """A correction that breaks the V1/V2 rules shows the problem inline and saves nothing."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    _open_correct_form(at, packet_id)
    _edit_segments(at, packet_id, {0: {**FIXED[0], "end_page": 3}})
    assert any("page 3" in t for t in _texts(at.error))
    at.button(key="save_correction").click().run()
    assert "The correction has problems to fix before it can be saved." in _texts(at.error)
    assert seeded.store.queue.get(packet_id).review_status == "IN_REVIEW"
    assert seeded.store.ground_truth.history(seeded.store.queue.get(packet_id).doc_id) == []


def test_correction_fixed_after_a_problem_is_saved(seeded: Seeded) -> None:
    """After the reviewer fixes the flagged cell, the correction saves as SME_CORRECTED."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    _open_correct_form(at, packet_id)
    _edit_segments(at, packet_id, {0: {**FIXED[0], "end_page": 3}})
    at.button(key="save_correction").click().run()
    _edit_segments(at, packet_id, FIXED)
    assert not _texts(at.error)
    at.multiselect(key=f"reasons_{packet_id}").select("WRONG_DOCUMENT_TYPE").run()
    at.button(key="save_correction").click().run()
    assert not at.exception
    doc_id = seeded.store.queue.get(packet_id).doc_id
    [record] = seeded.store.ground_truth.history(doc_id)
    assert record.ground_truth_source == "SME_CORRECTED"
    assert record.ground_truth_classification["dominant_type"] == "ADMINISTRATIVE"
    assert record.sme_review is not None
    assert record.sme_review.reason_codes == ["WRONG_DOCUMENT_TYPE"]
    assert seeded.store.queue.get(packet_id).review_status == "COMPLETED"


def test_lost_claim_is_refused_and_the_draft_kept(seeded: Seeded) -> None:
    """When an admin hands the packet to someone else, saving is refused with a clear message and the
    reviewer's edits stay in the session."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    _open_correct_form(at, packet_id)
    _edit_segments(at, packet_id, FIXED)
    seeded.store.queue.reassign(packet_id, "bob", "root")
    at.button(key="save_correction").click().run()
    assert any("bob holds it now" in t and "draft is kept" in t for t in _texts(at.error))
    draft = at.session_state["arbiter_drafts"][packet_id]
    assert draft["rows"][0]["dominant_type"] == "ADMINISTRATIVE"
    assert seeded.store.queue.get(packet_id).claimed_by == "bob"
    assert seeded.store.ground_truth.history(seeded.store.queue.get(packet_id).doc_id) == []


def test_skip_returns_the_packet_to_the_queue(seeded: Seeded) -> None:
    """Skip releases the claim: the packet is pending again and the next packet opens on the packet page."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    at.button(key="skip").click().run()
    assert not at.exception
    packet = seeded.store.queue.get(packet_id)
    assert packet.review_status == "PENDING"
    assert packet.claimed_by is None
    following = at.session_state["arbiter_packet_id"]
    assert following != packet_id
    assert _texts(at.title) == [seeded.store.queue.get(following).doc_id]


def test_every_rerun_renews_the_lease(seeded: Seeded) -> None:
    """Working on the packet page pushes the claim's expiry forward."""
    at = sign_in(app_test())
    packet_id = _claim_next(at)
    first = seeded.store.queue.get(packet_id).claim_expires_at
    at.run()
    assert seeded.store.queue.get(packet_id).claim_expires_at > first


def test_admin_releases_a_claim(seeded: Seeded) -> None:
    """An admin releases another reviewer's claim from the claims page, and it is audited."""
    packet_id = seeded.packet_id("path-breast-02")
    seeded.store.queue.claim(packet_id, "bob")
    at = sign_in(app_test(), "root", PASSWORD)
    at.switch_page("views/admin.py").run()
    at.selectbox(key="admin_packet").set_value(packet_id).run()
    at.button(key="admin_release").click().run()
    assert not at.exception
    assert seeded.store.queue.get(packet_id).review_status == "PENDING"
    events = seeded.store.audit.events(action="packet.admin_release")
    assert [e.actor for e in events] == ["root"]


def test_reviewer_cannot_open_the_admin_page(seeded: Seeded) -> None:
    """The claims page is not among a reviewer's pages at all."""
    at = sign_in(app_test())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/admin.py")


def test_ground_truth_page_lists_versions(seeded: Seeded) -> None:
    """The ground-truth page shows each document's history, including automatic accepts."""
    at = sign_in(app_test())
    at.switch_page("views/ground_truth.py").run()
    assert not at.exception
    assert at.selectbox(key="gt_doc").value == "gen-foundation-01"
    assert "gen-foundation-01: 1 version" in _texts(at.subheader)


def test_proxy_header_signs_in_a_known_account(seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    """In proxy mode the trusted header's name signs in without a password; an unknown name is refused."""
    import streamlit as st

    monkeypatch.setenv("ARBITER_REVIEW_AUTH", "proxy")
    st.cache_resource.clear()
    at = app_test()
    at.user = {"arbiter_user": "proxied"}
    at.run()
    assert "Review queue" in _texts(at.title)
    stranger = app_test()
    stranger.user = {"arbiter_user": "mallory"}
    stranger.run()
    assert any("not recognised" in t for t in _texts(stranger.error))


# Markdown that would act if rendered: an image (fetched by the browser), a link, emphasis, a colour.
ACTIVE_MARKDOWN = ("![", "](", ":blue[", "_x_")


def _every_text(at: Any) -> list[str]:
    """The body of every element that Streamlit renders as Markdown, and every button label."""
    kinds = ("title", "header", "subheader", "markdown", "caption", "success", "info", "warning", "error")
    texts = [str(e.value) for kind in kinds for e in getattr(at, kind)]
    return texts + [str(b.label) for b in at.button]


def test_file_names_and_production_answers_are_shown_as_text(tmp_path: Path, monkeypatch: Any) -> None:
    """Issue 14.5: a PDF named with Markdown and a production dominant_type `![p](http://…)` show as
    written in the queue, the packet title and caption, the production summary and the flash message;
    nothing of them is rendered as Markdown."""
    import streamlit as st
    from review_helpers import HOSTILE_NAME, HOSTILE_TYPE, seed_hostile

    from arbiter.review.packet_view import escape

    data = seed_hostile(tmp_path)
    for key, value in data.env().items():
        monkeypatch.setenv(key, value)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        packet_id = data.packet_id(HOSTILE_NAME)
        assert data.store.queue.claim(packet_id, "alice") is not None
        at = sign_in(app_test())
        assert not at.exception
        assert any(HOSTILE_NAME in t for t in _texts(at.caption))  # "Your claimed packets"
        at.button(key="continue_mine").click().run()
        assert not at.exception
        assert [str(t.value) for t in at.title] == [escape(HOSTILE_NAME)]
        assert _texts(at.title) == [HOSTILE_NAME]
        shown = _every_text(at)
        assert any(HOSTILE_TYPE.format(port=9) in t.replace("\\", "") for t in shown)  # the production answer
        assert any(f"{HOSTILE_NAME}.pdf" in t for t in _texts(at.caption))
        for text in shown:
            for active in ACTIVE_MARKDOWN:
                assert active not in text, text
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
        data.store.dispose()
