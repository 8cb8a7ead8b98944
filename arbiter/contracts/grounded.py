"""The grounded-answer kind's contracts (issue 30.3): a question, the chunks retrieved for it, and the
primary's answer — statements that each cite verbatim quotes ("requirements") from those chunks, with a
confidence level, or an abstention that lists the evidence it is missing.

One item is one JSON object (a line of a JSONL file, or a file of a folder). The answer is what is
verified; the question and the chunks are the context it is checked against. `arbiter schema
grounded-answer` prints the item's JSON Schema.
"""

from __future__ import annotations

import hashlib
import tomllib
from enum import StrEnum
from functools import cached_property
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arbiter.contracts.answers import StatementVerdict as StatementVerdict  # re-exported
from arbiter.contracts.answers import UnsupportedReason as UnsupportedReason
from arbiter.contracts.answers import Verdict as Verdict
from arbiter.contracts.limits import Limits
from arbiter.contracts.profile import ArbiterPolicy, Retry, Sampling
from arbiter.errors import ConfigError

KIND = "grounded-answer"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Confidence(StrEnum):
    """Levels from the count of verified quotes: high 5+, medium 2–4, low 1."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Question(Strict):
    text: str = Field(min_length=1)
    language: str = Field(default="en", pattern=r"^[a-z]{2}$", description="ISO 639-1 code.")


class Chunk(Strict):
    """One retrieved passage: its id, where it comes from, its text and the retriever's score."""

    chunk_id: str = Field(min_length=1)
    source: str = Field(min_length=1, description="The source document, e.g. '45 CFR 164.524'.")
    page: int | None = Field(default=None, ge=1)
    section: str = ""
    text: str
    score: float = Field(ge=0, le=1, description="Retrieval similarity, 0 to 1.")


class Quote(Strict):
    """A requirement: a verbatim quote (10–40 words by default) from one retrieved chunk."""

    quote_id: str = Field(min_length=1, description="e.g. REQ-001; what statements cite.")
    chunk_id: str = Field(min_length=1)
    text: str
    start: int | None = Field(default=None, ge=0, description="Offset of the quote in the chunk's text.")
    end: int | None = Field(default=None, ge=0, description="Offset one past its last character.")


class Statement(Strict):
    text: str = Field(min_length=1)
    cites: list[str] = Field(default_factory=list, description="quote_ids this statement rests on.")


class Answer(Strict):
    language: str = Field(default="en", pattern=r"^[a-z]{2}$")
    statements: list[Statement] = Field(default_factory=list)
    quotes: list[Quote] = Field(default_factory=list)
    confidence: Confidence | None = Field(default=None, description="None when the answer abstains.")
    abstained: bool = False
    missing_evidence: list[str] = Field(
        default_factory=list, description="What evidence an abstention lacks (required when abstained)."
    )


class Producer(Strict):
    name: str
    version: str = ""


class GroundedItem(Strict):
    """One item to verify: the question, the retrieved context and the primary's answer."""

    item_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    producer: Producer | None = None
    question: Question
    chunks: list[Chunk] = Field(default_factory=list)
    answer: Answer


class GroundedContext(Strict):
    """The context an answer is checked against (the item without its answer)."""

    item_id: str
    question: Question
    chunks: list[Chunk]


# ------------------------------------------------------------------------------------------ profile


class Thresholds(Strict):
    quote_min_words: int = Field(default=10, ge=1)
    quote_max_words: int = Field(default=40, ge=1)
    retrieval_threshold: float = Field(default=0.5, ge=0, le=1)
    high_min_quotes: int = Field(default=5, ge=2)
    medium_min_quotes: int = Field(default=2, ge=2)
    support_min_coverage: float = Field(
        default=0.7, gt=0, le=1, description="Share of a statement's content words its quotes must hold."
    )
    question_min_overlap: int = Field(
        default=1, ge=0, description="Content words a cited quote must share with the question."
    )
    evidence_min_coverage: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="Share of the question's content words one requirement sentence must hold to count as "
        "evidence that answers it (abstention and answered-without-evidence checks).",
    )
    conflict_min_overlap: float = Field(
        default=0.5, gt=0, le=1, description="Content overlap of two sentences that state the same rule."
    )


class GroundedTraps(Strict):
    hedges: list[str]
    compliance_claims: list[str]
    injection_phrases: list[str]
    strong_modals: list[str]
    weak_modals: list[str]
    negations: list[str]
    imperative_verbs: list[str] = Field(
        default_factory=list,
        description='Verbs that, opening a sentence bare ("Retain the documentation ..."), state an obligation.',
    )


class GroundedProfile(Strict):
    name: str
    version: str
    thresholds: Thresholds = Field(default_factory=Thresholds)
    traps: GroundedTraps
    languages: dict[str, list[str]] = Field(description="Function words that identify each language.")
    stopwords: list[str]
    retry: Retry
    arbiter: ArbiterPolicy
    sampling: Sampling = Field(default_factory=Sampling)
    limits: Limits = Field(default_factory=Limits)

    @cached_property
    def digest(self) -> str:
        """sha256 of the profile's canonical JSON: part of the key that decides whether a re-run can skip."""
        return hashlib.sha256(self.model_dump_json(exclude={"sampling"}).encode()).hexdigest()


def load_grounded_profile(path: Path | str | None = None) -> GroundedProfile:
    """Load and validate a grounded-answer profile; None means the bundled one."""
    if path is None:
        text = resources.files("arbiter.profiles").joinpath("grounded.toml").read_text(encoding="utf-8")
        source = "the bundled grounded-answer profile"
    else:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"Profile file {file} does not exist.")
        text, source = file.read_text(encoding="utf-8"), str(file)
    try:
        return GroundedProfile.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Profile {source} is not valid TOML: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Profile {source} is invalid: {problems}") from exc
