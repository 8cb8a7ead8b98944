"""V2 internal consistency (docs/design.md §5.2): do the shares, page ranges and dominant types agree?

The rule phase is deterministic; the LLM phase (semantic consistency against each segment's text) runs
only when the rules found no BLOCKER, and can only add issues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbiter.contracts import (
    ClassificationOutput,
    DocumentBundle,
    Issue,
    PhaseStatus,
    Severity,
    VerifierResult,
)
from arbiter.contracts.profile import Profile
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, penalty_score, result, skipped
from arbiter.verifiers.llm_phase import PhaseSpec, finish, render_prompt, semantic_phase
from arbiter.verifiers.llm_prompt import (
    TextBudget,
    classification_block,
    content_block,
    page_block,
    page_text,
    segment_heading,
)
from arbiter.verifiers.shares import (
    arg_max,
    leads,
    mixture_disagreement,
    mixture_fix,
    page_ranges_valid,
    page_weighted_mixture,
    round_to_one,
    type_shares,
)
from arbiter.verifiers.v2_content import check_content, check_primary_doubt

NO_LLM_NOTE = "No LLM backend configured; semantic consistency not checked."
BLOCKER_NOTE = "LLM phase skipped: the rules found a blocker."
UNAVAILABLE_NOTE = "The configured LLM cannot answer requests; semantic consistency not checked."
PAGE_CHARS = 6_000  # per page shown to the model
TOTAL_CHARS = 60_000  # all pages together

PHASE = PhaseSpec(
    verifier="V2",
    what="semantic consistency",
    template="v2_consistency.md",
    finding="inconsistency",
    finding_code="V2.LLM_INCONSISTENCY",
    note_code="V2.LLM_NOTE",
    error_code="V2.LLM_ERROR",
    no_llm_note=NO_LLM_NOTE,
    unavailable_note=UNAVAILABLE_NOTE,
)


@dataclass
class V2Consistency:
    name: str = "V2"
    version: str = "1.0.0"
    output_file: str = "v2_consistency_check.json"

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        model = subject.model
        if model is None:
            return skipped(
                self, "The classification did not fit the schema (see V1); consistency was not checked."
            )
        issues = IssueList(self.name)
        _check_page_ranges(issues, model)
        _check_segment_shares(issues, model, profile)
        mixture_faulty = _check_mixture(issues, model, bundle, profile)
        _check_segment_dominants(issues, model, profile)
        _check_document_dominant(issues, model, bundle, profile, mixture_faulty)
        _check_coverage(issues, model, bundle)
        check_primary_doubt(issues, model, profile)
        if page_ranges_valid(model.segments, bundle.total_pages):
            check_content(issues, model, bundle, profile)
        if any(issue.severity == Severity.BLOCKER for issue in issues.items):
            return result(self, issues, notes=[BLOCKER_NOTE], llm_phase=PhaseStatus.SKIPPED)
        rules = list(issues.items)
        phase = semantic_phase(
            PHASE,
            context,
            lambda: semantic_prompt(model, bundle, profile, rules),
            issues,
            model,
            bundle,
            profile,
        )
        return finish(self, issues, phase, score=penalty_score)


def semantic_prompt(
    model: ClassificationOutput, bundle: DocumentBundle, profile: Profile, rules: list[Issue]
) -> str:
    """The classification plus every segment's page texts, each page delimited as untrusted data."""
    budget = TextBudget(PAGE_CHARS, TOTAL_CHARS)
    blocks: list[str] = []
    for segment in model.segments:
        last = min(segment.end_page, bundle.total_pages)
        blocks.append(segment_heading(segment))
        for number in range(segment.start_page, last + 1):
            text = page_text(bundle, number)
            blocks.append(page_block(number, budget.take(number, text) if text else "[no text on this page]"))
    covered = sorted(
        {
            n
            for seg in model.segments
            for n in range(seg.start_page, min(seg.end_page, bundle.total_pages) + 1)
        }
    )
    values = {
        "classification": classification_block(model),
        "content_evidence": content_block(bundle, profile, covered),
        "documents": "\n\n".join(blocks),
        "truncation": budget.notice(),
    }
    return render_prompt(PHASE, profile, bundle.doc_id, rules, values)


def _check_page_ranges(issues: IssueList, model: ClassificationOutput) -> None:
    segments = model.segments
    for position, segment in enumerate(segments):
        if segment.start_page > segment.end_page:
            issues.add(
                "V2.INVERTED_PAGE_RANGE",
                f"Segment {position + 1} starts on page {segment.start_page} but ends on page "
                f"{segment.end_page}, before it starts.",
                path=f"/segments/{position}",
                segment_index=position + 1,
                page=segment.start_page,
            )
    for first in range(len(segments)):
        for second in range(first + 1, len(segments)):
            a, b = segments[first], segments[second]
            low, high = max(a.start_page, b.start_page), min(a.end_page, b.end_page)
            if a.start_page > a.end_page or b.start_page > b.end_page or low > high:
                continue
            pages = f"page {low}" if low == high else f"pages {low}–{high}"
            issues.add(
                "V2.PAGE_OVERLAP",
                f"Segments {first + 1} and {second + 1} both claim {pages}.",
                path=f"/segments/{second}",
                segment_index=second + 1,
                page=low,
            )


def _check_segment_shares(issues: IssueList, model: ClassificationOutput, profile: Profile) -> None:
    tolerance = profile.tolerances.share_sum
    for position, segment in enumerate(model.segments):
        shares = [entry.share for entry in segment.types]
        total = sum(shares)
        if abs(total - 1.0) <= tolerance:
            continue
        normalised = round_to_one(shares)
        fix = None
        if normalised is not None:
            fix = [
                {"op": "replace", "path": f"/segments/{position}/types/{index}/share", "value": value}
                for index, value in enumerate(normalised)
            ]
        detail = "are all zero" if normalised is None else f"add up to {_fmt(total)} instead of 1"
        issues.add(
            "V2.SEGMENT_SHARES_SUM",
            f"The document-type shares in segment {position + 1} {detail}.",
            path=f"/segments/{position}/types",
            segment_index=position + 1,
            fix=fix,
        )


def _check_mixture(
    issues: IssueList, model: ClassificationOutput, bundle: DocumentBundle, profile: Profile
) -> bool:
    """Report a mixture that does not sum to 1 or differs from the segments; True when one was reported."""
    types = profile.taxonomy.document_types
    # Both mixture faults get the same canonical patch so the fix engine merges them. It is worked out
    # only for a fault (most mixtures are right), and once.
    fixes: list[list[dict[str, Any]] | None] = []

    def fix() -> list[dict[str, Any]] | None:
        if not fixes:
            fixes.append(mixture_fix(model, bundle.total_pages, types) if agree else None)
        return fixes[0]

    expected = page_weighted_mixture(model, bundle.total_pages, types)
    given = type_shares(model.document_mixture, types)
    # Fixes never hide a mislabel: the mixture is rewritten only when it and the segments already agree
    # on the main type and differ only in size. A disagreement about which type dominates is the sign
    # of a relabelled segment or mixture, and a person must judge which one is right.
    disagreement = mixture_disagreement(model, given, expected, types, profile.tolerances.dominant_tie)
    agree = disagreement is None
    unfixable = "" if agree else f" It is not fixed automatically: {disagreement}"
    total = sum(entry.share for entry in model.document_mixture)
    faulty = abs(total - 1.0) > profile.tolerances.share_sum
    if faulty:
        issues.add(
            "V2.MIXTURE_SHARES_SUM",
            f"The document mixture adds up to {_fmt(total)} instead of 1.{unfixable}",
            path="/document_mixture",
            fix=fix(),
        )
    if expected is None:
        return faulty
    tolerance = profile.tolerances.mixture_match
    differing = [name for name in types if abs(given[name] - expected[name]) > tolerance]
    if not differing:
        return faulty
    differing.sort(key=lambda name: -abs(given[name] - expected[name]))
    details = "; ".join(
        f"{name} {_fmt(given[name])} instead of {_fmt(expected[name])}" for name in differing[:3]
    )
    issues.add(
        "V2.MIXTURE_MISMATCH",
        f"The document mixture does not match the segments weighted by their page counts: {details}."
        f"{unfixable}",
        path="/document_mixture",
        document_type=differing[0],
        fix=fix(),
    )
    return True


def _check_segment_dominants(issues: IssueList, model: ClassificationOutput, profile: Profile) -> None:
    types, tie = profile.taxonomy.document_types, profile.tolerances.dominant_tie
    for position, segment in enumerate(model.segments):
        shares = type_shares(segment.types, types)
        best = arg_max(shares, types)
        stated = shares.get(segment.dominant_type, 0.0)
        if leads(shares, segment.dominant_type, tie):
            continue
        path = f"/segments/{position}/dominant_type"
        issues.add(
            "V2.DOMINANT_TYPE_MISMATCH",
            f"Segment {position + 1} names {segment.dominant_type} as its main type, but {best} has the "
            f"largest share ({_fmt(shares[best])} against {_fmt(stated)}).",
            path=path,
            segment_index=position + 1,
            document_type=segment.dominant_type,
        )


def _check_document_dominant(
    issues: IssueList,
    model: ClassificationOutput,
    bundle: DocumentBundle,
    profile: Profile,
    mixture_faulty: bool,
) -> None:
    """The document's dominant type must lead the mixture: the stated one, or the canonical one when the
    stated mixture is being replaced (so the fixes of one round leave a consistent document)."""
    types, tie = profile.taxonomy.document_types, profile.tolerances.dominant_tie
    given = type_shares(model.document_mixture, types)
    canonical = page_weighted_mixture(model, bundle.total_pages, types)
    use_canonical = mixture_faulty and canonical is not None
    reference = canonical if use_canonical and canonical is not None else given
    best = arg_max(reference, types)
    stated = reference.get(model.dominant_type, 0.0)
    if leads(reference, model.dominant_type, tie):
        return
    source = (
        "the segments, weighted by their page counts, give" if use_canonical else "the document mixture gives"
    )
    issues.add(
        "V2.DOMINANT_TYPE_MISMATCH",
        f"The document's main type is given as {model.dominant_type}, but {source} {best} the largest share "
        f"({_fmt(reference[best])} against {_fmt(stated)}).",
        path="/dominant_type",
        document_type=model.dominant_type,
    )


def _check_coverage(issues: IssueList, model: ClassificationOutput, bundle: DocumentBundle) -> None:
    covered: set[int] = set()
    for segment in model.segments:
        # An inverted range is reported as such; its pages are not blamed a second time here.
        low, high = sorted((segment.start_page, segment.end_page))
        covered.update(range(low, min(high, bundle.total_pages) + 1))
    uncovered = []
    for number in range(1, bundle.total_pages + 1):
        page = bundle.page(number)
        # OCR'd pages carry text too; a scan with no text cannot be placed and is not reported.
        readable = page is not None and (page.has_text_layer or page.ocr_applied) and bool(page.text.strip())
        if readable and number not in covered:
            uncovered.append(number)
    if not uncovered:
        return
    listed = _page_list(uncovered)
    verb = "has text but belongs" if len(uncovered) == 1 else "have text but belong"
    noun = "Page" if len(uncovered) == 1 else "Pages"
    issues.add(
        "V2.UNCOVERED_PAGES",
        f"{noun} {listed} {verb} to no segment.",
        path="/segments",
        page=uncovered[0],
    )


def _page_list(pages: list[int]) -> str:
    """[2, 4, 5, 9] -> "2, 4–5 and 9"."""
    runs: list[str] = []
    start = prev = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == prev + 1:
            prev = page
            continue
        runs.append(str(start) if start == prev else f"{start}–{prev}")
        if page is not None:
            start = prev = page
    return runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " and " + runs[-1]


def _fmt(value: float) -> str:
    text = f"{value:.2f}"
    # A sum off by more than the tolerance must not print as "1.00".
    return f"{value:.3f}" if text == "1.00" and value != 1.0 else text
