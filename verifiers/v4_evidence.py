"""V4 evidence quality (docs/design.md §5.2): locate every evidence snippet in the document.

Deterministic: each snippet is searched after normalisation on its claimed page, then in its segment,
then anywhere; where it was found (page, span, boxes) is kept for highlighting in the review app. A
snippet found nowhere but resembling OCR'd text whose numbers differ, or found only where it cuts a number
short ("Hemoglobin 1" in "Hemoglobin 13.2"), is reported as such.
The LLM phase then judges whether each located snippet supports its type; it can only add issues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import (
    ClassificationOutput,
    DocumentBundle,
    Evidence,
    EvidenceCheck,
    Highlight,
    Issue,
    OcrStatus,
    Segment,
    TypeAssessment,
    VerifierResult,
)
from arbiter.contracts.profile import Profile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, penalty_score, skipped
from arbiter.verifiers.llm_phase import PhaseSpec, finish, render_prompt, semantic_phase, skipped_phase
from arbiter.verifiers.llm_prompt import TextBudget, content_block, page_block, page_text, untrusted
from arbiter.verifiers.ocr_numbers import Number
from arbiter.verifiers.textmatch import Match, PageIndex
from arbiter.verifiers.v4_content import check_evidence_content

NO_LLM_NOTE = "No LLM backend configured; semantic evidence assessment not run."
LLM_NOT_AVAILABLE_NOTE = "The configured LLM cannot answer requests; semantic evidence assessment not run."
NOTHING_TO_JUDGE_NOTE = "No located evidence to judge; semantic evidence assessment not run."
PAGE_CHARS = 6_000
TOTAL_CHARS = 60_000
# The model judges snippets the locator found; the others are already reported by the rules.
JUDGED = ("verified", "wrong_page", "outside_segment")

PHASE = PhaseSpec(
    verifier="V4",
    what="semantic evidence",
    template="v4_evidence.md",
    finding="weak_evidence",
    finding_code="V4.LLM_WEAK_EVIDENCE",
    note_code="V4.LLM_NOTE",
    error_code="V4.LLM_ERROR",
    no_llm_note=NO_LLM_NOTE,
    unavailable_note=LLM_NOT_AVAILABLE_NOTE,
)
# Why a page without a text layer has no OCR text either, as the end of the V4.PAGE_NO_TEXT_LAYER message.
NO_TEXT_WHY: dict[OcrStatus | None, str] = {
    OcrStatus.UNAVAILABLE: " layer, and OCR is not available (Tesseract is not installed, or lacks the"
    " language data ARBITER_OCR_LANG asks for: the run's warning says which), so it could not be read",
    OcrStatus.DISABLED: " layer, and OCR is turned off, so it was not read",
    OcrStatus.NO_TEXT: "; OCR found no readable text on it",
    OcrStatus.FAILED: " layer, and OCR failed on it",
}
# docs/design.md §5.1: penalties per severity, normalised by the number of evidence items.
V4_PENALTY = {"BLOCKER": 0.3, "MAJOR": 0.15, "MINOR": 0.05}


def highlight(match: Match) -> Highlight:
    return Highlight(
        page=match.page, start=match.start, end=match.end, boxes=list(match.boxes), score=match.score
    )


def quote(text: str, limit: int = 80) -> str:
    """A snippet as shown to an SME: whitespace collapsed, long ones shortened."""
    text = " ".join(text.split())
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _numbers_text(found: tuple[Number, ...], limit: int = 4) -> str:
    """A few numbers for a message ("10.0, 3"), or "none"."""
    if not found:
        return "none"
    shown = ", ".join(n.text for n in found[:limit])
    return shown + (", …" if len(found) > limit else "")


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
        check_evidence_content(issues, model, bundle, profile)
        rules = list(issues.items)
        judged = [check for check in checks if check.status in JUDGED]
        if judged or context.llm is None:
            phase = semantic_phase(
                PHASE,
                context,
                lambda: evidence_prompt(model, bundle, profile, judged, rules),
                issues,
                model,
                bundle,
                profile,
            )
        else:
            phase = skipped_phase(NOTHING_TO_JUDGE_NOTE)

        def score(found: list[Issue]) -> float:
            return penalty_score(found, V4_PENALTY, per=len(checks))

        notes = fuzzy_notes(checks, index, profile.tolerances.fuzzy_match_threshold)
        return finish(self, issues, phase, score=score, notes=notes, evidence_checks=checks)

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

        # Message parts are built only for an issue: most snippets are found where they are claimed.
        def shown() -> str:
            return quote(evidence.snippet)

        def owner() -> str:
            return f"for {assessment.document_type} in segment {segment.segment_index}"

        if len(evidence.snippet.strip()) < profile.tolerances.min_snippet_chars:
            add(
                "V4.SNIPPET_TOO_SHORT",
                f"The evidence {shown()} {owner()} is too short to show what the document is "
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
            why = NO_TEXT_WHY.get(claimed.ocr_status, "")
            add(
                "V4.PAGE_NO_TEXT_LAYER",
                f"The evidence {shown()} {owner()} cannot be checked: page {evidence.page} is a scanned image "
                f"with no text{why}.",
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
                    f"The evidence {shown()} {owner()} {claim}; it appears on page {match.page}.",
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
                        f"The evidence {shown()} {owner()} is neither on page {evidence.page} nor elsewhere in "
                        f"its segment ({span}); it appears only on {_pages_text([m.page for m in outside])}, "
                        "outside the segment.",
                        match.page,
                        at=match,
                    )
                else:
                    pages = [
                        evidence.page,
                        *others,
                        *(p for p in index.page_numbers if p not in segment_pages),
                    ]
                    near = next((m for m in (index.near_miss(evidence.snippet, p) for p in pages) if m), None)
                    if near is not None:
                        match, status = near.match, "numbers_differ"
                        mine, theirs = near.numbers.differences()
                        where = (
                            f"appears on page {match.page} only as part of a longer number"
                            if near.cut_number
                            else f"resembles the OCR text on page {match.page} (score {match.score:g} of 100) "
                            "but its numbers differ"
                        )
                        add(
                            "V4.SNIPPET_NUMBERS_DIFFER",
                            f"The evidence {shown()} {owner()} {where}: the snippet has "
                            f"{_numbers_text(mine)} where the page has {_numbers_text(theirs)}. "
                            "It may be misquoted or fabricated.",
                            match.page,
                            at=match,
                        )
                    else:
                        status = "not_found"
                        add(
                            "V4.SNIPPET_NOT_FOUND",
                            f"The evidence {shown()} {owner()} could not be found anywhere in the document; "
                            "it may be fabricated.",
                            evidence.page,
                        )

        anchor = (evidence.anchor or "").strip()
        anchor_page = match.page if match is not None else evidence.page
        if anchor and index.page(anchor_page) is not None and not index.contains(anchor, anchor_page):
            add(
                "V4.ANCHOR_NOT_FOUND",
                f"The anchor {quote(anchor)} of the evidence {owner()} does not appear on page {anchor_page}.",
                anchor_page,
            )
        return check(status, match)


def fuzzy_notes(checks: list[EvidenceCheck], index: PageIndex, threshold: float) -> list[str]:
    """A note naming the snippets located only approximately on OCR'd pages, with their scores (a snippet
    refused for its numbers is an issue, not a match)."""
    scores = []
    for check in checks:
        found = check.found if check.status in JUDGED else None
        page = index.page(found.page) if found is not None else None
        if found is not None and page is not None and page.ocr_applied and found.score < 100.0:
            scores.append(found.score)
    if not scores:
        return []
    return [
        f"{len(scores)} evidence snippet(s) on OCR'd pages matched the recognised text approximately "
        f"(lowest score {min(scores):g} of 100; the threshold is {threshold:g})."
    ]


def evidence_prompt(
    model: ClassificationOutput,
    bundle: DocumentBundle,
    profile: Profile,
    judged: list[EvidenceCheck],
    rules: list[Issue],
) -> str:
    """Each located evidence item with its claim, and the text of the pages it was found on."""
    items: list[str] = []
    pages: list[int] = []
    for number, check in enumerate(judged, start=1):
        assessment, item = _evidence_at(model, check.path)
        found = check.found.page if check.found is not None else check.claimed_page
        items.append(
            f"Item {number}: segment {check.segment_index}, {check.document_type} "
            f"({assessment.presence_level}), claimed page {check.claimed_page}, locator: {check.status} "
            f"(found on page {found})\n  snippet: {item.snippet}\n  anchor: {item.anchor or ''}"
        )
        if found not in pages:
            pages.append(found)
    budget = TextBudget(PAGE_CHARS, TOTAL_CHARS)
    blocks = []
    for page in pages:
        text = page_text(bundle, page)
        blocks.append(page_block(page, budget.take(page, text) if text else "[no text on this page]"))
    values = {
        "content_evidence": content_block(bundle, profile, sorted(pages)),
        "evidence": untrusted("EVIDENCE", "\n".join(items)),
        "documents": "\n\n".join(blocks),
        "truncation": budget.notice(),
    }
    return render_prompt(PHASE, profile, bundle.doc_id, rules, values)


def _evidence_at(model: ClassificationOutput, path: str) -> tuple[TypeAssessment, Evidence]:
    """The type assessment and evidence item at a pointer /segments/i/types/j/evidence/k (made by verify)."""
    _, _, i, _, j, _, k = path.split("/")
    assessment = model.segments[int(i)].types[int(j)]
    return assessment, assessment.evidence[int(k)]
