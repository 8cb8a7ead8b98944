"""The answer desk (issue 31): an expert's review of a grounded-answer packet, as plain code.

What the page shows — the question, each statement with its citations, each cited chunk with the quote
located in it (or, where it is not there verbatim, the chunk's closest passage and the words that differ),
the issues pinned to the statement or quote they point at — and the decisions: agree; mark a statement
unsupported with a reason; fix its citation (another chunk, or one sentence of that chunk as the quote); edit
its text; replace the whole answer with an abstention that lists the missing evidence.

A draft (`AnswerDraft`) holds the reviewer's changes against the machine's answer, by statement position;
every action returns a new draft. `check_draft` builds the corrected answer and checks it with the
grounded kind's V1 and V2 rules plus V4's evidence: a statement that stays in the answer must rest on quotes
found in their chunks that support it, so no path saves, as supported, a statement V4 finds unsupported.
Only a draft that passes is saved, through the same store path as a medical review, with one verdict per
statement of the machine's answer (`StatementVerdict`) on the ground-truth version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from arbiter.contracts import (
    AdjudicationChoice,
    Corrections,
    DocumentBundle,
    Issue,
    IssueSource,
    Severity,
    SMEPacket,
    SMEReview,
)
from arbiter.contracts.grounded import (
    KIND,
    Answer,
    Chunk,
    GroundedItem,
    GroundedProfile,
    Quote,
    Statement,
    StatementVerdict,
    UnsupportedReason,
    Verdict,
)
from arbiter.review.closest import Closest, Word, closest_text
from arbiter.review.desk import Desk, Outcome, machine_answer
from arbiter.review.forms import Checked, Problem
from arbiter.review.packet_view import escape
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.grounded.evidence import (
    QuoteCheck,
    check_quotes,
    expected_confidence,
    quotes_by_id,
    verified_count,
)
from arbiter.verifiers.grounded.subject import context_bundle, load_item
from arbiter.verifiers.grounded.text import coverage, read, sentences
from arbiter.verifiers.grounded.v1_schema import GroundedV1
from arbiter.verifiers.grounded.v2_consistency import GroundedV2
from arbiter.verifiers.grounded.v4_evidence import support_gaps

REASON_LABELS: dict[UnsupportedReason, str] = {
    UnsupportedReason.NOT_IN_SOURCE: "not in source",
    UnsupportedReason.CHANGED_MODAL: "changed modal",
    UnsupportedReason.CHANGED_NUMBER: "changed number",
    UnsupportedReason.IRRELEVANT_CITATION: "irrelevant citation",
}
# Findings on a reviewer's answer that are the reviewer's judgement, shown as notes: whether a retrieved chunk
# really answers the question an abstention says is unanswered, whether sources truly conflict, whether a
# quote is about the question. Every other BLOCKER or MAJOR finding of V1 and V2 stops the save.
JUDGEMENT_CODES = frozenset(
    {"V2.ABSTAINED_WITH_EVIDENCE", "V2.CONFLICT_NOT_PRESENTED", "V4.QUOTE_OFF_QUESTION"}
)
AGREE_REFUSED = (
    "This answer cannot be saved as it is: the problems are listed below. Mark the statement unsupported, "
    "fix its citation, edit it, or replace the answer with an abstention, then save the correction."
)
EXCERPT_CHARS = 130  # characters of a chunk shown on each side of a quote (the whole chunk is one click away)
_STATEMENT_NO = re.compile(r"\b([Ss])tatement (\d+)\b")
_PATH = re.compile(r"^/answer/(statements|quotes)/(\d+)")
_CHUNK_PATH = re.compile(r"^/chunks/(\d+)")


def is_answer_packet(packet: SMEPacket) -> bool:
    """A packet the answer desk reviews (dispatch on the packet's answer kind)."""
    return packet.answer_kind == KIND


# ------------------------------------------------------------------------------------------ reading
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


# ------------------------------------------------------------------------------------------ the draft
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


# ------------------------------------------------------------------------------------------ the answer
def verdicts_of(draft: AnswerDraft, item: GroundedItem) -> list[StatementVerdict]:
    """One verdict per statement of the machine's answer: unsupported (with the reason; every statement of an
    answer replaced by an abstention, not in source unless marked otherwise), corrected, or supported."""
    out = []
    for index, statement in enumerate(item.answer.statements):
        edit = draft.edit(index)
        if draft.abstain or edit.reason is not None:
            reason = edit.reason or UnsupportedReason.NOT_IN_SOURCE
            out.append(StatementVerdict(index=index, verdict=Verdict.UNSUPPORTED, reason=reason, cites=[]))
        elif edit.text is not None or edit.cites is not None:
            cites = list(edit.cites if edit.cites is not None else statement.cites)
            out.append(StatementVerdict(index=index, verdict=Verdict.CORRECTED, cites=cites))
        else:
            out.append(StatementVerdict(index=index, verdict=Verdict.SUPPORTED, cites=list(statement.cites)))
    return out


def missing_items(draft: AnswerDraft) -> list[str]:
    return [line.strip() for line in draft.missing.splitlines() if line.strip()]


def corrected_answer(
    draft: AnswerDraft, item: GroundedItem, profile: GroundedProfile
) -> tuple[Answer, list[int]]:
    """The answer the draft describes, and for each of its statements the machine's statement position. Its
    confidence is the one the count of verified quotes gives; only cited quotes are kept."""
    machine = item.answer
    if draft.abstain:
        answer = Answer(
            language=machine.language,
            statements=[],
            quotes=[],
            confidence=None,
            abstained=True,
            missing_evidence=missing_items(draft),
        )
        return answer, []
    statements, origin = [], []
    for index, statement in enumerate(machine.statements):
        edit = draft.edit(index)
        if edit.reason is not None:
            continue
        cites = list(edit.cites if edit.cites is not None else statement.cites)
        statements.append(Statement(text=edit.text or statement.text, cites=cites))
        origin.append(index)
    cited = {q for s in statements for q in s.cites}
    quotes, seen = [], set()
    for quote in (*machine.quotes, *draft.quotes):
        if quote.quote_id in cited and quote.quote_id not in seen:
            quotes.append(quote)
            seen.add(quote.quote_id)
    answer = Answer(language=machine.language, statements=statements, quotes=quotes)
    if not statements and machine.abstained:  # the machine abstained and the reviewer keeps it so
        answer = machine.model_copy()
        return answer, []
    candidate = item.model_copy(update={"answer": answer})
    count = verified_count(candidate, check_quotes(candidate, bundle_of(item), profile))
    return answer.model_copy(update={"confidence": expected_confidence(count, profile)}), origin


@dataclass(frozen=True)
class AnswerChecked:
    """A reviewer's answer and every problem with it; saved only when ok."""

    answer: dict[str, Any] | None
    verdicts: tuple[StatementVerdict, ...]
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return self.answer is not None and not any(p.blocking for p in self.problems)

    @property
    def blocking(self) -> list[Problem]:
        return [p for p in self.problems if p.blocking]

    def as_checked(self) -> Checked:
        return Checked(self.answer, self.problems)


def _renumber(message: str, origin: list[int]) -> str:
    """A finding's 'Statement N' (of the corrected answer) as the statement's number on the page."""

    def number(found: re.Match[str]) -> str:
        n = int(found.group(2))
        shown = origin[n - 1] + 1 if 0 < n <= len(origin) else n
        return f"{found.group(1)}tatement {shown}"

    return _STATEMENT_NO.sub(number, message)


def rule_problems(item: GroundedItem, profile: GroundedProfile, origin: list[int]) -> list[Problem]:
    """V1 and V2 findings (rules only) on an item as problems, worst first; statement numbers as on the page."""
    subject = load_item(item.model_dump_json())
    bundle = bundle_of(item)
    context = VerifyContext()
    results = [v.verify(subject, bundle, profile, context) for v in (GroundedV1(), GroundedV2())]
    issues = [i for r in results for i in r.issues if i.source == IssueSource.RULE]
    order = {Severity.BLOCKER: 0, Severity.MAJOR: 1, Severity.MINOR: 2}
    issues.sort(key=lambda i: order[i.severity])
    return [
        Problem(
            _renumber(i.message, origin),
            i.severity in (Severity.BLOCKER, Severity.MAJOR) and i.code not in JUDGEMENT_CODES,
            i.code,
            i.location.path,
        )
        for i in issues
    ]


def evidence_problems(item: GroundedItem, profile: GroundedProfile, origin: list[int]) -> list[Problem]:
    """V4's evidence for every statement that stays: its quotes are in the chunks they cite, and they support
    it. Either failing stops the save — a statement kept in ground truth rests on evidence that holds it."""
    checks = check_quotes(item, bundle_of(item), profile)
    by_id = quotes_by_id(item, checks)
    problems = []
    for position, statement in enumerate(item.answer.statements):
        shown = origin[position] + 1 if position < len(origin) else position + 1
        quotes = [by_id[q] for q in statement.cites if q in by_id]
        for check in quotes:
            if check.chunk is not None and not check.found:
                problems.append(
                    Problem(
                        f"Statement {shown} cites quote {check.quote.quote_id}, which is not in chunk "
                        f"{check.chunk.chunk_id} ({check.chunk.source}). Fix its citation (pick the chunk that "
                        "holds it) or mark the statement unsupported.",
                        True,
                        "V4.QUOTE_NOT_IN_CHUNK",
                        f"/answer/statements/{position}",
                    )
                )
        gaps = support_gaps(statement.text, [q.quote.text for q in quotes], profile)
        if gaps:
            problems.append(
                Problem(
                    f"Statement {shown} is not supported by its quotes: {'; '.join(gaps)}. Mark it unsupported, "
                    "fix its citation or edit it to say what the quote says.",
                    True,
                    "V4.STATEMENT_UNSUPPORTED",
                    f"/answer/statements/{position}",
                )
            )
    return problems


def check_draft(draft: AnswerDraft, item: GroundedItem, profile: GroundedProfile) -> AnswerChecked:
    """The corrected answer, its verdicts, and every problem with it (nothing saves while one blocks)."""
    verdicts = tuple(verdicts_of(draft, item))
    problems: list[Problem] = []
    if draft.abstain and not missing_items(draft):
        problems.append(
            Problem(
                "An abstention must say what evidence is missing: write it under 'Missing evidence'.",
                True,
                "FORM.MISSING_EVIDENCE",
            )
        )
    if (
        not draft.abstain
        and item.answer.statements
        and all(v.verdict == Verdict.UNSUPPORTED for v in verdicts)
    ):
        problems.append(
            Problem(
                "Every statement is marked unsupported, so nothing of the answer is left: replace it with an "
                "abstention instead.",
                True,
                "FORM.NOTHING_LEFT",
            )
        )
        return AnswerChecked(None, verdicts, tuple(problems))
    answer, origin = corrected_answer(draft, item, profile)
    candidate = item.model_copy(update={"answer": answer})
    found = rule_problems(candidate, profile, origin) + evidence_problems(candidate, profile, origin)
    if any(p.code == "FORM.MISSING_EVIDENCE" for p in problems):  # said once, in the form's words
        found = [p for p in found if p.code != "V1.ABSTENTION_WITHOUT_MISSING_EVIDENCE"]
    if not draft.changed:
        problems.append(
            Problem(
                "The correction changes nothing; use Agree, or change a statement.", True, "FORM.UNCHANGED"
            )
        )
    return AnswerChecked(answer.model_dump(mode="json"), verdicts, tuple(problems + found))


def check_agreement(item: GroundedItem, profile: GroundedProfile) -> AnswerChecked:
    """Agreeing saves the machine's answer as it is, every statement supported: it meets what a correction
    meets (V1, V2, and V4's evidence for every statement)."""
    origin = list(range(len(item.answer.statements)))
    problems = rule_problems(item, profile, origin) + evidence_problems(item, profile, origin)
    return AnswerChecked(
        item.answer.model_dump(mode="json"), tuple(verdicts_of(AnswerDraft(), item)), tuple(problems)
    )


def changes(draft: AnswerDraft, item: GroundedItem) -> list[str]:
    """What the correction does, one line per change (plain text)."""
    if draft.abstain:
        lines = missing_items(draft)
        return ["Replace the answer with an abstention" + (f"; missing: {'; '.join(lines)}" if lines else "")]
    out = []
    for index in sorted(draft.edits):
        edit = draft.edits[index]
        if edit.reason is not None:
            out.append(f"Statement {index + 1}: unsupported ({REASON_LABELS[edit.reason]})")
            continue
        if edit.cites is not None:
            out.append(f"Statement {index + 1}: cites {', '.join(edit.cites)}")
        if edit.text is not None:
            out.append(f"Statement {index + 1}: new text")
    return out


def agree_line(item: GroundedItem) -> str:
    """What Agree saves, in one line."""
    answer = item.answer
    if answer.abstained:
        return "Agree saves: the abstention as it is."
    n = len(answer.statements)
    level = answer.confidence.value if answer.confidence else "no"
    return f"Agree saves: the answer as it is, {n} statement{'' if n == 1 else 's'} supported, {level} confidence."


def reason_codes(draft: AnswerDraft) -> list[str]:
    """The review's reason codes: what was changed and why."""
    codes: set[str] = set()
    if draft.abstain:
        codes.add("REPLACED_WITH_ABSTENTION")
    for edit in draft.edits.values():
        if edit.reason is not None and not draft.abstain:
            codes.add(f"UNSUPPORTED_{edit.reason.value.upper()}")
        if edit.cites is not None and not draft.abstain:
            codes.add("FIXED_CITATION")
        if edit.text is not None and not draft.abstain:
            codes.add("EDITED_STATEMENT")
    return sorted(codes)


# ------------------------------------------------------------------------------------------ saving
def agree(
    desk: Desk,
    packet: SMEPacket,
    profile: GroundedProfile,
    *,
    notes: str,
    confidence: float,
    started_at: datetime,
    token: str,
) -> Outcome:
    """Save the machine's answer as ground truth, every statement supported; refused (nothing saved, the
    problems listed) when it breaks the rules."""
    item = item_of(packet)
    if item is None:
        return Outcome(False, "The packet's answer or context cannot be read, so it cannot be reviewed here.")
    checked = check_agreement(item, profile)
    if not checked.ok:
        return Outcome(False, AGREE_REFUSED, problems=checked.problems, needs_correction=True)
    answer = machine_answer(packet)  # saved as given, not as re-read (no defaults added)
    assert answer is not None
    review = SMEReview(
        reviewer=desk.reviewer,
        agrees_with_primary=True,
        review_notes=notes,
        confidence=confidence,
        started_at=started_at,
        submitted_at=desk.clock(),
    )
    return desk.submit(packet, review, Checked(answer, checked.problems), token, list(checked.verdicts))


def correct(
    desk: Desk,
    packet: SMEPacket,
    profile: GroundedProfile,
    draft: AnswerDraft,
    *,
    notes: str,
    confidence: float,
    started_at: datetime,
    token: str,
) -> Outcome:
    """Save the corrected answer and its verdicts; a correction that fails its check saves nothing and says
    why."""
    item = item_of(packet)
    if item is None:
        return Outcome(False, "The packet's answer or context cannot be read, so it cannot be reviewed here.")
    checked = check_draft(draft, item, profile)
    if not checked.ok:
        return Outcome(
            False, "The correction has problems to fix before it can be saved.", problems=checked.problems
        )
    review = SMEReview(
        reviewer=desk.reviewer,
        agrees_with_primary=False,
        review_notes=notes,
        confidence=confidence,
        corrections=Corrections(correction_notes="; ".join(changes(draft, item))),
        reason_codes=reason_codes(draft),
        started_at=started_at,
        submitted_at=desk.clock(),
    )
    return desk.submit(packet, review, checked.as_checked(), token, list(checked.verdicts))


# ------------------------------------------------------------------------------------------ adjudication
def verdict_rows(packet: SMEPacket) -> list[dict[str, str]]:
    """An answer adjudication as a table: one row per statement of the machine's answer, each review's
    verdict beside it (the rows that differ first)."""
    case = packet.adjudication
    item = item_of(packet, packet.primary_agent_classification)
    if case is None:
        return []
    first = {v.index: v for v in case.first.statement_verdicts or []}
    second = {v.index: v for v in case.second.statement_verdicts or []}
    count = len(item.answer.statements) if item is not None else max([*first, *second, -1]) + 1
    rows = []
    for index in range(count):
        a, b = _words(first.get(index)), _words(second.get(index))
        text = item.answer.statements[index].text if item is not None else ""
        rows.append(
            {
                "#": str(index + 1),
                "Statement": text,
                "First": a,
                "Second": b,
                "Differs": "yes" if a != b else "",
            }
        )
    rows.sort(key=lambda r: r["Differs"] != "yes")
    return rows


def _words(verdict: StatementVerdict | None) -> str:
    if verdict is None:
        return "—"
    if verdict.verdict == Verdict.UNSUPPORTED:
        return f"unsupported ({REASON_LABELS[verdict.reason]})" if verdict.reason else "unsupported"
    cites = f", cites {', '.join(verdict.cites)}" if verdict.cites else ""
    return f"{verdict.verdict.value}{cites}"


def adjudicate(
    desk: Desk,
    packet: SMEPacket,
    choice: AdjudicationChoice,
    *,
    notes: str = "",
    confidence: float = 0.9,
    started_at: datetime,
    token: str,
) -> Outcome:
    """Keep the first or the second review's answer with its verdicts (an answer adjudication has no third,
    corrected answer here: an adjudicator who disagrees with both keeps the closer one and says so)."""
    case = packet.adjudication
    if case is None:
        raise ValueError(f"{packet.packet_id} is not an adjudication packet")
    if choice == AdjudicationChoice.CORRECTED:
        return Outcome(False, "Keep the first or the second review's answer.")
    kept = case.first if choice == AdjudicationChoice.FIRST else case.second
    review = SMEReview(
        reviewer=desk.reviewer,
        agrees_with_primary=kept.agrees_with_primary,
        review_notes=notes,
        confidence=confidence,
        started_at=started_at,
        submitted_at=datetime.now(UTC),
        adjudication=choice,
    )
    return desk.submit(packet, review, Checked(kept.classification, ()), token, kept.statement_verdicts)


def ground_truth_rows(primary: Any, verdicts: list[StatementVerdict] | None) -> list[dict[str, str]]:
    """A grounded answer's ground-truth version as a table: each statement of the machine's answer and the
    verdict on it (no verdicts: an accept no expert judged)."""
    statements = primary.get("statements") if isinstance(primary, dict) else None
    texts = [str(s.get("text", "")) for s in statements or [] if isinstance(s, dict)]
    by_index = {v.index: v for v in verdicts or []}
    return [
        {
            "#": str(n + 1),
            "Statement": text,
            "Verdict": _words(by_index.get(n)) if verdicts is not None else "not judged",
        }
        for n, text in enumerate(texts)
    ]


def answer_summary(answer: Any) -> str:
    """'2 statements, medium confidence' or 'Abstains; missing: …' (plain text)."""
    if not isinstance(answer, dict):
        return "No readable answer."
    if answer.get("abstained"):
        missing = [str(m) for m in answer.get("missing_evidence") or []]
        return "Abstains; missing: " + ("; ".join(missing) or "nothing listed")
    n = len(answer.get("statements") or [])
    return f"{n} statement{'' if n == 1 else 's'}, {answer.get('confidence') or 'no'} confidence"


def answer_json(answer: Any) -> str:
    return json.dumps(answer, indent=2, sort_keys=True, default=str)
