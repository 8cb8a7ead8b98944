"""The `baseline` classifier: offline, deterministic, profile-driven page scoring with verbatim evidence.

Every page is scored per document type from the profile's weighted cue phrases, runs of pages of one
type become segments (a page whose numbering restarts at "Page 1 of N" starts a new one), and each type
a segment claims is backed by a line quoted from its own pages.

A page of fill-in fields ("Patient name:", "Signature: ____", check boxes) reads as a form, and the words
of a field label count (almost) nothing for the type they name: "Test name:" on a blank form is not a lab
result. The confidence follows the evidence: it is the floor for a tie, for evidence made only of form
labels, or when most of a segment's pages have no wording of their own, and reaches the ceiling only for a
decisive, well-evidenced segment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal, NamedTuple

from arbiter.classify.base import ClassificationError, ClassifierOutput
from arbiter.classify.cues import (
    CueMatcher,
    FormLine,
    PageLines,
    Snippet,
    find_snippet,
    form_fields,
    matcher_for,
    normalise_many,
    whole_word_spans,
    words_of,
)
from arbiter.contracts import BlockType, DocumentBundle, OcrStatus, Page
from arbiter.contracts.profile import Baseline, Profile
from arbiter.ingest.pagination import PageMark, page_marks

_encode_string = json.encoder.encode_basestring
UNITS = 10_000  # shares are written with 4 decimals: whole numbers of 1/10,000 sum exactly
_HEADER_FOOTER = {BlockType.HEADER, BlockType.FOOTER}
# A fax machine's page counter names the transmission; it numbers the packet, not one document in it.
_TRANSMISSION_WORDS = ("fax", "facsimile", "transmission", "sent", "from:", "to:")


class _Hit(NamedTuple):
    weight: float  # effective weight on the page
    phrase: str  # the normalised cue phrase, or a fill-in field's label
    title: bool  # found in the page's title
    # "cue": a cue phrase in the page's text; "label": a cue of a non-administrative type found only in
    # fill-in field labels (it names what to write, not what the page is); "form": a fill-in field.
    kind: Literal["cue", "label", "form"] = "cue"


@dataclass
class _PageScore:
    page: Page
    readable: bool
    scores: dict[str, float] = field(default_factory=dict)
    hits: dict[str, list[_Hit]] = field(default_factory=dict)  # per type, what was found on the page
    title_type: str | None = None  # the type a strong title on the page names
    page_type: str | None = None
    continued: bool = False  # kept the previous page's type although another type scored higher
    vendor_keys: set[str] = field(default_factory=set)
    form_fields: int = 0  # fill-in fields, when the page reads as a form
    numbering: tuple[PageMark, ...] = ()  # printed page numbers
    restart: bool = False  # its numbering restarts at page 1: a new document begins here


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
        _mark_restarts(scored, matcher)
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


def _blank(page: Page) -> bool:
    return page.ocr_status == OcrStatus.NO_TEXT and not page.text.strip()


def _body_and_titles(
    page: Page, matcher: CueMatcher, profile: Profile
) -> tuple[list[str], list[str], list[str], list[str]]:
    """The page's normalised body paragraphs (headers/footers left out), its title region (as V3 reads
    it: the first few short paragraphs), its headings (title-region headings and the first paragraph)
    and its body lines (each paragraph's lines, in reading order).
    """
    if page.paragraphs:
        kept = [p for p in page.paragraphs if p.block_type not in _HEADER_FOOTER]
        texts = normalise_many([p.text for p in kept])
        heading = [p.block_type == BlockType.HEADING for p in kept]
        lines = [ln for ln in normalise_many([ln for p in kept for ln in p.text.split("\n")]) if ln]
    else:
        # No layout: running header/footer text (page numbers, fax numbers) is cut out of each line.
        texts = [matcher.strip_header_footer(n).strip() for n in normalise_many(page.text.split("\n"))]
        heading = [False] * len(texts)
        lines = [t for t in texts if t]
    body = [(text, is_heading) for text, is_heading in zip(texts, heading, strict=True) if text]
    traps = profile.traps
    region = [(t, h) for t, h in body[: traps.title_region_paragraphs] if len(t) <= traps.title_max_chars]
    titles = [t for t, _ in region]
    headings = [t for i, (t, h) in enumerate(region) if h or (i == 0 and t == body[0][0])]
    return [t for t, _ in body], titles, headings, lines


def _score_page(page: Page, matcher: CueMatcher, profile: Profile) -> _PageScore:
    score = _PageScore(page=page, readable=_readable(page))
    if not score.readable:
        return score
    settings = matcher.settings
    admin = profile.taxonomy.administrative_type
    lines = page.text.split("\n")
    score.numbering = page_marks(zip(lines, normalise_many(lines), strict=True), _TRANSMISSION_WORDS)
    body, titles, headings, lines = _body_and_titles(page, matcher, profile)
    body_text = "\n".join(body)
    words = words_of(body_text)
    fields = form_fields(lines, settings.label_max_chars)
    field_text = "\n".join(ln for ln, f in zip(lines, fields, strict=True) if f is not None)
    other_text = "\n".join(ln for ln, f in zip(lines, fields, strict=True) if f is None)
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
        # A phrase printed only inside fill-in field labels is no title, and names what to write there.
        in_labels = (
            bool(field_text)
            and next(whole_word_spans(other_text, phrase), None) is None
            and next(whole_word_spans(field_text, phrase), None) is not None
        )
        title = not in_labels and (phrase in in_heading or phrase in admin_titles)
        for doc_type, weight in matcher.cues[phrase].items():
            label = in_labels and doc_type != admin
            effective = weight * (settings.title_weight if title else 1.0)
            effective *= settings.label_cue_factor if label else 1.0
            if effective <= 0:
                continue
            score.scores[doc_type] = score.scores.get(doc_type, 0.0) + effective
            score.hits.setdefault(doc_type, []).append(
                _Hit(effective, phrase, title, "label" if label else "cue")
            )
            if title and weight >= settings.strong_title_weight:
                strong.append((-weight, order[doc_type], doc_type))
    if strong:
        # A strong title (a fax cover sheet, "Surgical Pathology Report") names its page's type.
        score.title_type = min(strong)[2]
    _score_form(score, lines, fields, admin, matcher)
    return score


def _score_form(
    score: _PageScore, lines: list[str], fields: list[FormLine | None], admin: str, matcher: CueMatcher
) -> None:
    """A page made largely of fill-in fields is a form: its fields count for the administrative type."""
    settings = matcher.settings
    count = sum(1 for f in fields if f is not None)
    if count < settings.form_min_fields or count < settings.form_min_share * len(lines):
        return
    score.form_fields = count
    total = min(settings.form_max_score, settings.form_field_weight * count)
    if total <= 0:
        return
    score.scores[admin] = score.scores.get(admin, 0.0) + total
    # Each distinct field once, labels first: they are what evidence quotes ("Member ID #:").
    quoted: dict[str, None] = {}
    for f in fields:
        if f is not None and f.label is not None:
            quoted.setdefault(f.label)
    for line, f in zip(lines, fields, strict=True):
        if f is not None and f.label is None and len(line) <= settings.max_snippet_chars:
            quoted.setdefault(line)
    hits = score.hits.setdefault(admin, [])
    hits.extend(_Hit(settings.form_field_weight, phrase, False, "form") for phrase in quoted)


def _mark_restarts(scored: list[_PageScore], matcher: CueMatcher) -> None:
    """A page numbered as the first of a document ("Page 1 of 2") starts a new one, unless its numbering
    continues the page before's (a run that counts 1, 2, 3): two reports of one laboratory back to back."""
    if not matcher.settings.split_on_page_restart:
        return
    for before, s in pairwise(scored):
        first = any(n.number == 1 for n in s.numbering)
        s.restart = first and not any(b.continued_by(n) for b in before.numbering for n in s.numbering)


def _assign_types(scored: list[_PageScore], matcher: CueMatcher, types: list[str]) -> None:
    """Each page's own type: its strong title's, else the previous document's when that still scores
    well on the page (a continuation page), else its best-scoring type; None when nothing scores enough.
    """
    settings = matcher.settings
    previous: str | None = None
    for s in scored:
        if s.restart:
            previous = None  # a new document continues nothing
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
    """Maximal runs of pages of one type, split where the page numbering restarts. A page without a type
    takes its previous (else next) neighbour's within its own document, else the nearest document's."""
    types = [s.page_type for s in scored]
    runs: list[list[int]] = []
    for i, s in enumerate(scored):
        if not runs or s.restart:
            runs.append([])
        runs[-1].append(i)
    for run in [*runs, list(range(len(types)))]:
        for a, b in pairwise(run):
            types[b] = types[b] or types[a]
        for a, b in pairwise(run[::-1]):
            types[b] = types[b] or types[a]
    segments: list[_Segment] = []
    for s, page_type in zip(scored, types, strict=True):
        assert page_type is not None  # some page has a type, so filling reaches every page
        if segments and segments[-1].page_type == page_type and not s.restart:
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
    quoted = bool(present)
    if not present:
        # Cues were seen but none could be quoted verbatim: keep the page type, claim nothing else.
        present = {seg.page_type: 1.0}
    units = _apportion(present, types)
    dominant = _arg_max(units, types)
    confidence, doubts = _confidence(seg, units, totals if quoted else {}, dominant, settings, types)
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
                else _own_confidence(seg, doc_type, totals, settings, confidence)
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
        "classification_reasoning": _reasoning(seg, present, unquoted, types, confidence, doubts),
        "types": entries,
    }
    return output, units


def _label_score(seg: _Segment, doc_type: str) -> float:
    return sum(h.weight for s in seg.pages for h in s.hits.get(doc_type, []) if h.kind == "label")


def _scaled(quality: float, settings: Baseline) -> float:
    return round(
        settings.confidence_floor + (settings.confidence_ceiling - settings.confidence_floor) * quality, 4
    )


def _own_confidence(
    seg: _Segment, doc_type: str, totals: dict[str, float], settings: Baseline, ceiling: float
) -> float:
    """A non-dominant claimed type's confidence: its own evidence's score and label readings, at most
    the segment's."""
    score = totals.get(doc_type, 0.0)
    if score <= 0:
        return min(ceiling, settings.confidence_floor)
    quality = min(1.0, score / settings.full_evidence_score, 1.0 - _label_score(seg, doc_type) / score)
    return min(ceiling, _scaled(quality, settings))


def _confidence(
    seg: _Segment,
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
    counted = max(1, sum(1 for s in seg.pages if not _blank(s.page)))
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


def _reasoning(
    seg: _Segment,
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
        cues = sorted(hits, key=lambda p: (not hits[p], p in labels, p))[:5]
        listed = [
            f'"{p}"' + (" (title)" if hits[p] else " (field label)" if p in labels else "") for p in cues
        ]
        count = sum(s.form_fields for s in seg.pages)
        if fields:
            examples = ", ".join(f'"{f}"' for f in fields[:2])
            listed.append(f"{count} fill-in form fields ({examples})")
        if listed:
            found.append(f"{doc_type}: {', '.join(listed)}")
    parts = [f"{span}: cues found for {'; '.join(found)}." if found else f"{span}: no quotable cues found."]
    for s in seg.pages:
        if s.restart and s.page.page_num == seg.start:
            first = min((n for n in s.numbering if n.number == 1), key=lambda n: (n.total or 0, n.template))
            shown = f"Page 1 of {first.total}" if first.total else "Page 1"
            parts.append(
                f"Page {s.page.page_num} starts a new document: its page numbering restarts ({shown})."
            )
        if s.page_type is None:
            why = (
                "is blank (OCR found nothing to read)"
                if _blank(s.page)
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
