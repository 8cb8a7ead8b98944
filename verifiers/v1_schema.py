"""V1 schema & completeness (docs/design.md §5.2): does the classification fit the schema and the profile?

Pure rules, no LLM. It is the one verifier that explains a classification that failed to parse or fit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from arbiter.contracts import ClassificationOutput, DocumentBundle, Segment, VerifierResult
from arbiter.contracts.profile import Profile
from arbiter.contracts.schemas import display_path
from arbiter.verifiers.base import IssueList, SchemaProblem, Subject, VerifyContext, result

# A segment's primary type: what the answer says the segment is. The arbiter may require its evidence
# (`[arbiter] require_primary_evidence`), so a missing one has its own code.
PRIMARY = "PRIMARY"


@dataclass
class V1Schema:
    name: str = "V1"
    version: str = "1.0.0"
    output_file: str = "v1_schema_validation.json"

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        issues = IssueList(self.name)
        if subject.parse_error is not None:
            issues.add("V1.INVALID_JSON", subject.parse_error)
        for problem in subject.schema_problems:
            _report_schema_problem(issues, problem, subject.data)
        if subject.model is None:
            if not issues.items:  # a Subject built without a reason must still never pass
                issues.add("V1.SCHEMA_VIOLATION", "The classification could not be read.")
            return result(
                self, issues, notes=["The classification did not fit the schema; later checks skip it."]
            )
        _check_model(issues, subject.model, bundle, profile)
        return result(self, issues)


def _report_schema_problem(issues: IssueList, problem: SchemaProblem, data: Any) -> None:
    parts = _parts(problem.path)
    field = parts[-1] if parts else ""
    segment = (
        parts[1] + 1 if len(parts) > 1 and parts[0] == "segments" and isinstance(parts[1], int) else None
    )
    doc_type = _document_type_at(data, parts)
    value = _show(problem.value)
    where = _owner(parts, segment, doc_type)
    code, message = "V1.SCHEMA_VIOLATION", _schema_message(problem, parts, doc_type)
    if problem.validator in {"minimum", "maximum"} and field == "confidence":
        code = "V1.CONFIDENCE_OUT_OF_RANGE"
        message = f"The confidence {where} is {value}; a confidence must be between 0 and 1."
    elif problem.validator in {"minimum", "maximum"} and field == "share":
        code = "V1.SHARE_OUT_OF_RANGE"
        message = f"The share {where} is {value}; a share must be between 0 and 1."
    elif problem.validator == "minimum" and field in {"start_page", "end_page"} and segment is not None:
        code = "V1.PAGE_OUT_OF_RANGE"
        verb = "starts" if field == "start_page" else "ends"
        message = f"Segment {segment} {verb} on page {value}; pages are numbered from 1."
    issues.add(code, message, path=problem.path, segment_index=segment, document_type=doc_type)


def _check_model(
    issues: IssueList, model: ClassificationOutput, bundle: DocumentBundle, profile: Profile
) -> None:
    taxonomy = profile.taxonomy
    if model.doc_id != bundle.doc_id:
        issues.add(
            "V1.DOC_ID_MISMATCH",
            f'The classification is for document "{model.doc_id}", but this document is "{bundle.doc_id}".',
            path="/doc_id",
        )
    if model.number_of_segments != len(model.segments):
        issues.add(
            "V1.SEGMENT_COUNT_MISMATCH",
            f"The classification says it has {_count(model.number_of_segments, 'segment')} "
            f"but lists {len(model.segments)}.",
            path="/number_of_segments",
        )
    _check_segment_numbering(issues, model.segments)
    for position, segment in enumerate(model.segments):
        _check_pages(issues, position, segment, bundle.total_pages)
        _check_type_names(issues, position, segment, profile)
        base = f"/segments/{position}/types"
        owner = f"segment {position + 1}"
        _check_completeness(
            issues, base, owner, [t.document_type for t in segment.types], profile, position + 1
        )
        for index, entry in enumerate(segment.types):
            known = entry.presence_level in taxonomy.presence_levels
            if known and entry.presence_level != taxonomy.no_evidence_level and not entry.evidence:
                primary = entry.presence_level == PRIMARY
                issues.add(
                    "V1.PRIMARY_EVIDENCE_MISSING" if primary else "V1.EVIDENCE_MISSING",
                    f"Segment {position + 1} says {entry.document_type} is {entry.presence_level.lower()}, "
                    "but gives no evidence from the document.",
                    path=f"{base}/{index}/evidence",
                    segment_index=position + 1,
                    document_type=entry.document_type,
                )
    if model.dominant_type not in taxonomy.document_types:
        issues.add(
            "V1.UNKNOWN_DOCUMENT_TYPE",
            f'The document\'s dominant type "{model.dominant_type}" is not a known document type '
            f"({', '.join(taxonomy.document_types)}).",
            path="/dominant_type",
            document_type=model.dominant_type,
        )
    for index, mix in enumerate(model.document_mixture):
        if mix.document_type not in taxonomy.document_types:
            issues.add(
                "V1.UNKNOWN_DOCUMENT_TYPE",
                f'The document mixture lists "{mix.document_type}", which is not a known document type '
                f"({', '.join(taxonomy.document_types)}).",
                path=f"/document_mixture/{index}/document_type",
                document_type=mix.document_type,
            )
    names = [mix.document_type for mix in model.document_mixture]
    _check_completeness(issues, "/document_mixture", "the document mixture", names, profile, None)


def _check_segment_numbering(issues: IssueList, segments: list[Segment]) -> None:
    wrong = [(pos, s.segment_index) for pos, s in enumerate(segments) if s.segment_index != pos + 1]
    if not wrong:
        return
    given = ", ".join(str(s.segment_index) for s in segments)
    issues.add(
        "V1.SEGMENT_INDEX_INVALID",
        f"The segments are numbered {given}; they should be numbered 1 to {len(segments)} in the order listed.",
        path=f"/segments/{wrong[0][0]}/segment_index",
        segment_index=wrong[0][0] + 1,
        fix=[
            {"op": "replace", "path": f"/segments/{pos}/segment_index", "value": pos + 1} for pos, _ in wrong
        ],
    )


def _check_pages(issues: IssueList, position: int, segment: Segment, total_pages: int) -> None:
    number, base = position + 1, f"/segments/{position}"
    start, end = segment.start_page, segment.end_page
    has = "has no pages" if total_pages == 0 else f"has only {_count(total_pages, 'page')}"
    valid = True
    for field, verb, page in (("start_page", "starts", start), ("end_page", "ends", end)):
        if page > total_pages:
            valid = False
            issues.add(
                "V1.PAGE_OUT_OF_RANGE",
                f"Segment {number} {verb} on page {page}, but the document {has}.",
                path=f"{base}/{field}",
                segment_index=number,
                page=page,
            )
    if start > end:
        valid = False
        issues.add(
            "V1.INVERTED_PAGE_RANGE",
            f"Segment {number} starts on page {start} but ends on page {end}, before it starts.",
            path=base,
            segment_index=number,
            page=start,
        )
    expected = end - start + 1
    if valid and segment.segment_page_count != expected:
        issues.add(
            "V1.PAGE_COUNT_MISMATCH",
            f"Segment {number} covers pages {start}–{end} ({_count(expected, 'page')}), "
            f"but says it has {segment.segment_page_count}.",
            path=f"{base}/segment_page_count",
            segment_index=number,
            fix=[{"op": "replace", "path": f"{base}/segment_page_count", "value": expected}],
        )


def _check_type_names(issues: IssueList, position: int, segment: Segment, profile: Profile) -> None:
    taxonomy, number, base = profile.taxonomy, position + 1, f"/segments/{position}"
    known = ", ".join(taxonomy.document_types)
    if segment.dominant_type not in taxonomy.document_types:
        issues.add(
            "V1.UNKNOWN_DOCUMENT_TYPE",
            f'Segment {number}\'s dominant type "{segment.dominant_type}" is not a known document type ({known}).',
            path=f"{base}/dominant_type",
            segment_index=number,
            document_type=segment.dominant_type,
        )
    for index, entry in enumerate(segment.types):
        if entry.document_type not in taxonomy.document_types:
            issues.add(
                "V1.UNKNOWN_DOCUMENT_TYPE",
                f'Segment {number} lists "{entry.document_type}", which is not a known document type ({known}).',
                path=f"{base}/types/{index}/document_type",
                segment_index=number,
                document_type=entry.document_type,
            )
        if entry.presence_level not in taxonomy.presence_levels:
            issues.add(
                "V1.UNKNOWN_PRESENCE_LEVEL",
                f'Segment {number} gives {entry.document_type} the presence level "{entry.presence_level}", '
                f"which is not one of {', '.join(taxonomy.presence_levels)}.",
                path=f"{base}/types/{index}/presence_level",
                segment_index=number,
                document_type=entry.document_type,
            )


def _check_completeness(
    issues: IssueList, base: str, owner: str, names: list[str], profile: Profile, segment: int | None
) -> None:
    """Every taxonomy type exactly once; a missing one is fixed by appending it with a share of 0."""
    counts = Counter(names)
    for name, count in counts.items():
        if count > 1:
            last = len(names) - 1 - names[::-1].index(name)
            issues.add(
                "V1.DUPLICATE_DOCUMENT_TYPE",
                f"{_cap(owner)} lists {name} {count} times; each type must appear once.",
                path=f"{base}/{last}",
                segment_index=segment,
                document_type=name,
            )
    for name in profile.taxonomy.document_types:
        if name in counts:
            continue
        value: dict[str, Any] = {"document_type": name, "share": 0.0}
        if segment is not None:
            value = {
                "document_type": name,
                "presence_level": profile.taxonomy.no_evidence_level,
                "share": 0.0,
                "confidence": 1.0,
                "evidence": [],
            }
        issues.add(
            "V1.MISSING_DOCUMENT_TYPE",
            f"{_cap(owner)} does not list {name}; every document type must be listed, "
            "with a share of 0 when absent.",
            path=base,
            segment_index=segment,
            document_type=name,
            fix=[{"op": "add", "path": f"{base}/-", "value": value}],
        )


def _parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for raw in path.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        parts.append(int(part) if part.isascii() and part.isdigit() and len(part) < 16 else part)
    return parts


def _document_type_at(data: Any, parts: list[str | int]) -> str | None:
    """The document_type of the entry a path points into, read defensively from the raw data."""
    node = data
    found: str | None = None
    for part in parts:
        in_object = isinstance(node, dict) and isinstance(part, str) and part in node
        in_array = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if not (in_object or in_array):
            return found
        node = node[part]
        if isinstance(node, dict) and isinstance(node.get("document_type"), str):
            found = node["document_type"]
    return found


def _owner(parts: list[str | int], segment: int | None, doc_type: str | None) -> str:
    kind = f"of {doc_type}" if doc_type else "of an entry"
    if segment is not None:
        return f"{kind} in segment {segment}"
    if parts and parts[0] == "document_mixture":
        return f"{kind} in the document mixture"
    return kind


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 30 else text[:27] + "..."


def _schema_message(problem: SchemaProblem, parts: list[str | int], doc_type: str | None) -> str:
    """The schema problem told about the document ("The share of LAB_REPORT in segment 1 must be ...")."""
    if problem.validator == "required" and parts:
        return f'{_where(parts[:-1], doc_type)} is missing the required field "{parts[-1]}".'
    if problem.validator == "additionalProperties" and parts:
        return f'{_where(parts[:-1], doc_type)} has a field "{parts[-1]}" that is not allowed.'
    shown = display_path(parts)
    if parts and problem.message.startswith(shown + " "):
        return f"{_where(parts, doc_type)}{problem.message[len(shown) :]}."
    text = problem.message.strip() or "the classification does not fit the expected format"
    return _cap(text) + ("" if text.endswith(".") else ".")


def _where(parts: list[str | int], doc_type: str | None) -> str:
    """A noun phrase for a place in the classification, in the words of the document."""
    if not parts:
        return "The classification"
    head, rest = parts[0], parts[1:]
    field = f'"{parts[-1]}"' if isinstance(parts[-1], str) else ""
    if head == "segments" and rest and isinstance(rest[0], int):
        segment = f"segment {rest[0] + 1}"
        tail = rest[1:]
        entry = f"{doc_type} in {segment}" if doc_type else f"a document type in {segment}"
        if not tail:
            return _cap(segment)
        if tail[0] == "types" and len(tail) >= 2 and isinstance(tail[1], int):
            inner = tail[2:]
            if not inner:
                return f"The entry for {entry}"
            if inner[0] == "evidence" and len(inner) >= 2 and isinstance(inner[1], int):
                evidence = f"evidence {inner[1] + 1} for {entry}"
                return f"The {field} of {evidence}" if len(inner) > 2 else _cap(evidence)
            return f"The {field} of {entry}"
        return f"The {field} of {segment}" if field else f"A value in {segment}"
    if head == "document_mixture" and rest and isinstance(rest[0], int):
        entry = f"{doc_type} in the document mixture" if doc_type else "an entry of the document mixture"
        return f"The {field} of {entry}" if len(rest) > 1 else f"The entry for {entry}"
    if head == "producer" and rest:
        return f"The producer's {field}"
    return f"The {field} of the classification" if field else f'The field "{display_path(parts)}"'


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
