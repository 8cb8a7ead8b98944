"""Streamlit glue shared by the pages: settings, the cached store and profile, the signed-in user.

The engine is cached with st.cache_resource (one per process); ORM rows and sessions never are.
Session state holds only the user (and their session token), the open packet id and drafts; claims and
drafts live in the database too.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import streamlit as st

from arbiter.contracts.grounded import GroundedProfile
from arbiter.contracts.profile import Profile
from arbiter.kinds import GROUNDED, kind
from arbiter.review.auth import PROXY_PASSWORD_REFUSED, ClientThrottle, SignedIn, from_proxy, proxy_name
from arbiter.review.desk import AdminDesk, Desk
from arbiter.review.packet_view import escape
from arbiter.review.page_cache import PageCache
from arbiter.review.settings import PROXY_USER_KEY, AppSettings
from arbiter.review_app import session
from arbiter.review_app.session import USER
from arbiter.run.compose import open_store, run_profile
from arbiter.store import Store

PACKET = "arbiter_packet_id"
PAGE = "arbiter_pdf_page"
FLASH = "arbiter_flash"


@st.cache_resource(show_spinner=False)
def settings() -> AppSettings:
    return AppSettings.from_env()


@st.cache_resource(show_spinner=False)
def store(url: str | None) -> Store:
    # A short retry budget: a reviewer hears within seconds that the database is away, draft kept.
    return open_store(url, retry_s=settings().db_retry_s)


@st.cache_resource(show_spinner=False)
def profile() -> Profile:
    return run_profile()


@st.cache_resource(show_spinner=False)
def grounded_profile() -> GroundedProfile:
    """The grounded-answer kind's bundled profile: the answer desk checks corrections with its rules."""
    profile: GroundedProfile = kind(GROUNDED).load_profile(None)
    return profile


@st.cache_resource(show_spinner=False)
def client_throttle() -> ClientThrottle:
    """Failed sign-ins per client address, shared by every session of this app process."""
    return ClientThrottle()


def client_address() -> str:
    """The client's address as the server sees it (behind a proxy: the proxy's, unless it forwards one)."""
    try:
        forwarded = st.context.headers.get("X-Forwarded-For") if settings().auth == "proxy" else None
        return (forwarded or "").split(",")[0].strip() or str(st.context.ip_address or "unknown")
    except Exception:  # no request context (a bare script run)
        return "unknown"


def proxy_refusal() -> str | None:
    """Why the proxy's user was refused, when it is an account with a password (else None)."""
    name = proxy_name(_user_info(), PROXY_USER_KEY)
    account = the_store().users.get(name) if name else None
    if account is not None and account.has_password and not settings().proxy_password_accounts:
        return PROXY_PASSWORD_REFUSED
    return None


def the_store() -> Store:
    return store(settings().db_url)


def current_user() -> SignedIn | None:
    """The signed-in user: from the trusted proxy header in proxy mode, else from this session's sign-in."""
    if settings().auth == "proxy":
        user = from_proxy(
            the_store().users,
            _user_info(),
            PROXY_USER_KEY,
            password_accounts=settings().proxy_password_accounts,
        )
        st.session_state[USER] = user
        return user
    return session.signed_in(the_store())


def _user_info() -> dict[str, Any]:
    try:
        return dict(st.user.to_dict())
    except Exception:  # no user info in this context (e.g. a bare script run)
        return {}


def require_user() -> SignedIn:
    """Every page calls this first: without a signed-in user the page stops here."""
    user = current_user()
    if user is None:
        st.warning("Please sign in first.")
        st.stop()
    assert user is not None
    return user


def desk(user: SignedIn) -> Desk:
    return Desk(the_store(), user.name, settings().lease)


def admin_desk(user: SignedIn) -> AdminDesk:
    return AdminDesk(the_store(), user.name, settings().lease)


def flash(kind: str, message: str) -> None:
    """A message that survives one page switch (st.switch_page starts a new run)."""
    st.session_state[FLASH] = (kind, message)


def show_flash() -> None:
    kind, message = st.session_state.pop(FLASH, (None, None))
    if message:
        # Messages name documents (file names): shown as text, never as Markdown.
        {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)(escape(message))


def open_packet(packet_id: str) -> None:
    """Make this the packet on the packet page, with a fresh review attempt (token and start time)."""
    st.session_state[PACKET] = packet_id
    st.session_state[PAGE] = None
    attempt = st.session_state.setdefault("arbiter_attempts", {})
    attempt.setdefault(packet_id, {"token": uuid.uuid4().hex, "started_at": datetime.now(UTC)})


def attempt_of(packet_id: str) -> dict[str, Any]:
    attempts = st.session_state.setdefault("arbiter_attempts", {})
    attempt: dict[str, Any] = attempts.setdefault(
        packet_id, {"token": uuid.uuid4().hex, "started_at": datetime.now(UTC)}
    )
    return attempt


def close_packet(packet_id: str) -> None:
    st.session_state.pop(PACKET, None)
    st.session_state.get("arbiter_attempts", {}).pop(packet_id, None)
    st.session_state.get("arbiter_drafts", {}).pop(packet_id, None)


def drafts() -> dict[str, Any]:
    kept: dict[str, Any] = st.session_state.setdefault("arbiter_drafts", {})
    return kept


@st.cache_resource(show_spinner=False)
def page_cache() -> PageCache:
    """Rendered pages (and thumbnails) shared by every session; the viewer prefetches into it."""
    return PageCache(max_entries=256)


def page_png(pdf: str, pdf_sha256: str, page: int, marks: tuple[Any, ...], crop: bool = False) -> bytes:
    """A rendered page with its highlights, cached per PDF version, page, highlight set and crop."""
    return page_cache().get(("page", pdf, pdf_sha256, page, marks, crop), page_maker(pdf, page, marks, crop))


def page_maker(pdf: str, page: int, marks: tuple[Any, ...], crop: bool) -> Callable[[], bytes]:
    from arbiter.review.render import render_page

    return lambda: render_page(Path(pdf), page, marks, crop=crop)


def prefetch_page(pdf: str, pdf_sha256: str, page: int, marks: tuple[Any, ...], crop: bool = False) -> None:
    """Render a page in the background into the cache page_png reads (the one a reviewer opens next)."""
    page_cache().prefetch(("page", pdf, pdf_sha256, page, marks, crop), page_maker(pdf, page, marks, crop))


def thumbnail_png(pdf: str, pdf_sha256: str, page: int) -> bytes:
    from arbiter.review.render import render_thumbnail

    return page_cache().get(("thumb", pdf, pdf_sha256, page), lambda: render_thumbnail(Path(pdf), page))
