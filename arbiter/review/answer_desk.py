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

This module saves (agree, correct, adjudicate) and shows saved answers; what the page shows is in
answer_reading.py, the draft and its actions in answer_draft.py, the check in answer_check.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import (
    AdjudicationChoice,
    Corrections,
    SMEPacket,
    SMEReview,
)
from arbiter.contracts.grounded import (
    KIND,
    GroundedProfile,
    StatementVerdict,
    Verdict,
)
from arbiter.review.answer_check import changes, check_agreement, check_draft, reason_codes
from arbiter.review.answer_draft import REASON_LABELS, AnswerDraft
from arbiter.review.answer_reading import item_of
from arbiter.review.desk import Desk, Outcome, machine_answer
from arbiter.review.forms import Checked

AGREE_REFUSED = (
    "This answer cannot be saved as it is: the problems are listed below. Mark the statement unsupported, "
    "fix its citation, edit it, or replace the answer with an abstention, then save the correction."
)


def is_answer_packet(packet: SMEPacket) -> bool:
    """A packet the answer desk reviews (dispatch on the packet's answer kind)."""
    return packet.answer_kind == KIND


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
