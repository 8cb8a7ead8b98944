"""The `baseline` classifier: offline, deterministic, profile-driven page scoring with verbatim evidence.

Every page is scored per document type from the profile's weighted cue phrases, runs of pages of one
type become segments, and each type a segment claims is backed by a line quoted from its own pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from arbiter.classifiers.base import ClassificationError, ClassifierOutput
from arbiter.classifiers.cues import (
    CueMatcher,
    PageLines,
    Snippet,
    find_snippet,
    matcher_for,
    normalise_many,
    words_of,
)
from arbiter.contracts import BlockType, DocumentBundle, Page
from arbiter.profile import Profile

_encode_string = json.encoder.encode_basestring
UNITS = 10_000  # shares are written with 4 decimals: whole numbers of 1/10,000 sum exactly
_HEADER_FOOTER = {BlockType.HEADER, BlockType.FOOTER}


@dataclass
class _PageScore:
    page: Page
    readable: bool
    scores: dict[str, float] = field(default_factory=dict)
    # Per type, the cues found on the page as (effective weight, phrase, found in a title).
    hits: dict[str, list[tuple[float, str, bool]]] = field(default_factory=dict)
    title_type: str | None = None  # the type a strong title on the page names
    page_type: str | None = None
    continued: bool = False  # kept the previous page's type although another type scored higher
    vendor_keys: set[str] = field(default_factory=set)


@dataclass
class _Segment:
    start: int
    end: int
    pages: list[_PageScore]
    page_type: str


class BaselineClassifier:
    name = "baseline"
    version = "1.0.0"

    def classify(self, bundle: DocumentBundle, profile: Profile) -> ClassifierOutput:
        matcher = matcher_for(profile)
        types = profile.taxonomy.document_types
        pages = sorted(bundle.pages, key=lambda p: p.page_num)
        if not pages:
            raise ClassificationError("The document has no pages, so there is nothing to classify.")
        scored = [_score_page(page, matcher, profile) for page in pages]
        _assign_types(scored, matcher, types)
        if all(s.page_type is None for s in scored):
            if not any(s.readable for s in scored):
                raise ClassificationError(
                    "No page of this document has readable text, so the baseline classifier cannot classify it."
                )
            raise ClassificationError(
                "No page of this document contains wording the baseline classifier recognises "
                "for any document type."
            )
        segments = _segments(scored)
        out_segments: list[dict[str, object]] = []
        weights = dict.fromkeys(types, 0)
        for index, seg in enumerate(segments, start=1):
            entry, units = _segment_output(index, seg, matcher, profile)
            out_segments.append(entry)
            for doc_type, value in units.items():
                weights[doc_type] += value * (seg.end - seg.start + 1)
        mixture_units = _apportion(weights, types)
        dominant = _arg_max(mixture_units, types)
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


def _readable(page: Page) -> bool:
    return (page.has_text_layer or page.ocr_applied) and bool(page.text.strip())


def _body_and_titles(
    page: Page, matcher: CueMatcher, profile: Profile
) -> tuple[list[str], list[str], list[str]]:
    """The page's normalised body paragraphs (headers/footers left out), its title region (as V3 reads
    it: the first few short paragraphs) and its headings (title-region headings and the first paragraph).
    """
    if page.paragraphs:
        kept = [p for p in page.paragraphs if p.block_type not in _HEADER_FOOTER]
        texts = normalise_many([p.text for p in kept])
        heading = [p.block_type == BlockType.HEADING for p in kept]
    else:
        # No layout: running header/footer text (page numbers, fax numbers) is cut out of each line.
        texts = [matcher.strip_header_footer(n).strip() for n in normalise_many(page.text.split("\n"))]
        heading = [False] * len(texts)
    body = [(text, is_heading) for text, is_heading in zip(texts, heading, strict=True) if text]
    traps = profile.traps
    region = [(t, h) for t, h in body[: traps.title_region_paragraphs] if len(t) <= traps.title_max_chars]
    titles = [t for t, _ in region]
    headings = [t for i, (t, h) in enumerate(region) if h or (i == 0 and t == body[0][0])]
    return [t for t, _ in body], titles, headings


def _score_page(page: Page, matcher: CueMatcher, profile: Profile) -> _PageScore:
    score = _PageScore(page=page, readable=_readable(page))
    if not score.readable:
        return score
    settings = matcher.settings
    body, titles, headings = _body_and_titles(page, matcher, profile)
    body_text = "\n".join(body)
    words = words_of(body_text)
    in_heading = set(matcher.phrases_in("\n".join(headings), words))
    # Administrative titles count anywhere in the title region, as V3's trap check reads them.
    admin_titles = {p for p in matcher.phrases_in("\n".join(titles), words) if p in matcher.admin_titles}
    found = in_heading | admin_titles | set(matcher.phrases_in(body_text, words))
    # Vendor names count wherever they are printed, letterheads included.
    score.vendor_keys.update(matcher.vendor_keys_in(body_text, words))
    running = [p.text for p in page.paragraphs if p.block_type in _HEADER_FOOTER]
    if running:
        score.vendor_keys.update(matcher.vendor_keys_in("\n".join(normalise_many(running))))
    strong: list[tuple[float, int, str]] = []
    order = {t: i for i, t in enumerate(profile.taxonomy.document_types)}
    for phrase in sorted(found):
        title = phrase in in_heading or phrase in admin_titles
        for doc_type, weight in matcher.cues[phrase].items():
            effective = weight * (settings.title_weight if title else 1.0)
            score.scores[doc_type] = score.scores.get(doc_type, 0.0) + effective
            score.hits.setdefault(doc_type, []).append((effective, phrase, title))
            if title and weight >= settings.strong_title_weight:
                strong.append((-weight, order[doc_type], doc_type))
    if strong:
        # A strong title (a fax cover sheet, "Surgical Pathology Report") names its page's type.
        score.title_type = min(strong)[2]
    return score


def _assign_types(scored: list[_PageScore], matcher: CueMatcher, types: list[str]) -> None:
    """Each page's own type: its strong title's, else the previous document's when that still scores
    well on the page (a continuation page), else its best-scoring type; None when nothing scores enough.
    """
    settings = matcher.settings
    previous: str | None = None
    for s in scored:
        if s.title_type is not None:
            s.page_type = s.title_type
        elif s.scores:
            best = _arg_max(s.scores, types)
            total = sum(s.scores.values())
            if (
                previous is not None
                and s.scores.get(previous, 0.0) >= settings.continuation_min_share * total
            ):
                s.page_type, s.continued = previous, previous != best
            elif s.scores[best] >= settings.min_page_score:
                s.page_type = best
        previous = s.page_type or previous


def _segments(scored: list[_PageScore]) -> list[_Segment]:
    """Maximal runs of pages of one type; a page without a type takes its previous (else next) neighbour's."""
    types = [s.page_type for s in scored]
    for i in range(1, len(types)):
        types[i] = types[i] or types[i - 1]
    for i in range(len(types) - 2, -1, -1):
        types[i] = types[i] or types[i + 1]
    segments: list[_Segment] = []
    for s, page_type in zip(scored, types, strict=True):
        assert page_type is not None  # some page has a type, so filling reaches every page
        if segments and segments[-1].page_type == page_type:
            segments[-1].pages.append(s)
            segments[-1].end = s.page.page_num
        else:
            segments.append(_Segment(s.page.page_num, s.page.page_num, [s], page_type))
    return segments


def _evidence(
    seg: _Segment,
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
            for weight, phrase, _ in s.hits.get(doc_type, [])
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
    index: int, seg: _Segment, matcher: CueMatcher, profile: Profile
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
    if not present:
        # Cues were seen but none could be quoted verbatim: keep the page type, claim nothing else.
        present = {seg.page_type: 1.0}
    units = _apportion(present, types)
    dominant = _arg_max(units, types)
    ranked = [*sorted(units.values(), reverse=True), 0]
    margin = (ranked[0] - ranked[1]) / UNITS
    confidence = round(
        settings.confidence_floor + (settings.confidence_ceiling - settings.confidence_floor) * margin, 4
    )
    entries = []
    for doc_type in types:
        share = units[doc_type] / UNITS
        if units[doc_type] == 0:
            level, conf = taxonomy.no_evidence_level, settings.absent_confidence
        else:
            level = matcher.presence_level(share, doc_type == dominant)
            conf = confidence
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
        "classification_reasoning": _reasoning(seg, present, unquoted, types),
        "types": entries,
    }
    return output, units


def _reasoning(seg: _Segment, present: dict[str, float], unquoted: list[str], types: list[str]) -> str:
    span = f"Page {seg.start}" if seg.start == seg.end else f"Pages {seg.start}-{seg.end}"
    found = []
    for doc_type in types:
        if doc_type not in present:
            continue
        hits: dict[str, bool] = {}
        for s in seg.pages:
            for _, phrase, title in s.hits.get(doc_type, []):
                hits[phrase] = hits.get(phrase, False) or title
        cues = sorted(hits, key=lambda p: (not hits[p], p))[:5]
        if cues:
            listed = ", ".join(f'"{p}"' + (" (title)" if hits[p] else "") for p in cues)
            found.append(f"{doc_type}: {listed}")
    parts = [f"{span}: cues found for {'; '.join(found)}." if found else f"{span}: no quotable cues found."]
    for s in seg.pages:
        if s.page_type is None:
            why = "has no readable text" if not s.readable else "has no recognisable wording"
            parts.append(f"Page {s.page.page_num} {why}; it takes its neighbours' type.")
        elif s.continued:
            parts.append(
                f"Page {s.page.page_num} has no title of its own and continues the document before it."
            )
    if unquoted:
        parts.append(f"No line could be quoted for {', '.join(unquoted)}, so it is not claimed.")
    return " ".join(parts)


def _apportion(weights: dict[str, float] | dict[str, int], types: list[str]) -> dict[str, int]:
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
            units[_arg_max(units, types)] -= 1
    return units


def _arg_max(values: dict[str, float] | dict[str, int], types: list[str]) -> str:
    """The type with the highest value; the earlier in taxonomy order wins a tie."""
    return max(types, key=lambda t: (values.get(t, 0), -types.index(t)))
