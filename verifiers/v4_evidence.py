"""V4 evidence quality (DESIGN §5, seed 003 §6): locate every evidence snippet in the document.

Deterministic: each snippet is searched after normalisation on its claimed page, then in its segment,
then anywhere; where it was found (page, span, boxes) is kept for highlighting in the review app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import (
    DocumentBundle,
    Evidence,
    EvidenceCheck,
    Highlight,
    PhaseStatus,
    Segment,
    TypeAssessment,
    VerifierResult,
)
from arbiter.profile import Profile
from verifiers.base import IssueList, Subject, VerifyContext, penalty_score, result, skipped
from verifiers.textmatch import Match, PageIndex

NO_LLM_NOTE = "No LLM backend configured; semantic evidence assessment not run."
LLM_NOT_AVAILABLE_NOTE = "Semantic evidence assessment (LLM) is not available in this version; rules only."
# seed 003 §6: penalties per severity, normalised by the number of evidence items.
V4_PENALTY = {"BLOCKER": 0.3, "MAJOR": 0.15, "MINOR": 0.05}


def highlight(match: Match) -> Highlight:
    return Highlight(
        page=match.page, start=match.start, end=match.end, boxes=list(match.boxes), score=match.score
    )


def quote(text: str, limit: int = 80) -> str:
    """A snippet as shown to an SME: whitespace collapsed, long ones shortened."""
    text = " ".join(text.split())
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _pages_text(pages: list[int]) -> str:
    if len(pages) == 1:
        return f"page {pages[0]}"
    return "pages " + ", ".join(str(p) for p in pages[:-1]) + f" and {pages[-1]}"


@dataclass
class V4Evidence:
    name: str = "V4"
    version: str = "1.0.0"
    output_file: str = "v4_evidence_quality.json"

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        model = subject.model
        if model is None:
            return skipped(
                self, "The classification did not pass the schema check, so evidence was not checked."
            )
        index = PageIndex.shared(bundle, profile.tolerances.fuzzy_match_threshold)
        issues = IssueList(self.name)
        checks: list[EvidenceCheck] = []
        for i, segment in enumerate(model.segments):
            for j, assessment in enumerate(segment.types):
                for k, evidence in enumerate(assessment.evidence):
                    path = f"/segments/{i}/types/{j}/evidence/{k}"
                    checks.append(self._check(issues, index, profile, segment, assessment, evidence, path))
        note = NO_LLM_NOTE if context.llm is None else LLM_NOT_AVAILABLE_NOTE
        score = penalty_score(issues.items, V4_PENALTY, per=len(checks))
        return result(
            self, issues, score=score, notes=[note], llm_phase=PhaseStatus.SKIPPED, evidence_checks=checks
        )

    def _check(
        self,
        issues: IssueList,
        index: PageIndex,
        profile: Profile,
        segment: Segment,
        assessment: TypeAssessment,
        evidence: Evidence,
        path: str,
    ) -> EvidenceCheck:
        def add(
            code: str,
            message: str,
            page: int,
            fix: list[dict[str, Any]] | None = None,
            at: Match | None = None,
        ) -> None:
            issues.add(
                code,
                message,
                path=path,
                segment_index=segment.segment_index,
                document_type=assessment.document_type,
                page=page,
                fix=fix,
                highlight=highlight(at) if at is not None else None,
            )

        shown = quote(evidence.snippet)
        owner = f"for {assessment.document_type} in segment {segment.segment_index}"
        if len(evidence.snippet.strip()) < profile.tolerances.min_snippet_chars:
            add(
                "V4.SNIPPET_TOO_SHORT",
                f"The evidence {shown} {owner} is too short to show what the document is "
                f"(fewer than {profile.tolerances.min_snippet_chars} characters).",
                evidence.page,
            )

        def check(status: str, found: Match | None = None) -> EvidenceCheck:
            return EvidenceCheck(
                segment_index=segment.segment_index,
                document_type=assessment.document_type,
                claimed_page=evidence.page,
                path=path,
                status=status,
                found=highlight(found) if found else None,
            )

        claimed = index.page(evidence.page)
        if claimed is not None and not claimed.has_text_layer and not claimed.ocr_applied:
            add(
                "V4.PAGE_NO_TEXT_LAYER",
                f"The evidence {shown} {owner} cannot be checked: page {evidence.page} is a scanned image "
                "with no text.",
                evidence.page,
            )
            return check("no_text_layer")

        match = index.find(evidence.snippet, evidence.page) if claimed is not None else None
        status = "verified"
        if match is None:
            inside = [p for p in index.page_numbers if segment.start_page <= p <= segment.end_page]
            others = [p for p in inside if p != evidence.page]
            found_inside = next((m for m in (index.find(evidence.snippet, p) for p in others) if m), None)
            if found_inside is not None:
                match, status = found_inside, "wrong_page"
                claim = (
                    f"is not on page {evidence.page}"
                    if claimed is not None
                    else f"is claimed on page {evidence.page}, which the document does not have"
                )
                add(
                    "V4.SNIPPET_WRONG_PAGE",
                    f"The evidence {shown} {owner} {claim}; it appears on page {match.page}.",
                    match.page,
                    fix=[{"op": "replace", "path": f"{path}/page", "value": match.page}],
                    at=match,
                )
            else:
                segment_pages = set(inside)
                outside = index.find_any(
                    evidence.snippet, [p for p in index.page_numbers if p not in segment_pages]
                )
                if outside:
                    match, status = outside[0], "outside_segment"
                    span = (
                        f"page {segment.start_page}"
                        if segment.start_page == segment.end_page
                        else f"pages {segment.start_page}–{segment.end_page}"
                    )
                    add(
                        "V4.SNIPPET_OUTSIDE_SEGMENT",
                        f"The evidence {shown} {owner} is neither on page {evidence.page} nor elsewhere in "
                        f"its segment ({span}); it appears only on {_pages_text([m.page for m in outside])}, "
                        "outside the segment.",
                        match.page,
                        at=match,
                    )
                else:
                    status = "not_found"
                    add(
                        "V4.SNIPPET_NOT_FOUND",
                        f"The evidence {shown} {owner} could not be found anywhere in the document; "
                        "it may be fabricated.",
                        evidence.page,
                    )

        anchor = (evidence.anchor or "").strip()
        anchor_page = match.page if match is not None else evidence.page
        if anchor and index.page(anchor_page) is not None and index.find(anchor, anchor_page) is None:
            add(
                "V4.ANCHOR_NOT_FOUND",
                f"The anchor {quote(anchor)} of the evidence {owner} does not appear on page {anchor_page}.",
                anchor_page,
            )
        return check(status, match)
