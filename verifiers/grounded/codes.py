"""The grounded-answer kind's issue codes: severity, fixability and meaning of each, in one catalogue.

Codes are never renamed or reused. Only `<V>.VERIFIER_ERROR` is shared with the medical catalogue (the
runner raises it for any kind, with the same meaning); every other code belongs to this kind alone.
verifiers/grounded/README.md documents the same table; tests/test_grounded_codes.py keeps the two in step.
"""

from __future__ import annotations

from arbiter.contracts import Severity
from arbiter.verifiers.codes import CodeSpec

B, M, m = Severity.BLOCKER, Severity.MAJOR, Severity.MINOR

_SPECS = [
    # V1 schema & completeness
    CodeSpec("V1.ITEM_INVALID_JSON", B, False, "The item is not valid JSON."),
    CodeSpec(
        "V1.ITEM_SCHEMA_VIOLATION", B, False, "A field of the item is missing, mistyped or not allowed."
    ),
    CodeSpec("V1.DUPLICATE_ID", B, False, "Two chunks or two quotes share an id."),
    CodeSpec("V1.STATEMENT_UNCITED", B, False, "A statement cites no quote."),
    CodeSpec(
        "V1.CITED_ID_UNKNOWN", B, False, "A statement cites a quote, or a quote a chunk, that does not exist."
    ),
    CodeSpec("V1.ANSWER_EMPTY", B, False, "The answer neither makes a statement nor abstains."),
    CodeSpec("V1.ABSTENTION_WITH_STATEMENTS", B, False, "The answer abstains and makes statements."),
    CodeSpec(
        "V1.ABSTENTION_WITHOUT_MISSING_EVIDENCE",
        M,
        False,
        "An abstention does not list the evidence it lacks.",
    ),
    CodeSpec(
        "V1.CONFIDENCE_MISMATCH",
        M,
        True,
        "The confidence level is not the one the count of verified quotes gives.",
    ),
    CodeSpec("V1.QUOTE_LENGTH", m, False, "A quote is shorter or longer than the profile's word limits."),
    CodeSpec("V1.QUOTE_UNUSED", m, False, "A quote is cited by no statement."),
    CodeSpec("V1.VERIFIER_ERROR", B, False, "V1 crashed; the classification was not checked."),
    # V2 consistency
    CodeSpec("V2.LANGUAGE_MISMATCH", M, False, "The answer is not in the question's language."),
    CodeSpec(
        "V2.CONFLICT_NOT_PRESENTED",
        M,
        False,
        "Retrieved sources conflict and the answer gives only one side.",
    ),
    CodeSpec(
        "V2.ABSTAINED_WITH_EVIDENCE",
        M,
        False,
        "The answer abstains although a retrieved chunk answers the question.",
    ),
    CodeSpec(
        "V2.ANSWERED_WITHOUT_EVIDENCE",
        M,
        False,
        "The answer makes statements that no verified, relevant evidence backs.",
    ),
    CodeSpec("V2.VERIFIER_ERROR", B, False, "V2 crashed; consistency was not checked."),
    # V3 traps
    CodeSpec("V3.HEDGED_REQUIREMENT", M, False, "A statement of a requirement hedges or speculates."),
    CodeSpec("V3.COMPLIANCE_CLAIM", M, False, "A statement claims compliance, which no quote can prove."),
    CodeSpec("V3.MODAL_CHANGED", M, False, "A statement changes its quote's force (must, may, prohibited)."),
    CodeSpec(
        "V3.NUMBER_NOT_IN_QUOTE", M, False, "A statement holds a number, date or amount its quotes do not."
    ),
    CodeSpec("V3.CHUNK_INSTRUCTION", M, False, "A retrieved chunk contains text addressed to an AI model."),
    CodeSpec("V3.LOW_SCORE_CITATION", M, False, "A quote comes from a chunk below the retrieval threshold."),
    CodeSpec("V3.VERIFIER_ERROR", B, False, "V3 crashed; traps were not checked."),
    # V4 evidence
    CodeSpec("V4.QUOTE_NOT_IN_CHUNK", M, False, "A quote is not found verbatim in the chunk it cites."),
    CodeSpec(
        "V4.QUOTE_SPACING",
        M,
        True,
        "A quote matches its chunk only after spacing, case or hyphens are normalised.",
    ),
    CodeSpec(
        "V4.QUOTE_OFFSETS", M, True, "A quote's start and end offsets are not where it is in its chunk."
    ),
    CodeSpec("V4.STATEMENT_UNSUPPORTED", M, False, "A statement is not supported by the quotes it cites."),
    CodeSpec("V4.QUOTE_OFF_QUESTION", M, False, "A cited quote shares no content with the question."),
    CodeSpec(
        "V4.STATEMENT_NOT_ENTAILED",
        M,
        False,
        "The language model judged a statement not entailed, or contradicted, by its quotes.",
    ),
    CodeSpec("V4.ENTAILMENT_ERROR", B, False, "The entailment check could not run or gave no usable answer."),
    CodeSpec("V4.VERIFIER_ERROR", B, False, "V4 crashed; evidence was not checked."),
]

CODES: dict[str, CodeSpec] = {entry.code: entry for entry in _SPECS}
