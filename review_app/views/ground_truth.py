"""Ground-truth page: each document's newest version and its full, append-only history."""

import streamlit as st

from arbiter.kinds import GROUNDED
from arbiter.review.adjudication import answer_rows
from arbiter.review.answer_desk import answer_json, answer_summary, ground_truth_rows
from arbiter.review.gt_view import history_rows, latest_rows, version_caption
from arbiter.review.packet_view import escape
from arbiter.review_app import answer_panel, state

user = state.require_user()
store = state.the_store()

st.title("Ground truth")
state.show_flash()
search = st.text_input("Find a document", key="gt_search", placeholder="document id")
page = int(st.number_input("Page", min_value=1, value=1, key="gt_page"))
# viewer: a document whose blind review the user may still give is neither listed nor shown (store/blind.py).
latest = store.ground_truth.page(search=search or None, offset=(page - 1) * 50, limit=50, viewer=user.name)
st.dataframe(latest_rows(latest), hide_index=True, key="gt_table")
st.caption(
    "A document whose blind review you may still be asked to give is not listed until that review is done; "
    "opening a reviewer's answer here means you will not be asked to give it blind."
)
doc_ids = [row["doc_id"] for row in latest]
doc_id = st.selectbox("Document", doc_ids, key="gt_doc", index=0 if doc_ids else None)
if doc_id:
    history = store.ground_truth.history(doc_id, viewer=user.name)
    st.subheader(escape(f"{doc_id}: {len(history)} version{'s' if len(history) != 1 else ''}"))
    st.dataframe(history_rows(history), hide_index=True, key="gt_history")
    version = st.selectbox(
        "Version", [r.version for r in reversed(history)], key="gt_version", format_func=lambda v: f"v{v}"
    )
    chosen = next((r for r in history if r.version == version), None)
    if chosen is not None:
        st.caption(escape(version_caption(chosen)))
        review = chosen.sme_review
        if review is not None and review.review_notes.strip():
            st.markdown("**Reviewer's comment:** " + escape(review.review_notes))
        if review is not None and review.reason_codes:
            st.caption(escape("Reasons: " + ", ".join(review.reason_codes)))
        if chosen.answer_kind == GROUNDED:  # a grounded answer: its statements and the verdict on each
            st.markdown("**" + escape(answer_summary(chosen.ground_truth_classification)) + "**")
            rows = ground_truth_rows(chosen.primary_agent_classification, chosen.statement_verdicts)
            st.dataframe(rows, hide_index=True, key="gt_statements")
            st.download_button(
                "Download as JSON",
                answer_json(chosen.ground_truth_classification),
                file_name=f"{doc_id}-v{version}.json",
                mime="application/json",
                key=f"download_gt_{doc_id}_{version}",
            )
            st.stop()
        st.dataframe(answer_rows(chosen.ground_truth_classification), hide_index=True, key="gt_segments")
        answer_panel.show(
            chosen.ground_truth_classification,
            key=f"gt_{doc_id}_{version}",
            file_name=f"{doc_id}-v{version}.json",
        )
