"""Packet page: the PDF page with highlights, issues with their text, segments, production answer,
retry log, and the agree / correct forms. The claim's lease is renewed on every rerun."""

from pathlib import Path

import streamlit as st

from arbiter.contracts import PacketKind, ReviewStatus
from arbiter.record.packets import semantic_checks_text, sort_issues
from arbiter.review import documents
from arbiter.review.answer_desk import is_answer_packet
from arbiter.review.answer_view import agree_line, types_in_play
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
from arbiter.review_app import (
    adjudication_panel,
    answer_page,
    answer_panel,
    correction_panel,
    drafting,
    flow,
    page_viewer,
    state,
)
from arbiter.store import DatabaseUnavailable, UnknownPacket

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
        flow.nothing_open(desk)  # stops the page

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
if is_answer_packet(packet):  # a grounded answer: the answer desk's page (review_app/answer_page.py)
    answer_page.show(packet, desk, attempt, holding)
    done = packet.review_status in (ReviewStatus.COMPLETED, ReviewStatus.SUPERSEDED)
    drafting.save(store, user.name, packet_id, holding and not done)
    st.stop()
answer = machine_answer(packet)

# Every value from a document, a file name or an input file goes through `escape`: shown as text, never
# as Markdown (no image fetched, no link, no heading from a file name or a production CSV).
unreadable = unreadable_note(packet)
st.html(page_viewer.PAGE_CSS)
title_col, claims_col = st.container(key="packet_head").columns([3, 1], vertical_alignment="bottom")
title_col.title(escape(packet.doc_id))
with claims_col:
    flow.claims_selector(desk, packet_id)
pages_text = f"{packet.total_pages} page{'' if packet.total_pages == 1 else 's'}"
title_col.caption(
    escape(
        f"{packet.pdf_filename} · {'could not be read' if unreadable else pages_text} · "
        f"priority {PRIORITY_LABELS.get(packet.priority, packet.priority)} · {reason_label(packet.escalation_reason)}"
    )
)
if unreadable:
    st.error(escape(unreadable))
closed = packet.review_status in (ReviewStatus.COMPLETED, ReviewStatus.SUPERSEDED)
if packet.review_status == ReviewStatus.COMPLETED:
    st.success("This packet has been reviewed. Its ground truth is on the Ground truth page.")
elif packet.review_status == ReviewStatus.SUPERSEDED:
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
bundle = documents.bundle_of(packet, settings.roots, settings.bundle_urls) if pdf is not None else None
issues = sort_issues(packet.issues_summary)
contexts = [issue_context(i, bundle, answer, profile.tolerances.fuzzy_match_threshold) for i in issues]

page_key = page_viewer.page_key(packet_id)
if st.session_state.get(page_key) is None:
    first = next((c.page for c in contexts if c.page), 1)
    st.session_state[page_key] = first


def show_page(number: int) -> None:
    page_viewer.go_to(str(packet_id), number, packet.total_pages)


if (
    st.session_state.get(f"decision_{packet_id}") == "Correct"
    and packet.packet_kind != PacketKind.ADJUDICATION
):
    correction_panel.start_rows(packet_id, answer, profile)  # the page strip shows the form's segments

if packet.packet_kind == PacketKind.ADJUDICATION:
    # Both answers and the decision first, on the first screen at 1366x768; the page and the issues below.
    adjudication_panel.show_decision(
        packet, desk, bundle, profile, attempt, not closed and bundle is not None
    )

left, right = st.columns([7, 4], gap="medium")
with left:
    if unreadable:  # nothing to draw; the message above says why
        st.info("There is no page to show.")
    elif pdf is not None:
        page_viewer.show(
            page_viewer.Document(
                packet_id,
                pdf,
                packet.pdf_sha256,
                packet.total_pages,
                bundle,
                answer,
                tuple(issues),
                profile.tolerances.fuzzy_match_threshold,
                tuple(profile.taxonomy.document_types),
            )
        )


def show_issues() -> None:
    """The issues, each with its text on the page; in a fixed-height frame under the decision."""
    if packet.blind:
        st.subheader("Blind review")
        st.info(
            "This document was sampled for an independent review. The machine's verdict, its checks and "
            "any other review are not shown, so your judgement stays your own. The highlighted words are "
            "the evidence the classification cites."
        )
    else:
        st.subheader(f"Issues ({len(issues)})")
    if not unreadable:
        st.write(escape(packet.escalation_message))
    if not packet.blind and packet.semantic_checks is not None:
        st.caption(semantic_checks_text(packet.semantic_checks))
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


def show_segments() -> None:
    """The machine's segments with their reasoning, beside the decision (visible while correcting)."""
    st.subheader("Segments")
    st.dataframe(segments_table(answer), hide_index=True)


def lower_panel(correcting: bool) -> None:
    with right, st.container(height=page_viewer.LOWER_HEIGHT, key="issues_box"):
        show_issues()
        # An adjudication shows both answers' segments above; while correcting, the segments and their
        # reasoning sit above the editor.
        if packet.packet_kind != PacketKind.ADJUDICATION and not correcting:
            show_segments()


if packet.packet_kind == PacketKind.ADJUDICATION:
    lower_panel(False)
    st.stop()

# The decision first in the right column (its buttons on screen without scrolling), the issues below it.
tab_names = ["Review", "Classification"] + ([] if packet.blind else ["Retry log"])
review_tab, answer_tab, *more_tabs = right.tabs(tab_names)

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
                st.markdown(escape(f"Fix for {fix['issue']} ({fix['code']}): {fix['patch']}"))
                st.caption(escape(f"before: {fix['before']} → after: {fix['after']}"))

with review_tab:
    drafts = state.drafts().setdefault(packet_id, {})
    can_submit = not closed and bundle is not None
    if bundle is None:
        st.error("The document could not be read, so this packet cannot be reviewed here.")
    if drafts.pop("switch_to_correct", False):  # set before the radio exists: Agree was refused
        st.session_state[f"decision_{packet_id}"] = "Correct"
    radio_col, skip_col = st.columns([3, 1], vertical_alignment="center")
    decision = radio_col.radio(
        "Your decision",
        list(DECISIONS),
        horizontal=True,
        key=f"decision_{packet_id}",
        help="Agree: the classification is right. Correct: fix the segments, types or shares.",
    )
    if not closed:
        flow.skip_button(skip_col, desk, packet_id)
    # A blind reviewer is not told which types the machine saw: guidance on every type.
    correction_panel.show_guidance(
        profile, profile.taxonomy.document_types if packet.blind else types_in_play(answer)
    )
    if decision == "Agree":
        st.markdown("**" + escape(agree_line(answer)) + "**")  # what Alt+A saves, on screen
        # Outside the form, so the draft on the server follows the notes as they are typed.
        notes = st.text_area("Notes (optional)", key=f"agree_notes_{packet_id}", height=68)
        with st.form(f"agree_{packet_id}"):
            conf = drafting.initial(packet_id, "agree_conf", 0.9)
            confidence = st.slider("Your confidence", 0.0, 1.0, conf, 0.05, key=f"agree_conf_{packet_id}")
            # Saved in the button's callback, before the next run: that run draws the next packet (one run).
            save_col, stop_col = st.columns(2)
            save_col.form_submit_button(
                "Agree and save",
                type="primary",
                shortcut="Alt+A",
                disabled=not can_submit,
                on_click=flow.agree,
                args=(desk, packet, bundle, profile, attempt),
                help="Save and open the next packet (Alt+A)",
            )
            stop_col.form_submit_button(
                "Save and stop",
                disabled=not can_submit,
                on_click=flow.agree,
                args=(desk, packet, bundle, profile, attempt, True),
                help="Save and claim nothing more (the day's last packet)",
            )
        failed = drafts.pop("agree_failed", None)
        if failed is not None:
            st.error(escape(failed.message))
            for problem in failed.problems:
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

lower_panel(decision == "Correct")

drafting.save(store, user.name, packet_id, holding and not closed)
