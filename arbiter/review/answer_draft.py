"""The answer desk's draft (issue 31): the reviewer's changes to the machine's answer by statement position
(`AnswerDraft`), and the actions on it — mark a statement unsupported with a reason, edit its text, make it
cite one passage of another chunk, reset it, replace the answer with an abstention. Every action returns a
new draft; a draft reads back from JSON after a reload.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from arbiter.contracts.grounded import (
    Chunk,
    GroundedItem,
    GroundedProfile,
    Quote,
    UnsupportedReason,
)
from arbiter.verifiers.grounded.text import coverage, read, sentences
from arbiter.verifiers.grounded.v4_evidence import support_gaps

REASON_LABELS: dict[UnsupportedReason, str] = {
    UnsupportedReason.NOT_IN_SOURCE: "not in source",
    UnsupportedReason.CHANGED_MODAL: "changed modal",
    UnsupportedReason.CHANGED_NUMBER: "changed number",
    UnsupportedReason.IRRELEVANT_CITATION: "irrelevant citation",
}


@dataclass(frozen=True)
class StatementEdit:
    """The reviewer's change to one statement: unsupported for a reason, or other text, or other citations."""

    reason: UnsupportedReason | None = None
    text: str | None = None
    cites: tuple[str, ...] | None = None

    @property
    def empty(self) -> bool:
        return self.reason is None and self.text is None and self.cites is None


@dataclass(frozen=True)
class AnswerDraft:
    """The reviewer's changes to the machine's answer (by statement position), and the abstention."""

    edits: dict[int, StatementEdit] = field(default_factory=dict)
    quotes: tuple[Quote, ...] = ()  # quotes the reviewer picked from the chunks
    abstain: bool = False
    missing: str = ""  # the missing evidence of the abstention, one item per line

    @property
    def changed(self) -> bool:
        return self.abstain or any(not e.empty for e in self.edits.values())

    def edit(self, index: int) -> StatementEdit:
        return self.edits.get(index, StatementEdit())

    def to_json(self) -> dict[str, Any]:
        return {
            "edits": {
                str(i): {
                    "reason": e.reason.value if e.reason else None,
                    "text": e.text,
                    "cites": list(e.cites) if e.cites is not None else None,
                }
                for i, e in sorted(self.edits.items())
                if not e.empty
            },
            "quotes": [q.model_dump(mode="json") for q in self.quotes],
            "abstain": self.abstain,
            "missing": self.missing,
        }

    @staticmethod
    def from_json(data: Any) -> AnswerDraft:
        """A draft read back (after a reload); whatever does not read is left out, never raised."""
        if not isinstance(data, dict):
            return AnswerDraft()
        edits: dict[int, StatementEdit] = {}
        raw = data.get("edits")
        for key, value in raw.items() if isinstance(raw, dict) else []:
            if not (isinstance(key, str) and key.isdigit() and isinstance(value, dict)):
                continue
            reason = value.get("reason")
            cites = value.get("cites")
            edits[int(key)] = StatementEdit(
                reason=UnsupportedReason(reason) if reason in {r.value for r in UnsupportedReason} else None,
                text=value["text"] if isinstance(value.get("text"), str) else None,
                cites=tuple(c for c in cites if isinstance(c, str)) if isinstance(cites, list) else None,
            )
        quotes = []
        for entry in data.get("quotes") or []:
            try:
                quotes.append(Quote.model_validate(entry))
            except (ValidationError, TypeError, ValueError):
                continue
        missing = data.get("missing")
        return AnswerDraft(
            edits={i: e for i, e in edits.items() if not e.empty},
            quotes=tuple(quotes),
            abstain=data.get("abstain") is True,
            missing=missing if isinstance(missing, str) else "",
        )


def _with(draft: AnswerDraft, index: int, edit: StatementEdit) -> AnswerDraft:
    edits = dict(draft.edits)
    if edit.empty:
        edits.pop(index, None)
    else:
        edits[index] = edit
    return replace(draft, edits=edits)


def _valid(item: GroundedItem, index: int) -> bool:
    return 0 <= index < len(item.answer.statements)


def mark_unsupported(
    draft: AnswerDraft, item: GroundedItem, index: int, reason: UnsupportedReason | None
) -> AnswerDraft:
    """Statement `index` is unsupported for `reason` (it leaves the answer); None: it stands again."""
    if not _valid(item, index):
        return draft
    return _with(draft, index, replace(draft.edit(index), reason=reason))


def edit_text(draft: AnswerDraft, item: GroundedItem, index: int, text: str) -> AnswerDraft:
    """Statement `index` says `text` instead (the machine's text again: no edit). It stands."""
    if not _valid(item, index):
        return draft
    given = " ".join(text.split())
    new = None if not given or given == item.answer.statements[index].text else given
    return _with(draft, index, replace(draft.edit(index), text=new, reason=None))


def chunk_sentences(chunk: Chunk) -> list[tuple[int, int, str]]:
    """The chunk's sentences with where each is in its text (start, end, sentence)."""
    out, at = [], 0
    for sentence in sentences(chunk.text):
        start = chunk.text.find(sentence, at)
        if start < 0:
            start = chunk.text.find(sentence)
        if start < 0:
            continue
        out.append((start, start + len(sentence), sentence))
        at = start + len(sentence)
    return out


def _quote_id(draft: AnswerDraft, item: GroundedItem) -> str:
    taken = {q.quote_id for q in item.answer.quotes} | {q.quote_id for q in draft.quotes}
    n = 1
    while f"SME-{n:03d}" in taken:
        n += 1
    return f"SME-{n:03d}"


def candidates(chunk: Chunk, item: GroundedItem, draft: AnswerDraft) -> list[tuple[str, Quote | None]]:
    """What a statement can cite in `chunk`: the answer's own quotes found there, then each sentence."""
    pool = (*item.answer.quotes, *draft.quotes)
    own = [(q.text, q) for q in pool if q.chunk_id == chunk.chunk_id and q.text and q.text in chunk.text]
    texts = {text for text, _ in own}
    return own + [(text, None) for _s, _e, text in chunk_sentences(chunk) if text not in texts]


def candidate_label(number: int, option: tuple[str, Quote | None], width: int = 110) -> str:
    """A passage as the quote picker lists it, unique by its number: '2. REQ-001: A covered entity …'."""
    text, quote = option
    flat = " ".join(text.split())
    shown = flat if len(flat) <= width else flat[: width - 1] + "…"
    return f"{number + 1}. " + (f"{quote.quote_id}: " if quote is not None else "") + shown


def _support_rank(
    statement: str, option: tuple[str, Quote | None], profile: GroundedProfile
) -> tuple[bool, bool, float]:
    """Supporting first, then the answer's own quote, then the most content words covered."""
    text, own = option
    return (
        not support_gaps(statement, [text], profile),
        own is not None,
        coverage(read(statement, profile).content, read(text, profile).content),
    )


def cite(
    draft: AnswerDraft,
    item: GroundedItem,
    index: int,
    chunk_id: str,
    profile: GroundedProfile,
    sentence: str | None = None,
) -> AnswerDraft:
    """Statement `index` cites one passage of chunk `chunk_id` instead, verbatim with its offsets: `sentence`,
    or (None) the answer's own quote from that chunk or the chunk's sentence that supports it best. It
    stands."""
    chunk = next((c for c in item.chunks if c.chunk_id == chunk_id), None)
    if not _valid(item, index) or chunk is None:
        return draft
    statement = draft.edit(index).text or item.answer.statements[index].text
    options = candidates(chunk, item, draft)
    if sentence is not None:
        options = [o for o in options if o[0] == sentence]
    if not options:
        return draft
    text, same = max(options, key=lambda o: _support_rank(statement, o, profile))
    quotes = draft.quotes
    if same is None:
        start = chunk.text.find(text)
        same = Quote(
            quote_id=_quote_id(draft, item), chunk_id=chunk_id, text=text, start=start, end=start + len(text)
        )
        quotes = (*quotes, same)
    return _with(
        replace(draft, quotes=quotes), index, replace(draft.edit(index), cites=(same.quote_id,), reason=None)
    )


def reset(draft: AnswerDraft, item: GroundedItem, index: int) -> AnswerDraft:
    """Statement `index` as the machine gave it again."""
    return _with(draft, index, StatementEdit()) if _valid(item, index) else draft


def abstain(draft: AnswerDraft, on: bool, missing: str | None = None) -> AnswerDraft:
    """Replace the answer with an abstention (`on`), listing `missing` evidence (one item per line)."""
    return replace(draft, abstain=on, missing=draft.missing if missing is None else missing)


def cited_quote(draft: AnswerDraft, item: GroundedItem, index: int) -> Quote | None:
    """The quote statement `index` now cites, when the reviewer picked one."""
    cites = draft.edit(index).cites
    if not cites:
        return None
    return next((q for q in (*draft.quotes, *item.answer.quotes) if q.quote_id == cites[0]), None)
