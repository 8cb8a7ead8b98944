"""Operations page (admins): documents that could not be read, never handed to a clinician. Retry one with
its password, or close it as not a medical record; both are audited."""

from pathlib import Path

import streamlit as st

from arbiter.review.operations_view import OpsDesk, ops_rows
from arbiter.review.packet_view import escape
from arbiter.review.queue_view import reason_label
from arbiter.store import RESOLUTIONS
from review_app import state

user = state.require_user()
if not user.is_admin:
    st.error("Only admins can manage the operations lane.")
    st.stop()
store = state.the_store()
settings = state.settings()
ops = OpsDesk(store, user.name, settings.docs_root, settings.output_root or Path("output"))

st.title("Operations")
state.show_flash()
st.caption(
    "Documents that could not be read (empty, locked, not a PDF, damaged). No clinician is handed these. "
    "Retry one with its password, or close it as not a medical record; both are recorded in the audit log."
)
items = store.operations.page()
if not items:
    st.success("Nothing is waiting in the operations lane.")
    st.stop()
st.dataframe(ops_rows(items), hide_index=True, key="ops_table")
labels = {i.packet_id: f"{i.doc_id} — {reason_label(i.reason)}" for i in items}
packet_id = st.selectbox(
    "Document", list(labels), format_func=lambda p: labels[p], key="ops_packet", index=None
)
if packet_id:
    packet = store.queue.get(packet_id)
    st.text(packet.escalation_message)  # ingestion's plain-English reason, shown as text
    st.caption(escape(f"File {packet.pdf_filename} · run {packet.run_id}"))
    left, right = st.columns(2)
    with left, st.form("ops_retry_form", clear_on_submit=True):
        password = st.text_input("Password (for a locked PDF)", type="password", key="ops_password")
        retried = st.form_submit_button("Retry with this password", type="primary")
    if retried:
        with st.spinner("Reading the document again…"):
            outcome = ops.retry(packet_id, password)
        state.flash("success" if outcome.ok else "warning", outcome.message)
        st.rerun()
    right.write("The file is not a medical record at all:")
    if right.button(f"Close: {RESOLUTIONS['not_medical_record'].lower()}", key="ops_dismiss"):
        outcome = ops.dismiss(packet_id)
        state.flash("success" if outcome.ok else "error", outcome.message)
        st.rerun()
