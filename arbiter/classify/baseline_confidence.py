"""How sure the baseline classifier is of a segment and why, in words: shares in whole units of 1/10,000,
the dominant type's confidence (the weakest of four readings of the evidence) with the doubts that hold it
down, and the segment's plain-English reasoning."""

from __future__ import annotations

from arbiter.classify.baseline_pages import (
    Segment,
    arg_max,
    is_blank,
)
from arbiter.contracts.profile import Baseline

UNITS = 10_000  # shares are written with 4 decimals: whole numbers of 1/10,000 sum exactly


def _label_score(seg: Segment, doc_type: str) -> float:
    return sum(h.weight for s in seg.pages for h in s.hits.get(doc_type, []) if h.kind == "label")


def _scaled(quality: float, settings: Baseline) -> float:
    return round(
        settings.confidence_floor + (settings.confidence_ceiling - settings.confidence_floor) * quality, 4
    )


def own_confidence(
    seg: Segment, doc_type: str, totals: dict[str, float], settings: Baseline, ceiling: float
) -> float:
    """A non-dominant claimed type's confidence: its own evidence's score and label readings, at most
    the segment's."""
    score = totals.get(doc_type, 0.0)
    if score <= 0:
        return min(ceiling, settings.confidence_floor)
    quality = min(1.0, score / settings.full_evidence_score, 1.0 - _label_score(seg, doc_type) / score)
    return min(ceiling, _scaled(quality, settings))


def segment_confidence(
    seg: Segment,
    units: dict[str, int],
    totals: dict[str, float],
    dominant: str,
    settings: Baseline,
    types: list[str],
) -> tuple[float, list[str]]:
    """The dominant type's confidence and, when it falls short of the ceiling, why.

    It is the weakest of four readings of the evidence, each from 0 to 1: how far the top share leads
    the next (a tie is 0), how much the dominant type scored, how many of the segment's pages have
    wording of their own, and how much of the dominant type's score is more than fill-in field labels.
    """
    ranked = sorted(types, key=lambda t: (-units[t], types.index(t)))
    first, second = ranked[0], ranked[1]
    margin = (units[first] - units[second]) / UNITS
    score = totals.get(dominant, 0.0)
    labels = _label_score(seg, dominant)
    own = sum(1 for s in seg.pages if s.page_type is not None)
    # A sheet OCR found blank hides no document; a page it could not read, or text nothing matched, might.
    counted = max(1, sum(1 for s in seg.pages if not is_blank(s.page)))
    coverage = own / counted
    readings = {
        "margin": min(1.0, margin / settings.decisive_margin),
        "score": min(1.0, score / settings.full_evidence_score),
        "coverage": min(1.0, max(0.0, (coverage - settings.coverage_floor) / (1 - settings.coverage_floor))),
        "labels": 1.0 - labels / score if score > 0 else 0.0,
    }
    confidence = _scaled(min(readings.values()), settings)
    doubts: list[str] = []
    if margin <= settings.near_tie_margin and units[second] > 0:
        a, b = units[first] / UNITS, units[second] / UNITS
        if margin == 0:
            doubts.append(
                f"{first} and {second} are tied at share {a:g} each: the evidence does not decide between them "
                f"({first} is named dominant only because it comes first in the taxonomy)"
            )
        else:
            doubts.append(
                f"{first} ({a:g}) and {second} ({b:g}) are nearly tied: the evidence hardly decides between them"
            )
    elif readings["margin"] < 1:
        doubts.append(f"{second} holds a share of {units[second] / UNITS:g} beside {first}")
    if readings["score"] < 1:
        doubts.append(
            f"{dominant} has little evidence (score {score:g} of the {settings.full_evidence_score:g} "
            "that makes a type well evidenced)"
            if score > 0
            else f"no line could be quoted for {dominant}"
        )
    if readings["coverage"] < 1:
        blank = " non-blank" if counted < len(seg.pages) else ""
        doubts.append(f"only {own} of its {counted}{blank} pages have wording of their own")
    if readings["labels"] < 1 and labels > 0:
        doubts.append(
            f"{'all' if labels >= score else 'part'} of the evidence for {dominant} is fill-in field labels, "
            "which name what to write on a form, not what the page is"
        )
    return confidence, doubts


def reasoning(
    seg: Segment,
    present: dict[str, float],
    unquoted: list[str],
    types: list[str],
    confidence: float,
    doubts: list[str],
) -> str:
    span = f"Page {seg.start}" if seg.start == seg.end else f"Pages {seg.start}-{seg.end}"
    found = []
    for doc_type in types:
        if doc_type not in present:
            continue
        hits: dict[str, bool] = {}
        labels: set[str] = set()
        fields: list[str] = []
        for s in seg.pages:
            for hit in s.hits.get(doc_type, []):
                if hit.kind == "form":
                    fields.append(hit.phrase)
                    continue
                hits[hit.phrase] = hits.get(hit.phrase, False) or hit.title
                if hit.kind == "label":
                    labels.add(hit.phrase)
        read = [h for s in seg.pages for h in s.hits.get(doc_type, []) if h.kind == "read"]
        cues = sorted(hits, key=lambda p: (not hits[p], p in labels, p))[:5]
        listed = [
            f'"{p}"' + (" (title)" if hits[p] else " (field label)" if p in labels else "") for p in cues
        ]
        if read:  # the learned reader's lines: the strongest two, shortened
            best = sorted(read, key=lambda h: -h.weight)[:2]
            listed = [f"read as this type ({', '.join(_short(h.phrase) for h in best)})"]
        count = sum(s.form_fields for s in seg.pages)
        if fields:
            examples = ", ".join(f'"{f}"' for f in fields[:2])
            listed.append(f"{count} fill-in form fields ({examples})")
        if listed:
            found.append(f"{doc_type}: {', '.join(listed)}")
    parts = [f"{span}: cues found for {'; '.join(found)}." if found else f"{span}: no quotable cues found."]
    for s in seg.pages:
        if s.restart and s.page.page_num == seg.start:
            parts.append(f"Page {s.page.page_num} starts a new document: {s.restart_why}.")
        if s.page_type is None:
            why = (
                "is blank (OCR found nothing to read)"
                if is_blank(s.page)
                else "has no readable text"
                if not s.readable
                else "has no recognisable wording"
            )
            parts.append(f"Page {s.page.page_num} {why}; it takes its neighbours' type.")
        elif s.continued:
            parts.append(
                f"Page {s.page.page_num} has no title of its own and continues the document before it."
            )
    if unquoted:
        parts.append(f"No line could be quoted for {', '.join(unquoted)}, so it is not claimed.")
    if doubts:
        parts.append(f"Confidence {confidence:g}, held down because {'; '.join(doubts)}.")
    return " ".join(parts)


def apportion(weights: dict[str, float] | dict[str, int], types: list[str]) -> dict[str, int]:
    """Whole units of 1/10,000 proportional to `weights`, summing to exactly 10,000 (largest remainder).

    Every type with a positive weight keeps at least one unit, so a claimed type never shows share 0.
    """
    total = sum(max(0.0, float(weights.get(t, 0))) for t in types)
    units = dict.fromkeys(types, 0)
    if total <= 0:
        return units
    exact = {t: max(0.0, float(weights.get(t, 0))) * UNITS / total for t in types}
    for t in types:
        units[t] = int(exact[t])
    order = {t: i for i, t in enumerate(types)}
    by_remainder = sorted(types, key=lambda t: (-(exact[t] - units[t]), order[t]))
    for t in by_remainder[: UNITS - sum(units.values())]:
        units[t] += 1
    for t in types:
        if exact[t] > 0 and units[t] == 0:
            units[t] = 1
            units[arg_max(units, types)] -= 1
    return units


def _short(line: str, limit: int = 60) -> str:
    return f'"{line}"' if len(line) <= limit else f'"{line[: limit - 1]}…"'
