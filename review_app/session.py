"""Local sign-ins that survive a browser reload (docs/design.md §8.3).

After a password sign-in the store issues a signed, expiring token (arbiter.store.sessions) that is kept in
the page's URL as `?session=…` (Streamlit can read cookies but not set them; the URL is what a reload
keeps). Every run checks the token, so a sign-out, a deactivated account or a reset password ends the
session at the next click; a reload with a valid token restores the user without a password.
"""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from arbiter.review.auth import SignedIn
from arbiter.store import DatabaseUnavailable, Store

USER = "arbiter_signed_in"
TOKEN = "arbiter_session_token"
ENDED = "arbiter_session_ended"
QUERY_KEY = "session"
ENDED_MESSAGE = "Your session has ended (signed out, expired or changed by an admin). Please sign in again."


def start(store: Store, user: SignedIn, hours: int) -> None:
    """Remember a fresh sign-in in this session and in the URL."""
    token = store.sessions.issue(user.name, ttl=timedelta(hours=hours))
    st.session_state[USER] = user
    st.session_state[TOKEN] = token
    st.query_params[QUERY_KEY] = token


def signed_in(store: Store) -> SignedIn | None:
    """The user this browser's token signs in (this session's, or after a reload the URL's), else None."""
    token = st.session_state.get(TOKEN) or st.query_params.get(QUERY_KEY)
    if not token:
        return None
    try:
        account = store.sessions.check(str(token))
    except DatabaseUnavailable:
        # The database is away: a user already signed in keeps working (drafts kept); the next run checks again.
        kept = st.session_state.get(USER)
        return kept if isinstance(kept, SignedIn) else None
    if account is None:
        st.session_state.clear()
        st.session_state[ENDED] = True
        if QUERY_KEY in st.query_params:
            del st.query_params[QUERY_KEY]
        return None
    user = SignedIn(account.name, account.role, "password")
    st.session_state[USER] = user
    st.session_state[TOKEN] = token
    if st.query_params.get(QUERY_KEY) != token:  # a page switch drops the URL's query parameters
        st.query_params[QUERY_KEY] = token
    return user


def sign_out(store: Store) -> None:
    """Revoke this session's token and forget everything this session held."""
    token = st.session_state.get(TOKEN)
    if token:
        store.sessions.revoke(str(token))
    st.session_state.clear()
    st.query_params.clear()


def ended_notice() -> str | None:
    """Once, after a session was refused: why the sign-in form is back."""
    return ENDED_MESSAGE if st.session_state.pop(ENDED, False) else None
