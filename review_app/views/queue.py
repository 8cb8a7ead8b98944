"""Queue page: counts, filters, one page of packets (paged in SQL), claim next or claim a chosen one."""

import streamlit as st

from arbiter.kinds import KINDS
from arbiter.review.packet_view import escape
from arbiter.review.queue_view import (
    PAGE_SIZE,
    STATUS_LABELS,
    QueueFilters,
    clamp_page,
    kind_counts,
    kind_help,
    kind_label,
    offset_of,
    page_count,
    queue_rows,
    reason_label,
)
from arbiter.review_app import state

user = state.require_user()
store = state.the_store()
desk = state.desk(user)

st.title("Review queue")
state.show_flash()

counts = store.queue.counts(viewer=user.name)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Waiting", counts["by_status"].get("PENDING", 0))
c2.metric("In review", counts["by_status"].get("IN_REVIEW", 0))
c3.metric("Done", counts["by_status"].get("COMPLETED", 0))
c4.metric("Open", counts["open"])
# The counts split by kind of answer; a reviewer an admin restricted to kinds sees (and is handed) those only.
my_kinds = store.users.kinds(user.name)
if len(counts["by_kind"]) > 1 or my_kinds:
    st.caption(escape(" · ".join(f"{label}: {text}" for label, text in kind_counts(counts["by_kind"]))))
if my_kinds:
    st.caption(escape("You review " + " and ".join(kind_label(k).lower() + "s" for k in my_kinds) + " only."))
if user.is_admin and (unreadable := store.operations.count()):
    st.page_link(
        "views/operations.py",
        label=f"{unreadable} document{'s' if unreadable != 1 else ''} could not be read: see Operations",
        icon=":material/build:",
    )

if st.button("Claim next", type="primary", key="claim_next", shortcut="Alt+N", icon=":material/play_arrow:"):
    outcome = desk.claim_next()
    if outcome.packet is not None:
        state.open_packet(outcome.packet.packet_id)
        state.flash("success", outcome.message)
        st.switch_page("views/packet.py")
    st.info(escape(outcome.message))

mine = desk.my_claims()
if mine:
    st.caption(escape("Your claimed packets: " + ", ".join(s.doc_id for s in mine)))
    if st.button("Continue with my packet", key="continue_mine"):
        state.open_packet(mine[0].packet_id)
        st.switch_page("views/packet.py")

options = store.queue.filter_options()
with st.expander("Filters", expanded=False):
    f1, f2 = st.columns(2)
    status = f1.multiselect(
        "Status",
        list(STATUS_LABELS),
        default=["PENDING", "IN_REVIEW"],
        format_func=lambda s: STATUS_LABELS[s],
        key="filter_status",
    )
    reason = f2.multiselect(
        "Why escalated", options["reasons"], format_func=reason_label, key="filter_reason"
    )
    f3, f4 = st.columns(2)
    code = f3.selectbox("Issue code", ["", *options["codes"]], key="filter_code")
    doc_type = f4.multiselect("Document type", options["doc_types"], key="filter_type")
    kinds = list(my_kinds) or [*KINDS, *(k for k in options["kinds"] if k not in KINDS)]
    answer_kind = st.multiselect(
        "Kind", kinds, format_func=kind_label, key="filter_kind", help=kind_help(kinds)
    )
filters = QueueFilters(
    status=status, reason=reason, code=code or None, doc_type=doc_type, answer_kind=answer_kind
)

# viewer: packets of a document this reviewer holds blind are left out (a row beside it would say it is a
# second review); the store applies the rule.
total = store.queue.count(**filters.query(), viewer=user.name)
pages = page_count(total)
page = clamp_page(
    int(st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1, key="queue_page")), total
)
summaries = store.queue.page(
    **filters.query(), offset=offset_of(page), limit=PAGE_SIZE, total=total, viewer=user.name
)
st.caption(f"{total} packets match; showing {len(summaries)}.")
selection = st.dataframe(
    queue_rows(summaries),
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    key="queue_table",
)
rows = selection.selection.rows if selection else []
if rows:
    # Row positions refer to `summaries`, the snapshot just displayed.
    chosen = summaries[rows[0]]
    if st.button(f"Claim {escape(chosen.doc_id)}", key="claim_selected"):
        outcome = desk.claim(chosen.packet_id)
        if outcome.packet is not None:
            state.open_packet(chosen.packet_id)
            state.flash("success", outcome.message)
            st.switch_page("views/packet.py")
        st.warning(escape(outcome.message))
