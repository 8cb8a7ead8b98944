"""The packet page's page viewer: the page with its highlights in a fixed-height scrollable frame, zoom,
previous / next (Alt+J / Alt+L), a strip of clickable thumbnails, and the next page rendered in the
background. It is a fragment: a page flip or a zoom change reruns only the viewer, not the whole page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from arbiter.contracts import DocumentBundle, Issue
from arbiter.review import quick
from arbiter.review.packet_view import escape
from arbiter.review.render import RenderError, page_marks, unhighlighted_reason
from arbiter.review.rows import whole_number
from arbiter.review_app import correction_panel, state

ZOOMS = ("Fit text", "Fit page", "125%", "150%", "200%")
DEFAULT_ZOOM = "Fit text"  # the page's blank margins cut off, the rest as wide as the column
WHOLE_PAGE = "arbiter_rerun_whole_page"  # set by a strip action that changes the Correct form
ZOOM_KEY = "arbiter_zoom"  # one zoom for every packet: a reviewer's choice stays
VIEW_HEIGHT = 500  # px: the page frame; the page scrolls inside it
THUMB_WIDTH = 64  # px: the page strip's thumbnails
POINT_PX = 96 / 72  # CSS pixels per PDF point at 100 % (a PDF viewer's "actual size")
# Zoomed images may be wider than the column: the frame scrolls sideways instead of shrinking them.
CSS = (
    "<style>.st-key-page_view [data-testid='stElementContainer'], .st-key-page_view [data-testid='stImage'],"
    " .st-key-page_view [data-testid='stFullScreenFrame'], .st-key-page_view img {max-width: none !important;}"
    " .st-key-page_view {overflow-x: auto !important; max-width: 100%;}"
    " [data-testid='stColumn']:has(.st-key-page_view) {min-width: 0; overflow: hidden;}"
    " .st-key-page_preload {display: none;}</style>"
)


@dataclass(frozen=True)
class Document:
    """What the viewer needs of the packet, fixed while the packet is open."""

    packet_id: str
    pdf: Path
    pdf_sha256: str
    total_pages: int
    bundle: DocumentBundle | None
    answer: Any
    issues: tuple[Issue, ...]
    fuzzy_threshold: float
    types: tuple[str, ...] = ()  # the taxonomy's types, for the strip's split and join while correcting


def page_key(packet_id: str) -> str:
    return f"pdf_page_{packet_id}"


def go_to(packet_id: str, number: int, total_pages: int) -> None:
    """Show page `number` (clamped to the document's pages) the next time the viewer draws."""
    st.session_state[page_key(packet_id)] = min(max(number, 1), max(total_pages, 1))


def zoom_width(zoom: str, page_width_pt: float = 612.0) -> int | None:
    """The image's width in CSS pixels for a percentage zoom (of the page's actual size); None to fit."""
    if not zoom.endswith("%"):
        return None
    return round(page_width_pt * POINT_PX * int(zoom.rstrip("%")) / 100)


def _marks(doc: Document, number: int) -> tuple[Any, ...]:
    return tuple(page_marks(doc.bundle, doc.answer, doc.issues, number, doc.fuzzy_threshold))


@st.fragment
def show(doc: Document) -> None:
    """Draw the viewer for the page in session state (the issues' "Show page" buttons set it)."""
    if st.session_state.pop(WHOLE_PAGE, False):  # a split or join on the strip: the form shows it too
        st.rerun(scope="app")
    key = page_key(doc.packet_id)
    total = max(doc.total_pages, 1)
    current = min(max(int(st.session_state.get(key) or 1), 1), total)
    st.session_state[key] = current
    n1, n2, n3, n4 = st.columns([1, 1.1, 1, 3.2], vertical_alignment="center")
    n1.button(
        "◀ Page", key="prev_page", on_click=go_to, args=(doc.packet_id, current - 1, total), shortcut="Alt+J"
    )
    n2.number_input("Page", min_value=1, max_value=total, key=key, label_visibility="collapsed")
    n3.button(
        "Page ▶", key="next_page", on_click=go_to, args=(doc.packet_id, current + 1, total), shortcut="Alt+L"
    )
    if st.session_state.get(ZOOM_KEY) not in ZOOMS:
        st.session_state[ZOOM_KEY] = DEFAULT_ZOOM
    zoom = n4.segmented_control("Zoom", ZOOMS, key=ZOOM_KEY, label_visibility="collapsed") or DEFAULT_ZOOM
    crop = zoom == "Fit text"
    st.html(CSS)
    frame, strip = st.container(), None
    if total > 1:
        strip, frame = st.columns([1, 9], gap="small")
    with frame.container(height=VIEW_HEIGHT, key="page_view"):
        try:
            png = state.page_png(str(doc.pdf), doc.pdf_sha256, current, _marks(doc, current), crop)
            st.image(png, width=zoom_width(zoom) or "stretch")
        except RenderError as exc:
            st.error(escape(str(exc)))
    frame.caption(
        f"Page {current} of {doc.total_pages}. :orange-background[Yellow]: evidence the classification "
        "cites; :red-background[pink]: where an issue points."
    )
    why = unhighlighted_reason(doc.bundle, doc.answer, current, doc.fuzzy_threshold)
    if why:
        frame.warning(escape(why))
    if strip is not None:  # drawn after the page, so the page's image reaches the browser first
        with strip:
            _strip(doc, current, total)
    # The pages a reviewer most likely opens next: the next one rendered now and sent to the browser in a
    # hidden image (so a flip finds it in the browser's cache), the previous one rendered in the background.
    if current < total:
        following = state.page_png(str(doc.pdf), doc.pdf_sha256, current + 1, _marks(doc, current + 1), crop)
        with st.container(key="page_preload"):
            st.image(following, width=1)
    if current > 1:
        state.prefetch_page(str(doc.pdf), doc.pdf_sha256, current - 1, _marks(doc, current - 1), crop)


def correcting_rows(packet_id: str) -> list[dict[str, Any]] | None:
    """The Correct form's segment rows as the reviewer sees them (pending table edits applied), or None
    when the packet is not being corrected."""
    if st.session_state.get(f"decision_{packet_id}") != "Correct":
        return None
    drafts = state.drafts().get(packet_id) or {}
    base = drafts.get("base_rows")
    if not isinstance(base, list):
        return None
    return quick.rows_with_edits(base, st.session_state.get(correction_panel.editor_key(packet_id)))


def _on_boundary(packet_id: str, number: int, types: list[str]) -> None:
    correction_panel.rewrite(packet_id, lambda rows: quick.toggle_boundary(rows, number, types))
    st.session_state[WHOLE_PAGE] = True


def _strip(doc: Document, current: int, total: int) -> None:
    """A scrollable column of every page's thumbnail, each with its page button (the shown one marked);
    while correcting, each page also shows where segments start, with one click to split a segment at the
    page or to join the page's segment to the one before."""
    rows = correcting_rows(doc.packet_id) if doc.types else None
    starts: dict[int, tuple[int, dict[str, Any]]] = {}
    for index, row in enumerate(rows or []):
        first = whole_number(row.get("start_page"))
        if first is not None:
            starts.setdefault(first, (index, row))
    with st.container(height=VIEW_HEIGHT, key="page_strip", border=False):
        for number in range(1, total + 1):
            # Between two pages: where a segment starts (its number and type), or the click that moves
            # the boundary there.
            action = quick.boundary_at(rows, number) if rows else None
            if number in starts:
                index, row = starts[number]
                st.caption(f"S{index + 1} {correction_panel.short(quick.dominant_of(row, list(doc.types)))}")
            if action is not None:
                st.button(
                    ":material/content_cut:" if action == "split" else ":material/join_inner:",
                    key=f"strip_{action}_{number}",
                    type="tertiary",
                    on_click=_on_boundary,
                    args=(doc.packet_id, number, list(doc.types)),
                    help=(
                        f"Start a new segment at page {number}"
                        if action == "split"
                        else f"Join page {number}'s segment to the one before"
                    ),
                )
            try:
                st.image(state.thumbnail_png(str(doc.pdf), doc.pdf_sha256, number), width=THUMB_WIDTH)
            except RenderError:
                st.caption("—")
            st.button(
                str(number),
                key=f"thumb_{number}",
                type="primary" if number == current else "tertiary",
                on_click=go_to,
                args=(doc.packet_id, number, total),
                help=f"Page {number}" + (" (shown)" if number == current else ""),
            )


LOWER_HEIGHT = 330  # px: the issues frame under the decision in the right column
# The packet page uses the whole 1366 x 768 screen: less blank space above and beside the content.
PAGE_CSS = (
    "<style>[data-testid='stMainBlockContainer'] {padding-left: 1.5rem;"
    " padding-right: 1.5rem; padding-bottom: 2rem;} .st-key-packet_head h1 {font-size: 1.6rem; padding: 0;}"
    " .st-key-packet_head [data-testid='stCaptionContainer'] {margin-top: -0.5rem;}</style>"
)
