"""The registry of answer kinds (issue 30.1): what Arbiter can verify, each kind named once with everything
the machinery needs to serve it.

A kind names its contracts (the answer's JSON Schema and the context it is checked against), its verifiers
V1–V4 (one spec each: module, class and the file it writes), its one catalogue of issue codes (severity and
fixability), its profile (policy rules, thresholds, traps), its loader (raw input → Subject) and its fixes.
Everything is named by import path and resolved on use, so listing the kinds imports nothing heavy.

The medical classification is the default kind and points at what already exists; the grounded-answer
kind (an answer composed from retrieved chunks, with verbatim quotes) is the second. Adding a kind is
adding an entry here and the modules it names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

from arbiter.contracts.review import DEFAULT_KIND
from arbiter.errors import ConfigError

MEDICAL = DEFAULT_KIND  # "medical-classification" (arbiter.contracts.review)
GROUNDED = "grounded-answer"
DEFAULT_KIND = MEDICAL


def resolve(target: str) -> Any:
    """The object a "package.module:attribute" path names."""
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)


@dataclass(frozen=True)
class ContractSpec:
    """A contract of a kind: `arbiter schema NAME` prints its JSON Schema."""

    name: str
    model: str  # "module:Class" of the pydantic model
    role: Literal["answer", "context", "item"]


@dataclass(frozen=True)
class VerifierSpec:
    name: str  # "V1".."V4"
    model: str  # "module:Class"; built with no arguments
    output_file: str  # written under OUT/agent_outputs/{id}/

    def build(self) -> Any:
        return resolve(self.model)()


@dataclass(frozen=True)
class KindSpec:
    name: str
    summary: str
    inputs: Literal["pdf", "items"]  # PDFs with classifications, or JSON items carrying their own context
    contracts: tuple[ContractSpec, ...]
    verifiers: tuple[VerifierSpec, ...]
    codes: str  # "module:CODES", the kind's one catalogue of issue codes
    profile_loader: str  # "module:function(path | None)" returning the kind's profile
    profile_file: str  # the bundled profile, in arbiter/profiles/
    loader: str  # "module:function(raw) -> Subject"
    fixes: str  # what applies the verifiers' JSON Patches (the retry governor's autofix)
    fixable: tuple[str, ...] = ()  # documentation: what its fixes may change, and nothing else

    def catalogue(self) -> Mapping[str, Any]:
        """The kind's issue codes: code → CodeSpec (severity, auto_fixable, meaning)."""
        codes: Mapping[str, Any] = resolve(self.codes)
        return codes

    def build_verifiers(self) -> list[Any]:
        return [spec.build() for spec in self.verifiers]

    def load_profile(self, path: Any = None) -> Any:
        return resolve(self.profile_loader)(path)

    def subject_loader(self) -> Callable[[str | bytes], Any]:
        loader: Callable[[str | bytes], Any] = resolve(self.loader)
        return loader

    def contract(self, name: str) -> ContractSpec | None:
        return next((c for c in self.contracts if c.name == name), None)

    @property
    def output_files(self) -> tuple[str, ...]:
        return tuple(spec.output_file for spec in self.verifiers)


# The file each verifier writes (docs/design.md §4); both kinds keep the same four names.
_MEDICAL_FILES = (
    "v1_schema_validation.json",
    "v2_consistency_check.json",
    "v3_trap_detection.json",
    "v4_evidence_quality.json",
)

KINDS: dict[str, KindSpec] = {
    MEDICAL: KindSpec(
        name=MEDICAL,
        summary="A classification of a medical-records PDF into segments of document types, with evidence.",
        inputs="pdf",
        contracts=(
            ContractSpec("classification", "arbiter.contracts.classification:ClassificationOutput", "answer"),
            ContractSpec("bundle", "arbiter.contracts.bundle:DocumentBundle", "context"),
        ),
        verifiers=(
            VerifierSpec("V1", "arbiter.verifiers.v1_schema:V1Schema", _MEDICAL_FILES[0]),
            VerifierSpec("V2", "arbiter.verifiers.v2_consistency:V2Consistency", _MEDICAL_FILES[1]),
            VerifierSpec("V3", "arbiter.verifiers.v3_traps:V3Traps", _MEDICAL_FILES[2]),
            VerifierSpec("V4", "arbiter.verifiers.v4_evidence:V4Evidence", _MEDICAL_FILES[3]),
        ),
        codes="arbiter.verifiers.codes:CODES",
        profile_loader="arbiter.contracts.profile:load_profile",
        profile_file="medical.toml",
        loader="arbiter.contracts.schemas:load_subject",
        fixes="arbiter.decide.autofix:apply_fixes",
        fixable=(
            "page counts",
            "segment numbering",
            "missing NO_EVIDENCE types",
            "share sums",
            "snippet pages",
        ),
    ),
    GROUNDED: KindSpec(
        name=GROUNDED,
        summary="An answer composed from retrieved chunks: statements citing verbatim quotes, a confidence "
        "level, or an abstention listing the missing evidence.",
        inputs="items",
        contracts=(
            ContractSpec(GROUNDED, "arbiter.contracts.grounded:GroundedItem", "item"),
            ContractSpec(f"{GROUNDED}-answer", "arbiter.contracts.grounded:Answer", "answer"),
            ContractSpec(f"{GROUNDED}-context", "arbiter.contracts.grounded:GroundedContext", "context"),
        ),
        verifiers=(
            VerifierSpec("V1", "arbiter.verifiers.grounded.v1_schema:GroundedV1", _MEDICAL_FILES[0]),
            VerifierSpec("V2", "arbiter.verifiers.grounded.v2_consistency:GroundedV2", _MEDICAL_FILES[1]),
            VerifierSpec("V3", "arbiter.verifiers.grounded.v3_traps:GroundedV3", _MEDICAL_FILES[2]),
            VerifierSpec("V4", "arbiter.verifiers.grounded.v4_evidence:GroundedV4", _MEDICAL_FILES[3]),
        ),
        codes="arbiter.verifiers.grounded.codes:CODES",
        profile_loader="arbiter.contracts.grounded:load_grounded_profile",
        profile_file="grounded.toml",
        loader="arbiter.verifiers.grounded.subject:load_item",
        fixes="arbiter.decide.autofix:apply_fixes",
        fixable=("quote spacing, case and hyphens", "quote offsets", "the confidence level from the count"),
    ),
}


def kind(name: str | None) -> KindSpec:
    """The kind of that name (None: the default); an unknown name is the user's mistake, said in one line."""
    spec = KINDS.get(name or DEFAULT_KIND)
    if spec is None:
        raise ConfigError(f"Unknown kind {name!r}; choose one of: {', '.join(KINDS)}.")
    return spec


def contracts() -> dict[str, tuple[KindSpec, ContractSpec]]:
    """Every kind's contracts by their `arbiter schema` name."""
    return {c.name: (k, c) for k in KINDS.values() for c in k.contracts}
