"""Sign-in page: local accounts (passwords checked by the store)."""

import streamlit as st

from arbiter.review.auth import sign_in
from arbiter.review.onboarding import NO_ACCOUNTS
from review_app import state

st.title("Arbiter review")
st.write("Sign in to review escalated documents.")
if not state.the_store().list_users():
    st.warning(NO_ACCOUNTS)
with st.form("sign_in"):
    name = st.text_input("User name", key="sign_in_name")
    password = st.text_input("Password", type="password", key="sign_in_password")
    submitted = st.form_submit_button("Sign in", type="primary")
if submitted:
    user = sign_in(state.the_store(), name, password)
    if user is None:
        st.error("The user name or password is not right.")
    else:
        st.session_state[state.USER] = user
        state.the_store().audit(user.name, "user.sign_in")
        st.rerun()
