"""The packet page of a grounded-answer packet (issue 31): the question, the answer statement by statement,
each beside the chunk it cites with the quote highlighted (or the closest passage and what differs), the
issues pinned to statements and quotes; on the right the decision — Agree (Alt+A), or a correction built
on the statement cards (unsupported with a reason, another citation, edited text) or an abstention, saved
with Alt+S. Only Streamlit calls here; the logic is arbiter/review/answer_*.py. Every value from an item
(question, chunks, statements, quotes) goes through `escape`: text, never Markdown."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from arbiter.contracts import AdjudicationChoice, PacketKind, ReviewStatus, SMEPacket
from arbiter.contracts.grounded import GroundedItem, GroundedProfile, UnsupportedReason
from arbiter.record.packets import sort_issues
from arbiter.review import answer_check, answer_desk, answer_draft, answer_reading
from arbiter.review.desk import Desk
from arbiter.review.packet_view import SEVERITY_ICONS, escape
from arbiter.review.queue_view import PRIORITY_LABELS, reason_label
from arbiter.review_app import drafting, flow, state

SUPPORTED = "supported"
VERDICTS = (SUPPORTED, *(r.value for r in UnsupportedReason))
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


def _key(name: str, packet_id: str, index: int | None = None) -> str:
    return f"ans_{name}_{packet_id}" + ("" if index is None else f"_{index}")


def _draft(packet_id: str) -> answer_draft.AnswerDraft:
    return answer_draft.AnswerDraft.from_json(drafting.kept(packet_id).get("answer"))


def _store_draft(packet_id: str, draft: answer_draft.AnswerDraft, index: int | None = None) -> None:
    """Keep the draft; the statement's widgets are redrawn from it (their own state would lag behind)."""
    drafting.kept(packet_id)["answer"] = draft.to_json()
    if index is not None:
        for name in ("verdict", "chunk", "sentence", "text"):
            st.session_state.pop(_key(name, packet_id, index), None)


# ------------------------------------------------------------------------------------------ callbacks
def _on_verdict(packet_id: str, item: GroundedItem, index: int) -> None:
    value = st.session_state.get(_key("verdict", packet_id, index))
    reason = UnsupportedReason(value) if value in {r.value for r in UnsupportedReason} else None
    _store_draft(packet_id, answer_draft.mark_unsupported(_draft(packet_id), item, index, reason), index)


def _on_chunk(packet_id: str, item: GroundedItem, profile: GroundedProfile, index: int) -> None:
    chunk_id = st.session_state.get(_key("chunk", packet_id, index))
    if isinstance(chunk_id, str):
        _store_draft(packet_id, answer_draft.cite(_draft(packet_id), item, index, chunk_id, profile), index)


def _on_sentence(
    packet_id: str, item: GroundedItem, profile: GroundedProfile, index: int, chunk_id: str, texts: list[str]
) -> None:
    picked = st.session_state.get(_key("sentence", packet_id, index))
    if isinstance(picked, int) and 0 <= picked < len(texts):
        draft = answer_draft.cite(_draft(packet_id), item, index, chunk_id, profile, texts[picked])
        _store_draft(packet_id, draft, index)


def _on_text(packet_id: str, item: GroundedItem, index: int) -> None:
    text = st.session_state.get(_key("text", packet_id, index))
    if isinstance(text, str):
        _store_draft(packet_id, answer_draft.edit_text(_draft(packet_id), item, index, text), index)


def _on_reset(packet_id: str, item: GroundedItem, index: int) -> None:
    _store_draft(packet_id, answer_draft.reset(_draft(packet_id), item, index), index)


def _on_abstain(packet_id: str) -> None:
    on = bool(st.session_state.get(_key("abstain", packet_id)))
    _store_draft(packet_id, answer_draft.abstain(_draft(packet_id), on))


def _on_missing(packet_id: str) -> None:
    missing = str(st.session_state.get(_key("missing", packet_id)) or "")
    _store_draft(packet_id, answer_draft.abstain(_draft(packet_id), _draft(packet_id).abstain, missing))


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
    if outcome.ok:
        flow.advance(desk, packet.packet_id, "success", outcome.message)
    else:
        state.drafts().setdefault(packet.packet_id, {})["answer_failed"] = outcome


def _correct(desk: Desk, packet: SMEPacket, profile: GroundedProfile, attempt: dict[str, Any]) -> None:
    """Alt+S: save the correction and open the next packet; a correction that fails saves nothing."""
    notes, confidence = _notes(packet.packet_id)
    draft = _draft(packet.packet_id)
    missing = st.session_state.get(_key("missing", packet.packet_id))
    if draft.abstain and isinstance(missing, str):  # typed and not yet sent by its own change
        draft = answer_draft.abstain(draft, True, missing)
        _store_draft(packet.packet_id, draft)
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
    if outcome.ok:
        flow.advance(desk, packet.packet_id, "success", outcome.message)
    else:
        state.drafts().setdefault(packet.packet_id, {})["answer_failed"] = outcome


# ------------------------------------------------------------------------------------------ drawing
def _issue_markdown(issue: Any, item: GroundedItem, with_target: bool = True) -> str:
    text = answer_reading.issue_line(issue, item) if with_target else issue.message
    return f"{SEVERITY_ICONS[issue.severity.value]} `{issue.code}` {escape(text)}"


def _citation(citation: answer_reading.Citation, blind: bool, item: GroundedItem) -> None:
    if citation.chunk is None:
        st.caption(escape(f"{citation.quote_id} cites no retrieved chunk."))
        return
    st.caption(escape(f"{citation.quote_id} in {answer_reading.chunk_caption(citation.chunk)}"))
    if citation.span is not None:
        st.markdown(answer_reading.chunk_markdown(citation.chunk.text, citation.span))
        if not citation.exact:
            st.caption("Found only after spacing, case or hyphens are set aside.")
    elif citation.closest is not None:
        st.markdown(answer_reading.closest_chunk_markdown(citation.closest, citation.chunk))
    else:
        st.markdown(
            ":red[**Not in this chunk, nor anything like it.**]  \n" + escape(" ".join(citation.text.split()))
        )
    if not blind:
        for issue in citation.issues:
            st.caption(_issue_markdown(issue, item, with_target=False))


def _statement(
    view: answer_reading.StatementView,
    item: GroundedItem,
    profile: GroundedProfile,
    draft: answer_draft.AnswerDraft,
    packet: SMEPacket,
    editable: bool,
) -> None:
    pid, i = packet.packet_id, view.index
    edit = draft.edit(i)
    with st.container(border=True, key=f"statement_{i}"):
        text_col, chunk_col = st.columns([5, 6], gap="small")
        with text_col:
            badge = ""
            if draft.abstain or edit.reason is not None:
                reason = answer_draft.REASON_LABELS[edit.reason or UnsupportedReason.NOT_IN_SOURCE]
                badge = f" :red-badge[unsupported: {reason}]"
            elif edit.text is not None or edit.cites is not None:
                badge = " :blue-badge[corrected]"
            st.markdown(f"**{i + 1}.** {escape(view.text)}{badge}")
            if edit.text is not None:
                st.caption("The machine said: " + escape(item.answer.statements[i].text))
            if not packet.blind and edit.empty and not draft.abstain:
                for issue in view.issues:
                    st.caption(_issue_markdown(issue, item, with_target=False))
            elif not packet.blind and view.issues:
                st.caption("The machine's findings on this statement as it was are listed under Issues.")
        with chunk_col:
            if not view.citations:
                st.caption("Cites no quote.")
            for citation in view.citations:
                _citation(citation, packet.blind or not edit.empty or draft.abstain, item)
        if editable and not draft.abstain:
            _statement_controls(pid, i, item, profile, draft)


def _statement_controls(
    pid: str, i: int, item: GroundedItem, profile: GroundedProfile, draft: answer_draft.AnswerDraft
) -> None:
    edit = draft.edit(i)
    current = edit.reason.value if edit.reason is not None else SUPPORTED
    verdict_col, chunk_col, edit_col, undo_col = st.columns([5, 5, 2, 2], gap="small")
    verdict_col.selectbox(
        f"Verdict on statement {i + 1}",
        VERDICTS,
        index=VERDICTS.index(current),
        format_func=lambda v: (
            "Supported"
            if v == SUPPORTED
            else f"Unsupported: {answer_draft.REASON_LABELS[UnsupportedReason(v)]}"
        ),
        key=_key("verdict", pid, i),
        on_change=_on_verdict,
        args=(pid, item, i),
        label_visibility="collapsed",
    )
    chunk_ids = [c.chunk_id for c in item.chunks]
    picked = answer_draft.cited_quote(draft, item, i)
    chunk_of = {c.chunk_id: c for c in item.chunks}
    chunk_col.selectbox(
        f"Cite another chunk for statement {i + 1}",
        chunk_ids,
        index=chunk_ids.index(picked.chunk_id)
        if picked is not None and picked.chunk_id in chunk_ids
        else None,
        format_func=lambda c: f"{c} · {chunk_of[c].source} · score {chunk_of[c].score:.2f}",
        key=_key("chunk", pid, i),
        placeholder="Fix citation: another chunk…",
        on_change=_on_chunk,
        args=(pid, item, profile, i),
        label_visibility="collapsed",
    )
    if picked is not None and picked.chunk_id in chunk_of:
        options = answer_draft.candidates(chunk_of[picked.chunk_id], item, draft)
        labels = [answer_draft.candidate_label(n, option) for n, option in enumerate(options)]
        texts = [text for text, _quote in options]
        st.selectbox(
            f"Quote for statement {i + 1}",
            range(len(options)),
            index=texts.index(picked.text) if picked.text in texts else None,
            format_func=labels.__getitem__,
            key=_key("sentence", pid, i),
            on_change=_on_sentence,
            args=(pid, item, profile, i, picked.chunk_id, texts),
            help="The passage of the chunk this statement rests on.",
        )
    with edit_col.popover("Edit", width="stretch", help="Edit the statement's text"):
        st.text_area(
            f"Statement {i + 1}",
            value=edit.text or item.answer.statements[i].text,
            key=_key("text", pid, i),
            on_change=_on_text,
            args=(pid, item, i),
            height=100,
        )
    if not edit.empty:
        undo_col.button(
            "Undo", key=f"ans_undo_{pid}_{i}", on_click=_on_reset, args=(pid, item, i), width="stretch"
        )


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


def _decision(
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
        skip_col.button(
            "Skip",
            key="skip",
            shortcut="Alt+K",
            help="Next packet (Alt+K)",
            on_click=flow.skip,
            args=(desk, pid),
        )
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
        key=_key("abstain", pid),
        on_change=_on_abstain,
        args=(pid,),
        help="When no retrieved source supports the answer: it abstains and says what evidence is missing.",
        disabled=not can_submit,
    )
    if draft.abstain:
        st.text_area(
            "Missing evidence (one item per line)",
            value=draft.missing,
            key=_key("missing", pid),
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
            st.markdown(_issue_markdown(issue, item))


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
    draft = _draft(packet.packet_id)
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
            _statement(view, item, profile, draft, packet, can_submit)
        general = answer_reading.general_issues(issues)
        if general:
            with st.expander(f"Findings on the answer as a whole ({len(general)})"):
                for issue in general:
                    st.markdown(_issue_markdown(issue, item))
        with st.expander("Every retrieved chunk"):
            for chunk in item.chunks:
                st.caption(escape(answer_reading.chunk_caption(chunk)))
                st.markdown(escape(" ".join(chunk.text.split())))
    with right, st.container(key="answer_side"):
        with st.container(key="answer_decision"):
            _decision(packet, desk, item, profile, draft, attempt, can_submit)
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
