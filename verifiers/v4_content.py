"""V4's content rules: does the evidence a type rests on say what that type is (verifiers/content.py)?

A quote can be verbatim and still prove nothing for its type: a lab table header cited for a pathology
report, or a blank form's field labels cited for a lab report. Only the types an answer rests on are
judged (the dominant type and any PRIMARY); both findings are MAJOR and no fix may touch them.
"""

from __future__ import annotations

from arbiter.contracts import ClassificationOutput, DocumentBundle, Evidence, Segment, TypeAssessment
from arbiter.contracts.profile import Profile
from arbiter.verifiers.base import IssueList
from arbiter.verifiers.content import is_form_label, read_bundle, read_snippet
from arbiter.verifiers.content_reading import ContentReading

PRIMARY = "PRIMARY"


def check_evidence_content(
    issues: IssueList, model: ClassificationOutput, bundle: DocumentBundle, profile: Profile
) -> None:
    reading = read_bundle(bundle, profile)
    for i, segment in enumerate(model.segments):
        for j, assessment in enumerate(segment.types):
            if not assessment.evidence:
                continue
            if assessment.document_type != segment.dominant_type and assessment.presence_level != PRIMARY:
                continue
            _judge(issues, reading, profile, segment, assessment, f"/segments/{i}/types/{j}/evidence")


def _judge(
    issues: IssueList,
    reading: ContentReading,
    profile: Profile,
    segment: Segment,
    assessment: TypeAssessment,
    path: str,
) -> None:
    content = profile.content
    claimed = assessment.document_type
    quotes = assessment.evidence
    labels = [is_form_label(e.snippet, e.page, reading) for e in quotes]
    if all(labels) and claimed not in content.label_evidence_types:
        listed = _listed(quotes)
        issues.add(
            "V4.EVIDENCE_FORM_LABEL_ONLY",
            f"The evidence for {claimed} in segment {segment.segment_index} is only form labels or empty "
            f"fields ({listed}): a label names what a form asks for, not a {claimed} that was written.",
            path=path,
            segment_index=segment.segment_index,
            document_type=claimed,
            page=quotes[0].page,
        )
        return
    totals: dict[str, float] = {}
    for evidence in quotes:
        page = reading.pages.get(evidence.page)
        orders = page is not None and page.orders
        for doc_type, value in read_snippet(evidence.snippet, profile, orders=orders).items():
            totals[doc_type] = totals.get(doc_type, 0.0) + value
    own = totals.pop(claimed, 0.0)
    if not totals:
        return
    types = profile.taxonomy.document_types
    best = max(totals, key=lambda t: (totals[t], -types.index(t)))
    # Evidence that says more for another type than twice what it says for its own does not support it.
    if totals[best] < content.evidence_other_score or totals[best] <= 2 * own:
        return
    issues.add(
        "V4.EVIDENCE_READS_AS_OTHER_TYPE",
        f"The evidence for {claimed} in segment {segment.segment_index} ({_listed(quotes)}) reads as "
        f"{best}" + (f", and only weakly as {claimed}." if own else f", and none of it reads as {claimed}."),
        path=path,
        segment_index=segment.segment_index,
        document_type=claimed,
        page=quotes[0].page,
    )


def _listed(quotes: list[Evidence], limit: int = 3) -> str:
    shown = [f'page {e.page}: "{_clip(e.snippet)}"' for e in quotes[:limit]]
    more = f" and {len(quotes) - limit} more" if len(quotes) > limit else ""
    return "; ".join(shown) + more


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
