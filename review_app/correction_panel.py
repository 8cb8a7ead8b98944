"""The packet page's Correct form: one card per segment ("Segment 1 (pages 1–3) is: [type]", split at a
page, merge with the next), the shares table with short headers, evidence picked from the page's lines,
then reasons, notes and Save. A quick action is one click: it rewrites the rows (arbiter/review/quick.py)
in its callback and the page checks the result once. The save goes through desk.correct (V1/V2/V4)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from arbiter.contracts import DocumentBundle, SMEPacket
from arbiter.contracts.profile import Profile
from arbiter.review import quick
from arbiter.review.desk import Desk
from arbiter.review.drafts import AUTO_DOMINANT
from arbiter.review.forms import (
    CORRECTION_REASONS,
    CorrectionDraft,
    check_correction,
    mixture_rows,
    segment_rows,
)
from arbiter.review.packet_view import escape
from arbiter.review.rows import DOMINANT_COLUMN
from arbiter.review_app import drafting, flow, state

SHORT = {
    "GENOMIC_REPORT": "GEN",
    "LAB_REPORT": "LAB",
    "PATHOLOGY_REPORT": "PATH",
    "CLINICAL_NOTE": "NOTE",
    "ADMINISTRATIVE": "ADMIN",
}


def short(name: str) -> str:
    return SHORT.get(name, name[:6])


def editor_key(packet_id: str) -> str:
    return f"seg_editor_{packet_id}"


def start_rows(packet_id: str, answer: Any, profile: Profile) -> None:
    """The rows the segment table starts from, set once per editor: the last draft (kept when a claim was
    lost), else the machine's rows with the dominant type following the shares. The page strip, drawn
    before the form, calls it too so its split and join marks show from the first run in Correct."""
    drafts = state.drafts().setdefault(packet_id, {})
    if "base_rows" not in drafts or (editor_key(packet_id) not in st.session_state and "rows" in drafts):
        types = profile.taxonomy.document_types
        drafts["base_rows"] = drafts.get("rows") or quick.following_rows(segment_rows(answer, profile), types)


def rewrite(packet_id: str, change: Any) -> None:
    """Callback of a quick action: new rows from the current ones; the table starts again from them."""
    drafts = state.drafts().setdefault(packet_id, {})
    rows = drafts.get("rows") or drafts.get("base_rows") or []
    try:
        new = change(rows)
    except ValueError as exc:
        drafts["quick_error"] = str(exc)
        return
    drafts["rows"] = drafts["base_rows"] = new
    drafts["generation"] = drafts.get("generation", 0) + 1
    st.session_state.pop(editor_key(packet_id), None)


def _on_type(packet_id: str, index: int, key: str, types: list[str]) -> None:
    name = st.session_state.get(key)
    if name:
        rewrite(packet_id, lambda rows: quick.set_type(rows, index, name, types))


def _on_split(packet_id: str, index: int, key: str) -> None:
    page = st.session_state.get(key)
    if page:
        rewrite(packet_id, lambda rows: quick.split(rows, index, int(page)))


def _on_merge(packet_id: str, index: int, types: list[str]) -> None:
    rewrite(packet_id, lambda rows: quick.merge_next(rows, index, types))


EVIDENCE_BOX_HEIGHT = 220  # px: the page's lines scroll inside it


def _set_pool(packet_id: str, pool: list[dict[str, Any]]) -> None:
    drafts = state.drafts().setdefault(packet_id, {})
    drafts["evidence"] = pool
    drafts["generation"] = drafts.get("generation", 0) + 1


def _on_lines(packet_id: str, key: str, name: str, page: int, lines: list[str], pool: list[Any]) -> None:
    chosen = set(st.session_state.get(key) or [])
    kept = [
        e
        for e in pool
        if not (e.get("document_type") == name and e.get("page") == page and e.get("snippet") in lines)
    ]
    for line in lines:
        if line in chosen:
            kept = quick.add_evidence(kept, name, page, line)
    _set_pool(packet_id, kept)


def _pool_of(drafts: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The reviewer's evidence pool, None while they have not touched the evidence (the machine's stands)."""
    pool = drafts.get("evidence")
    return [e for e in pool if isinstance(e, dict)] if isinstance(pool, list) else None


def show_guidance(profile: Profile, names: list[str]) -> None:
    """The profile's guidance on telling the types in play apart, beside the decision."""
    found = quick.guidance_for(profile, names)
    if found:
        with st.expander("How to tell these types: " + ", ".join(name for name, _ in found)):
            for name, text in found:
                st.markdown(f"**{escape(name)}**: {escape(text)}")


def _pages_label(start: Any, end: Any) -> str:
    return f"page {start}" if start == end else f"pages {start}–{end}"


def _cards(
    packet_id: str, rows: list[dict[str, Any]], types: list[str], generation: int, answer: Any
) -> None:
    for index, row in enumerate(rows):
        start, end = row.get("start_page"), row.get("end_page")
        dominant = quick.dominant_of(row, types)
        pinned = row.get(DOMINANT_COLUMN) in types
        with st.container(border=True, key=f"segment_card_{index}"):
            for said in quick.machine_said(answer, start, end):  # the model's reasoning, beside the edit
                st.caption(escape(said))
            key = f"quick_type_{packet_id}_{index}_{generation}"
            st.segmented_control(
                f"Segment {index + 1} ({_pages_label(start, end)}) is{' (pinned)' if pinned else ''}:",
                types,
                default=dominant,
                format_func=short,
                key=key,
                on_change=_on_type,
                args=(packet_id, index, key, types),
            )
            try:
                pages = quick.split_pages(row)
            except ValueError:
                pages = []
            left, right = st.columns([3, 1])
            if pages:
                split_key = f"quick_split_{packet_id}_{index}_{generation}"
                left.container(key=f"split_chips_{index}").pills(
                    "Start a new segment at page",
                    pages,
                    key=split_key,
                    on_change=_on_split,
                    args=(packet_id, index, split_key),
                )
            if index + 1 < len(rows):
                right.button(
                    "Merge with next",
                    key=f"quick_merge_{packet_id}_{index}_{generation}",
                    on_click=_on_merge,
                    args=(packet_id, index, types),
                )


def _evidence_editor(
    packet_id: str, rows: list[dict[str, Any]], types: list[str], bundle: DocumentBundle, answer: Any
) -> list[dict[str, Any]] | None:
    drafts = state.drafts().setdefault(packet_id, {})
    pool: list[dict[str, Any]] = drafts.get("evidence") or quick.evidence_pool(answer)
    generation = drafts.get("generation", 0)
    with st.expander("Evidence: pick lines on the page", expanded=drafts.get("evidence") is not None):
        labels = [
            f"Segment {i + 1} (pages {r.get('start_page')}–{r.get('end_page')})" for i, r in enumerate(rows)
        ]
        if not labels:
            return _pool_of(drafts)
        c1, c2, c3 = st.columns([2, 2, 1])
        index = c1.selectbox(
            "Segment", range(len(rows)), format_func=lambda i: labels[i], key=f"ev_seg_{packet_id}"
        )
        row = rows[index or 0]
        present = [t for t in types if quick.shares_of(row, types)[t] > 0] or types
        name = c2.selectbox("Type", present, key=f"ev_type_{packet_id}")
        try:
            pages = list(range(int(row["start_page"]), int(row["end_page"]) + 1))
        except (TypeError, ValueError, KeyError):
            pages = []
        pages = [p for p in pages if bundle.page(p) is not None] or [1]
        page = int(c3.selectbox("Page", pages, key=f"ev_page_{packet_id}"))
        on_page = bundle.page(page)
        lines = quick.page_lines(on_page.text if on_page is not None else "")
        chosen = [e.get("snippet") for e in pool if e.get("document_type") == name and e.get("page") == page]
        lines_key = f"ev_lines_{packet_id}_{name}_{page}_{generation}"
        # Every line of the page on show, one click to pick or drop it (a scrolling box, not a dropdown).
        st.caption(f"Click the lines of page {page} that are evidence of {name} (click again to drop one).")
        if not lines:
            st.caption("This page has no text to pick from.")
        else:
            st.container(key="evidence_picker", height=EVIDENCE_BOX_HEIGHT).pills(
                f"Lines of page {page} that are evidence of {name}",
                lines,
                selection_mode="multi",
                format_func=escape,  # a chip's label is Markdown: the page's text is shown as text
                default=[line for line in chosen if line in lines],
                key=lines_key,
                on_change=_on_lines,
                args=(packet_id, lines_key, name, page, lines, pool),
                label_visibility="collapsed",
            )
        current = quick.evidence_for(pool, name, pages[0], pages[-1])
        st.caption(f"Evidence of {name} in this segment ({len(current)}):")
        listed = st.container(key="evidence_current")
        for number, item in enumerate(current):
            a, b = listed.columns([6, 1], vertical_alignment="center")
            a.markdown(f"page {item['page']}: :orange-background[{escape(item['snippet'])}]")
            b.button(
                ":material/close:",
                help="Remove this evidence",
                key=f"ev_remove_{packet_id}_{number}_{generation}",
                on_click=lambda item=item: _set_pool(
                    packet_id, quick.remove_evidence(pool, name, item["page"], item["snippet"])
                ),
            )
    return _pool_of(drafts)


def show(
    *,
    packet: SMEPacket,
    desk: Desk,
    bundle: DocumentBundle | None,
    profile: Profile,
    answer: Any,
    codes: list[str],
    attempt: dict[str, Any],
    can_submit: bool,
) -> None:
    """The Correct form for one packet (drawn inside the Review tab). Save, the document it would save and
    what blocks the save are at the top (on screen however long the form grows); each segment card shows
    what the machine said of its pages."""
    packet_id = packet.packet_id
    drafts = state.drafts().setdefault(packet_id, {})
    types = profile.taxonomy.document_types
    table_key = editor_key(packet_id)
    start_rows(packet_id, answer, profile)
    if drafts.get("agree_refused"):
        with st.container(key="agree_refused", border=True):
            st.error("Agree was not saved: the classification breaks these rules. Correct it below.")
            for message in drafts["agree_refused"]:
                st.markdown("- " + escape(message))
    if drafts.get("quick_error"):
        st.error(escape(drafts.pop("quick_error")))
    # Filled at the end, from the draft as edited.
    save_slot, summary = st.columns([2, 3], vertical_alignment="center")
    status = st.container(key="correction_status")
    cards = st.container()  # filled after the table, from the rows as edited
    st.caption(
        "Shares of each type per segment (0 to 1). Pin: a dominant type other than the largest share "
        "(blank: the largest share)."
    )
    column_config = {
        "start_page": st.column_config.NumberColumn("From", min_value=1, step=1, required=True, width=48),
        "end_page": st.column_config.NumberColumn("To", min_value=1, step=1, required=True, width=48),
        DOMINANT_COLUMN: st.column_config.SelectboxColumn("Pin", options=types, width=64),
        **{
            name: st.column_config.NumberColumn(
                short(name), help=name, min_value=0.0, max_value=1.0, step=0.05, format="%.2f", width=56
            )
            for name in types
        },
    }
    edited = st.data_editor(
        pd.DataFrame(drafts["base_rows"], columns=["start_page", "end_page", DOMINANT_COLUMN, *types]),
        key=table_key,
        num_rows="dynamic",
        column_config=column_config,
        hide_index=True,
    )
    rows = edited.astype(object).where(edited.notna(), None).to_dict("records")
    drafts["rows"] = rows
    with cards:
        _cards(packet_id, rows, types, drafts.get("generation", 0), answer)
    evidence = _evidence_editor(packet_id, rows, types, bundle, answer) if bundle is not None else None
    computed = st.checkbox(
        "Compute the document mixture from the segments (page-weighted)",
        value=drafting.initial(packet_id, "mix_auto", True),
        key=f"mix_auto_{packet_id}",
    )
    mixture = None
    if not computed:
        mix_df = st.data_editor(
            pd.DataFrame(drafts.get("mixture") or mixture_rows(answer, profile)),
            key=f"mix_editor_{packet_id}",
            disabled=["document_type"],
            hide_index=True,
        )
        mixture = mix_df.astype(object).where(mix_df.notna(), None).to_dict("records")
    drafts["mixture"] = mixture
    dominant = st.selectbox(
        "Document dominant type", [AUTO_DOMINANT, *types], key=f"doc_dominant_{packet_id}"
    )
    reasons = st.multiselect(
        "Reasons for the correction", [*CORRECTION_REASONS, *codes], key=f"reasons_{packet_id}"
    )
    notes = st.text_area(
        "Correction notes",
        key=f"correct_notes_{packet_id}",
    )
    st.caption(
        "The notes are your comment on this packet: kept with the review, shown on the Ground truth page."
    )
    conf = drafting.initial(packet_id, "correct_conf", 0.9)
    confidence = st.slider("Your confidence", 0.0, 1.0, conf, 0.05, key=f"correct_conf_{packet_id}")
    draft = CorrectionDraft(
        segments=rows,
        mixture=mixture,
        dominant_type=None if dominant == AUTO_DOMINANT else dominant,
        reason_codes=reasons,
        notes=notes,
        confidence=confidence,
        evidence=evidence,
    )
    if bundle is not None:
        checked = check_correction(draft, answer, bundle, profile)  # once per run, after the last action
        if checked.classification is not None:
            shown = ", ".join(
                f"{e['document_type']} {e['share']:.0%}"
                for e in checked.classification["document_mixture"]
                if e["share"]
            )
            summary.caption(
                escape(
                    f"Document: {checked.classification['dominant_type']}; mixture {shown or 'not computable'}"
                )
            )
        with status.container(key="correction_problems"):
            for problem in checked.blocking:
                st.error(escape(problem.message))
            for problem in checked.notes:
                st.caption(":orange[Note:] " + escape(problem.message))
    if save_slot.button(
        "Save correction",
        type="primary",
        key="save_correction",
        shortcut="Alt+S",
        help="Save this correction and open the next packet (Alt+S)",
        disabled=not can_submit,
    ):
        assert bundle is not None
        outcome = desk.correct(
            packet, bundle, profile, draft, started_at=attempt["started_at"], token=attempt["token"]
        )
        if outcome.ok:  # the next packet opens at once (review_app/flow.py)
            flow.move_on(desk, packet_id, "success", outcome.message)
        status.error(escape(outcome.message), icon=":material/block:")
