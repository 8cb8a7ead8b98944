"""Packet page: the PDF page with highlights, issues with their text, segments, production answer,
retry log, and the agree / correct forms. The claim's lease is renewed on every rerun."""

from pathlib import Path

import streamlit as st

from arbiter.contracts import PacketKind
from arbiter.record.packets import semantic_checks_text, sort_issues
from arbiter.review import documents
from arbiter.review.answer_view import types_in_play
from arbiter.review.context import NOT_ON_PAGE, issue_context
from arbiter.review.desk import machine_answer
from arbiter.review.drafts import DECISIONS
from arbiter.review.packet_view import (
    SEVERITY_ICONS,
    answer_differs,
    closest_markdown,
    escape,
    passage_markdown,
    production_summary,
    retry_rows,
    segments_table,
    unreadable_note,
)
from arbiter.review.paths import PathRefused
from arbiter.review.queue_view import PRIORITY_LABELS, reason_label
from arbiter.review.render import RenderError, page_marks, unhighlighted_reason
from arbiter.store import DatabaseUnavailable, UnknownPacket
from review_app import adjudication_panel, answer_panel, correction_panel, drafting, state

user = state.require_user()
store = state.the_store()
settings = state.settings()
profile = state.profile()
desk = state.desk(user)
state.show_flash()

packet_id = st.session_state.get(state.PACKET)
if packet_id is None:
    mine = desk.my_claims()
    if mine:  # session state is gone after a refresh; the claim is in the database
        state.open_packet(mine[0].packet_id)
        packet_id = mine[0].packet_id
    else:
        st.title("Packet")
        st.info("You have no packet open. Claim the next one, or pick one in the queue.")
        if st.button("Claim next", type="primary", key="packet_claim_next", shortcut="Alt+N"):
            outcome = desk.claim_next()
            if outcome.packet is not None:
                state.open_packet(outcome.packet.packet_id)
                st.rerun()
            st.info(escape(outcome.message))
        st.stop()

try:
    packet = store.queue.get(packet_id, viewer=user.name)  # refused while the user holds another, blind one
    st.session_state.setdefault("arbiter_loaded_packets", {})[packet_id] = packet
except UnknownPacket as exc:
    state.close_packet(packet_id)
    st.error(escape(str(exc)))
    st.stop()
except DatabaseUnavailable:
    # Keep working on the packet as last loaded; the submit says whether it was saved.
    packet = st.session_state.get("arbiter_loaded_packets", {}).get(packet_id)
    if packet is None:
        raise
    st.warning(
        "The database is not answering right now; this is the packet as it was last loaded. Your draft is "
        "kept; saving works again as soon as the database is back."
    )

attempt = state.attempt_of(packet_id)
holding = desk.keep_alive(packet_id)
drafting.restore_once(store, user.name, packet, profile, holding)  # the server's draft, after a reload
answer = machine_answer(packet)

# Every value from a document, a file name or an input file goes through `escape`: shown as text, never
# as Markdown (no image fetched, no link, no heading from a file name or a production CSV).
unreadable = unreadable_note(packet)
st.title(escape(packet.doc_id))
pages_text = f"{packet.total_pages} page{'' if packet.total_pages == 1 else 's'}"
st.caption(
    escape(
        f"{packet.pdf_filename} · {'could not be read' if unreadable else pages_text} · "
        f"priority {PRIORITY_LABELS.get(packet.priority, packet.priority)} · {reason_label(packet.escalation_reason)}"
    )
)
if unreadable:
    st.error(escape(unreadable))
else:
    st.write(escape(packet.escalation_message))
if not packet.blind and packet.semantic_checks is not None:
    st.caption(semantic_checks_text(packet.semantic_checks))
closed = packet.review_status in ("COMPLETED", "SUPERSEDED")
if packet.review_status == "COMPLETED":
    st.success("This packet has been reviewed. Its ground truth is on the Ground truth page.")
elif packet.review_status == "SUPERSEDED":
    st.warning("A newer run queued this document again; review its new packet from the queue instead.")
elif not holding:
    holder = (
        f" {packet.claimed_by} holds it now." if packet.claimed_by and packet.claimed_by != user.name else ""
    )
    st.warning(
        escape(f"This packet is not claimed by you.{holder} Your draft is kept; claim it again to submit.")
    )
    if st.button("Claim it again", key="reclaim"):
        outcome = desk.claim(packet_id)
        (st.success if outcome.ok else st.error)(escape(outcome.message))
        if outcome.ok:
            st.rerun()

pdf: Path | None = None
try:
    pdf = documents.pdf_of(packet, settings.docs_root)
except PathRefused as exc:
    st.error(escape(str(exc)))
bundle = documents.bundle_of(packet, settings.roots) if pdf is not None else None
issues = sort_issues(packet.issues_summary)
contexts = [issue_context(i, bundle, answer, profile.tolerances.fuzzy_match_threshold) for i in issues]

page_key = f"pdf_page_{packet_id}"
if st.session_state.get(page_key) is None:
    first = next((c.page for c in contexts if c.page), 1)
    st.session_state[page_key] = first


def show_page(number: int) -> None:
    st.session_state[page_key] = min(max(number, 1), max(packet.total_pages, 1))


left, right = st.columns([3, 2], gap="large")
with left:
    if unreadable:  # nothing to draw; the message above says why
        st.info("There is no page to show.")
    else:
        current = int(st.session_state[page_key])
        n1, n2, n3 = st.columns([1, 2, 1])
        n1.button("◀ Page", key="prev_page", on_click=show_page, args=(current - 1,), shortcut="Alt+J")
        n2.number_input(
            "Page",
            min_value=1,
            max_value=max(packet.total_pages, 1),
            key=page_key,
            label_visibility="collapsed",
        )
        n3.button("Page ▶", key="next_page", on_click=show_page, args=(current + 1,), shortcut="Alt+L")
        if pdf is not None:
            marks = tuple(
                page_marks(bundle, answer, issues, current, profile.tolerances.fuzzy_match_threshold)
            )
            try:
                st.image(state.page_png(str(pdf), packet.pdf_sha256, current, marks), width="stretch")
                st.caption(
                    f"Page {current} of {packet.total_pages}. :orange-background[Yellow]: evidence the "
                    "classification cites; :red-background[pink]: where an issue points."
                )
                why = unhighlighted_reason(bundle, answer, current, profile.tolerances.fuzzy_match_threshold)
                if why:
                    st.warning(escape(why))
            except RenderError as exc:
                st.error(escape(str(exc)))

with right:
    if packet.packet_kind == PacketKind.ADJUDICATION:
        adjudication_panel.show_summary(packet)
    elif packet.blind:
        st.subheader("Blind review")
        st.info(
            "This document was sampled for an independent review. The machine's verdict, its checks and "
            "any other review are not shown, so your judgement stays your own. The highlighted words are "
            "the evidence the classification cites."
        )
    else:
        st.subheader(f"Issues ({len(issues)})")
    for number, ctx in enumerate(contexts):
        issue = ctx.issue
        with st.container(border=True):
            st.markdown(f"{SEVERITY_ICONS[issue.severity.value]} `{issue.code}`  \n{escape(issue.message)}")
            if ctx.segment is not None:
                st.caption(
                    escape(
                        f"Segment {ctx.segment.index} (pages {ctx.segment.start_page}–{ctx.segment.end_page}, "
                        f"{ctx.segment.dominant_type}): {ctx.segment.reasoning}"
                    )
                )
            if ctx.closest is not None:
                st.markdown(closest_markdown(ctx.closest))
            elif ctx.evidence is not None and issue.code in NOT_ON_PAGE:
                st.caption("Nothing on the page is even half alike this quote; it may be invented.")
            if ctx.passage is not None:
                with st.expander(f"Text on page {ctx.passage.page}", expanded=number < 3):
                    st.markdown(passage_markdown(ctx.passage))
            if ctx.page is not None:
                st.button(
                    f"Show page {ctx.page}", key=f"issue_page_{number}", on_click=show_page, args=(ctx.page,)
                )

if packet.packet_kind == PacketKind.ADJUDICATION:
    adjudication_panel.show_decision(
        packet, desk, bundle, profile, attempt, not closed and bundle is not None
    )
    st.stop()

tab_names = ["Review", "Segments", "Classification"] + ([] if packet.blind else ["Retry log"])
review_tab, segments_tab, answer_tab, *more_tabs = st.tabs(tab_names)

with segments_tab:
    st.dataframe(segments_table(answer), hide_index=True)

with answer_tab:
    st.markdown(escape(production_summary(packet, answer)))
    if answer_differs(packet):
        st.caption("Automatic fixes changed the primary classification; below is the fixed version.")
    answer_panel.show(answer, key=f"answer_{packet_id}", file_name=f"{packet.doc_id}.json")
    if answer_differs(packet):
        with st.expander("The primary classification before fixes"):
            answer_panel.show(packet.primary_agent_classification, key=f"primary_{packet_id}")

for retry_tab in more_tabs:
    with retry_tab:
        for row in retry_rows(packet):
            st.markdown(
                f"**Attempt {row['attempt']}**: {escape(str(row['decision']))} by rule {escape(str(row['rule']))}"
            )
            st.caption(escape(f"Issue codes: {row['issue_codes'] or 'none'}"))
            for fix in row["fixes"]:
                st.markdown(escape(f"Fix for {fix['issue']} ({fix['code']})"))
                st.code(fix["patch"], language="json")
                st.caption(escape(f"before: {fix['before']} → after: {fix['after']}"))

with review_tab:
    drafts = state.drafts().setdefault(packet_id, {})
    can_submit = not closed and bundle is not None
    if bundle is None:
        st.error("The document could not be read, so this packet cannot be reviewed here.")
    if drafts.pop("switch_to_correct", False):  # set before the radio exists: Agree was refused
        st.session_state[f"decision_{packet_id}"] = "Correct"
    decision = st.radio(
        "Your decision",
        list(DECISIONS),
        horizontal=True,
        key=f"decision_{packet_id}",
        captions=["The classification is right.", "Fix the segments, types or shares."],
    )
    # A blind reviewer is not told which types the machine saw: guidance on every type.
    correction_panel.show_guidance(
        profile, profile.taxonomy.document_types if packet.blind else types_in_play(answer)
    )
    if decision == "Agree":
        # Outside the form, so the draft on the server follows the notes as they are typed.
        notes = st.text_area("Notes (optional)", key=f"agree_notes_{packet_id}")
        with st.form(f"agree_{packet_id}"):
            conf = drafting.initial(packet_id, "agree_conf", 0.9)
            confidence = st.slider("Your confidence", 0.0, 1.0, conf, 0.05, key=f"agree_conf_{packet_id}")
            agreed = st.form_submit_button(
                "Agree and save", type="primary", shortcut="Alt+A", disabled=not can_submit
            )
        if agreed and bundle is not None:
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
            if outcome.ok:
                state.close_packet(packet_id)
                state.flash("success", outcome.message)
                st.switch_page("views/queue.py")
            if outcome.needs_correction:
                drafts.update(switch_to_correct=True, agree_refused=[p.message for p in outcome.blocking])
                st.rerun()
            st.error(escape(outcome.message))
            for problem in outcome.problems:
                (st.error if problem.blocking else st.caption)(escape(problem.message))
    else:
        correction_panel.show(
            packet=packet,
            desk=desk,
            bundle=bundle,
            profile=profile,
            answer=answer,
            codes=sorted({i.code for i in issues}),
            attempt=attempt,
            can_submit=can_submit,
        )

    if not closed and st.button("Skip (back to the queue)", key="skip", shortcut="Alt+K"):
        outcome = desk.release(packet_id)
        state.close_packet(packet_id)
        state.flash("info" if outcome.ok else "warning", outcome.message)
        st.switch_page("views/queue.py")

drafting.save(store, user.name, packet_id, holding and not closed)
