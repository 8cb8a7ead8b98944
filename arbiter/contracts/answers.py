"""What an expert says about a grounded answer, statement by statement (GroundTruthRecord.statement_verdicts).
Its own module, importing nothing of the profile, so the review contracts can hold it without a cycle
(arbiter.contracts.grounded re-exports it)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Verdict(StrEnum):
    """An expert's verdict on one statement of the primary's answer."""

    SUPPORTED = "supported"  # the statement stands, with its citations
    UNSUPPORTED = "unsupported"  # no cited quote supports it (reason says how); removed from the answer
    CORRECTED = "corrected"  # it stands after the expert fixed its citation or edited its text


class UnsupportedReason(StrEnum):
    NOT_IN_SOURCE = "not_in_source"
    CHANGED_MODAL = "changed_modal"
    CHANGED_NUMBER = "changed_number"
    IRRELEVANT_CITATION = "irrelevant_citation"


class StatementVerdict(Strict):
    """Ground truth for one statement of the primary's answer (by its position there)."""

    index: int = Field(ge=0, description="The statement's position in the primary's answer, from 0.")
    verdict: Verdict
    reason: UnsupportedReason | None = Field(default=None, description="Why, for an unsupported statement.")
    cites: list[str] = Field(default_factory=list, description="The quote ids it rests on after review.")


def verdict_differences(
    first: list[StatementVerdict] | None,
    second: list[StatementVerdict] | None,
    first_answer: object = None,
    second_answer: object = None,
) -> list[str]:
    """Where two reviews of one answer disagree, in words (empty: they agree): a statement one keeps and the
    other does not, a different reason for an unsupported statement, other citations; or one abstains."""
    found: list[str] = []
    a_abstains = isinstance(first_answer, dict) and bool(first_answer.get("abstained"))
    b_abstains = isinstance(second_answer, dict) and bool(second_answer.get("abstained"))
    if a_abstains != b_abstains:
        which = "first" if a_abstains else "second"
        found.append(
            f"Abstention: the {which} review replaces the answer with an abstention, the other does not."
        )
    a = {v.index: v for v in first or []}
    b = {v.index: v for v in second or []}
    for index in sorted(set(a) | set(b)):
        x, y = a.get(index), b.get(index)
        said = [_verdict_words(v) for v in (x, y)]
        if said[0] != said[1]:
            found.append(f"Statement {index + 1}: the first review says {said[0]}, the second {said[1]}.")
        elif x is not None and y is not None and x.verdict != Verdict.UNSUPPORTED and x.cites != y.cites:
            found.append(
                f"Statement {index + 1}: the first review cites {', '.join(x.cites) or 'nothing'}, the second "
                f"{', '.join(y.cites) or 'nothing'}."
            )
    return found


def _verdict_words(verdict: StatementVerdict | None) -> str:
    if verdict is None:
        return "nothing"
    if verdict.verdict == Verdict.UNSUPPORTED:
        reason = verdict.reason.value.replace("_", " ") if verdict.reason else "no reason given"
        return f"unsupported ({reason})"
    return verdict.verdict.value
