"""The focused re-check: V2's primary-doubt rule (arbiter.verifiers.v2_content.check_primary_doubt) run again on each
stored attempt's version, in place of that rule's stored findings: no bundle, no other rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from arbiter.contracts import Issue, VerifierStatus
from arbiter.contracts.profile import Profile
from arbiter.whatif.history import Recorded
from arbiter.whatif.redecide import Adjust

FOCUSED_CODES = frozenset({"V2.PRIMARY_LOW_CONFIDENCE", "V2.PRIMARY_TYPE_TIE"})


@dataclass(slots=True)
class _Type:
    document_type: str
    share: float
    confidence: float


@dataclass(slots=True)
class _Segment:
    segment_index: int
    dominant_type: str
    types: list[_Type]


@dataclass(slots=True)
class _Model:
    segments: list[_Segment]


def _light(data: dict[str, Any]) -> _Model | None:
    try:
        return _Model(
            [
                _Segment(
                    int(s["segment_index"]),
                    str(s["dominant_type"]),
                    [
                        _Type(str(t["document_type"]), float(t["share"]), float(t["confidence"]))
                        for t in s["types"]
                    ],
                )
                for s in data["segments"]
            ]
        )
    except (KeyError, TypeError, ValueError):
        return None


def recheck_doubt(
    results: Sequence[dict[str, Any]], classification: dict[str, Any] | None, profile: Profile
) -> list[dict[str, Any]] | None:
    """The stored results with V2's primary-doubt findings replaced by the candidate's (None: the version
    cannot be read, so the caller re-verifies)."""
    from arbiter.verifiers.base import IssueList
    from arbiter.verifiers.v2_content import check_primary_doubt

    out = list(results)
    for index, v2 in enumerate(results):
        if v2.get("verifier") != "V2" or v2.get("status") not in (
            VerifierStatus.PASSED,
            VerifierStatus.FAILED,
        ):
            continue
        if classification is None:
            return None
        model = _light(classification)
        if model is None:
            return None
        kept = [i for i in v2.get("issues") or () if i.get("code") not in FOCUSED_CODES]
        found = IssueList("V2")
        found.items = [cast(Issue, None)] * len(kept)  # numbering continues after the stored issues
        check_primary_doubt(found, cast(Any, model), profile)
        new = [i.model_dump(mode="json") for i in found.items[len(kept) :]]
        issues = kept + new
        status = VerifierStatus.FAILED.value if issues else VerifierStatus.PASSED.value
        out[index] = {**v2, "issues": issues, "status": status}
    return out


def doubt_findings(segments: Any, profile: Profile) -> int | None:
    """How many primary-doubt findings check_primary_doubt makes of these segments (None: unreadable)."""
    from arbiter.verifiers.base import IssueList
    from arbiter.verifiers.v2_content import check_primary_doubt

    model = _light({"segments": segments}) if isinstance(segments, list) else None
    if model is None:
        return None
    found = _Tally()
    check_primary_doubt(cast(IssueList, found), cast(Any, model), profile)
    return found.count


def doubt_delta(segments: Any, current: Profile, candidate: Profile) -> int | None:
    """How many more primary-doubt findings the candidate makes of these segments (None: unreadable). With
    the same dominant_margin (and taxonomy, which a focused candidate never changes) the type-tie findings
    are the same under both, so only the low-confidence test is counted: check_primary_doubt's first test,
    the confidence the segment gives its dominant type against min_dominant_confidence."""
    if current.tolerances.dominant_margin != candidate.tolerances.dominant_margin:
        before, after = doubt_findings(segments, current), doubt_findings(segments, candidate)
        return None if before is None or after is None else after - before
    if not isinstance(segments, list):
        return None
    low, high = current.tolerances.min_dominant_confidence, candidate.tolerances.min_dominant_confidence
    delta = 0
    try:  # every field read as _light reads it (an unreadable one gives None), no model built
        for s in segments:
            int(s["segment_index"])
            dominant = str(s["dominant_type"])
            found = None
            for t in s["types"]:
                kind, confidence = str(t["document_type"]), float(t["confidence"])
                float(t["share"])
                if found is None and kind == dominant:
                    found = confidence
            if found is not None:
                delta += (found < high) - (found < low)
    except (KeyError, TypeError, ValueError):
        return None
    return delta


class _Tally:
    """Stands in for an IssueList where only the number of findings matters."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, code: str, message: str, **_: Any) -> None:
        self.count += 1


def doubt_adjust(doc: Recorded, current: Profile, candidate: Profile) -> Adjust:
    """For slim attempts: the recorded counts with the primary-doubt findings of the recording profile
    replaced by the candidate's, on the attempt's version: the last attempt's is the stored final
    classification, the first one's the primary's (history.primary_segments). Those findings are MAJOR and
    never fixable. An attempt in between, a version not read, or a second verifier that is not V2 gives
    None (the caller reads the whole outcome)."""
    attempts = doc.outcome.get("attempts") or []

    def adjust(j: int, counts: dict[str, Any]) -> dict[str, Any] | None:
        second, status = (attempts[j].get("second") or [None, None])[:2]
        if second != "V2":
            return None
        if status not in (VerifierStatus.PASSED, VerifierStatus.FAILED):
            return counts  # V2's rules did not run on this version: nothing to re-check
        if j == len(attempts) - 1:
            segments = doc.outcome.get("final_segments")
        elif j == 0:
            segments = doc.primary_segments
        else:
            return None
        delta = doubt_delta(segments, current, candidate)
        if delta is None:
            return None
        out = dict(counts)
        for name in ("major", "major_non_fixable", "total"):
            out[name] = max(0, int(out.get(name) or 0) + delta)
        return out

    return adjust
