"""The packet page's view of an ADJUDICATION packet: where the two reviews differ, both answers side by side
as tables, and the decision (keep the first, keep the second, or a corrected answer)."""

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
from review_app import state


def show_summary(packet: SMEPacket) -> None:
    """The right-hand column: what the adjudicator is asked, and where the answers differ."""
    st.subheader("Adjudication")
    st.write("Where the two reviews differ (both answers are below the page):")
    for difference in case_of(packet).differences:
        st.text(f"• {difference}")


def show_decision(
    packet: SMEPacket,
    desk: Desk,
    bundle: DocumentBundle | None,
    profile: Profile,
    attempt: dict[str, Any],
    can_submit: bool,
) -> None:
    """Both answers side by side, then the decision form; a saved decision returns to the queue."""
    case = case_of(packet)
    columns = st.columns(2, gap="large")
    for column, side in zip(columns, sides(case), strict=True):
        with column, st.container(border=True):
            st.subheader(escape(side.title))
            st.text(f"Document type: {side.dominant_type}")
            st.dataframe(pd.DataFrame(side.rows), hide_index=True, width="stretch")
            st.caption(escape(side.note))
    key = packet.packet_id
    choice = st.radio(
        "Your decision",
        list(AdjudicationChoice),
        index=None,
        format_func=lambda c: choice_label(c, case),
        key=f"adj_choice_{key}",
    )
    draft = None
    if choice == AdjudicationChoice.CORRECTED:
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
        draft = CorrectionDraft(segments=rows)
    notes = st.text_area("Notes (optional)", key=f"adj_notes_{key}")
    confidence = st.slider("Your confidence", 0.0, 1.0, 0.9, 0.05, key=f"adj_conf_{key}")
    if draft is not None:
        draft.notes, draft.confidence = notes, confidence
    if st.button(
        "Save decision", type="primary", key="save_adjudication", disabled=not can_submit or choice is None
    ):
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
        st.error(escape(outcome.message))
        for problem in outcome.problems:
            (st.error if problem.blocking else st.caption)(escape(problem.message))
