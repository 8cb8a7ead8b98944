"""V1 schema & completeness: one rule per table row, fixes that round-trip, and no input that crashes it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import Severity, VerifierStatus
from arbiter.contracts.schemas import load_subject
from arbiter.verifiers.base import Subject, VerifyContext
from arbiter.verifiers.v1_schema import V1Schema
from tests.test_schemas import DESIGN_EXAMPLE, JSON
from tests.v12_helpers import PROFILE, apply_fixes, codes, make_bundle, make_classification, run_v1, run_v2

Mutation = Callable[[dict[str, Any]], Any]


def mutated(mutate: Mutation) -> dict[str, Any]:
    data = make_classification()
    mutate(data)
    return data


def drop_type(entries: list[dict[str, Any]], name: str) -> None:
    entries[:] = [entry for entry in entries if entry["document_type"] != name]


def test_valid_classification_passes() -> None:
    """A complete, consistent classification passes with score 1 and the declared identity."""
    result = run_v1(make_classification())
    assert result.status == VerifierStatus.PASSED
    assert result.issues == []
    assert result.score == 1.0
    assert (result.verifier, result.version) == ("V1", "1.0.0")
    assert V1Schema().output_file == "v1_schema_validation.json"


# (id, mutation, expected codes (sorted), path of the first issue, its severity, fixable)
RULES: list[tuple[str, Mutation, list[str], str, Severity, bool]] = [
    (
        "doc_id",
        lambda d: d.update(doc_id="other"),
        ["V1.DOC_ID_MISMATCH"],
        "/doc_id",
        Severity.BLOCKER,
        False,
    ),
    (
        "segment_count",
        lambda d: d.update(number_of_segments=3),
        ["V1.SEGMENT_COUNT_MISMATCH"],
        "/number_of_segments",
        Severity.BLOCKER,
        False,
    ),
    (
        "end_beyond_document",
        lambda d: d["segments"][1].update(end_page=14),
        ["V1.PAGE_OUT_OF_RANGE"],
        "/segments/1/end_page",
        Severity.BLOCKER,
        False,
    ),
    (
        "start_zero",
        lambda d: d["segments"][0].update(start_page=0),
        ["V1.PAGE_OUT_OF_RANGE"],
        "/segments/0/start_page",
        Severity.BLOCKER,
        False,
    ),
    (
        "inverted",
        lambda d: d["segments"][1].update(start_page=3, end_page=2),
        ["V1.INVERTED_PAGE_RANGE"],
        "/segments/1",
        Severity.BLOCKER,
        False,
    ),
    (
        "page_count",
        lambda d: d["segments"][0].update(segment_page_count=5),
        ["V1.PAGE_COUNT_MISMATCH"],
        "/segments/0/segment_page_count",
        Severity.MAJOR,
        True,
    ),
    (
        "segment_index",
        lambda d: d["segments"][1].update(segment_index=3),
        ["V1.SEGMENT_INDEX_INVALID"],
        "/segments/1/segment_index",
        Severity.MAJOR,
        True,
    ),
    (
        "confidence_high",
        lambda d: d["segments"][0]["types"][1].update(confidence=1.3),
        ["V1.CONFIDENCE_OUT_OF_RANGE"],
        "/segments/0/types/1/confidence",
        Severity.BLOCKER,
        False,
    ),
    (
        "confidence_negative",
        lambda d: d["segments"][1]["types"][4].update(confidence=-0.1),
        ["V1.CONFIDENCE_OUT_OF_RANGE"],
        "/segments/1/types/4/confidence",
        Severity.BLOCKER,
        False,
    ),
    (
        "share_segment",
        lambda d: d["segments"][0]["types"][1].update(share=1.5),
        ["V1.SHARE_OUT_OF_RANGE"],
        "/segments/0/types/1/share",
        Severity.BLOCKER,
        False,
    ),
    (
        "share_mixture",
        lambda d: d["document_mixture"][0].update(share=-0.2),
        ["V1.SHARE_OUT_OF_RANGE"],
        "/document_mixture/0/share",
        Severity.BLOCKER,
        False,
    ),
    (
        "wrong_type",
        lambda d: d["segments"][0].update(segment_page_count="2"),
        ["V1.SCHEMA_VIOLATION"],
        "/segments/0/segment_page_count",
        Severity.BLOCKER,
        False,
    ),
    (
        "extra_field",
        lambda d: d["segments"][0].update(notes="x"),
        ["V1.SCHEMA_VIOLATION"],
        "/segments/0/notes",
        Severity.BLOCKER,
        False,
    ),
    (
        "unknown_segment_dominant",
        lambda d: d["segments"][1].update(dominant_type="FAX"),
        ["V1.UNKNOWN_DOCUMENT_TYPE"],
        "/segments/1/dominant_type",
        Severity.BLOCKER,
        False,
    ),
    (
        "unknown_document_dominant",
        lambda d: d.update(dominant_type="FAX"),
        ["V1.UNKNOWN_DOCUMENT_TYPE"],
        "/dominant_type",
        Severity.BLOCKER,
        False,
    ),
    (
        "unknown_type_in_segment",
        lambda d: d["segments"][0]["types"][2].update(document_type="RADIOLOGY"),
        ["V1.MISSING_DOCUMENT_TYPE", "V1.UNKNOWN_DOCUMENT_TYPE"],
        "/segments/0/types/2/document_type",
        Severity.BLOCKER,
        False,
    ),
    (
        "unknown_type_in_mixture",
        lambda d: d["document_mixture"][3].update(document_type="RADIOLOGY"),
        ["V1.MISSING_DOCUMENT_TYPE", "V1.UNKNOWN_DOCUMENT_TYPE"],
        "/document_mixture/3/document_type",
        Severity.BLOCKER,
        False,
    ),
    (
        "unknown_presence",
        lambda d: d["segments"][0]["types"][0].update(presence_level="ABSENT"),
        ["V1.UNKNOWN_PRESENCE_LEVEL"],
        "/segments/0/types/0/presence_level",
        Severity.BLOCKER,
        False,
    ),
    (
        "missing_in_segment",
        lambda d: drop_type(d["segments"][0]["types"], "CLINICAL_NOTE"),
        ["V1.MISSING_DOCUMENT_TYPE"],
        "/segments/0/types",
        Severity.BLOCKER,
        True,
    ),
    (
        "missing_in_mixture",
        lambda d: drop_type(d["document_mixture"], "PATHOLOGY_REPORT"),
        ["V1.MISSING_DOCUMENT_TYPE"],
        "/document_mixture",
        Severity.BLOCKER,
        True,
    ),
    (
        "duplicate_in_segment",
        lambda d: d["segments"][1]["types"].append(copy.deepcopy(d["segments"][1]["types"][1])),
        ["V1.DUPLICATE_DOCUMENT_TYPE"],
        "/segments/1/types/5",
        Severity.BLOCKER,
        False,
    ),
    (
        "duplicate_in_mixture",
        lambda d: d["document_mixture"].append({"document_type": "CLINICAL_NOTE", "share": 0.0}),
        ["V1.DUPLICATE_DOCUMENT_TYPE"],
        "/document_mixture/5",
        Severity.BLOCKER,
        False,
    ),
    (
        "evidence_missing",
        lambda d: d["segments"][0]["types"][3].update(presence_level="MENTIONED"),
        ["V1.EVIDENCE_MISSING"],
        "/segments/0/types/3/evidence",
        Severity.MINOR,
        False,
    ),
    (
        "primary_evidence_missing",
        lambda d: d["segments"][0]["types"][1].update(evidence=[]),
        ["V1.PRIMARY_EVIDENCE_MISSING"],
        "/segments/0/types/1/evidence",
        Severity.MINOR,
        False,
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected", "path", "severity", "fixable"),
    [row[1:] for row in RULES],
    ids=[row[0] for row in RULES],
)
def test_rule(mutate: Mutation, expected: list[str], path: str, severity: Severity, fixable: bool) -> None:
    """Each defect gives exactly the expected codes; the first carries the path, severity and fixability."""
    result = run_v1(mutated(mutate))
    assert codes(result) == expected
    first = min(result.issues, key=lambda issue: issue.location.path != path)
    assert first.location.path == path
    assert first.severity == severity
    assert first.auto_fixable is fixable
    assert result.status == VerifierStatus.FAILED
    assert result.score < 1.0


def test_invalid_json_is_a_blocker() -> None:
    """Text that is not JSON gives exactly V1.INVALID_JSON (BLOCKER) with the parse message."""
    result = run_v1('{"doc_id": ')
    assert codes(result) == ["V1.INVALID_JSON"]
    assert result.issues[0].severity == Severity.BLOCKER
    assert "line 1" in result.issues[0].message
    assert result.score == pytest.approx(0.6)


def test_every_schema_problem_is_reported() -> None:
    """Three independent schema defects give three issues, each at its own path."""
    data = make_classification()
    data["segments"][0]["types"][0]["confidence"] = 2
    data["segments"][1].pop("dominant_type")
    data["extra"] = True
    result = run_v1(data)
    assert [(i.code, i.location.path) for i in result.issues] == [
        ("V1.SCHEMA_VIOLATION", "/extra"),
        ("V1.CONFIDENCE_OUT_OF_RANGE", "/segments/0/types/0/confidence"),
        ("V1.SCHEMA_VIOLATION", "/segments/1/dominant_type"),
    ]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["segments"][1].update(end_page=14),
            "Segment 2 ends on page 14, but the document has only 3 pages.",
        ),
        (
            lambda d: d["segments"][0]["types"][1].update(confidence=1.3),
            "The confidence of LAB_REPORT in segment 1 is 1.3; a confidence must be between 0 and 1.",
        ),
        (
            lambda d: d["document_mixture"][0].update(share=-0.2),
            "The share of GENOMIC_REPORT in the document mixture is -0.2; a share must be between 0 and 1.",
        ),
        (
            lambda d: d["segments"][0].update(segment_page_count=5),
            "Segment 1 covers pages 1–2 (2 pages), but says it has 5.",
        ),
        (
            lambda d: d.update(number_of_segments=1),
            "The classification says it has 1 segment but lists 2.",
        ),
        (
            lambda d: d["segments"][1].pop("dominant_type"),
            'Segment 2 is missing the required field "dominant_type".',
        ),
        (
            lambda d: d["segments"][0]["types"][1].update(share="0.2"),
            'The "share" of LAB_REPORT in segment 1 must be a number, got the string "0.2".',
        ),
        (
            lambda d: d["segments"][0]["types"][1]["evidence"][0].update(page="1"),
            'The "page" of evidence 1 for LAB_REPORT in segment 1 must be a whole number, got the string "1".',
        ),
        (
            lambda d: d["segments"][0]["types"][1]["evidence"][0].pop("snippet"),
            'Evidence 1 for LAB_REPORT in segment 1 is missing the required field "snippet".',
        ),
        (
            lambda d: d["document_mixture"][4].update(share=None),
            'The "share" of ADMINISTRATIVE in the document mixture must be a number, got null.',
        ),
        (
            lambda d: d.update(overall_confidence=0.9),
            'The classification has a field "overall_confidence" that is not allowed.',
        ),
        (lambda d: d["producer"].update(name=3), 'The producer\'s "name" must be text, got the number 3.'),
        (lambda d: d.update(doc_id=None), 'The "doc_id" of the classification must be text, got null.'),
        (lambda d: d.update(segments=[]), 'The "segments" of the classification must not be empty.'),
    ],
)
def test_messages_are_plain_english(mutate: Mutation, message: str) -> None:
    """Messages speak about the document, not about code."""
    (issue,) = run_v1(mutated(mutate)).issues
    assert issue.message == message


def test_missing_types_are_one_issue_each_with_its_own_entry() -> None:
    """Each missing type is its own issue whose patch appends a NO_EVIDENCE entry with share 0."""
    data = mutated(lambda d: drop_type(d["segments"][1]["types"], "LAB_REPORT"))
    drop_type(data["segments"][1]["types"], "GENOMIC_REPORT")
    result = run_v1(data)
    assert [i.location.document_type for i in result.issues] == ["GENOMIC_REPORT", "LAB_REPORT"]
    assert result.issues[1].fix == [
        {
            "op": "add",
            "path": "/segments/1/types/-",
            "value": {
                "document_type": "LAB_REPORT",
                "presence_level": "NO_EVIDENCE",
                "share": 0.0,
                "confidence": 1.0,
                "evidence": [],
            },
        }
    ]


def test_page_count_not_checked_on_an_invalid_range() -> None:
    """An out-of-range segment is not also blamed for its page count."""
    result = run_v1(mutated(lambda d: d["segments"][1].update(end_page=9, segment_page_count=1)))
    assert codes(result) == ["V1.PAGE_OUT_OF_RANGE"]


def test_renumbering_is_one_issue_replacing_each_wrong_index() -> None:
    """Segments numbered 2, 3 get one fix renumbering both."""
    data = mutated(lambda d: [s.update(segment_index=s["segment_index"] + 1) for s in d["segments"]])
    (issue,) = run_v1(data).issues
    assert issue.fix == [
        {"op": "replace", "path": "/segments/0/segment_index", "value": 1},
        {"op": "replace", "path": "/segments/1/segment_index", "value": 2},
    ]


FIXABLE = [row for row in RULES if row[5]]


@pytest.mark.parametrize("mutate", [row[1] for row in FIXABLE], ids=[row[0] for row in FIXABLE])
def test_fix_round_trip(mutate: Mutation) -> None:
    """Applying the fixes gives a classification that passes V1 and V2."""
    data = mutated(mutate)
    fixed = apply_fixes(data, run_v1(data), run_v2(data))
    assert run_v1(fixed).issues == []
    assert run_v2(fixed).issues == []


def test_design_example_with_one_page_bundle() -> None:
    """docs/design.md §3.2's example fits the schema; V1 only notes its segment count (2 stated, 1 listed)."""
    result = run_v1(DESIGN_EXAMPLE, make_bundle(1, "packet-0007"))
    assert codes(result) == ["V1.SEGMENT_COUNT_MISMATCH"]


def test_doc_with_no_pages() -> None:
    """A bundle with no pages: every segment is out of range, said plainly."""
    result = run_v1(make_classification(((1, 1, "LAB_REPORT"),)), make_bundle(0))
    assert codes(result) == ["V1.PAGE_OUT_OF_RANGE", "V1.PAGE_OUT_OF_RANGE"]
    assert result.issues[0].message == "Segment 1 starts on page 1, but the document has no pages."


def test_subject_without_reason_still_fails() -> None:
    """A Subject with no model and no recorded reason is still reported, never passed."""
    result = V1Schema().verify(Subject(raw="{}", data={}), make_bundle(), PROFILE, VerifyContext())
    assert result.status == VerifierStatus.FAILED
    assert codes(result) == ["V1.SCHEMA_VIOLATION"]


def test_v1_does_not_mutate_its_input() -> None:
    """Verifying leaves the subject's data unchanged."""
    data = mutated(lambda d: d["segments"][0].update(segment_page_count=5))
    subject = load_subject(json.dumps(data))
    V1Schema().verify(subject, make_bundle(), PROFILE, VerifyContext())
    assert subject.data == data


@given(JSON)
def test_garbage_json_never_passes(value: Any) -> None:
    """Arbitrary JSON never crashes V1 and never passes it."""
    result = run_v1(json.dumps(value))
    assert result.status == VerifierStatus.FAILED
    assert result.issues


@given(st.text() | st.binary())
def test_garbage_text_never_passes(raw: str | bytes) -> None:
    """Arbitrary text never crashes V1 and never passes it."""
    assert run_v1(raw).status == VerifierStatus.FAILED


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


VALID = make_classification()
VALID_PATHS = _paths(VALID)[1:]


@given(st.sampled_from(VALID_PATHS), JSON)
def test_one_corrupted_value_never_crashes(path: tuple[Any, ...], value: Any) -> None:
    """Replacing any one value of a valid classification with arbitrary JSON never crashes V1 or V2."""
    data = copy.deepcopy(VALID)
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    v1 = run_v1(data)
    run_v2(data)
    assert v1.status in {VerifierStatus.PASSED, VerifierStatus.FAILED}
