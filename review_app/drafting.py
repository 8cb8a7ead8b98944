"""The packet page's drafts on the server: restored once when the reviewer opens a packet they hold (after a
reload, in a new tab), and written at the end of every run in which the draft changed."""

from __future__ import annotations

from typing import Any

import streamlit as st

from arbiter.contracts import SMEPacket
from arbiter.contracts.profile import Profile
from arbiter.review import drafts
from arbiter.review.forms import CORRECTION_REASONS
from arbiter.store import DatabaseUnavailable, Store

SAVED = "saved"


def kept(packet_id: str) -> dict[str, Any]:
    """The page's own draft dict for the packet (session state)."""
    by_packet: dict[str, Any] = st.session_state.setdefault("arbiter_drafts", {})
    mine: dict[str, Any] = by_packet.setdefault(packet_id, {})
    return mine


def restore_once(store: Store, reviewer: str, packet: SMEPacket, profile: Profile, holding: bool) -> None:
    """Fill the page from the reviewer's saved draft, once per session, while they hold the claim."""
    page = kept(packet.packet_id)
    if page.get(drafts.RESTORED) or not holding:
        return
    try:
        payload = store.drafts.get(packet.packet_id, reviewer)
    except DatabaseUnavailable:
        return  # tried again on the next run
    page[drafts.RESTORED] = True
    if not payload:
        return
    codes = sorted({issue.code for issue in packet.issues_summary})
    options = {
        "decision": drafts.DECISIONS,
        "dominant": (drafts.AUTO_DOMINANT, *profile.taxonomy.document_types),
        "reasons": (*CORRECTION_REASONS, *codes),
    }
    drafts.restore(packet.packet_id, payload, st.session_state, page, options)
    page[SAVED] = drafts.canonical(payload)


def save(store: Store, reviewer: str, packet_id: str, holding: bool) -> None:
    """Write the draft when it changed since the last write (only the claim holder's is written)."""
    page = kept(packet_id)
    if not holding:
        return
    try:
        payload = drafts.collect(packet_id, st.session_state, page)
        text = drafts.canonical(payload)
    except (TypeError, ValueError):
        return  # a value that is not JSON (the page shows the problem); the session still holds it
    if text == page.get(SAVED):
        return
    try:
        if store.drafts.save(packet_id, reviewer, payload):
            page[SAVED] = text
    except DatabaseUnavailable:
        pass  # the session keeps the draft; the next run writes it


def initial(packet_id: str, name: str, fallback: Any) -> Any:
    return drafts.initial(kept(packet_id), name, fallback)
