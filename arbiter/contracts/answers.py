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
