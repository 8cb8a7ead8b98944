"""The statement cards of the answer desk's page (issue 31): each statement with its verdict badge, the
chunk it cites with the quote highlighted (or the closest passage and what differs) and the issues on it;
under it the reviewer's controls — the verdict with a reason, another chunk or sentence to cite, the text
edited, undo. Their callbacks change the draft kept for the packet (`kept_draft`, `store_draft`), the logic
in arbiter/review/answer_draft.py. Every value from an item goes through `escape`: text, never Markdown."""

from __future__ import annotations

from typing import Any

import streamlit as st

from arbiter.contracts import SMEPacket
from arbiter.contracts.grounded import GroundedItem, GroundedProfile, UnsupportedReason
from arbiter.review import answer_draft, answer_reading
from arbiter.review.packet_view import SEVERITY_ICONS, escape
from arbiter.review_app import drafting

SUPPORTED = "supported"
VERDICTS = (SUPPORTED, *(r.value for r in UnsupportedReason))


def widget_key(name: str, packet_id: str, index: int | None = None) -> str:
    return f"ans_{name}_{packet_id}" + ("" if index is None else f"_{index}")


def kept_draft(packet_id: str) -> answer_draft.AnswerDraft:
    return answer_draft.AnswerDraft.from_json(drafting.kept(packet_id).get("answer"))


def store_draft(packet_id: str, draft: answer_draft.AnswerDraft, index: int | None = None) -> None:
    """Keep the draft; the statement's widgets are redrawn from it (their own state would lag behind)."""
    drafting.kept(packet_id)["answer"] = draft.to_json()
    if index is not None:
        for name in ("verdict", "chunk", "sentence", "text"):
            st.session_state.pop(widget_key(name, packet_id, index), None)


def _on_verdict(packet_id: str, item: GroundedItem, index: int) -> None:
    value = st.session_state.get(widget_key("verdict", packet_id, index))
    reason = UnsupportedReason(value) if value in {r.value for r in UnsupportedReason} else None
    store_draft(packet_id, answer_draft.mark_unsupported(kept_draft(packet_id), item, index, reason), index)


def _on_chunk(packet_id: str, item: GroundedItem, profile: GroundedProfile, index: int) -> None:
    chunk_id = st.session_state.get(widget_key("chunk", packet_id, index))
    if isinstance(chunk_id, str):
        store_draft(
            packet_id, answer_draft.cite(kept_draft(packet_id), item, index, chunk_id, profile), index
        )


def _on_sentence(
    packet_id: str, item: GroundedItem, profile: GroundedProfile, index: int, chunk_id: str, texts: list[str]
) -> None:
    picked = st.session_state.get(widget_key("sentence", packet_id, index))
    if isinstance(picked, int) and 0 <= picked < len(texts):
        draft = answer_draft.cite(kept_draft(packet_id), item, index, chunk_id, profile, texts[picked])
        store_draft(packet_id, draft, index)


def _on_text(packet_id: str, item: GroundedItem, index: int) -> None:
    text = st.session_state.get(widget_key("text", packet_id, index))
    if isinstance(text, str):
        store_draft(packet_id, answer_draft.edit_text(kept_draft(packet_id), item, index, text), index)


def _on_reset(packet_id: str, item: GroundedItem, index: int) -> None:
    store_draft(packet_id, answer_draft.reset(kept_draft(packet_id), item, index), index)


def issue_markdown(issue: Any, item: GroundedItem, with_target: bool = True) -> str:
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
            st.caption(issue_markdown(issue, item, with_target=False))


def statement_card(
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
                    st.caption(issue_markdown(issue, item, with_target=False))
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
        key=widget_key("verdict", pid, i),
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
        key=widget_key("chunk", pid, i),
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
            key=widget_key("sentence", pid, i),
            on_change=_on_sentence,
            args=(pid, item, profile, i, picked.chunk_id, texts),
            help="The passage of the chunk this statement rests on.",
        )
    with edit_col.popover("Edit", width="stretch", help="Edit the statement's text"):
        st.text_area(
            f"Statement {i + 1}",
            value=edit.text or item.answer.statements[i].text,
            key=widget_key("text", pid, i),
            on_change=_on_text,
            args=(pid, item, i),
            height=100,
        )
    if not edit.empty:
        undo_col.button(
            "Undo", key=f"ans_undo_{pid}_{i}", on_click=_on_reset, args=(pid, item, i), width="stretch"
        )
