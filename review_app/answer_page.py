"""The packet page of a grounded-answer packet (issue 31): the question, the answer statement by statement,
each beside the chunk it cites with the quote highlighted (or the closest passage and what differs), the
issues pinned to statements and quotes; on the right the decision — Agree (Alt+A), or a correction built
on the statement cards (unsupported with a reason, another citation, edited text) or an abstention, saved
with Alt+S. This module lays the page out (title and claims, the statements, the issues, an adjudication);
the statement cards are answer_cards.py, the decision panel answer_decision.py. Only Streamlit calls here;
the logic is arbiter/review/answer_*.py. Every value from an item (question, chunks, statements, quotes)
goes through `escape`: text, never Markdown."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from arbiter.contracts import AdjudicationChoice, PacketKind, ReviewStatus, SMEPacket
from arbiter.contracts.grounded import GroundedItem
from arbiter.record.packets import sort_issues
from arbiter.review import answer_desk, answer_reading
from arbiter.review.desk import Desk
from arbiter.review.packet_view import escape
from arbiter.review.queue_view import PRIORITY_LABELS, reason_label
from arbiter.review_app import flow, state
from arbiter.review_app.answer_cards import issue_markdown, kept_draft, statement_card
from arbiter.review_app.answer_decision import decision

# Compact statement cards: the first statement's cited quote on the first screen at 1366x768.
CSS = (
    "<style>.st-key-answer_head h1 {font-size: 1.6rem; padding-bottom: 0;}"
    " .st-key-answer_decision h3 {font-size: 1.25rem; padding: 0;}"
    " .st-key-issues_box h3 {font-size: 1.1rem; padding: 0;}"
    # The decision stays on screen while the statements scroll (Save is one click away at any statement).
    " div[data-testid='stColumn']:has(.st-key-answer_side) {position: sticky; top: 4rem; align-self: flex-start;}"
    "</style>"
)
ISSUES_HEIGHT = 210  # px: the issues frame under the decision


def _head(packet: SMEPacket, desk: Desk, holding: bool) -> bool:
    """Title, claims, status; True when the packet can still be submitted."""
    title_col, claims_col = st.container(key="answer_head").columns([3, 1], vertical_alignment="bottom")
    title_col.title(escape(packet.doc_id))
    with claims_col:
        flow.claims_selector(desk, packet.packet_id)
    title_col.caption(
        escape(
            f"Grounded answer · priority {PRIORITY_LABELS.get(packet.priority, packet.priority)} · "
            f"{reason_label(packet.escalation_reason)}"
        )
    )
    closed = packet.review_status in (ReviewStatus.COMPLETED, ReviewStatus.SUPERSEDED)
    if packet.review_status == ReviewStatus.COMPLETED:
        st.success("This packet has been reviewed. Its ground truth is on the Ground truth page.")
    elif packet.review_status == ReviewStatus.SUPERSEDED:
        st.warning("A newer run queued this item again; review its new packet from the queue instead.")
    elif not holding:
        holder = (
            f" {packet.claimed_by} holds it now."
            if packet.claimed_by and packet.claimed_by != desk.reviewer
            else ""
        )
        st.warning(
            escape(
                f"This packet is not claimed by you.{holder} Your draft is kept; claim it again to submit."
            )
        )
        if st.button("Claim it again", key="reclaim"):
            outcome = desk.claim(packet.packet_id)
            (st.success if outcome.ok else st.error)(escape(outcome.message))
            if outcome.ok:
                st.rerun()
    return not closed


def _issues(packet: SMEPacket, item: GroundedItem) -> None:
    with st.container(height=ISSUES_HEIGHT, key="issues_box"):
        if packet.blind:
            st.subheader("Blind review")
            st.info(
                "This answer was sampled for an independent review. The machine's verdict, its checks and any "
                "other review are not shown, so your judgement stays your own."
            )
            return
        issues = sort_issues(packet.issues_summary)
        st.subheader(f"Issues ({len(issues)})")
        for issue in issues:
            st.markdown(issue_markdown(issue, item))


def show(packet: SMEPacket, desk: Desk, attempt: dict[str, Any], holding: bool) -> None:
    """The whole packet page of an answer packet (the medical page's script stops after calling this)."""
    profile = state.grounded_profile()
    st.html(CSS)
    can_submit = _head(packet, desk, holding)
    if packet.packet_kind == PacketKind.ADJUDICATION:
        _adjudication(packet, desk, attempt, can_submit)
        return
    item = answer_reading.item_of(packet)
    if item is None:
        st.error(
            "The answer or its retrieved context cannot be read, so this packet cannot be reviewed here."
        )
        return
    draft = kept_draft(packet.packet_id)
    issues = [] if packet.blind else sort_issues(packet.issues_summary)
    left, right = st.columns([7, 4], gap="medium")
    with left:
        with st.container(key="answer_question"):
            st.markdown("**Question:** " + escape(item.question.text))
        if item.answer.abstained and not item.answer.statements:
            st.info(
                "The answer abstains. Missing evidence: "
                + escape("; ".join(item.answer.missing_evidence) or "none listed")
            )
        if draft.abstain:
            st.warning("Your correction replaces this answer with an abstention.")
        for view in answer_reading.statement_views(item, issues, profile, draft):
            statement_card(view, item, profile, draft, packet, can_submit)
        general = answer_reading.general_issues(issues)
        if general:
            with st.expander(f"Findings on the answer as a whole ({len(general)})"):
                for issue in general:
                    st.markdown(issue_markdown(issue, item))
        with st.expander("Every retrieved chunk"):
            for chunk in item.chunks:
                st.caption(escape(answer_reading.chunk_caption(chunk)))
                st.markdown(escape(" ".join(chunk.text.split())))
    with right, st.container(key="answer_side"):
        with st.container(key="answer_decision"):
            decision(packet, desk, item, profile, draft, attempt, can_submit)
        _issues(packet, item)


def _adjudication(packet: SMEPacket, desk: Desk, attempt: dict[str, Any], can_submit: bool) -> None:
    """Two reviews of one answer disagree: the statement verdicts side by side (those that differ first) and
    the decision, keep the first or the second."""
    case = packet.adjudication
    if case is None:
        st.error("This adjudication packet holds no reviews to compare.")
        return
    item = answer_reading.item_of(packet, packet.primary_agent_classification)
    st.subheader("Adjudication")
    if item is not None:
        st.markdown("**Question:** " + escape(item.question.text))
    st.caption("Where the two reviews differ: " + escape(" ".join(case.differences)))
    rows = answer_desk.verdict_rows(packet)
    st.dataframe(
        pd.DataFrame(rows).rename(
            columns={"First": f"First: {case.first.reviewer}", "Second": f"Second: {case.second.reviewer}"}
        ),
        hide_index=True,
        width="stretch",
    )
    choices = [AdjudicationChoice.FIRST, AdjudicationChoice.SECOND]
    key = packet.packet_id
    choice = st.radio(
        "Your decision",
        choices,
        index=None,
        horizontal=True,
        format_func=lambda c: (
            f"Keep {case.first.reviewer}'s answer (first review)"
            if c == AdjudicationChoice.FIRST
            else f"Keep {case.second.reviewer}'s answer (second review)"
        ),
        key=f"adj_choice_{key}",
    )
    notes = st.text_area("Notes (optional)", key=f"adj_notes_{key}", height=68)
    confidence = st.slider("Your confidence", 0.0, 1.0, 0.9, 0.05, key=f"adj_conf_{key}")
    if st.button(
        "Save decision", type="primary", key="save_adjudication", disabled=not can_submit or choice is None
    ):
        assert choice is not None
        outcome = answer_desk.adjudicate(
            desk,
            packet,
            choice,
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
