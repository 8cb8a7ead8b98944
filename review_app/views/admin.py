"""Admin page: claims in progress; release one to the queue or reassign it; the kinds of answer an account
reviews; locked accounts (all audited)."""

import streamlit as st

from arbiter.kinds import KINDS
from arbiter.review.packet_view import escape
from arbiter.review.queue_view import claim_labels, kind_help, kind_label, queue_rows
from arbiter.review_app import state

user = state.require_user()
if not user.is_admin:
    st.error("Only admins can manage claims.")
    st.stop()
store = state.the_store()
admin = state.admin_desk(user)

st.title("Claims")
state.show_flash()
claims = store.queue.page(status=["PENDING", "IN_REVIEW"], limit=200, viewer=user.name)
st.dataframe(queue_rows(claims), hide_index=True, key="admin_claims")
ids = [c.packet_id for c in claims]
labels = claim_labels(claims)  # each packet once: two packets of one document read apart
packet_id = st.selectbox("Packet", ids, format_func=lambda p: labels[p], key="admin_packet", index=None)
if packet_id:
    c1, c2 = st.columns(2)
    if c1.button("Release to the queue", key="admin_release"):
        outcome = admin.release(packet_id)
        (st.success if outcome.ok else st.warning)(escape(outcome.message))
    reviewers = [u.name for u in store.users.list_all() if u.active]
    to_user = c2.selectbox("Reassign to", reviewers, key="admin_to", index=None)
    if to_user and c2.button("Reassign", key="admin_reassign"):
        outcome = admin.reassign(packet_id, to_user)
        (st.success if outcome.ok else st.error)(escape(outcome.message))

st.subheader("Kinds of answer")
st.caption(
    "Restrict an account to kinds of answer (a clinician to medical classifications, a compliance analyst to "
    "grounded answers): claims and the queue then hand it packets of those kinds only, and its open claims of "
    "other kinds go back to the queue. No kind chosen means every kind (audited)."
)
accounts = {u.name: u for u in store.users.list_all() if u.active}
who = st.selectbox(
    "Account",
    list(accounts),
    key="admin_kinds_user",
    index=None,
    format_func=lambda n: f"{n} ({', '.join(kind_label(k) for k in accounts[n].kinds) or 'every kind'})",
)
if who:
    chosen = st.multiselect(
        "Reviews these kinds",
        list(KINDS),
        default=[k for k in accounts[who].kinds if k in KINDS],
        format_func=kind_label,
        key=f"admin_kinds_{who}",
        help=kind_help(KINDS),
    )
    if st.button("Save kinds", key="admin_kinds_save"):
        outcome = admin.set_kinds(who, chosen)
        if outcome.ok:
            state.flash("success", outcome.message)
            st.rerun()
        st.error(escape(outcome.message))

st.subheader("Locked accounts")
locked = [u.name for u in store.users.list_all() if u.locked]
if not locked:
    st.caption("No account is locked.")
else:
    st.caption("Locked after too many failed sign-ins; unlocking lets the person try again (audited).")
    to_unlock = st.selectbox("Account", locked, key="admin_locked", index=None)
    if to_unlock and st.button("Unlock", key="admin_unlock"):
        store.users.unlock(to_unlock, actor=user.name)
        state.flash("success", f"{to_unlock} is unlocked.")
        st.rerun()
