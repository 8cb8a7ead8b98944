"""Moving through the work on the packet page: after Agree, Save correction or Skip the next packet opens at
once (the reviewer's own other claim first, else the next in the queue), with the outcome flashed at the
top; "Your claims" lists every packet the reviewer holds (blind ones among them, unmarked)."""

from __future__ import annotations

from typing import Any, NoReturn

import streamlit as st

from arbiter.contracts import DocumentBundle, SMEPacket
from arbiter.contracts.profile import Profile
from arbiter.review.desk import DATABASE_AWAY, Desk
from arbiter.review.packet_view import escape
from arbiter.review_app import state
from arbiter.store import DatabaseUnavailable

QUEUE_EMPTY = "Nothing is left for you to review: the queue is empty."
NEXT_WAITING = "The next packet could not be claimed yet; press Claim next in a moment."
DONE_KEY = "arbiter_queue_done"  # set when moving on found nothing: the packet page says so


def move_on(desk: Desk, packet_id: str, kind: str, message: str) -> NoReturn:
    """Close `packet_id` and open the next packet on the packet page (rerun); the outcome is flashed."""
    advance(desk, packet_id, kind, message)
    st.rerun()


def advance(desk: Desk, packet_id: str, kind: str, message: str) -> None:
    """Close `packet_id` and make the next packet the open one (for a callback: the next run shows it)."""
    state.close_packet(packet_id)
    following = desk.claim_next()  # the reviewer's own open claim first, else the most urgent one
    if following.packet is not None:
        state.open_packet(following.packet.packet_id)
        st.session_state.pop(DONE_KEY, None)
        state.flash(kind, f"{message} Next: {following.packet.doc_id}.")
    elif following.message == DATABASE_AWAY:  # saved, but the next claim has to wait for the database
        # Not the database alert itself: beside "Saved" its "Nothing was changed" reads as a failed save.
        st.session_state.pop(DONE_KEY, None)
        state.flash(kind, f"{message} {NEXT_WAITING}")
    else:
        st.session_state[DONE_KEY] = True
        state.flash(kind, message)


def skip(desk: Desk, packet_id: str) -> None:
    """The Skip button's callback: release the packet; the next run shows the next one."""
    released = desk.release(packet_id)
    advance(desk, packet_id, "info" if released.ok else "warning", released.message)


def skip_button(where: Any, desk: Desk, packet_id: str) -> None:
    """The Skip button (Alt+K) in `where` (a column), on both desks: the packet goes back to the queue."""
    where.button(
        "Skip",
        key="skip",
        shortcut="Alt+K",
        help="Next packet (Alt+K)",
        on_click=skip,
        args=(desk, packet_id),
    )


def agree(
    desk: Desk,
    packet: SMEPacket,
    bundle: DocumentBundle | None,
    profile: Profile,
    attempt: dict[str, Any],
    stop: bool = False,
) -> None:
    """The Agree buttons' callback: save with the notes and confidence on the page; on success the next
    packet is open when the page draws (Save and stop: none is claimed, so none is held); a refused Agree
    opens Correct; another failure is shown."""
    if bundle is None:
        return
    packet_id = packet.packet_id
    drafts = state.drafts().setdefault(packet_id, {})
    notes = str(st.session_state.get(f"agree_notes_{packet_id}") or "")
    confidence = float(st.session_state.get(f"agree_conf_{packet_id}", 0.9))
    drafts["agree"] = {"notes": notes, "confidence": confidence}
    outcome = desk.agree(
        packet,
        bundle,
        profile,
        notes=notes,
        confidence=confidence,
        reason_codes=[],
        started_at=attempt["started_at"],
        token=attempt["token"],
    )
    if outcome.ok and stop:
        stop_here(packet_id, outcome.message)
    elif outcome.ok:
        advance(desk, packet_id, "success", outcome.message)
    elif outcome.needs_correction:
        drafts.update(switch_to_correct=True, agree_refused=[p.message for p in outcome.blocking])
    else:
        drafts["agree_failed"] = outcome


def stop_here(packet_id: str, message: str) -> None:
    """Close the saved packet and claim nothing: the reviewer holds no packet they are not working on."""
    state.close_packet(packet_id)
    st.session_state.pop(DONE_KEY, None)
    state.flash("success", f"{message} No next packet was claimed.")


def nothing_open(desk: Desk) -> NoReturn:
    """The packet page without a packet: the queue is done (a link back to it), or claim the next one."""
    st.title("Packet")
    if st.session_state.get(DONE_KEY):
        st.success(QUEUE_EMPTY)
    else:
        st.info("You have no packet open. Claim the next one, or pick one in the queue.")
    st.page_link("views/queue.py", label="Back to the queue", icon=":material/inbox:")
    if st.button("Claim next", type="primary", key="packet_claim_next", shortcut="Alt+N"):
        outcome = desk.claim_next()
        if outcome.packet is not None:
            st.session_state.pop(DONE_KEY, None)
            state.open_packet(outcome.packet.packet_id)
            st.rerun()
        st.session_state[DONE_KEY] = True
        st.info(escape(outcome.message))
    st.stop()


def claims_selector(desk: Desk, packet_id: str) -> None:
    """With more than one packet claimed, a selector of them all (document ids only) that opens the one
    picked; nothing shown for a single claim, or while the database is away (the packet page goes on with
    the packet as last loaded)."""
    try:
        mine = desk.my_claims()
    except DatabaseUnavailable:
        return
    ids = [s.packet_id for s in mine]
    if len(ids) < 2 and packet_id in ids:
        return
    names = {s.packet_id: s.doc_id for s in mine}
    if packet_id not in names:
        ids.insert(0, packet_id)
        names[packet_id] = "this packet"
    key = f"claims_{packet_id}"
    st.selectbox(  # options are shown as plain text (no Markdown), so document ids need no escaping
        f"Your claims ({len(mine)})",
        ids,
        index=ids.index(packet_id),
        format_func=names.__getitem__,
        key=key,
        on_change=_open_picked,
        args=(key,),
        help="Every packet you hold; pick one to open it.",
    )


def _open_picked(key: str) -> None:
    state.open_packet(st.session_state[key])
