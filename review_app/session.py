"""Local sign-ins that survive a browser reload, with no credential in the address (docs/design.md §8.3,
SECURITY.md §3).

After a password sign-in the store issues a signed, expiring token (arbiter.store.sessions). This session
keeps it in its state, and the browser keeps it in a cookie scoped to the app (`SameSite=Strict; Path=/`,
`Secure` over https, expiring with the session): Streamlit reads cookies (`st.context.cookies`, sent when the
page connects) but cannot set them, so a one-line script written with `st.html` sets it. A reload reconnects
with the cookie and restores the user without a password; a copied address carries nothing and opens the
sign-in page. Every run checks the token, so a sign-out (which also clears the cookie), a deactivated account
or a reset password ends the session at the next click. A `?session=` left in an old address is ignored and
removed.
"""

from __future__ import annotations

import json
from datetime import timedelta

import streamlit as st

from arbiter.review.auth import SignedIn
from arbiter.store import DatabaseUnavailable, Store

USER = "arbiter_signed_in"
TOKEN = "arbiter_session_token"
ENDED = "arbiter_session_ended"
REFUSED = "arbiter_cookie_refused"  # the cookie this connection came with, once refused or signed out
CLEAR = "arbiter_cookie_clear"
COOKIE = "arbiter_session"
OLD_QUERY_KEY = "session"  # where the token used to ride; never read
ENDED_MESSAGE = "Your session has ended (signed out, expired or changed by an admin). Please sign in again."


def browser_cookie() -> str | None:
    """The session cookie the browser sent when this page connected (None without one)."""
    value = st.context.cookies.get(COOKIE)
    return value if isinstance(value, str) and value else None  # AppTest's client answers with a mock


def start(store: Store, user: SignedIn, hours: int) -> None:
    """Remember a fresh sign-in in this session; `keep_cookie` writes it into the browser."""
    token = store.sessions.issue(user.name, ttl=timedelta(hours=hours))
    st.session_state[USER] = user
    st.session_state[TOKEN] = token
    st.session_state["arbiter_session_hours"] = hours
    st.session_state.pop(CLEAR, None)


def _forget_old_link() -> None:
    if OLD_QUERY_KEY in st.query_params:
        del st.query_params[OLD_QUERY_KEY]


def signed_in(store: Store) -> SignedIn | None:
    """The user this browser's token signs in (this session's, or after a reload the cookie's), else None."""
    _forget_old_link()
    token = st.session_state.get(TOKEN)
    if not token:
        cookie = browser_cookie()
        token = cookie if cookie and cookie != st.session_state.get(REFUSED) else None
    if not token:
        return None
    try:
        account = store.sessions.check(str(token))
    except DatabaseUnavailable:
        # The database is away: a user already signed in keeps working (drafts kept); the next run checks again.
        kept = st.session_state.get(USER)
        return kept if isinstance(kept, SignedIn) else None
    if account is None:
        _end(str(token), ended=True)
        return None
    user = SignedIn(account.name, account.role, "password")
    st.session_state[USER] = user
    st.session_state[TOKEN] = token
    return user


def _end(token: str, *, ended: bool) -> None:
    """Forget everything this session held, never take this token from the cookie again, clear the cookie."""
    st.session_state.clear()
    st.session_state[REFUSED] = token
    st.session_state[CLEAR] = True
    if ended:
        st.session_state[ENDED] = True


def sign_out(store: Store) -> None:
    """Revoke this session's token on the server and forget it here and in the browser."""
    token = st.session_state.get(TOKEN)
    if token:
        store.sessions.revoke(str(token))
    _end(str(token or ""), ended=False)
    st.query_params.clear()


def cookie_script() -> str | None:
    """The script that keeps the browser's cookie in step with this session (None: nothing to change)."""
    secure = "(location.protocol === 'https:' ? '; Secure' : '')"
    if st.session_state.get(CLEAR):
        return (
            f"<script>document.cookie = '{COOKIE}=; Max-Age=0; Path=/; SameSite=Strict' + {secure};</script>"
        )
    token = st.session_state.get(TOKEN)
    if not token or browser_cookie() == token:
        return None
    max_age = int(st.session_state.get("arbiter_session_hours", 12)) * 3600
    # json.dumps: the token is base64url and dots, quoted as a JavaScript string all the same.
    value = json.dumps(f"{COOKIE}={token}; Max-Age={max_age}; Path=/; SameSite=Strict")
    return f"<script>document.cookie = {value} + {secure};</script>"


def keep_cookie() -> None:
    """Write the cookie script into the page (a script only; it draws nothing)."""
    script = cookie_script()
    if script is not None:
        st.html(script, unsafe_allow_javascript=True)


def ended_notice() -> str | None:
    """Once, after a session was refused: why the sign-in form is back."""
    return ENDED_MESSAGE if st.session_state.pop(ENDED, False) else None
