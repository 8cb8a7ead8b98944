"""Sign-in page: local accounts (passwords checked by the store), throttled per account and per client;
every failure audited, an account locked after too many until an admin unlocks it."""

import streamlit as st

from arbiter.review.auth import sign_in_checked
from arbiter.review.onboarding import NO_ACCOUNTS
from arbiter.review_app import session, state

st.title("Arbiter review")
st.write("Sign in to review escalated documents.")
if notice := session.ended_notice():
    st.info(notice)
if not state.the_store().users.list_all():
    st.warning(NO_ACCOUNTS)
with st.form("sign_in"):
    name = st.text_input("User name", key="sign_in_name")
    password = st.text_input("Password", type="password", key="sign_in_password")
    submitted = st.form_submit_button("Sign in", type="primary")
if submitted:
    user, refusal = sign_in_checked(
        state.the_store().users,
        name,
        password,
        client=state.client_address(),
        throttle=state.client_throttle(),
        lock_after=state.settings().lock_after,
    )
    if user is None:
        st.error(refusal or "The user name or password is not right.")
    else:
        session.start(state.the_store(), user, state.settings().session_hours)
        state.the_store().audit.record(user.name, "user.sign_in")
        st.rerun()
