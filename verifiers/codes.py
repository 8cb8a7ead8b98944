"""The catalogue of issue codes: severity, fixability and meaning of each. Codes are never renamed or reused.

verifiers/README.md documents the same table; tests/test_codes.py keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.contracts import Severity


@dataclass(frozen=True)
class CodeSpec:
    code: str
    severity: Severity
    auto_fixable: bool
    meaning: str


B, M, m = Severity.BLOCKER, Severity.MAJOR, Severity.MINOR

_SPECS = [
    # V1 schema & completeness (docs/design.md §5.2)
    CodeSpec("V1.INVALID_JSON", B, False, "The classification is not valid JSON."),
    CodeSpec("V1.SCHEMA_VIOLATION", B, False, "A field is missing, has the wrong type, or is not allowed."),
    CodeSpec("V1.DOC_ID_MISMATCH", B, False, "The classification names a different document."),
    CodeSpec("V1.SEGMENT_COUNT_MISMATCH", B, False, "number_of_segments differs from the segments listed."),
    CodeSpec("V1.PAGE_OUT_OF_RANGE", B, False, "A segment starts or ends outside the document's pages."),
    CodeSpec("V1.INVERTED_PAGE_RANGE", B, False, "A segment ends before it starts."),
    CodeSpec("V1.PAGE_COUNT_MISMATCH", M, True, "segment_page_count differs from end_page - start_page + 1."),
    CodeSpec("V1.SEGMENT_INDEX_INVALID", M, True, "Segments are not numbered 1, 2, 3, ... in order."),
    CodeSpec("V1.CONFIDENCE_OUT_OF_RANGE", B, False, "A confidence is outside 0 to 1."),
    CodeSpec("V1.SHARE_OUT_OF_RANGE", B, False, "A share is outside 0 to 1."),
    CodeSpec("V1.UNKNOWN_DOCUMENT_TYPE", B, False, "A document type is not in the profile's taxonomy."),
    CodeSpec("V1.UNKNOWN_PRESENCE_LEVEL", B, False, "A presence level is not in the profile's list."),
    CodeSpec("V1.MISSING_DOCUMENT_TYPE", B, True, "A segment or the mixture omits a document type."),
    CodeSpec("V1.DUPLICATE_DOCUMENT_TYPE", B, False, "A segment or the mixture lists a document type twice."),
    CodeSpec("V1.EVIDENCE_MISSING", m, False, "A type is said to be present but no evidence is given."),
    CodeSpec("V1.PRIMARY_EVIDENCE_MISSING", m, False, "A segment's primary type is given no evidence."),
    CodeSpec("V1.VERIFIER_ERROR", B, False, "V1 crashed; the classification was not checked."),
    # V2 internal consistency (docs/design.md §5.2, §5.3)
    CodeSpec("V2.SEGMENT_SHARES_SUM", M, True, "A segment's type shares do not add up to 1."),
    CodeSpec("V2.MIXTURE_SHARES_SUM", M, True, "The document mixture does not add up to 1."),
    CodeSpec("V2.PAGE_OVERLAP", B, False, "Two segments claim the same page."),
    CodeSpec("V2.INVERTED_PAGE_RANGE", B, False, "A segment ends before it starts."),
    CodeSpec("V2.MIXTURE_MISMATCH", M, True, "The mixture differs from the page-weighted segment shares."),
    CodeSpec(
        "V2.DOMINANT_TYPE_MISMATCH", M, False, "A dominant type is not the type with the largest share."
    ),
    CodeSpec("V2.UNCOVERED_PAGES", M, False, "Pages with text belong to no segment."),
    CodeSpec("V2.CONTENT_CONTRADICTS_TYPE", M, False, "A segment's own pages read as another document type."),
    CodeSpec("V2.BOUNDARY_INSIDE_DOCUMENT", M, False, "A segment boundary splits one document."),
    CodeSpec("V2.SEGMENT_SPANS_DOCUMENTS", M, False, "A new document starts inside a segment."),
    CodeSpec(
        "V2.PRIMARY_LOW_CONFIDENCE", M, False, "The primary's confidence in a segment's type is too low."
    ),
    CodeSpec("V2.PRIMARY_TYPE_TIE", M, False, "A segment's two largest type shares are (nearly) tied."),
    CodeSpec(
        "V2.LLM_INCONSISTENCY", M, False, "The language model found the answer inconsistent with the text."
    ),
    CodeSpec("V2.LLM_NOTE", m, False, "The language model noted a minor inconsistency."),
    CodeSpec(
        "V2.LLM_ERROR", B, False, "The semantic consistency check could not run or gave no usable answer."
    ),
    CodeSpec("V2.VERIFIER_ERROR", B, False, "V2 crashed; consistency was not checked."),
    # V3 traps (docs/design.md §5.2)
    CodeSpec(
        "V3.ROUTINE_VENDOR_GENOMIC", B, False, "A routine lab vendor's report is classified as genomic."
    ),
    CodeSpec("V3.ADMIN_TITLE_AS_REPORT", B, False, "An administrative document is classified as a report."),
    CodeSpec("V3.HEADER_FOOTER_EVIDENCE", m, False, "An evidence snippet is header/footer text."),
    CodeSpec("V3.PROMPT_INJECTION", M, False, "The document contains text addressed to an AI model."),
    CodeSpec("V3.LLM_TRAP", M, False, "The language model found a misleading pattern the rules missed."),
    CodeSpec("V3.LLM_NOTE", m, False, "The language model noted a minor trap risk."),
    CodeSpec("V3.LLM_ERROR", B, False, "The contextual trap check could not run or gave no usable answer."),
    CodeSpec("V3.VERIFIER_ERROR", B, False, "V3 crashed; traps were not checked."),
    # V4 evidence quality (docs/design.md §5.2)
    CodeSpec("V4.SNIPPET_WRONG_PAGE", M, True, "A snippet is on another page of the same segment."),
    CodeSpec("V4.SNIPPET_OUTSIDE_SEGMENT", M, False, "A snippet appears only outside its segment."),
    CodeSpec("V4.SNIPPET_NOT_FOUND", M, False, "A snippet appears nowhere in the document."),
    CodeSpec(
        "V4.SNIPPET_NUMBERS_DIFFER", M, False, "A snippet matches the page only with different numbers."
    ),
    CodeSpec("V4.PAGE_NO_TEXT_LAYER", M, False, "The claimed page has no text to check the snippet against."),
    CodeSpec("V4.ANCHOR_NOT_FOUND", m, False, "An anchor does not appear on its page."),
    CodeSpec("V4.SNIPPET_TOO_SHORT", m, False, "A snippet is too short to prove anything."),
    CodeSpec(
        "V4.EVIDENCE_READS_AS_OTHER_TYPE", M, False, "A type's evidence reads as another document type."
    ),
    CodeSpec(
        "V4.EVIDENCE_FORM_LABEL_ONLY",
        M,
        False,
        "A report type's evidence is only form labels or empty fields.",
    ),
    CodeSpec(
        "V4.LLM_WEAK_EVIDENCE", M, False, "The language model judged a snippet not to support its type."
    ),
    CodeSpec("V4.LLM_NOTE", m, False, "The language model noted weak but acceptable evidence."),
    CodeSpec("V4.LLM_ERROR", B, False, "The semantic evidence check could not run or gave no usable answer."),
    CodeSpec("V4.VERIFIER_ERROR", B, False, "V4 crashed; evidence was not checked."),
]

CODES: dict[str, CodeSpec] = {spec.code: spec for spec in _SPECS}


def spec(code: str) -> CodeSpec:
    """The catalogue entry for a code; an unknown code is a programming error."""
    return CODES[code]
