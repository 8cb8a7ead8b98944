"""The verifier interface (docs/design.md §5.1): a pure check that reports issues and never decides or mutates.

A verifier receives the raw classification (the parsed model, or None when it did not pass the
schema), the DocumentBundle, the profile and a context; it returns a VerifierResult. The runner
times it and turns an exception into ERRORED plus a `<V>.VERIFIER_ERROR` BLOCKER.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from arbiter.contracts import (
    Highlight,
    Issue,
    Location,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.subject import SchemaProblem as SchemaProblem  # re-exported for the verifiers
from arbiter.contracts.subject import Subject as Subject  # re-exported for the verifiers and runners
from arbiter.verifiers.codes import CodeSpec, spec


@dataclass(frozen=True)
class VerifyContext:
    """Edges a verifier may use. `llm` is None offline; LLM phases are then SKIPPED."""

    llm: Any = None
    notes: dict[str, Any] = field(default_factory=dict)


class Verifier(Protocol):
    """Each kind's verifiers take that kind's subject, context bundle and profile (arbiter/kinds): the
    medical ones a DocumentBundle and a Profile, the grounded-answer ones the retrieved chunks as a bundle
    and a GroundedProfile."""

    name: str  # "V1".."V4"
    version: str
    output_file: str  # file name under output/agent_outputs/{doc_id}/

    def verify(
        self, subject: Subject, bundle: Any, profile: Any, context: VerifyContext
    ) -> VerifierResult: ...


class IssueList:
    """Collects a verifier's issues, numbering them V1-0001, V1-0002, ... with the catalogue's severity."""

    def __init__(self, verifier: str, catalogue: Mapping[str, CodeSpec] | None = None) -> None:
        self.verifier = verifier
        self.items: list[Issue] = []
        self.catalogue = catalogue  # None: the medical catalogue (verifiers/codes.py)

    def add(
        self,
        code: str,
        message: str,
        *,
        path: str = "",
        segment_index: int | None = None,
        document_type: str | None = None,
        page: int | None = None,
        fix: list[dict[str, Any]] | None = None,
        highlight: Highlight | None = None,
    ) -> Issue:
        entry = spec(code) if self.catalogue is None else self.catalogue[code]
        if not code.startswith(self.verifier + "."):
            raise ValueError(f"{code} does not belong to {self.verifier}")
        fixable = entry.auto_fixable and bool(fix)
        issue = Issue(
            issue_id=f"{self.verifier}-{len(self.items) + 1:04d}",
            code=code,
            verifier=self.verifier,
            severity=entry.severity,
            message=message,
            auto_fixable=fixable,
            fix=fix if fixable else None,
            location=Location(segment_index=segment_index, document_type=document_type, page=page, path=path),
            highlight=highlight,
        )
        self.items.append(issue)
        return issue


SEVERITY_PENALTY = {"BLOCKER": 0.4, "MAJOR": 0.2, "MINOR": 0.05}


def penalty_score(issues: list[Issue], weights: dict[str, float] = SEVERITY_PENALTY, per: int = 1) -> float:
    """1 - sum of severity weights / per, clamped to [0, 1] (docs/design.md §5.1)."""
    total = sum(weights[str(issue.severity)] for issue in issues)
    return max(0.0, min(1.0, 1.0 - total / max(per, 1)))


def result(
    verifier: Verifier,
    issues: IssueList,
    *,
    score: float | None = None,
    notes: list[str] | None = None,
    **extra: Any,
) -> VerifierResult:
    """A finished result: FAILED when there are issues, PASSED otherwise."""
    return VerifierResult(
        verifier=verifier.name,
        version=verifier.version,
        status=VerifierStatus.FAILED if issues.items else VerifierStatus.PASSED,
        issues=issues.items,
        score=penalty_score(issues.items) if score is None else score,
        notes=notes or [],
        **extra,
    )


def skipped(verifier: Verifier, note: str) -> VerifierResult:
    """A verifier that did not run (e.g. the classification failed the schema). Never a pass."""
    return VerifierResult(
        verifier=verifier.name,
        version=verifier.version,
        status=VerifierStatus.SKIPPED,
        score=0.0,
        notes=[note],
    )
