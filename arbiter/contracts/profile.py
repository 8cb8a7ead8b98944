"""The profile: taxonomy, vendor and trap lists, tolerances, retry limit and arbiter rules as data.

`load_profile(None)` returns the bundled medical profile; a site's own TOML file replaces it whole.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arbiter.contracts.content_profile import BaselineReader as BaselineReader
from arbiter.contracts.content_profile import Content as Content
from arbiter.contracts.content_profile import ReaderSettings as ReaderSettings
from arbiter.contracts.content_profile import ValuePattern as ValuePattern
from arbiter.contracts.limits import Limits
from arbiter.contracts.sampling_profile import CalibrationPolicy as CalibrationPolicy
from arbiter.contracts.sampling_profile import DriftPolicy as DriftPolicy
from arbiter.contracts.sampling_profile import MetricsPolicy as MetricsPolicy
from arbiter.contracts.sampling_profile import RiskWeights as RiskWeights
from arbiter.contracts.sampling_profile import Sampling as Sampling
from arbiter.errors import ConfigError

CountName = Literal[
    "blocker",
    "major",
    "major_fixable",
    "major_non_fixable",
    "minor",
    "total",
    "errored",
    "not_run",
    "budget_exhausted",
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Taxonomy(Strict):
    document_types: list[str] = Field(min_length=1)
    presence_levels: list[str] = Field(min_length=1)
    no_evidence_level: str
    administrative_type: str
    genomic_type: str
    report_types: list[str]

    @model_validator(mode="after")
    def _members_known(self) -> Taxonomy:
        types = set(self.document_types)
        if len(types) != len(self.document_types):
            raise ValueError("document_types has duplicates")
        for name in [self.administrative_type, self.genomic_type, *self.report_types]:
            if name not in types:
                raise ValueError(f"{name!r} is not one of document_types")
        if self.no_evidence_level not in self.presence_levels:
            raise ValueError(f"{self.no_evidence_level!r} is not one of presence_levels")
        return self


class Vendors(Strict):
    routine_lab: list[str]
    genomic: list[str]
    genomic_content: list[str]


class Traps(Strict):
    administrative_titles: list[str]
    title_region_paragraphs: int = Field(ge=1)
    title_max_chars: int = Field(ge=10)
    header_footer_patterns: list[str]
    injection_phrases: list[str]

    @field_validator("header_footer_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"header/footer pattern {pattern!r} is not a valid regular expression: {exc}"
                ) from exc
        return patterns


class Tolerances(Strict):
    share_sum: float = Field(gt=0, lt=0.5)
    mixture_match: float = Field(gt=0, lt=0.5)
    dominant_tie: float = Field(ge=0, lt=0.5)
    min_snippet_chars: int = Field(ge=1)
    fuzzy_match_threshold: float = Field(ge=50, le=100)
    min_dominant_confidence: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="A segment whose dominant type's own confidence is below this is the primary's doubt: "
        "escalated (V2.PRIMARY_LOW_CONFIDENCE).",
    )
    dominant_margin: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="A segment whose two largest (normalised) shares are within this of each other is a "
        "tie the primary could not settle: escalated (V2.PRIMARY_TYPE_TIE).",
    )


class Retry(Strict):
    max_retries: int = Field(ge=0, le=10)


class Bound(Strict):
    min: int | None = None
    max: int | None = None

    def holds(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class Rule(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    when: dict[CountName, Bound] = Field(default_factory=dict)
    decision: Literal["AUTO_ACCEPT", "AUTO_RETRY", "ESCALATE_TO_SME"]
    reason: str


class ArbiterPolicy(Strict):
    policy_version: str
    required_verifiers: list[str]
    require_llm_phases: bool = Field(
        default=False,
        description="When true, a required verifier whose language-model phase did not run (no LLM "
        "backend, or skipped) counts as a check not run (not_run), so the document is escalated.",
    )
    require_primary_evidence: bool = Field(
        default=True,
        description="When true, a segment's PRIMARY type with no evidence (V1.PRIMARY_EVIDENCE_MISSING) counts "
        "as a major problem that cannot be fixed automatically, so the document is escalated, not accepted.",
    )
    rules: list[Rule] = Field(min_length=1)

    @model_validator(mode="after")
    def _ends_with_escalating_fallback(self) -> ArbiterPolicy:
        last = self.rules[-1]
        if last.when or last.decision != "ESCALATE_TO_SME":
            raise ValueError("the last arbiter rule must have no conditions and decide ESCALATE_TO_SME")
        names = [rule.name for rule in self.rules]
        if len(set(names)) != len(names):
            raise ValueError("arbiter rule names must be unique")
        return self


class Baseline(Strict):
    """Settings of the offline baseline classifier: weighted cue phrases per type and its thresholds."""

    cues: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Document type -> cue phrase (lowercase) -> weight."
    )
    title_weight: float = Field(
        default=3.0, ge=1.0, description="Multiplier for a cue in a page's title region."
    )
    strong_title_weight: float = Field(
        default=3.0, gt=0, description="A title-region cue of at least this weight decides its page's type."
    )
    administrative_title_weight: float = Field(default=4.0, gt=0)
    vendor_weight: float = Field(default=2.0, ge=0)
    genomic_content_weight: float = Field(default=1.5, ge=0)
    routine_lab_type: str | None = Field(default=None, description="The type routine lab vendors point to.")
    continuation_min_share: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="An untitled page keeps the previous type if it scores this share.",
    )
    min_page_score: float = Field(
        default=1.0, gt=0, description="Below this a page takes its neighbour's type."
    )
    presence_min_share: dict[str, float] = Field(
        default_factory=dict, description="Presence level -> the least share that earns it."
    )
    confidence_floor: float = Field(
        default=0.5, ge=0, le=1, description="Confidence of a segment whose evidence decides nothing."
    )
    confidence_ceiling: float = Field(
        default=0.95, ge=0, le=1, description="Confidence of a decisive, well-evidenced segment."
    )
    absent_confidence: float = Field(default=0.9, ge=0, le=1)
    decisive_margin: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="A lead of the top share over the next of at least this is decisive (full confidence).",
    )
    near_tie_margin: float = Field(
        default=0.1, ge=0, lt=1, description="Top two shares within this are reported as a (near) tie."
    )
    full_evidence_score: float = Field(
        default=3.0, gt=0, description="A segment's dominant type scoring this much is well evidenced."
    )
    coverage_floor: float = Field(
        default=0.4,
        ge=0,
        lt=1,
        description="Share of a segment's pages with wording of their own at or below which confidence is "
        "the floor.",
    )
    label_cue_factor: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Weight kept by a non-administrative cue found only in fill-in field labels.",
    )
    form_field_weight: float = Field(
        default=0.5, ge=0, description="Administrative score of each fill-in field on a form page."
    )
    form_max_score: float = Field(
        default=6.0, ge=0, description="The most a page's fill-in fields add to its administrative score."
    )
    form_min_fields: int = Field(default=3, ge=1, description="Fewest fill-in fields that make a form.")
    form_min_share: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="Least share of a page's lines that are fill-in fields on a form.",
    )
    label_max_chars: int = Field(
        default=100, ge=10, description="The longest text that still reads as one field label."
    )
    split_on_page_restart: bool = Field(
        default=True,
        description='A page numbered "Page 1 of N" after a numbered page starts a new document.',
    )
    layout_start_fill: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A page opening on a title-like line after a page whose text stops this far down "
        "(headers, footers and page numbers aside) or sooner starts a new document; None: off.",
    )
    evidence_per_type: int = Field(default=2, ge=1, le=5)
    max_snippet_chars: int = Field(default=160, ge=20)
    reader: BaselineReader | None = Field(
        default=None, description="A learned page reader decides each page's type (the cues when absent)."
    )

    @field_validator("cues")
    @classmethod
    def _weights_positive(cls, cues: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for doc_type, phrases in cues.items():
            for phrase, weight in phrases.items():
                if weight <= 0 or not phrase.strip():
                    raise ValueError(
                        f"cue {phrase!r} of {doc_type} needs a non-empty phrase and a positive weight"
                    )
        return cues

    @model_validator(mode="after")
    def _floor_below_ceiling(self) -> Baseline:
        if self.confidence_floor > self.confidence_ceiling:
            raise ValueError("confidence_floor must not exceed confidence_ceiling")
        return self


class Profile(Strict):
    name: str
    version: str
    taxonomy: Taxonomy
    vendors: Vendors
    traps: Traps
    tolerances: Tolerances
    retry: Retry
    arbiter: ArbiterPolicy
    sampling: Sampling = Field(default_factory=Sampling)
    metrics: MetricsPolicy = Field(default_factory=MetricsPolicy)
    drift: DriftPolicy = Field(default_factory=DriftPolicy)
    calibration: CalibrationPolicy = Field(default_factory=CalibrationPolicy)
    baseline: Baseline | None = None
    content: Content = Field(default_factory=Content)
    guidance: dict[str, str] = Field(default_factory=dict)  # per type: how a clinician tells it (review app)
    limits: Limits = Field(default_factory=Limits)  # size limits on every input (arbiter/contracts/limits.py)

    @model_validator(mode="after")
    def _content_types_known(self) -> Profile:
        types = set(self.taxonomy.document_types)
        named = [
            *self.content.headings,
            *(p.type for p in self.content.patterns),
            *self.content.label_evidence_types,
            *[
                t
                for t in (self.content.form_type, self.content.results_header_type, self.content.about_type)
                if t
            ],
            *self.guidance,
        ]
        for name in named:
            if name not in types:
                raise ValueError(
                    f"[content] or [guidance] names {name!r}, which is not one of taxonomy.document_types"
                )
        return self

    @cached_property
    def header_footer_regexes(self) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in self.traps.header_footer_patterns]

    @cached_property
    def digest(self) -> str:
        """sha256 of the profile's canonical JSON: part of the key that decides whether a re-run can skip.
        The sampling shares, the drift alarms, the calibration and the reviewers' guidance are left out: they
        decide nothing."""
        return hashlib.sha256(
            self.model_dump_json(exclude={"sampling", "drift", "calibration", "guidance"}).encode()
        ).hexdigest()


class PolicyProfile(Protocol):
    """What the arbiter, the retry governor and the runner need of any kind's profile (arbiter/kinds): the
    policy rules and the retry limit. The medical Profile and the grounded-answer profile both have them."""

    @property
    def arbiter(self) -> ArbiterPolicy: ...

    @property
    def retry(self) -> Retry: ...


def load_profile(path: Path | str | None = None, *, open_reader: bool = True) -> Profile:
    """Load and validate a profile; None means the bundled medical profile. `open_reader=False` skips checking
    that the page reader files are there and pinned (for fitting a new one, or adopting one)."""
    if path is None:
        text = resources.files("arbiter.profiles").joinpath("medical.toml").read_text(encoding="utf-8")
        source = "the bundled medical profile"
    else:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"Profile file {file} does not exist.")
        text = file.read_text(encoding="utf-8")
        source = str(file)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Profile {source} is not valid TOML: {exc}") from exc
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Profile {source} is invalid: {problems}") from exc
    if open_reader and profile.content.reader is not None:
        # The page reader must be there and be the file the profile pins, before any document is judged.
        from arbiter.reader.model import ReaderError, reader_for
        from arbiter.reader.starts import start_reader_for

        settings = profile.content.reader
        try:
            reader_for(settings.model, settings.sha256)
            if settings.starts is not None and settings.starts_sha256 is not None:
                start_reader_for(settings.starts, settings.starts_sha256)
        except ReaderError as exc:
            raise ConfigError(f"Profile {source}: {exc}") from None
    if open_reader and profile.baseline is not None and profile.baseline.reader is not None:
        from arbiter.reader.model import ReaderError, reader_for

        try:
            reader_for(profile.baseline.reader.model, profile.baseline.reader.sha256)
        except ReaderError as exc:
            raise ConfigError(f"Profile {source}: [baseline.reader]: {exc}") from None
    return profile
