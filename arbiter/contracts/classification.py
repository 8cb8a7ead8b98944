"""ClassificationOutput (docs/design.md §3.2): the primary model's answer that Arbiter verifies.

The schema is structural plus value ranges; taxonomy membership (which document types and presence
levels exist) belongs to the profile and is checked by V1, so one schema serves every profile.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Producer(Strict):
    name: str
    version: str | None = None


class Evidence(Strict):
    page: int = Field(ge=1, description="1-based page the snippet is claimed to appear on.")
    snippet: str = Field(description="Verbatim text from that page.")
    anchor: str | None = Field(default=None, description="A short distinctive part of the snippet.")


class TypeAssessment(Strict):
    document_type: str
    presence_level: str
    share: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)


class Segment(Strict):
    segment_index: int = Field(ge=1)
    start_page: int = Field(ge=1)
    end_page: int = Field(ge=1)
    segment_page_count: int = Field(ge=0)
    dominant_type: str
    classification_reasoning: str = ""
    types: list[TypeAssessment]


class MixtureEntry(Strict):
    document_type: str
    share: float = Field(ge=0.0, le=1.0)


class ClassificationOutput(Strict):
    doc_id: str
    producer: Producer
    number_of_segments: int = Field(ge=0)
    dominant_type: str
    vendor_signals: list[str] = Field(default_factory=list)
    segments: list[Segment] = Field(min_length=1)
    document_mixture: list[MixtureEntry]
