"""A classification drawn for reading (the Classification tab, the ground-truth page): a summary line, per
segment a table of its types and its evidence quotes as highlighted text with their page; the JSON only as
a download. Every value from a document goes through `escape` (text, never Markdown)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from arbiter.review.answer_view import (
    as_json,
    evidence_quotes,
    segment_heading,
    segments_of,
    summary_line,
    type_rows,
)
from arbiter.review.packet_view import escape


def show(classification: Any, key: str, file_name: str = "classification.json") -> None:
    """The classification as tables and quotes; `key` keeps the widgets of two calls on a page apart."""
    st.markdown("**" + escape(summary_line(classification)) + "**")
    for segment in segments_of(classification):
        with st.container(border=True):
            st.markdown(escape(segment_heading(segment)))
            reasoning = segment.get("classification_reasoning")
            if isinstance(reasoning, str) and reasoning.strip():
                st.caption(escape(reasoning))
            st.dataframe(
                type_rows(segment),
                hide_index=True,
                column_config={
                    "Share": st.column_config.NumberColumn(format="%.2f"),
                    "Confidence": st.column_config.NumberColumn(format="%.2f"),
                },
            )
            quotes = evidence_quotes(segment)
            if quotes:
                lines = [
                    f"{escape(name)}, page {page if page is not None else '?'}: "
                    f":orange-background[{escape(text)}]"
                    for name, page, text in quotes
                ]
                st.markdown("  \n".join(lines))
            else:
                st.caption("No evidence quoted.")
    if classification is not None:
        st.download_button(
            "Download as JSON",
            as_json(classification),
            file_name=file_name,
            mime="application/json",
            key=f"download_{key}",
        )
