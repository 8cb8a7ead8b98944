"""What the answer desk shows (issue 31): a grounded-answer packet read as an item, each statement with its
citations located in their chunks (verbatim, or the chunk's closest passage and the words that differ), the
issues pinned to the statement, quote or chunk they point at, and the chunks' text as Markdown with the quote
highlighted. Plain values only; review_app/answer_page.py draws them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from arbiter.contracts import (
    DocumentBundle,
    Issue,
    SMEPacket,
)
from arbiter.contracts.grounded import (
    Chunk,
    GroundedItem,
    GroundedProfile,
    Statement,
)
from arbiter.review.answer_draft import AnswerDraft
from arbiter.review.closest import Closest, Word, closest_text
from arbiter.review.desk import machine_answer
from arbiter.review.packet_view import escape
from arbiter.verifiers.grounded.evidence import (
    QuoteCheck,
    check_quotes,
    quotes_by_id,
)
from arbiter.verifiers.grounded.subject import context_bundle

EXCERPT_CHARS = 130  # characters of a chunk shown on each side of a quote (the whole chunk is one click away)
_PATH = re.compile(r"^/answer/(statements|quotes)/(\d+)")
_CHUNK_PATH = re.compile(r"^/chunks/(\d+)")


def item_of(packet: SMEPacket, answer: Any = None) -> GroundedItem | None:
    """The packet's question and chunks with `answer` (default: the answer under review) as one item; None
    when they cannot be read."""
    context = packet.context if isinstance(packet.context, dict) else {}
    body = machine_answer(packet) if answer is None else answer
    try:
        return GroundedItem.model_validate(
            {
                "item_id": context.get("item_id") or packet.doc_id,
                "producer": context.get("producer"),
                "question": context.get("question"),
                "chunks": context.get("chunks") or [],
                "answer": body,
            }
        )
    except (ValidationError, TypeError, ValueError):
        return None


def bundle_of(item: GroundedItem) -> DocumentBundle:
    """The chunks as pages (chunk i is page i + 1), as the verifiers read them."""
    return context_bundle(item.item_id, item.chunks)


@dataclass(frozen=True)
class Citation:
    """One quote a statement cites, located in its chunk."""

    quote_id: str
    text: str
    chunk: Chunk | None  # None: the quote names a chunk that was not retrieved (or no such quote)
    span: tuple[int, int] | None  # where the chunk holds it (verbatim, or after spacing and case)
    exact: bool  # verbatim
    closest: Closest | None  # not found: the chunk's closest passage
    issues: tuple[Issue, ...] = ()


@dataclass(frozen=True)
class StatementView:
    index: int
    text: str
    citations: tuple[Citation, ...]
    issues: tuple[Issue, ...] = ()


@dataclass(frozen=True)
class Target:
    """What an issue points at: a statement, a quote, a chunk (by position), or the answer as a whole."""

    kind: str  # "statement" | "quote" | "chunk" | "answer"
    index: int | None = None


def target_of(issue: Issue) -> Target:
    path = issue.location.path or ""
    found = _PATH.match(path)
    if found:
        return Target("statement" if found.group(1) == "statements" else "quote", int(found.group(2)))
    chunk = _CHUNK_PATH.match(path)
    if chunk:
        return Target("chunk", int(chunk.group(1)))
    return Target("answer")


def target_label(target: Target, item: GroundedItem) -> str:
    """'Statement 3', 'Quote REQ-001 (statement 1)', 'Chunk C02 (45 CFR …)' or 'The answer'."""
    answer = item.answer
    if target.kind == "statement" and target.index is not None:
        return f"Statement {target.index + 1}"
    if target.kind == "quote" and target.index is not None and target.index < len(answer.quotes):
        quote = answer.quotes[target.index]
        users = [str(i + 1) for i, s in enumerate(answer.statements) if quote.quote_id in s.cites]
        cited = f" (statement {', '.join(users)})" if users else ""
        return f"Quote {quote.quote_id}{cited}"
    if target.kind == "chunk" and target.index is not None and target.index < len(item.chunks):
        chunk = item.chunks[target.index]
        return f"Chunk {chunk.chunk_id} ({chunk.source})"
    return "The answer"


def statement_views(
    item: GroundedItem, issues: list[Issue], profile: GroundedProfile, draft: AnswerDraft | None = None
) -> list[StatementView]:
    """Every statement with its citations located and the issues that point at it or at its quotes; with a
    `draft`, each statement as the reviewer has it now (their text, the quote they picked)."""
    shown = item
    if draft is not None:
        statements = [
            Statement(
                text=draft.edit(i).text or s.text,
                cites=list(c if (c := draft.edit(i).cites) is not None else s.cites),
            )
            for i, s in enumerate(item.answer.statements)
        ]
        answer = item.answer.model_copy(
            update={"statements": statements, "quotes": [*item.answer.quotes, *draft.quotes]}
        )
        shown = item.model_copy(update={"answer": answer})
    bundle = bundle_of(shown)
    checks = check_quotes(shown, bundle, profile)
    by_id = quotes_by_id(shown, checks)
    targets = [(target_of(i), i) for i in issues]
    views = []
    for index, statement in enumerate(shown.answer.statements):
        citations = []
        for quote_id in statement.cites:
            check = by_id.get(quote_id)
            mine = tuple(
                i for t, i in targets if t.kind == "quote" and check is not None and t.index == check.index
            )
            citations.append(_citation(quote_id, check, bundle, mine))
        own = tuple(i for t, i in targets if t.kind == "statement" and t.index == index)
        views.append(StatementView(index, statement.text, tuple(citations), own))
    return views


def _citation(
    quote_id: str, check: QuoteCheck | None, bundle: DocumentBundle, issues: tuple[Issue, ...]
) -> Citation:
    if check is None:
        return Citation(quote_id, "", None, None, False, None, issues)
    span = (check.match.start, check.match.end) if check.match is not None else None
    closest = None
    if span is None and check.page is not None and check.quote.text.strip():
        closest = closest_text(check.quote.text, bundle, [check.page])
    return Citation(quote_id, check.quote.text, check.chunk, span, check.exact, closest, issues)


def general_issues(issues: list[Issue]) -> list[Issue]:
    """The issues that point at the answer as a whole or at a chunk (shown above the statements)."""
    return [i for i in issues if target_of(i).kind in ("answer", "chunk")]


def chunk_caption(chunk: Chunk) -> str:
    """'C02 · 45 CFR 164.524(b)(2)(ii) · Access of individuals … · page 3 · score 0.74' (plain text)."""
    parts = [chunk.chunk_id, chunk.source]
    if chunk.section:
        parts.append(chunk.section)
    parts.append(f"page {chunk.page}" if chunk.page is not None else "no page")
    parts.append(f"score {chunk.score:.2f}")
    return " · ".join(parts)


def _flat(text: str) -> str:
    return " ".join(text.split())


def excerpt(text: str, span: tuple[int, int], width: int = EXCERPT_CHARS) -> tuple[str, str, str]:
    """(before, quote, after) around `span`, each side cut at a word to about `width` characters, with '…'
    where text was left out."""
    start, end = span
    before, after = text[:start], text[end:]
    if len(before) > width:
        cut = before.find(" ", len(before) - width)
        before = "…" + before[cut if cut >= 0 else len(before) - width :]
    if len(after) > width:
        cut = after.rfind(" ", 0, width)
        after = after[: cut if cut > 0 else width] + " …"
    return before, text[start:end], after


def chunk_markdown(text: str, span: tuple[int, int] | None, width: int | None = EXCERPT_CHARS) -> str:
    """A chunk's text as Markdown-safe text with the quote highlighted (`width` None: the whole chunk)."""
    if span is None:
        return escape(_flat(text))
    if width is None:
        before, quote, after = text[: span[0]], text[span[0] : span[1]], text[span[1] :]
    else:
        before, quote, after = excerpt(text, span, width)
    marked = _flat(quote)
    return (
        escape(_flat(before))
        + (" " if before[-1:].isspace() else "")
        + (f":orange-background[**{escape(marked)}**]" if marked else "")
        + (" " if after[:1].isspace() else "")
        + escape(_flat(after))
    )


def closest_chunk_markdown(closest: Closest, chunk: Chunk) -> str:
    """The chunk's passage most like a quote that is not in it, and the quote, the differing words marked."""

    def words(items: tuple[Word, ...]) -> str:
        return " ".join(
            f":red-background[**{escape(w.text)}**]" if w.differs else escape(w.text) for w in items
        )

    return (
        f"**Not in chunk {escape(chunk.chunk_id)} verbatim. Closest passage** ({closest.score:.0f} % alike; the "
        f"words that differ are marked):  \n{words(closest.found)}\n\n**The quote says:**  \n{words(closest.quoted)}"
    )


def issue_line(issue: Issue, item: GroundedItem) -> str:
    """'Quote REQ-001 (statement 1): Quote REQ-001 is not …' — the target, then the message (plain text);
    the message alone when it starts by naming its statement."""
    label = target_label(target_of(issue), item)
    short = label.split(" (")[0]
    if not issue.message.startswith(short):
        return f"{label}: {issue.message}"
    return issue.message if label == short else f"{issue.message} ({label[len(short) + 2 : -1]})"
