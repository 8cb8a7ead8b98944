"""The `baseline` classifier: offline, deterministic, profile-driven page scoring with verbatim evidence.

Every page is scored per document type from the profile's weighted cue phrases, runs of pages of one
type become segments (a page whose numbering restarts at "Page 1 of N" starts a new one), and each type
a segment claims is backed by a line quoted from its own pages.

A page of fill-in fields ("Patient name:", "Signature: ____", check boxes) reads as a form, and the words
of a field label count (almost) nothing for the type they name: "Test name:" on a blank form is not a lab
result. The confidence follows the evidence: it is the floor for a tie, for evidence made only of form
labels, or when most of a segment's pages have no wording of their own, and reaches the ceiling only for a
decisive, well-evidenced segment.

Here: the classifier, its verbatim evidence and its JSON. Page scoring and segments are in baseline_pages.py,
confidence, shares and reasoning in baseline_confidence.py.
"""

from __future__ import annotations

import json

from arbiter.classify.base import ClassificationError, ClassifierOutput
from arbiter.classify.baseline_confidence import (
    UNITS,
    apportion,
    own_confidence,
    reasoning,
    segment_confidence,
)
from arbiter.classify.baseline_doubts import boundary_doubts
from arbiter.classify.baseline_pages import (
    Segment,
    arg_max,
    assign_types,
    mark_restarts,
    score_page,
    split_segments,
)
from arbiter.classify.baseline_reader import cue_disagreement, read_pages
from arbiter.classify.cues import (
    CueMatcher,
    PageLines,
    Snippet,
    find_snippet,
    matcher_for,
)
from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile

_encode_string = json.encoder.encode_basestring


class BaselineClassifier:
    name = "baseline"
    version = "1.0.0"

    def classify(self, bundle: DocumentBundle, profile: Profile) -> ClassifierOutput:
        matcher = matcher_for(profile)
        types = profile.taxonomy.document_types
        pages = sorted(bundle.pages, key=lambda p: p.page_num)
        if not pages:
            raise ClassificationError("The document has no pages, so there is nothing to classify.")
        scored = [score_page(page, matcher, profile) for page in pages]
        if matcher.settings.reader is not None:
            read_pages(scored, profile, matcher)  # a learned reader decides the pages' types
        mark_restarts(scored, matcher)
        assign_types(scored, matcher, types)
        if all(s.page_type is None for s in scored):
            if not any(s.readable for s in scored):
                raise ClassificationError(
                    "No page of this document has readable text, so the baseline classifier cannot classify it."
                )
            raise ClassificationError(
                "No page of this document contains wording the baseline classifier recognises "
                "for any document type."
            )
        segments = split_segments(scored)
        out_segments: list[dict[str, object]] = []
        weights = dict.fromkeys(types, 0)
        for index, seg in enumerate(segments, start=1):
            doubts = boundary_doubts(segments, index - 1)
            entry, units = _segment_output(index, seg, matcher, profile, doubts)
            out_segments.append(entry)
            for doc_type, value in units.items():
                weights[doc_type] += value * (seg.end - seg.start + 1)
        mixture_units = apportion(weights, types)
        dominant = arg_max(mixture_units, types)
        data = {
            "doc_id": bundle.doc_id,
            "producer": {"name": self.name, "version": self.version},
            "number_of_segments": len(out_segments),
            "dominant_type": dominant,
            "vendor_signals": matcher.vendor_names({key for s in scored for key in s.vendor_keys}),
            "segments": out_segments,
            "document_mixture": [{"document_type": t, "share": mixture_units[t] / UNITS} for t in types],
        }
        return ClassifierOutput(raw=_dump(data), producer=f"{self.name}/{self.version}")


def _dump(data: dict[str, object]) -> str:
    """json.dumps(data, indent=2, ensure_ascii=False), byte for byte, several times faster."""
    out: list[str] = []
    _write(data, out, "\n")
    text = "".join(out)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a broken text layer: keep the file writable
        text = json.dumps(data, indent=2, ensure_ascii=True)
    return text


def _write(value: object, out: list[str], newline: str) -> None:
    # The standard encoder's indent mode is pure Python and was a third of the classifier's time.
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif value is None or isinstance(value, bool):
        out.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, int | float):
        out.append(repr(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + inner + _encode_string(str(key)) + ": ")
            _write(item, out, inner)
        out.append(newline + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + inner)
            _write(item, out, inner)
        out.append(newline + "]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _evidence(
    seg: Segment,
    doc_type: str,
    matcher: CueMatcher,
    profile: Profile,
    lines: dict[int, PageLines],
) -> list[Snippet]:
    """Up to `evidence_per_type` verbatim lines quoting this type's strongest cues on the segment's pages."""
    settings = matcher.settings
    # Strongest cue first, then earliest page, then the longest phrase (the most specific quote).
    candidates = sorted(
        (
            (-weight, s.page.page_num, -len(phrase), phrase, s.page)
            for s in seg.pages
            for weight, phrase, *_ in s.hits.get(doc_type, [])
        ),
        key=lambda c: c[:4],
    )
    good: list[Snippet] = []
    short: list[Snippet] = []
    for *_, phrase, page in candidates[:12]:
        if page.page_num not in lines:
            lines[page.page_num] = PageLines(page)
        snippet = find_snippet(lines[page.page_num], phrase, matcher)
        if snippet is None or any(snippet.text == g.text and snippet.page == g.page for g in good + short):
            continue
        (good if len(snippet.text) >= profile.tolerances.min_snippet_chars else short).append(snippet)
        if len(good) >= settings.evidence_per_type:
            break
    return (good + short)[: settings.evidence_per_type]


def _segment_output(
    index: int, seg: Segment, matcher: CueMatcher, profile: Profile, boundary: list[str]
) -> tuple[dict[str, object], dict[str, int]]:
    settings = matcher.settings
    taxonomy = profile.taxonomy
    types = taxonomy.document_types
    totals: dict[str, float] = {}
    for s in seg.pages:
        for doc_type, value in s.scores.items():
            totals[doc_type] = totals.get(doc_type, 0.0) + value
    lines: dict[int, PageLines] = {}
    evidence = {t: _evidence(seg, t, matcher, profile, lines) for t in types if totals.get(t, 0.0) > 0}
    unquoted = [t for t, found in evidence.items() if not found]
    present = {t: totals[t] for t, found in evidence.items() if found}
    quoted = bool(present)
    if not present:
        # Cues were seen but none could be quoted verbatim: keep the page type, claim nothing else.
        present = {seg.page_type: 1.0}
    units = apportion(present, types)
    dominant = arg_max(units, types)
    confidence, doubts = segment_confidence(seg, units, totals if quoted else {}, dominant, settings, types)
    disagreement = cue_disagreement(seg, dominant) if settings.reader is not None else None
    if disagreement is not None:  # two readings of the page that disagree: no confident answer
        confidence = min(confidence, settings.confidence_floor)
        doubts.append(disagreement)
    if boundary:  # where the segment begins or ends is uncertain: no confident answer (baseline_doubts.py)
        confidence = min(confidence, settings.confidence_floor)
        doubts.extend(boundary)
    entries = []
    for doc_type in types:
        share = units[doc_type] / UNITS
        if units[doc_type] == 0:
            level, conf = taxonomy.no_evidence_level, settings.absent_confidence
        else:
            level = matcher.presence_level(share, doc_type == dominant)
            # Another claimed type is no surer than the segment, nor than its own evidence.
            conf = (
                confidence
                if doc_type == dominant
                else own_confidence(seg, doc_type, totals, settings, confidence)
            )
        entries.append(
            {
                "document_type": doc_type,
                "presence_level": level,
                "share": share,
                "confidence": conf,
                "evidence": [
                    {"page": e.page, "snippet": e.text, "anchor": e.anchor}
                    for e in evidence.get(doc_type, [])
                ],
            }
        )
    output = {
        "segment_index": index,
        "start_page": seg.start,
        "end_page": seg.end,
        "segment_page_count": seg.end - seg.start + 1,
        "dominant_type": dominant,
        "classification_reasoning": reasoning(seg, present, unquoted, types, confidence, doubts),
        "types": entries,
    }
    return output, units
