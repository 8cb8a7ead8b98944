"""Operations page (admins): documents that could not be read, never handed to a clinician. Retry one with
its password, or close it as not a medical record; both are audited."""

from pathlib import Path
from typing import Any

import streamlit as st

from arbiter.outputs import location
from arbiter.review.operations_view import OpsDesk, ops_rows
from arbiter.review.packet_view import escape
from arbiter.review.queue_view import reason_label
from arbiter.review_app import state
from arbiter.store import RESOLUTIONS

user = state.require_user()
if not user.is_admin:
    st.error("Only admins can manage the operations lane.")
    st.stop()


def retrier(*args: Any, **kwargs: Any) -> Any:
    """arbiter.run.operations.retry, whose pipeline is loaded only when an admin retries a document."""
    from arbiter.run.operations import retry

    return retry(*args, **kwargs)


store = state.the_store()
settings = state.settings()
ops = OpsDesk(
    store,
    user.name,
    settings.docs_root,
    settings.output_root or (location(settings.output_url) if settings.output_url else Path("output")),
    retrier,
)

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


def _done(kind: str, message: str) -> None:
    state.flash(kind, message)
    st.session_state["ops_packet"] = None  # the closed item is no longer a choice


def _retry(packet_id: str) -> None:
    # The password lives only in this widget's state until the form clears it; never stored or logged.
    outcome = ops.retry(packet_id, st.session_state.get("ops_password") or "")
    _done("success" if outcome.ok else "warning", outcome.message)


def _dismiss(packet_id: str) -> None:
    outcome = ops.dismiss(packet_id)
    _done("success" if outcome.ok else "error", outcome.message)


packet_id = st.selectbox(
    "Document", list(labels), format_func=lambda p: labels[p], key="ops_packet", index=None
)
if packet_id in labels:
    packet = store.queue.get(packet_id)
    st.text(packet.escalation_message)  # ingestion's plain-English reason, shown as text
    st.caption(escape(f"File {packet.pdf_filename} · run {packet.run_id}"))
    left, right = st.columns(2)
    with left, st.form("ops_retry_form", clear_on_submit=True):
        st.text_input("Password (for a locked PDF)", type="password", key="ops_password")
        st.form_submit_button("Retry with this password", type="primary", on_click=_retry, args=(packet_id,))
    right.write("The file is not a medical record at all:")
    right.button(
        f"Close: {RESOLUTIONS['not_medical_record'].lower()}",
        key="ops_dismiss",
        on_click=_dismiss,
        args=(packet_id,),
    )
