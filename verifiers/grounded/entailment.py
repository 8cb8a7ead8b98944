"""Grounded-answer V4's entailment phase: with a language model configured, each statement is judged against
its own verified quotes, read in their chunks — entailed, not entailed or contradicted, with a short reason.

It runs after V4's offline checks through the medical phases' machinery (verifiers/llm_phase.py: the same
client, token budget, cache, batch deferral and fail-closed errors) and can only add findings: a statement
judged not entailed or contradicted is a V4.STATEMENT_NOT_ENTAILED major, never fixable; a statement judged
entailed removes nothing the rules found. An answer that is not one judgement for each statement shown is
unusable, and the verifier is ERRORED (V4.ENTAILMENT_ERROR). The question, statements, quotes and chunks are
all untrusted data, each in its own delimited block (verifiers/llm_prompt.py), so a chunk cannot instruct
the model. Offline, nothing is asked and nothing changes but a note that the check did not run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.contracts.grounded import GroundedItem
from arbiter.llm.port import LLMError
from arbiter.verifiers.base import IssueList, VerifyContext
from arbiter.verifiers.grounded.evidence import QuoteCheck, quotes_by_id
from arbiter.verifiers.llm_phase import ModelPhase, PhaseOutcome, mark_llm, run_model_phase, skipped_phase
from arbiter.verifiers.llm_prompt import TextBudget, load_prompt, render, untrusted

NOT_ENTAILED = "V4.STATEMENT_NOT_ENTAILED"
VERDICTS = ("entailed", "not_entailed", "contradicted")
REASON_CHARS = 300
STATEMENT_CHARS = 2_000  # one statement or quote shown to the model, at most
CHUNK_CHARS = 6_000  # one chunk's text
TOTAL_CHARS = 60_000  # all chunks together
NO_LLM_NOTE = "No LLM backend configured; the entailment check of the statements was not run."
UNAVAILABLE_NOTE = "The configured LLM cannot answer requests; the entailment check was not run."
NOTHING_TO_JUDGE_NOTE = "No statement cites a verified quote; the entailment check was not run."

PHASE = ModelPhase(
    verifier="V4",
    what="entailment",
    template="grounded_entailment.md",
    system="grounded_system.md",
    error_code="V4.ENTAILMENT_ERROR",
    no_llm_note=NO_LLM_NOTE,
    unavailable_note=UNAVAILABLE_NOTE,
)
_LABEL = re.compile(r"[^A-Za-z0-9._-]+")


def entailment_schema() -> dict[str, Any]:
    """The strict answer schema: one judgement per statement shown (plain JSON Schema)."""
    judgement = {
        "type": "object",
        "properties": {
            "statement": {"type": "integer"},
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "reason": {"type": "string", "maxLength": REASON_CHARS},
        },
        "required": ["statement", "verdict", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"judgements": {"type": "array", "items": judgement}},
        "required": ["judgements"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Judged:
    """A statement sent to the model: its number (1-based), its text and its verified quotes."""

    number: int
    text: str
    quotes: tuple[QuoteCheck, ...]

    @property
    def index(self) -> int:
        return self.number - 1


def judged_statements(item: GroundedItem, checks: list[QuoteCheck]) -> list[Judged]:
    """Every statement that cites at least one verified quote (found in its chunk, above the threshold), with
    those quotes; a statement without one is left to the offline checks, which already report it."""
    by_id = quotes_by_id(item, checks)
    out = []
    for i, statement in enumerate(item.answer.statements):
        cited = dict.fromkeys(q for q in statement.cites if q in by_id)
        quotes = tuple(by_id[q] for q in cited if by_id[q].verified)
        if quotes:
            out.append(Judged(i + 1, statement.text, quotes))
    return out


def entailment_phase(
    context: VerifyContext, issues: IssueList, item: GroundedItem, checks: list[QuoteCheck]
) -> PhaseOutcome:
    """Ask the model whether each statement's quotes entail it; its findings are appended after the rules'."""
    judged = judged_statements(item, checks)
    if not judged and context.llm is not None:
        return skipped_phase(NOTHING_TO_JUDGE_NOTE)

    def apply(data: Any) -> list[str]:
        return _apply(issues, judged, data["judgements"])

    return run_model_phase(
        PHASE,
        context,
        lambda: entailment_prompt(item, judged),
        issues=issues,
        doc_id=item.item_id,
        schema=entailment_schema(),
        apply=apply,
    )


def _apply(issues: IssueList, judged: list[Judged], judgements: list[dict[str, Any]]) -> list[str]:
    """The model's judgements as findings; an answer that does not judge each statement shown exactly once
    is unusable (LLMError, raised before any finding is added)."""
    asked = sorted(j.number for j in judged)
    if sorted(int(j["statement"]) for j in judgements) != asked:
        raise LLMError(
            "off_schema", "The language model's answer did not judge each statement shown exactly once."
        )
    verdicts = {int(j["statement"]): j for j in judgements}
    flagged = 0
    for statement in judged:
        verdict = verdicts[statement.number]
        if verdict["verdict"] == "entailed":
            continue
        flagged += 1
        issues.add(NOT_ENTAILED, _message(statement, verdict), path=f"/answer/statements/{statement.index}")
        mark_llm(issues)
    return [
        f"The language model judged {len(judged)} statement(s) against their quotes: "
        f"{len(judged) - flagged} entailed, {flagged} not."
    ]


def _message(statement: Judged, verdict: dict[str, Any]) -> str:
    said = " ".join(statement.text.split())
    shown = said if len(said) <= 120 else said[:119] + "…"
    cites = ", ".join(q.quote.quote_id for q in statement.quotes)
    how = "contradicted by" if verdict["verdict"] == "contradicted" else "not entailed by"
    reason = " ".join(str(verdict["reason"]).split())[:REASON_CHARS].rstrip(".") or "it gave no reason"
    return (
        f'Statement {statement.number} ("{shown}") is {how} its quote(s) {cites}, '
        f"in the language model's judgement: {reason}."
    )


# --- the prompt ------------------------------------------------------------------------------------------


def _label(value: str) -> str:
    """An id from the item, safe inside a delimiter's label."""
    return _LABEL.sub("_", value)[:40] or "_"


def _cap(text: str) -> str:
    return text if len(text) <= STATEMENT_CHARS else text[:STATEMENT_CHARS] + " [... text truncated ...]"


def entailment_prompt(item: GroundedItem, judged: Sequence[Judged]) -> str:
    """The question, each judged statement with its verified quotes (as found in their chunks), and the text
    of every chunk they come from — each in its own untrusted block."""
    blocks: list[str] = []
    chunks: dict[int, Any] = {}
    for statement in judged:
        blocks.append(untrusted(f"STATEMENT {statement.number}", _cap(statement.text)))
        for check in statement.quotes:
            if check.chunk is None or check.match is None or check.page is None:
                continue  # never so: a verified quote was found in its chunk
            span = check.chunk.text[check.match.start : check.match.end]
            label = f"QUOTE {_label(check.quote.quote_id)} of chunk {_label(check.chunk.chunk_id)}"
            blocks.append(untrusted(label, _cap(span)))
            chunks.setdefault(check.page, check.chunk)
    budget = TextBudget(CHUNK_CHARS, TOTAL_CHARS)
    texts = []
    for page in sorted(chunks):
        chunk = chunks[page]
        head = f"source: {chunk.source}" + (f"; section: {chunk.section}" if chunk.section else "")
        body = budget.take(page, chunk.text) if chunk.text.strip() else "[no text in this chunk]"
        texts.append(untrusted(f"CHUNK {_label(chunk.chunk_id)}", f"{head}\n{body}"))
    cut = [_label(chunks[p].chunk_id) for p in sorted(set(budget.cut_pages))]
    truncation = (
        f"Chunk text was truncated to fit (chunks {', '.join(cut)}); judge only what is shown."
        if cut
        else "Every chunk is shown in full."
    )
    values = {
        "question": untrusted("QUESTION", _cap(item.question.text)),
        "statements": "\n\n".join(blocks),
        "chunks": "\n\n".join(texts),
        "truncation": truncation,
    }
    return render(load_prompt(PHASE.template), values)
