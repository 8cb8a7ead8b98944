"""V3 trap detection (docs/design.md §5.2): known ways a classification goes wrong, found by rules.

Each segment is judged on its own pages; trap words come from the profile, matched on normalised text.
The LLM phase (contextual analysis of each segment's opening text) always runs and can only add issues.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arbiter.contracts import (
    BlockType,
    ClassificationOutput,
    DocumentBundle,
    Issue,
    Page,
    Segment,
    VerifierResult,
)
from arbiter.contracts.profile import Profile
from arbiter.verifiers import trap_marks
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, penalty_score, skipped
from arbiter.verifiers.content import known_reading
from arbiter.verifiers.llm_phase import PhaseSpec, finish, render_prompt, semantic_phase
from arbiter.verifiers.llm_prompt import (
    TextBudget,
    classification_block,
    content_block,
    page_block,
    page_text,
    segment_heading,
    untrusted,
)
from arbiter.verifiers.phrases import find_phrase, first_phrase, phrase_pattern
from arbiter.verifiers.textmatch import PageIndex, normalize_plain

__all__ = ["V3Traps", "find_phrase", "first_phrase", "phrase_pattern"]

NO_LLM_NOTE = "No LLM backend configured; contextual trap analysis not run."
LLM_NOT_AVAILABLE_NOTE = "The configured LLM cannot answer requests; contextual trap analysis not run."
SEGMENT_CHARS = 1_500  # opening text of each segment shown to the model
TOTAL_CHARS = 24_000

PHASE = PhaseSpec(
    verifier="V3",
    what="contextual trap",
    template="v3_traps.md",
    finding="trap",
    finding_code="V3.LLM_TRAP",
    note_code="V3.LLM_NOTE",
    error_code="V3.LLM_ERROR",
    no_llm_note=NO_LLM_NOTE,
    unavailable_note=LLM_NOT_AVAILABLE_NOTE,
)

# A title phrase followed by a number sign, "no." or a colon and a number labels a field on a
# report ("Test Requisition #: 123"), not the document's title.
_FIELD_LABEL_AFTER = re.compile(r"\s*(?:#|no\.?\s*\d|number\b|id\b|:\s*[#\d])")


def page_span(first: int, last: int) -> str:
    return f"page {first}" if first == last else f"pages {first}–{last}"


def title_region(page: Page, profile: Profile) -> list[str]:
    """The short leading blocks of a page that could be its title, excluding running headers/footers."""
    traps = profile.traps
    if page.paragraphs:
        blocks = [p.text for p in page.paragraphs if p.block_type not in (BlockType.HEADER, BlockType.FOOTER)]
    else:
        blocks = [line for line in page.text.splitlines() if line.strip()]
    leading = blocks[: traps.title_region_paragraphs]
    return [b for b in leading if len(b.strip()) <= traps.title_max_chars]


@dataclass
class V3Traps:
    name: str = "V3"
    version: str = "1.0.0"
    output_file: str = "v3_trap_detection.json"

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        model = subject.model
        if model is None:
            return skipped(
                self, "The classification did not pass the schema check, so traps were not checked."
            )
        index = PageIndex.shared(bundle, profile.tolerances.fuzzy_match_threshold)
        issues = IssueList(self.name)
        for i, segment in enumerate(model.segments):
            pages = [p for p in index.page_numbers if segment.start_page <= p <= segment.end_page]
            self._routine_vendor(issues, index, profile, segment, pages, i)
            self._admin_title(issues, index, profile, segment, pages, i)
        self._header_footer_evidence(issues, profile, model.segments)
        self._prompt_injection(issues, index, profile, bundle)
        rules = list(issues.items)
        phase = semantic_phase(
            PHASE,
            context,
            lambda: contextual_prompt(model, bundle, profile, rules),
            issues,
            model,
            bundle,
            profile,
        )
        return finish(self, issues, phase, score=penalty_score)

    def _routine_vendor(
        self,
        issues: IssueList,
        index: PageIndex,
        profile: Profile,
        segment: Segment,
        pages: list[int],
        i: int,
    ) -> None:
        if segment.dominant_type != profile.taxonomy.genomic_type or not pages:
            return
        texts = [index.text_of(p).text for p in pages]
        vendors = profile.vendors
        routine = None
        for page, text in zip(pages, texts, strict=True):
            hit = first_phrase(text, vendors.routine_lab)
            if hit is not None:
                routine = (hit[0], page, hit[1])
                break
        if routine is None:
            return
        if any(first_phrase(text, [*vendors.genomic, *vendors.genomic_content]) for text in texts):
            return
        vendor, page, found = routine
        span = page_span(segment.start_page, segment.end_page)
        issues.add(
            "V3.ROUTINE_VENDOR_GENOMIC",
            f"Segment {segment.segment_index} ({span}) is classified as {segment.dominant_type}, but page {page} "
            f"names the routine laboratory {vendor} and no genomic testing company or genomic findings appear "
            "in the segment; it is more likely a routine lab report.",
            path=f"/segments/{i}/dominant_type",
            segment_index=segment.segment_index,
            document_type=segment.dominant_type,
            page=page,
            highlight=trap_marks.normalised_span(index, page, found),
        )

    def _admin_title(
        self,
        issues: IssueList,
        index: PageIndex,
        profile: Profile,
        segment: Segment,
        pages: list[int],
        i: int,
    ) -> None:
        if segment.dominant_type not in profile.taxonomy.report_types or not pages:
            return
        first = index.page(pages[0])
        if first is None or first.page_num != segment.start_page:
            return
        for block in title_region(first, profile):
            text = normalize_plain(block)
            for phrase in profile.traps.administrative_titles:
                found = find_phrase(text, phrase)
                if found is None or _FIELD_LABEL_AFTER.match(text, found.end()):
                    continue
                span = page_span(segment.start_page, segment.end_page)
                issues.add(
                    "V3.ADMIN_TITLE_AS_REPORT",
                    f"Segment {segment.segment_index} ({span}) is classified as {segment.dominant_type}, but "
                    f'page {first.page_num} is titled "{block.strip()}", which marks an administrative '
                    f"document ({phrase}), not a report.",
                    path=f"/segments/{i}/dominant_type",
                    segment_index=segment.segment_index,
                    document_type=segment.dominant_type,
                    page=first.page_num,
                    highlight=trap_marks.words(index, first.page_num, block),
                )
                return

    def _header_footer_evidence(self, issues: IssueList, profile: Profile, segments: list[Segment]) -> None:
        regexes = profile.header_footer_regexes
        for i, segment in enumerate(segments):
            for j, assessment in enumerate(segment.types):
                for k, evidence in enumerate(assessment.evidence):
                    text = normalize_plain(evidence.snippet)
                    found = next((m for rx in regexes if (m := rx.search(text))), None)
                    if found is None:
                        continue
                    issues.add(
                        "V3.HEADER_FOOTER_EVIDENCE",
                        f'The evidence "{_clip(evidence.snippet)}" for {assessment.document_type} in segment '
                        f'{segment.segment_index} contains page header/footer text ("{found.group()}"), '
                        "which appears on many documents and does not show what this one is.",
                        path=f"/segments/{i}/types/{j}/evidence/{k}",
                        segment_index=segment.segment_index,
                        document_type=assessment.document_type,
                        page=evidence.page,
                    )

    def _prompt_injection(
        self, issues: IssueList, index: PageIndex, profile: Profile, bundle: DocumentBundle
    ) -> None:
        # A page whose reading (carried, or made already) found no such phrase is not searched again.
        known = known_reading(bundle, profile)
        for page_num in index.page_numbers:
            read = known.pages.get(page_num) if known is not None else None
            if read is not None and read.injection is False:
                continue
            hit = first_phrase(index.text_of(page_num).text, profile.traps.injection_phrases)
            if hit is None:
                continue
            issues.add(
                "V3.PROMPT_INJECTION",
                f'Page {page_num} contains text addressed to an AI system ("{hit[1].group()}"); it may be an '
                "attempt to manipulate the classification.",
                page=page_num,
                highlight=trap_marks.sentence(index, page_num, hit[1]),
            )


def contextual_prompt(
    model: ClassificationOutput, bundle: DocumentBundle, profile: Profile, rules: list[Issue]
) -> str:
    """The classification plus each segment's title region and opening text, delimited as untrusted data."""
    budget = TextBudget(SEGMENT_CHARS, TOTAL_CHARS)
    blocks: list[str] = []
    for segment in model.segments:
        blocks.append(segment_heading(segment))
        first = bundle.page(segment.start_page)
        if first is not None:
            title = "\n".join(block.strip() for block in title_region(first, profile))
            blocks.append(untrusted(f"TITLE_REGION page={first.page_num}", title or "[no title]"))
        left = SEGMENT_CHARS
        for number in range(segment.start_page, min(segment.end_page, bundle.total_pages) + 1):
            if left <= 0:
                break
            text = page_text(bundle, number)
            shown = budget.take(number, text, limit=left) if text else "[no text on this page]"
            left -= min(len(text), left)
            blocks.append(page_block(number, shown))
    firsts = sorted({seg.start_page for seg in model.segments if 1 <= seg.start_page <= bundle.total_pages})
    values = {
        "classification": classification_block(model),
        "content_evidence": content_block(bundle, profile, firsts),
        "documents": "\n\n".join(blocks),
        "truncation": budget.notice(),
    }
    return render_prompt(PHASE, profile, bundle.doc_id, rules, values)


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
