"""What the packet page shows, as plain data: segment table, production comparison, retry log, passages.

Document text goes into Markdown only through `escape`, so a "*" or "#" in a report is shown as written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arbiter.contracts import SMEPacket
from arbiter.review.closest import Closest, Word
from arbiter.review.context import Passage
from arbiter.review.queue_view import UNREADABLE_REASONS, reason_label

SEVERITY_ICONS = {"BLOCKER": ":red[**BLOCKER**]", "MAJOR": ":orange[**MAJOR**]", "MINOR": ":gray[**MINOR**]"}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<:$])")


def escape(text: str) -> str:
    """Text shown literally inside Streamlit Markdown (no emphasis, links, headings, colours or LaTeX)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _paragraph(text: str) -> str:
    return "  \n".join(escape(line) for line in text.splitlines() if line.strip())


def passage_markdown(passage: Passage) -> str:
    """The passage with its matched words highlighted; surrounding paragraphs in grey."""

    def grey(texts: tuple[str, ...]) -> list[str]:
        return [f":gray[{body}]" for body in map(_paragraph, texts) if body]

    parts = grey(passage.before)
    if passage.match is not None:
        text = passage.match
        if passage.span is not None:
            lo, hi = passage.span
            marked = text[lo:hi].strip()
            body = (
                _paragraph(text[:lo])
                + (" " if text[:lo].endswith((" ", "\n")) else "")
                + (f":orange-background[**{escape(' '.join(marked.split()))}**]" if marked else "")
                + (" " if text[hi:].startswith((" ", "\n")) else "")
                + _paragraph(text[hi:])
            )
        else:
            body = _paragraph(text)
        parts.append(body)
    if passage.match is None:  # the page's opening, not context around a match: shown plainly
        parts.extend(body for body in map(_paragraph, passage.after) if body)
    else:
        parts.extend(grey(passage.after))
    if passage.note and not any(parts):
        parts.append(f":gray[_{escape(passage.note)}_]")
    return "\n\n".join(p for p in parts if p)


def unreadable_note(packet: SMEPacket) -> str | None:
    """What the page says of a packet whose file could not be read (no pages, nothing to classify)."""
    if packet.total_pages > 0 and packet.escalation_reason not in UNREADABLE_REASONS:
        return None
    return (
        f"This file could not be read ({reason_label(packet.escalation_reason)}): {packet.escalation_message} "
        "There are no pages to show and no classification to review."
    )


def closest_markdown(closest: Closest) -> str:
    """The page's closest text and the quote, word by word, the words that differ marked (all escaped)."""

    def words(items: tuple[Word, ...]) -> str:
        return " ".join(
            f":red-background[**{escape(w.text)}**]" if w.differs else escape(w.text) for w in items
        )

    return (
        f"**Closest text on page {closest.page}** ({closest.score:.0f} % alike; the words that differ are "
        f"marked):  \n{words(closest.found)}\n\n**The quote says:**  \n{words(closest.quoted)}"
    )


def segments_table(classification: Any) -> list[dict[str, Any]]:
    """One row per segment of a classification, for a read-only table."""
    segments = classification.get("segments") if isinstance(classification, dict) else None
    rows = []
    for seg in segments if isinstance(segments, list) else []:
        if not isinstance(seg, dict):
            continue
        present = [
            f"{t.get('document_type')} {float(t.get('share') or 0):.0%}"
            for t in seg.get("types") or []
            if isinstance(t, dict) and isinstance(t.get("share"), int | float) and t.get("share")
        ]
        rows.append(
            {
                "Segment": seg.get("segment_index"),
                "Pages": f"{seg.get('start_page')}–{seg.get('end_page')}",
                "Dominant type": seg.get("dominant_type"),
                "Shares": ", ".join(present),
                "Reasoning": seg.get("classification_reasoning") or "",
            }
        )
    return rows


def production_summary(packet: SMEPacket, answer: Any) -> str:
    """One sentence comparing the production classifier with the machine's answer."""
    production = packet.production_classification
    if packet.blind:
        return "Blind sample: judge the classification on the document alone."
    if production is None:
        return "No production classification was supplied for this document."
    ours = answer.get("dominant_type") if isinstance(answer, dict) else None
    if packet.production_differs:
        return (
            f"The production classifier says {production.dominant_type}; "
            f"the classification under review says {ours or 'nothing readable'}. They differ."
        )
    if packet.production_differs is None:
        return f"The production classifier says {production.dominant_type}."
    return f"The production classifier agrees: {production.dominant_type}."


def _where(path: Any) -> str:
    """'/segments/0/end_page' → 'segment 1 › end_page' (JSON Pointer, indices counted from 1)."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in str(path).split("/")[1:]]
    words: list[str] = []
    for part in parts:
        if part.isdigit() and words:
            words[-1] = f"{words[-1].rstrip('s')} {int(part) + 1}"
        else:
            words.append("the end" if part == "-" else part)
    return " › ".join(words) or "the whole classification"


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


_OP_WORDS = {
    "replace": lambda op: f"set {_where(op.get('path'))} to {_value(op.get('value'))}",
    "add": lambda op: f"add {_value(op.get('value'))} at {_where(op.get('path'))}",
    "remove": lambda op: f"remove {_where(op.get('path'))}",
    "move": lambda op: f"move {_where(op.get('from'))} to {_where(op.get('path'))}",
    "copy": lambda op: f"copy {_where(op.get('from'))} to {_where(op.get('path'))}",
    "test": lambda op: f"check that {_where(op.get('path'))} is {_value(op.get('value'))}",
}


def patch_words(patch: Any) -> str:
    """A fix's JSON Patch in words: 'set segment 1 › end_page to 3; remove segment 2'."""
    ops = patch if isinstance(patch, list) else [patch]
    said = []
    for op in ops:
        words = _OP_WORDS.get(str(op.get("op"))) if isinstance(op, dict) else None
        said.append(words(op) if words else _value(op))
    text = "; ".join(said)
    return text[:1].upper() + text[1:] if text else "No change"


def retry_rows(packet: SMEPacket) -> list[dict[str, Any]]:
    """The retry log as rows: each attempt's decision and the fixes applied after it."""
    rows = []
    for entry in packet.retry_log:
        rows.append(
            {
                "attempt": entry.attempt,
                "decision": entry.decision,
                "rule": entry.rule,
                "issue_codes": ", ".join(entry.issue_codes),
                "fixes": [
                    {
                        "issue": fix.issue_id,
                        "code": fix.code,
                        "patch": patch_words(fix.patch),
                        "before": fix.before,
                        "after": fix.after,
                    }
                    for fix in entry.fixes_applied
                ],
            }
        )
    return rows


def answer_differs(packet: SMEPacket) -> bool:
    """Whether automatic fixes changed the primary's classification before it was escalated (never said
    of a blind sample: that would hint at the machine's verdict)."""
    return (
        not packet.blind
        and packet.final_classification is not None
        and packet.primary_agent_classification is not None
        and packet.final_classification != packet.primary_agent_classification
    )
