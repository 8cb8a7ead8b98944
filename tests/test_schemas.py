"""Contract JSON Schemas and load_subject: parse errors, schema problems with exact pointers, never a raise."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.contracts import ClassificationOutput
from arbiter.contracts.schemas import SCHEMAS, classification_validator, json_schema, load_subject
from arbiter.errors import ConfigError
from tests.v12_helpers import make_classification

# The specification's example of docs/design.md §3.2, in full.
DESIGN_EXAMPLE: dict[str, Any] = {
    "doc_id": "packet-0007",
    "producer": {"name": "gemini-2.5-flash", "version": "2026-01"},
    "number_of_segments": 2,
    "dominant_type": "GENOMIC_REPORT",
    "vendor_signals": ["Foundation Medicine"],
    "segments": [
        {
            "segment_index": 1,
            "start_page": 1,
            "end_page": 1,
            "segment_page_count": 1,
            "dominant_type": "ADMINISTRATIVE",
            "classification_reasoning": "Fax cover sheet addressed to the oncology clinic.",
            "types": [
                {
                    "document_type": "ADMINISTRATIVE",
                    "presence_level": "PRIMARY",
                    "share": 1.0,
                    "confidence": 0.97,
                    "evidence": [{"page": 1, "snippet": "FACSIMILE TRANSMITTAL", "anchor": "FACSIMILE"}],
                },
                {
                    "document_type": "GENOMIC_REPORT",
                    "presence_level": "NO_EVIDENCE",
                    "share": 0.0,
                    "confidence": 0.9,
                    "evidence": [],
                },
                {
                    "document_type": "LAB_REPORT",
                    "presence_level": "NO_EVIDENCE",
                    "share": 0.0,
                    "confidence": 0.9,
                    "evidence": [],
                },
                {
                    "document_type": "PATHOLOGY_REPORT",
                    "presence_level": "NO_EVIDENCE",
                    "share": 0.0,
                    "confidence": 0.9,
                    "evidence": [],
                },
                {
                    "document_type": "CLINICAL_NOTE",
                    "presence_level": "NO_EVIDENCE",
                    "share": 0.0,
                    "confidence": 0.9,
                    "evidence": [],
                },
            ],
        }
    ],
    "document_mixture": [
        {"document_type": "GENOMIC_REPORT", "share": 0.8},
        {"document_type": "ADMINISTRATIVE", "share": 0.2},
        {"document_type": "LAB_REPORT", "share": 0.0},
        {"document_type": "PATHOLOGY_REPORT", "share": 0.0},
        {"document_type": "CLINICAL_NOTE", "share": 0.0},
    ],
}


def problems_of(data: Any) -> list[tuple[str, str, str]]:
    subject = load_subject(json.dumps(data))
    return [(p.path, p.message, p.validator) for p in subject.schema_problems]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_named_schema_is_a_valid_json_schema(name: str) -> None:
    """json_schema(name) returns a Draft 2020-12 schema for every `arbiter schema` name."""
    from jsonschema import Draft202012Validator

    schema = json_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"


def test_schema_names_are_the_documented_ones() -> None:
    """The CLI names cover every contract the brief lists."""
    assert set(SCHEMAS) == {
        "bundle",
        "classification",
        "issue",
        "verifier-result",
        "decision",
        "outcome",
        "packet",
        "review",
        "ground-truth",
    }


def test_unknown_schema_name_is_a_config_error_listing_names() -> None:
    """An unknown name raises ConfigError whose message lists the valid names."""
    with pytest.raises(ConfigError, match="classification") as info:
        json_schema("nope")
    assert "ground-truth" in str(info.value)


def test_classification_validator_is_cached() -> None:
    """The validator is built once."""
    assert classification_validator() is classification_validator()


def test_design_example_fits_the_schema() -> None:
    """docs/design.md §3.2's example validates against the classification schema and loads as a model."""
    assert list(classification_validator().iter_errors(DESIGN_EXAMPLE)) == []
    subject = load_subject(json.dumps(DESIGN_EXAMPLE))
    assert subject.parse_error is None
    assert subject.schema_problems == ()
    assert isinstance(subject.model, ClassificationOutput)
    assert subject.data == DESIGN_EXAMPLE


def test_valid_bytes_load_as_a_model() -> None:
    """UTF-8 bytes (with or without a byte-order mark) load like text."""
    raw = json.dumps(make_classification()).encode()
    assert load_subject(raw).model is not None
    assert load_subject(b"\xef\xbb\xbf" + raw).model is not None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "The classification is empty."),
        ("   \n", "The classification is empty."),
        ("not json", "The classification is not valid JSON: expected a value at line 1, column 1."),
        ('{"doc_id": "x"', "The classification is not valid JSON: expected a comma at line 1, column 15."),
        ('{"doc_id": "x"}\n}', "unexpected text after the end of the JSON at line 2, column 1."),
        ('{\n  "doc_id": "x",\n  oops\n}', "expected a field name in double quotes at line 3, column 3."),
        (b"\xff\xfe{}", "The classification is not UTF-8 text (bad byte at 0)."),
    ],
)
def test_parse_errors_are_plain_english_with_position(raw: str | bytes, expected: str) -> None:
    """Text that is not JSON gives a parse_error naming what is wrong and where, and no data."""
    subject = load_subject(raw)
    assert subject.parse_error is not None
    assert subject.parse_error.endswith(expected)
    assert subject.model is None
    assert subject.data is None
    assert isinstance(subject.raw, str)


@pytest.mark.parametrize(
    "raw",
    ["[" * 100_000, "1" * 5000, '{"a": ' * 50_000 + "1" + "}" * 50_000],
    ids=["deep", "bigint", "deepobj"],
)
def test_pathological_json_is_a_parse_error_not_a_crash(raw: str) -> None:
    """Nesting too deep and integers too long are reported, not raised."""
    subject = load_subject(raw)
    assert subject.parse_error is not None
    assert subject.model is None


def test_moderately_deep_json_is_a_schema_problem() -> None:
    """Deep but parseable nesting is a schema problem at the root."""
    subject = load_subject("[" * 900 + "]" * 900)
    assert subject.model is None
    assert subject.schema_problems[0].path == ""


def _mutated(mutate: Any) -> dict[str, Any]:
    data = make_classification()
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "path", "message", "validator"),
    [
        (
            lambda d: d["segments"][0]["types"][2].update(share="0.5"),
            "/segments/0/types/2/share",
            'segments[0].types[2].share must be a number, got the string "0.5"',
            "type",
        ),
        (
            lambda d: d["segments"][1].pop("dominant_type"),
            "/segments/1/dominant_type",
            'missing required field "dominant_type" in segments[1]',
            "required",
        ),
        (lambda d: d.update(foo=1), "/foo", 'unexpected field "foo"', "additionalProperties"),
        (
            lambda d: d["segments"][0]["types"][0].update(confidence=1.3),
            "/segments/0/types/0/confidence",
            "segments[0].types[0].confidence must be between 0 and 1, got the number 1.3",
            "maximum",
        ),
        (
            lambda d: d["document_mixture"][1].update(share=-0.25),
            "/document_mixture/1/share",
            "document_mixture[1].share must be between 0 and 1, got the number -0.25",
            "minimum",
        ),
        (
            lambda d: d["segments"][1].update(start_page=0),
            "/segments/1/start_page",
            "segments[1].start_page must be at least 1, got the number 0",
            "minimum",
        ),
        (
            lambda d: d["segments"][0].update(segment_index=1.5),
            "/segments/0/segment_index",
            "segments[0].segment_index must be a whole number, got the number 1.5",
            "type",
        ),
        (
            lambda d: d["producer"].update(version=7),
            "/producer/version",
            "producer.version must be text or null, got the number 7",
            "anyOf",
        ),
        (lambda d: d.update(segments=[]), "/segments", "segments must not be empty", "minItems"),
        (
            lambda d: d.update(number_of_segments=True),
            "/number_of_segments",
            "number_of_segments must be a whole number, got the value true",
            "type",
        ),
    ],
)
def test_schema_problem_has_exact_pointer_and_message(
    mutate: Any, path: str, message: str, validator: str
) -> None:
    """A single defect gives exactly one problem with its JSON Pointer, plain message and keyword."""
    assert problems_of(_mutated(mutate)) == [(path, message, validator)]


def test_root_that_is_not_an_object() -> None:
    """A JSON list at the root is one problem at the empty pointer."""
    assert problems_of([1, 2]) == [("", "the classification must be an object, got a list of 2", "type")]


def test_problem_keeps_offending_value() -> None:
    """Each SchemaProblem keeps the offending value for the report."""
    data = _mutated(lambda d: d["segments"][0]["types"][0].update(confidence=7))
    (problem,) = load_subject(json.dumps(data)).schema_problems
    assert problem.value == 7


@pytest.mark.parametrize(
    ("literal", "shown"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e999", "Infinity")],
)
def test_non_finite_numbers_are_schema_problems(literal: str, shown: str) -> None:
    """NaN/Infinity (and overflowing literals) are reported as not-a-number, never as valid or out of range."""
    raw = json.dumps(make_classification()).replace('"confidence": 0.9', f'"confidence": {literal}', 1)
    subject = load_subject(raw)
    assert subject.model is None
    assert [(p.path, p.validator) for p in subject.schema_problems] == [
        ("/segments/0/types/0/confidence", "type")
    ]
    assert subject.schema_problems[0].message.endswith(f"must be a finite number, got {shown}")


def test_problems_are_sorted_by_path_with_numeric_indexes() -> None:
    """Problems come sorted by pointer, array indexes compared as numbers."""
    data = make_classification([(i, i, "LAB_REPORT") for i in range(1, 12)])
    data["segments"][10]["types"][0]["share"] = "x"
    data["segments"][2]["types"][0]["share"] = "x"
    data["doc_id"] = 5
    paths = [p for p, _, _ in problems_of(data)]
    assert paths == ["/doc_id", "/segments/2/types/0/share", "/segments/10/types/0/share"]


def test_several_missing_fields_give_one_problem_each() -> None:
    """Every missing required field is its own problem, pointing at where it belongs."""
    data = make_classification()
    segment = data["segments"][0]
    for key in ("start_page", "end_page"):
        segment.pop(key)
    assert [p for p, _, _ in problems_of(data)] == ["/segments/0/end_page", "/segments/0/start_page"]


def test_load_subject_never_mutates_nor_shares_state() -> None:
    """Loading twice gives equal, independent subjects."""
    data = make_classification()
    raw = json.dumps(data)
    first, second = load_subject(raw), load_subject(raw)
    assert first.data == second.data == data
    assert first.data is not second.data
    assert copy.deepcopy(first.data) == data


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=25,
)


@given(JSON)
def test_arbitrary_json_never_raises(value: Any) -> None:
    """load_subject returns a Subject for any JSON value; a non-model always carries a reason."""
    subject = load_subject(json.dumps(value))
    assert subject.model is not None or subject.parse_error or subject.schema_problems


@given(st.text() | st.binary())
def test_arbitrary_text_never_raises(raw: str | bytes) -> None:
    """load_subject returns a Subject for any text or bytes."""
    subject = load_subject(raw)
    assert subject.model is not None or subject.parse_error or subject.schema_problems


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.just([]),
    st.just({}),
)


@st.composite
def _corrupted(draw: st.DrawFn) -> dict[str, Any]:
    """A valid classification with one value replaced somewhere in its tree."""
    data = make_classification()
    node: Any = data
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and draw(st.booleans()):
            node = child
            continue
        node[key] = draw(_LEAVES)
        break
    return data


@given(_corrupted())
def test_fast_path_accepts_exactly_what_the_schema_accepts(data: dict[str, Any]) -> None:
    """The strict model parse used as a fast path never accepts what jsonschema would reject."""
    try:
        ClassificationOutput.model_validate(data, strict=True)
    except Exception:
        return
    assert list(classification_validator().iter_errors(data)) == []
