"""The queue page's logic: filters, paging arithmetic and the rows shown (no document text in them)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from arbiter.kinds import KINDS

PAGE_SIZE = 25
PRIORITY_LABELS = {0: "Critical", 1: "Major", 2: "Minor"}
STATUS_LABELS = {"PENDING": "Waiting", "IN_REVIEW": "In review", "COMPLETED": "Done"}


@dataclass(frozen=True)
class QueueFilters:
    """What the reviewer chose; an empty list means "any"."""

    status: list[str] = field(default_factory=lambda: ["PENDING", "IN_REVIEW"])
    reason: list[str] = field(default_factory=list)
    code: str | None = None
    doc_type: list[str] = field(default_factory=list)
    answer_kind: list[str] = field(default_factory=list)

    def query(self) -> dict[str, Any]:
        """Keyword arguments for store.queue.page / store.queue.count. "Any status" means any review status:
        the operations lane (unreadable documents) is never part of the review queue."""
        return {
            "status": list(self.status) or list(STATUS_LABELS),
            "reason": list(self.reason) or None,
            "code": self.code or None,
            "doc_type": list(self.doc_type) or None,
            "answer_kind": list(self.answer_kind) or None,
        }


def page_count(total: int, size: int = PAGE_SIZE) -> int:
    """Pages needed for `total` rows (at least one, so an empty queue still has page 1)."""
    return max(1, -(-max(total, 0) // max(size, 1)))


def clamp_page(page: int, total: int, size: int = PAGE_SIZE) -> int:
    """A 1-based page number within range (the queue may have shrunk since the page was chosen)."""
    return min(max(page, 1), page_count(total, size))


def offset_of(page: int, size: int = PAGE_SIZE) -> int:
    return (max(page, 1) - 1) * size


# Reasons a document could not be verified at all, as a reviewer would say them.
_INPUT_REASONS = {
    "pdf_encrypted": "PDF is password-protected",
    "pdf_broken": "PDF is damaged",
    "pdf_empty": "PDF is empty",
    "pdf_not_pdf": "Not a PDF",
    "pdf_timeout": "PDF took too long to read",
    "pdf_too_large": "PDF is too large",
    "pdf_unreadable": "PDF could not be read",
    "pdf_extractor_failed": "Extraction service failed",
    "classification_failed": "No classification",
    "internal_error": "Arbiter failed on it",
    "budget_exhausted": "Token budget ran out",
    "review_sample": "Blind review sample",
}
# The reasons that mean the file itself could not be read: such a packet has no pages to show.
UNREADABLE_REASONS = frozenset(r for r in _INPUT_REASONS if r.startswith("pdf_"))


def reason_label(reason: str) -> str:
    """A rule name like too_many_major as words: "Too many major"; unreadable inputs in plain words."""
    if reason in _INPUT_REASONS:
        return _INPUT_REASONS[reason]
    words = reason.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Unspecified"


def kind_label(answer_kind: str) -> str:
    """A kind of answer as a plain label from its registry name: "medical-classification" → "Medical
    classification" (a kind the registry no longer knows keeps its stored name)."""
    spec = KINDS.get(answer_kind)
    words = (spec.name if spec is not None else answer_kind).replace("-", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Unspecified"


def kind_help(kinds: Iterable[str]) -> str:
    """One line per kind: its label and the registry's summary of it (the kind filter's help)."""
    return "\n\n".join(f"{kind_label(k)}: {KINDS[k].summary}" if k in KINDS else kind_label(k) for k in kinds)


def kind_counts(by_kind: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """(label, "3 waiting, 1 in review, 12 done") per kind, for the queue's counts split by kind."""
    return [
        (
            kind_label(k),
            f"{n.get('PENDING', 0)} waiting, {n.get('IN_REVIEW', 0)} in review, {n.get('COMPLETED', 0)} done",
        )
        for k, n in sorted(by_kind.items(), key=lambda item: kind_label(item[0]))
    ]


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return ""
    seconds = int((now - moment).total_seconds())
    return _span(seconds)


def waited(summary: Any, now: datetime) -> str:
    """How long a queue row has been waiting, as "3 min", "2 h", "4 d"."""
    return _ago(summary.created_at, now)


def _span(seconds: int) -> str:
    seconds = max(seconds, 0)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


def lease_left(expires: datetime | None, now: datetime) -> str:
    """Time left on a claim, or "expired"."""
    if expires is None:
        return ""
    seconds = int((expires - now).total_seconds())
    return "expired" if seconds <= 0 else _span(seconds)


def queue_rows(summaries: Iterable[Any], now: datetime | None = None) -> list[dict[str, Any]]:
    """Table rows for PacketSummary objects, in the order given (the store's priority order)."""
    now = now or datetime.now(UTC)
    rows = []
    for s in summaries:
        rows.append(
            {
                "Priority": PRIORITY_LABELS.get(s.priority, str(s.priority)),
                "Document": s.doc_id,
                "Kind": kind_label(s.answer_kind),
                "Type": s.doc_type or "",
                "Why escalated": reason_label(s.reason),
                "Issue codes": ", ".join(s.top_codes),
                "Status": STATUS_LABELS.get(s.status, s.status.title()),
                "Claimed by": s.claimed_by or "",
                "Lease left": lease_left(s.claim_expires_at, now) if s.status == "IN_REVIEW" else "",
                "Waiting": _ago(s.created_at, now),
            }
        )
    return rows


_KIND_LABELS = {
    "ESCALATION": "escalation",
    "SECOND_REVIEW": "blind review",
    "AUDIT": "blind review",
    "ADJUDICATION": "adjudication",
}


def claim_labels(summaries: Iterable[Any]) -> dict[str, str]:
    """packet_id → a picker label naming each packet once: 'gen-guardant-02 · escalation (unclaimed)'; two
    packets that would read alike (the same document and kind) also show their run."""
    items = list(summaries)
    base = {
        s.packet_id: f"{s.doc_id} · {_KIND_LABELS.get(s.kind, s.kind.lower())} ({s.claimed_by or 'unclaimed'})"
        for s in items
    }
    seen: dict[str, int] = {}
    for label in base.values():
        seen[label] = seen.get(label, 0) + 1
    return {
        s.packet_id: base[s.packet_id]
        if seen[base[s.packet_id]] == 1
        else f"{base[s.packet_id]} · {s.packet_id}"
        for s in items
    }
