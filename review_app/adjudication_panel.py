"""The packet page's view of an ADJUDICATION packet: where the two reviews differ, both answers side by side
as tables, and the decision (keep the first, keep the second, or a corrected answer), above the page."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from arbiter.contracts import AdjudicationChoice, DocumentBundle, SMEPacket
from arbiter.contracts.profile import Profile
from arbiter.review.adjudication import adjudicate, case_of, choice_label, sides
from arbiter.review.desk import Desk
from arbiter.review.forms import CorrectionDraft, segment_rows
from arbiter.review.packet_view import escape
from arbiter.review.rows import DOMINANT_COLUMN
from arbiter.review_app import state

ANSWER_ROWS = 3  # segments shown at once in each answer's table
ROW_PX = 35  # a dataframe row (and its header), in px
# Smaller headings in the two answers' frames: both answers and the decision fit 1366x768 unscrolled.
ANSWERS_CSS = (
    "<style>.st-key-adj_first_answer h3, .st-key-adj_second_answer h3, .st-key-adj_head h3"
    " {font-size: 1.25rem; padding: 0;}"
    "</style>"
)


def show_decision(
    packet: SMEPacket,
    desk: Desk,
    bundle: DocumentBundle | None,
    profile: Profile,
    attempt: dict[str, Any],
    can_submit: bool,
) -> None:
    """Where the answers differ, both answers side by side, then the decision in one row (choice, notes,
    confidence, Save): all on the first screen at 1366x768, above the page and the issues. A saved decision
    returns to the queue."""
    case = case_of(packet)
    st.html(ANSWERS_CSS)
    with st.container(key="adj_head", gap="small"):
        st.subheader("Adjudication")
        st.caption("Where the two reviews differ: " + escape(" ".join(case.differences)))
    columns = st.columns(2, gap="medium")
    for column, side, name in zip(columns, sides(case), ("first", "second"), strict=True):
        with column, st.container(border=True, key=f"adj_{name}_answer"):
            st.subheader(escape(side.title))
            st.text(f"Document type: {side.dominant_type}")
            # At most ANSWER_ROWS rows high (a longer answer scrolls inside its table): Save stays on screen.
            height = ROW_PX * (min(len(side.rows), ANSWER_ROWS) + 1) + 3
            st.dataframe(pd.DataFrame(side.rows), hide_index=True, width="stretch", height=height)
            st.caption(escape(side.note))
    key = packet.packet_id
    choice = st.radio(
        "Your decision",
        list(AdjudicationChoice),
        index=None,
        horizontal=True,
        format_func=lambda c: choice_label(c, case),
        key=f"adj_choice_{key}",
    )
    notes_col, conf_col, save_col = st.columns([5, 3, 2], vertical_alignment="bottom")
    notes = notes_col.text_area(
        "Notes (optional)",
        key=f"adj_notes_{key}",
        height=68,
        placeholder="Notes (optional)",
        label_visibility="collapsed",
    )
    confidence = conf_col.slider("Your confidence", 0.0, 1.0, 0.9, 0.05, key=f"adj_conf_{key}")
    save = save_col.button(
        "Save decision",
        type="primary",
        key="save_adjudication",
        disabled=not can_submit or choice is None,
        width="stretch",
    )
    status = st.container()
    draft = None
    if choice == AdjudicationChoice.CORRECTED:  # the editor under the row: Save stays on the first screen
        types = profile.taxonomy.document_types
        st.write("Edit the segments, starting from the first review's answer.")
        edited = st.data_editor(
            pd.DataFrame(
                segment_rows(case.first.classification, profile),
                columns=["start_page", "end_page", DOMINANT_COLUMN, *types],
            ),
            key=f"adj_editor_{key}",
            num_rows="dynamic",
            hide_index=True,
        )
        rows = edited.astype(object).where(edited.notna(), None).to_dict("records")
        draft = CorrectionDraft(segments=rows, notes=notes, confidence=confidence)
    if save:
        assert bundle is not None
        assert choice is not None
        outcome = adjudicate(
            desk,
            packet,
            choice,
            bundle,
            profile,
            draft=draft,
            notes=notes,
            confidence=confidence,
            started_at=attempt["started_at"],
            token=attempt["token"],
        )
        if outcome.ok:
            state.close_packet(packet.packet_id)
            state.flash("success", outcome.message)
            st.switch_page("views/queue.py")
        with status:
            st.error(escape(outcome.message))
            for problem in outcome.problems:
                (st.error if problem.blocking else st.caption)(escape(problem.message))
