"""The decision panel of the answer desk's page (issue 31): what Agree would save or the correction in
words, Agree (Alt+A) and Save correction (Alt+S) with the check's problems listed, Skip, the abstention with
its missing evidence, notes and confidence. The saves go through arbiter/review/answer_desk.py."""

from __future__ import annotations

from typing import Any

import streamlit as st

from arbiter.contracts import SMEPacket
from arbiter.contracts.grounded import GroundedItem, GroundedProfile
from arbiter.review import answer_check, answer_desk, answer_draft
from arbiter.review.desk import Desk
from arbiter.review.packet_view import escape
from arbiter.review_app import drafting, flow, state
from arbiter.review_app.answer_cards import kept_draft, store_draft, widget_key


def _on_abstain(packet_id: str) -> None:
    on = bool(st.session_state.get(widget_key("abstain", packet_id)))
    store_draft(packet_id, answer_draft.abstain(kept_draft(packet_id), on))


def _on_missing(packet_id: str) -> None:
    missing = str(st.session_state.get(widget_key("missing", packet_id)) or "")
    store_draft(
        packet_id, answer_draft.abstain(kept_draft(packet_id), kept_draft(packet_id).abstain, missing)
    )


def _notes(packet_id: str) -> tuple[str, float]:
    notes = str(st.session_state.get(f"agree_notes_{packet_id}") or "")
    return notes, float(st.session_state.get(f"agree_conf_{packet_id}", 0.9))


def _agree(desk: Desk, packet: SMEPacket, profile: GroundedProfile, attempt: dict[str, Any]) -> None:
    """Alt+A: save the answer as it is and open the next packet; a refusal is listed on the page."""
    notes, confidence = _notes(packet.packet_id)
    outcome = answer_desk.agree(
        desk,
        packet,
        profile,
        notes=notes,
        confidence=confidence,
        started_at=attempt["started_at"],
        token=attempt["token"],
    )
    _after(desk, packet, outcome)


def _correct(desk: Desk, packet: SMEPacket, profile: GroundedProfile, attempt: dict[str, Any]) -> None:
    """Alt+S: save the correction and open the next packet; a correction that fails saves nothing."""
    notes, confidence = _notes(packet.packet_id)
    draft = kept_draft(packet.packet_id)
    missing = st.session_state.get(widget_key("missing", packet.packet_id))
    if draft.abstain and isinstance(missing, str):  # typed and not yet sent by its own change
        draft = answer_draft.abstain(draft, True, missing)
        store_draft(packet.packet_id, draft)
    outcome = answer_desk.correct(
        desk,
        packet,
        profile,
        draft,
        notes=notes,
        confidence=confidence,
        started_at=attempt["started_at"],
        token=attempt["token"],
    )
    _after(desk, packet, outcome)


def _after(desk: Desk, packet: SMEPacket, outcome: Any) -> None:
    """A saved answer opens the next packet; a refused one is kept to be listed on the page."""
    if outcome.ok:
        flow.advance(desk, packet.packet_id, "success", outcome.message)
    else:
        state.drafts().setdefault(packet.packet_id, {})["answer_failed"] = outcome


def decision(
    packet: SMEPacket,
    desk: Desk,
    item: GroundedItem,
    profile: GroundedProfile,
    draft: answer_draft.AnswerDraft,
    attempt: dict[str, Any],
    can_submit: bool,
) -> None:
    pid = packet.packet_id
    changed = draft.changed
    head_col, skip_col = st.columns([3, 1], vertical_alignment="center")
    head_col.subheader("Your decision")
    if changed:
        st.markdown("**Your correction:** " + escape("; ".join(answer_check.changes(draft, item))))
    else:
        st.markdown("**" + escape(answer_check.agree_line(item)) + "**")
    agree_col, save_col = st.columns(2)
    agree_col.button(
        "Agree",
        type="secondary" if changed else "primary",
        shortcut="Alt+A",
        key="answer_agree",
        disabled=not can_submit or changed,
        on_click=_agree,
        args=(desk, packet, profile, attempt),
        help="Save the answer as it is and open the next packet (Alt+A)",
        width="stretch",
    )
    checked = answer_check.check_draft(draft, item, profile) if changed else None
    save_col.button(
        "Save correction",
        type="primary" if changed else "secondary",
        shortcut="Alt+S",
        key="answer_save",
        # A correction that fails its check cannot be saved (the reasons are listed below); an abstention
        # stays savable while its missing evidence may still be in the text box, unapplied (the save reads it).
        disabled=not can_submit
        or not changed
        or (checked is not None and not checked.ok and not draft.abstain),
        on_click=_correct,
        args=(desk, packet, profile, attempt),
        help="Save the corrected answer and open the next packet (Alt+S)",
        width="stretch",
    )
    if can_submit:
        flow.skip_button(skip_col, desk, pid)
    if not changed:
        refused = answer_check.check_agreement(item, profile).blocking
        if refused:
            first = refused[0].message.split(":")[0]
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            st.caption(escape(f"Agree cannot save this answer as it is: {first}{more}."))
    failed = state.drafts().setdefault(pid, {}).pop("answer_failed", None)
    if failed is not None:
        st.error(escape(failed.message))
        for problem in failed.problems:
            (st.error if problem.blocking else st.caption)(escape(problem.message))
    if checked is not None:
        for problem in checked.problems:
            (st.error if problem.blocking else st.caption)(escape(problem.message))
    st.toggle(
        "Replace the answer with an abstention",
        value=draft.abstain,
        key=widget_key("abstain", pid),
        on_change=_on_abstain,
        args=(pid,),
        help="When no retrieved source supports the answer: it abstains and says what evidence is missing.",
        disabled=not can_submit,
    )
    if draft.abstain:
        st.text_area(
            "Missing evidence (one item per line)",
            value=draft.missing,
            key=widget_key("missing", pid),
            on_change=_on_missing,
            args=(pid,),
            height=68,
        )
    notes_col, conf_col = st.columns([3, 2])
    notes_col.text_area("Notes (optional)", key=f"agree_notes_{pid}", height=68)
    with conf_col:
        st.slider(
            "Your confidence",
            0.0,
            1.0,
            drafting.initial(pid, "agree_conf", 0.9),
            0.05,
            key=f"agree_conf_{pid}",
        )
