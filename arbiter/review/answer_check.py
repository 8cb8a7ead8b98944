"""The answer desk's check (issue 31): the answer a draft describes (`corrected_answer`), one verdict per
statement of the machine's answer (`verdicts_of`), and every problem with it — the grounded kind's V1 and V2
rules plus V4's evidence, so a statement that stays must rest on quotes found in their chunks that support
it (`check_draft`, `check_agreement`); and the correction in words (`changes`, `agree_line`, `reason_codes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import (
    IssueSource,
    Severity,
)
from arbiter.contracts.grounded import (
    Answer,
    GroundedItem,
    GroundedProfile,
    Statement,
    StatementVerdict,
    UnsupportedReason,
    Verdict,
)
from arbiter.review.answer_draft import REASON_LABELS, AnswerDraft
from arbiter.review.answer_reading import bundle_of
from arbiter.review.forms import Checked, Problem
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.grounded.evidence import (
    check_quotes,
    expected_confidence,
    quotes_by_id,
    verified_count,
)
from arbiter.verifiers.grounded.subject import load_item
from arbiter.verifiers.grounded.v1_schema import GroundedV1
from arbiter.verifiers.grounded.v2_consistency import GroundedV2
from arbiter.verifiers.grounded.v4_evidence import support_gaps

# Findings on a reviewer's answer that are the reviewer's judgement, shown as notes: whether a retrieved chunk
# really answers the question an abstention says is unanswered, whether sources truly conflict, whether a
# quote is about the question. Every other BLOCKER or MAJOR finding of V1 and V2 stops the save.
JUDGEMENT_CODES = frozenset(
    {"V2.ABSTAINED_WITH_EVIDENCE", "V2.CONFLICT_NOT_PRESENTED", "V4.QUOTE_OFF_QUESTION"}
)
_STATEMENT_NO = re.compile(r"\b([Ss])tatement (\d+)\b")


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
