"""The agree and correct forms: turn the reviewer's segment table into a classification and check it.

A correction is rebuilt from the edited rows (pages, dominant type, one share per taxonomy type), keeps
the machine's evidence that falls inside each new segment and can be found on its page, and is run through
the V1, V2 and V4 rules against the document. BLOCKER and MAJOR findings stop the save (except the
judgements a reviewer is there to make); MINOR ones are shown as notes. Agreeing runs the same checks on
the machine's answer (docs/design.md §8.3). Reading the table's cells and making one row a segment is
rows.py's part.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from arbiter.contracts import Corrections, DocumentBundle, IssueSource, Severity
from arbiter.contracts.profile import Profile
from arbiter.contracts.schemas import load_subject
from arbiter.review.quick import evidence_pool
from arbiter.review.rows import (
    DOMINANT_COLUMN,
    blank_row,
    cell_number,
    row_segment,
    vendor_signals,
    whole_number,
)
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.shares import arg_max, canonical_mixture
from arbiter.verifiers.textmatch import PageIndex
from arbiter.verifiers.v1_schema import V1Schema
from arbiter.verifiers.v2_consistency import V2Consistency
from arbiter.verifiers.v2_content import JUDGEMENT_CODES
from arbiter.verifiers.v4_evidence import V4Evidence, quote

PRODUCER = {"name": "sme-review", "version": "1"}
# Why a reviewer corrected the machine; the packet's own issue codes are offered beside these.
CORRECTION_REASONS = (
    "WRONG_DOCUMENT_TYPE",
    "WRONG_SEGMENT_BOUNDARIES",
    "WRONG_SHARES",
    "WRONG_MIXTURE",
    "MISSED_CONTENT",
    "OTHER",
)
_BLOCKING = {Severity.BLOCKER, Severity.MAJOR}
_MIXTURE_CODES = {"V2.MIXTURE_SHARES_SUM", "V2.MIXTURE_MISMATCH"}
# Evidence V4 could not find where it is cited: saving it would put a quote the document does not hold
# into ground truth. Other V4 findings (evidence reading as another type, a page without text) are the
# reviewer's judgement and stay notes.
EVIDENCE_NOT_FOUND = frozenset(
    {
        "V4.SNIPPET_NOT_FOUND",
        "V4.SNIPPET_OUTSIDE_SEGMENT",
        "V4.SNIPPET_NUMBERS_DIFFER",
        "V4.SNIPPET_WRONG_PAGE",
    }
)


@dataclass(frozen=True)
class Problem:
    """One finding on a reviewer's answer, in words about the document."""

    message: str
    blocking: bool
    code: str = "FORM"
    path: str = ""


@dataclass
class CorrectionDraft:
    """What the reviewer entered; kept in session state so a lost claim loses nothing."""

    segments: list[dict[str, Any]]
    mixture: list[dict[str, Any]] | None = None  # None: computed from the segments, page-weighted
    dominant_type: str | None = None  # None: the type with the largest share in the mixture
    reason_codes: list[str] = field(default_factory=list)
    notes: str = ""
    confidence: float = 0.9
    evidence: list[dict[str, Any]] | None = None  # None: the machine's evidence; else quick.py's pool


@dataclass(frozen=True)
class Checked:
    classification: dict[str, Any] | None
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return self.classification is not None and not any(p.blocking for p in self.problems)

    @property
    def blocking(self) -> list[Problem]:
        return [p for p in self.problems if p.blocking]

    @property
    def notes(self) -> list[Problem]:
        return [p for p in self.problems if not p.blocking]


def segment_rows(classification: Any, profile: Profile) -> list[dict[str, Any]]:
    """Editor rows, one per segment: pages, dominant type and the share of every taxonomy type."""
    types = profile.taxonomy.document_types
    segments = classification.get("segments") if isinstance(classification, dict) else None
    rows: list[dict[str, Any]] = []
    for seg in segments if isinstance(segments, list) else []:
        if not isinstance(seg, dict):
            continue
        shares = dict.fromkeys(types, 0.0)
        for entry in seg.get("types") or []:
            if isinstance(entry, dict) and entry.get("document_type") in shares:
                shares[entry["document_type"]] = cell_number(entry.get("share")) or 0.0
        rows.append(
            {
                "start_page": whole_number(seg.get("start_page")),
                "end_page": whole_number(seg.get("end_page")),
                DOMINANT_COLUMN: seg.get("dominant_type") if seg.get("dominant_type") in types else None,
                **shares,
            }
        )
    return rows


def mixture_rows(classification: Any, profile: Profile) -> list[dict[str, Any]]:
    """Editor rows for the document mixture, in taxonomy order."""
    shares = dict.fromkeys(profile.taxonomy.document_types, 0.0)
    mixture = classification.get("document_mixture") if isinstance(classification, dict) else None
    for entry in mixture if isinstance(mixture, list) else []:
        if isinstance(entry, dict) and entry.get("document_type") in shares:
            shares[entry["document_type"]] = cell_number(entry.get("share")) or 0.0
    return [{"document_type": name, "share": share} for name, share in shares.items()]


def check_correction(draft: CorrectionDraft, base: Any, bundle: DocumentBundle, profile: Profile) -> Checked:
    """The corrected classification and every problem with it (V1/V2 rules plus unreadable cells)."""
    candidate, problems = build_classification(draft, base, bundle, profile)
    if candidate is None:
        return Checked(None, tuple(problems))
    problems.extend(found_evidence_only(candidate, bundle, profile))
    unmixed = candidate["document_mixture"] is None
    if unmixed:
        candidate["document_mixture"] = []
    found = rule_problems(candidate, bundle, profile)
    if unmixed:
        # The mixture could not be computed because the segments are wrong; their problems say why.
        found = [
            p for p in found if p.code not in _MIXTURE_CODES and not p.path.startswith("/document_mixture")
        ]
    if _same_answer(candidate, base) and draft.evidence in (None, evidence_pool(base)):
        # "Use Agree" only when Agree would save the machine's answer (it refuses one that breaks the rules).
        agreeable = check_agreement(base, bundle, profile).ok
        problems.append(
            Problem(
                "The correction says the same as the machine's classification; use Agree instead, "
                "or change the table."
                if agreeable
                else "The table says what the machine said, but Agree cannot save the machine's answer as it "
                "is (see the problems listed); saving this correction stores the table's answer.",
                blocking=False,
            )
        )
    return Checked(candidate, tuple(problems + found))


def check_agreement(classification: Any, bundle: DocumentBundle, profile: Profile) -> Checked:
    """Agreeing saves the machine's classification as ground truth, so it meets the checks a correction
    meets: the V1 and V2 rules, and evidence V4 finds where it is cited. Judgements stay notes."""
    if not isinstance(classification, dict):
        return Checked(
            None,
            (Problem("There is no readable classification to agree with; correct it instead.", True),),
        )
    found = rule_problems(classification, bundle, profile)
    if any(p.code in {"V1.INVALID_JSON", "V1.SCHEMA_VIOLATION"} for p in found):
        first = next(p for p in found if p.code in {"V1.INVALID_JSON", "V1.SCHEMA_VIOLATION"})
        return Checked(
            None,
            (Problem(f"The machine's classification cannot be saved as it is: {first.message}", True),),
        )
    return Checked(classification, tuple(found))


def rule_problems(classification: dict[str, Any], bundle: DocumentBundle, profile: Profile) -> list[Problem]:
    """V1, V2 and V4 findings (rules only, no language model) as problems, worst first."""
    subject = load_subject(json.dumps(classification))
    context = VerifyContext()
    results = [
        V1Schema().verify(subject, bundle, profile, context),
        V2Consistency().verify(subject, bundle, profile, context),
        V4Evidence().verify(subject, bundle, profile, context),
    ]
    issues = [issue for result in results for issue in result.issues if issue.source == IssueSource.RULE]
    order = {Severity.BLOCKER: 0, Severity.MAJOR: 1, Severity.MINOR: 2}
    issues.sort(key=lambda i: order[i.severity])
    return [Problem(i.message, _blocks(i.code, i.severity), i.code, i.location.path) for i in issues]


def _blocks(code: str, severity: Severity) -> bool:
    if code.startswith("V4."):
        return code in EVIDENCE_NOT_FOUND
    return severity in _BLOCKING and code not in JUDGEMENT_CODES


def found_evidence_only(candidate: dict[str, Any], bundle: DocumentBundle, profile: Profile) -> list[Problem]:
    """Leave out of a correction the machine's quotes that are not on their page (a page without text
    keeps its quotes: nothing can be checked there); a note names each one left out."""
    index = PageIndex.shared(bundle, profile.tolerances.fuzzy_match_threshold)
    notes: list[Problem] = []
    for segment in candidate.get("segments") or []:
        for entry in segment.get("types") or []:
            kept = []
            for item in entry.get("evidence") or []:
                page = bundle.page(item.get("page")) if isinstance(item.get("page"), int) else None
                snippet = item.get("snippet")
                if (
                    page is None
                    or not page.text.strip()
                    or not isinstance(snippet, str)
                    or index.find(snippet, page.page_num) is not None
                ):
                    kept.append(item)
                    continue
                notes.append(
                    Problem(
                        f"The quote {quote(snippet)} is not on page {page.page_num}; it was left out of the "
                        "correction's evidence.",
                        blocking=False,
                        code="FORM.EVIDENCE_LEFT_OUT",
                    )
                )
            entry["evidence"] = kept
    return notes


def build_classification(
    draft: CorrectionDraft, base: Any, bundle: DocumentBundle, profile: Profile
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The classification the rows describe, or None with the cells that could not be read."""
    types = profile.taxonomy.document_types
    problems: list[Problem] = []
    parsed: list[tuple[int, int, str | None, dict[str, float]]] = []
    rows = [row for row in draft.segments if not blank_row(row, types)]
    if not rows:
        return None, [Problem("The segment table is empty; the document needs at least one segment.", True)]
    for number, row in enumerate(rows, start=1):
        start, end = whole_number(row.get("start_page")), whole_number(row.get("end_page"))
        for name, value in (("start page", start), ("end page", end)):
            if value is None:
                problems.append(Problem(f"Row {number}: the {name} must be a whole page number.", True))
        shares: dict[str, float] = {}
        for name in types:
            share = cell_number(row.get(name), blank=0.0)
            if share is None:
                problems.append(Problem(f"Row {number}: the {name} share must be a number.", True))
            shares[name] = share if share is not None else 0.0
        dominant = row.get(DOMINANT_COLUMN)
        dominant = dominant if isinstance(dominant, str) and dominant.strip() else None
        if start is not None and end is not None:
            parsed.append((start, end, dominant, shares))
    if problems:
        return None, problems
    parsed.sort(key=lambda item: (item[0], item[1]))
    segments = [
        row_segment(position, start, end, dominant, shares, base, profile, draft.evidence)
        for position, (start, end, dominant, shares) in enumerate(parsed, start=1)
    ]
    candidate: dict[str, Any] = {
        "doc_id": bundle.doc_id,
        "producer": dict(PRODUCER),
        "number_of_segments": len(segments),
        "dominant_type": "",
        "vendor_signals": vendor_signals(base),
        "segments": segments,
        "document_mixture": None,
    }
    if draft.mixture is not None:
        mixture: list[dict[str, Any]] = []
        for entry in draft.mixture:
            share = cell_number(entry.get("share"), blank=0.0)
            if share is None:
                problems.append(
                    Problem(f"The mixture share of {entry.get('document_type')} must be a number.", True)
                )
            mixture.append({"document_type": entry.get("document_type"), "share": share or 0.0})
        if problems:
            return None, problems
        candidate["document_mixture"] = mixture
    else:
        subject = load_subject(json.dumps({**candidate, "document_mixture": []}))
        if subject.model is not None:
            candidate["document_mixture"] = canonical_mixture(subject.model, bundle.total_pages, types)
    mixture_shares = {
        e["document_type"]: e["share"]
        for e in candidate["document_mixture"] or []
        if isinstance(e.get("document_type"), str) and isinstance(e.get("share"), int | float)
    }
    candidate["dominant_type"] = draft.dominant_type or arg_max(mixture_shares, types)
    return candidate, problems


def corrections_of(checked: Checked, draft: CorrectionDraft) -> Corrections:
    """The review's corrections block (docs/design.md §3.5) for a correction that passed its check."""
    if checked.classification is None:
        raise ValueError("only a checked correction can be saved")
    data = checked.classification
    return Corrections(
        corrected_dominant_type=data["dominant_type"],
        corrected_segments=data["segments"],
        corrected_document_mixture=data["document_mixture"],
        correction_notes=draft.notes,
    )


def _same_answer(candidate: dict[str, Any], base: Any) -> bool:
    if not isinstance(base, dict):
        return False

    def shape(data: dict[str, Any]) -> Any:
        segments = data.get("segments")
        rows = []
        for s in segments if isinstance(segments, list) else []:
            if isinstance(s, dict):
                shares = [
                    (t.get("document_type"), t.get("share"))
                    for t in s.get("types") or []
                    if isinstance(t, dict)
                ]
                rows.append(
                    (s.get("start_page"), s.get("end_page"), s.get("dominant_type"), sorted(shares, key=str))
                )
        return data.get("dominant_type"), rows

    return bool(shape(candidate) == shape(base))
