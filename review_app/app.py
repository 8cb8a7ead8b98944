"""Entry script of the review app: sign-in gate and navigation. Run it with `arbiter review`."""

import sys
from pathlib import Path

# `streamlit run` puts only this file's folder on the path: add the folder that holds the `arbiter` package
# (the checkout, where review_app/ is linked as arbiter/review_app, or site-packages, where it is inside).
ROOT = str(next(p for p in Path(__file__).absolute().parents if (p / "arbiter" / "__init__.py").is_file()))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import streamlit as st  # noqa: E402

from arbiter.review.onboarding import PROXY_NOT_RECOGNISED  # noqa: E402
from arbiter.review.packet_view import escape  # noqa: E402
from arbiter.review_app import session, state  # noqa: E402
from arbiter.store import DatabaseUnavailable  # noqa: E402

# The sidebar (who is signed in, sign out, the shortcuts) starts collapsed and the pages are linked from the
# top bar: at 1366 px the packet page needs the whole width for the page beside the decision.
st.set_page_config(
    page_title="Arbiter review",
    page_icon=":material/fact_check:",
    layout="wide",
    initial_sidebar_state="collapsed",
)

# Every page starts just under the top bar (3.75rem): Streamlit's own 6rem top padding left about 150 px
# empty above each page's title, and less than the bar hid the packet's title under it.
TOP_CSS = (
    "<style>[data-testid='stMainBlockContainer'] {padding-top: 4.25rem;}"
    " [data-testid='stMainBlockContainer'] h1 {padding-top: 0.25rem;}</style>"
)


def _main() -> None:
    st.html(TOP_CSS)  # style only: Streamlit puts it in the event container, where it takes no room
    user = state.current_user()
    if user is None:
        if state.settings().auth == "proxy":
            st.error(state.proxy_refusal() or PROXY_NOT_RECOGNISED)
            st.stop()
        # The pages' own addresses show the sign-in form too (hidden), so a reload or an old link after the
        # session ended asks for sign-in instead of "page not found", and signing in lands on that page.
        sign_in_at = [
            st.Page("views/sign_in.py", title="Sign in", url_path=path, visibility="hidden")
            for path in ("packet", "ground_truth", "metrics", "admin")
        ]
        nav = st.navigation(
            [st.Page("views/sign_in.py", title="Sign in", icon=":material/login:", default=True), *sign_in_at]
        )
    else:
        pages = [
            st.Page("views/queue.py", title="Queue", icon=":material/inbox:", default=True),
            st.Page("views/packet.py", title="Packet", icon=":material/description:"),
            st.Page("views/ground_truth.py", title="Ground truth", icon=":material/history:"),
            st.Page("views/metrics.py", title="Metrics", icon=":material/monitoring:"),
        ]
        if user.is_admin:
            pages.append(
                st.Page("views/admin.py", title="Claims (admin)", icon=":material/admin_panel_settings:")
            )
            pages.append(st.Page("views/operations.py", title="Operations (admin)", icon=":material/build:"))
        nav = st.navigation(pages, position="top")
        with st.sidebar:
            session.keep_cookie()  # the browser's session cookie, set after a sign-in (review_app/session.py)
            st.caption(f"Signed in as **{escape(user.name)}** ({escape(user.role)})")
            if user.via == "password" and st.button("Sign out", key="sign_out"):
                session.sign_out(state.the_store())
                st.rerun()
            st.caption(
                "Shortcuts: Alt+N claim next · Alt+A agree and open the next packet · Alt+S save correction · "
                "Alt+K skip to the next packet · Alt+J / Alt+L previous / next page"
            )
    nav.run()
    if user is None:
        session.keep_cookie()  # after a sign-out or a refused session: clears the browser's cookie


try:
    _main()
except DatabaseUnavailable:
    # A database restarting or locked: a plain word instead of Streamlit's error page; the session (signed-in
    # user, open packet, drafts) is kept, and the next click tries again.
    st.error(
        "The database is not answering right now (it may be restarting). Your work in progress is kept; "
        "try again in a moment."
    )
