"""The baseline classifier's reading of pages: each page scored per document type from the profile's cues
(a page of fill-in fields reads as a form), printed numbering that restarts, and runs of pages of one type
cut into segments."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal, NamedTuple

from arbiter.classify.cues import (
    CueMatcher,
    FormLine,
    form_fields,
    normalise_many,
    whole_word_spans,
    words_of,
)
from arbiter.contracts import BlockType, OcrStatus, Page
from arbiter.contracts.profile import Profile
from arbiter.ingest.pagination import PageMark, page_fill, page_marks

_HEADER_FOOTER = {BlockType.HEADER, BlockType.FOOTER}


# A fax machine's page counter names the transmission; it numbers the packet, not one document in it.
_TRANSMISSION_WORDS = ("fax", "facsimile", "transmission", "sent", "from:", "to:")


class Hit(NamedTuple):
    weight: float  # effective weight on the page
    phrase: str  # the normalised cue phrase, or a fill-in field's label
    title: bool  # found in the page's title
    # "cue": a cue phrase in the page's text; "label": a cue of a non-administrative type found only in
    # fill-in field labels (it names what to write, not what the page is); "form": a fill-in field;
    # "read": a line the learned reader ([baseline.reader]) reads as the type (baseline_reader.py).
    kind: Literal["cue", "label", "form", "read"] = "cue"


@dataclass
class PageScore:
    page: Page
    readable: bool
    scores: dict[str, float] = field(default_factory=dict)
    hits: dict[str, list[Hit]] = field(default_factory=dict)  # per type, what was found on the page
    title_type: str | None = None  # the type a strong title on the page names
    page_type: str | None = None
    continued: bool = False  # kept the previous page's type although another type scored higher
    vendor_keys: set[str] = field(default_factory=set)
    form_fields: int = 0  # fill-in fields, when the page reads as a form
    numbering: tuple[PageMark, ...] = ()  # printed page numbers
    restart: bool = (
        False  # a new document begins here: its numbering restarts at page 1, or its layout says so
    )
    restart_why: str = ""  # why, in words (a page number, or where the page before stopped and the title)
    # A restart on layout alone whose opening line repeats the page before's (a running header or
    # letterhead, or the same form again): kept, but a doubt on the segment it starts (baseline_doubts.py).
    weak_restart: bool = False
    titled: bool = False  # a strong title names the page's type (kept under a learned reader)
    cue_type: str | None = None  # the type the cue phrases alone give the page (with a learned reader)


@dataclass
class Segment:
    start: int
    end: int
    pages: list[PageScore]
    page_type: str


def is_readable(page: Page) -> bool:
    return (page.has_text_layer or page.ocr_applied) and bool(page.text.strip())


def is_blank(page: Page) -> bool:
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


def score_page(page: Page, matcher: CueMatcher, profile: Profile) -> PageScore:
    score = PageScore(page=page, readable=is_readable(page))
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
                Hit(effective, phrase, title, "label" if label else "cue")
            )
            if title and weight >= settings.strong_title_weight:
                strong.append((-weight, order[doc_type], doc_type))
    score.titled = bool(strong)
    if strong:
        # A strong title (a fax cover sheet, "Surgical Pathology Report") names its page's type.
        score.title_type = min(strong)[2]
    _score_form(score, lines, fields, admin, matcher)
    return score


def _score_form(
    score: PageScore, lines: list[str], fields: list[FormLine | None], admin: str, matcher: CueMatcher
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
    hits.extend(Hit(settings.form_field_weight, phrase, False, "form") for phrase in quoted)


def mark_restarts(scored: list[PageScore], matcher: CueMatcher) -> None:
    """A page numbered as the first of a document ("Page 1 of 2") starts a new one, unless its numbering
    continues the page before's (a run that counts 1, 2, 3): two reports of one laboratory back to back.
    So does a page after one numbered as its document's last ("Page 2 of 2", "1 of 1"), unless its own
    numbering continues that run. With `layout_start_fill`, so does a page that opens on a title-like line
    after a page whose text stopped early (a document's last page rarely runs to the foot of the page; a page
    that does continues), unless its top lines say it continues ("(continued)", "(page 2)"); when that
    opening line repeats the page before's (a running header), the restart is weak (`weak_restart`)."""
    settings = matcher.settings
    for before, s in pairwise(scored):
        continues = any(b.continued_by(n) for b in before.numbering for n in s.numbering)
        if continues:
            continue
        ones = [n for n in s.numbering if n.number == 1]
        last = [b for b in before.numbering if b.total is not None and b.number == b.total]
        if settings.split_on_page_restart and ones:
            first = min(ones, key=lambda n: (n.total or 0, n.template))
            shown = f"Page 1 of {first.total}" if first.total else "Page 1"
            s.restart, s.restart_why = True, f"its page numbering restarts ({shown})"
        elif settings.split_on_page_restart and last and s.readable and s.page.text.strip():
            s.restart = True
            s.restart_why = (
                f'the page before is numbered as its document\'s last ("{last[0].seen}") '
                "and no numbering on this page continues it"
            )
        elif settings.layout_start_fill is not None and before.readable and s.readable:
            fill = page_fill(before.page)
            title = opening_title(s.page)
            if (
                fill is not None
                and fill <= settings.layout_start_fill
                and title is not None
                and not says_continued(s.page)
            ):
                s.restart = True
                s.restart_why = (
                    f'the page before stops {fill:.0%} of the way down and this page opens on "{title[:40]}"'
                )
                s.weak_restart = same_line(opening_line(before.page), title)


_NUMBER_ONLY = re.compile(r"^\W*(?:page\W*)?\d+(?:\s*(?:of|/)\s*\d+)?\W*$", re.IGNORECASE)


_CONTINUED = re.compile(r"continu|\(\s*page\s+[2-9]\d*\s*\)", re.IGNORECASE)
TOP_LINES = 3  # a running header's lines: where "(continued)" or "(page 2)" says a page continues


def top_lines(page: Page, count: int = TOP_LINES) -> list[str]:
    """The page's first `count` non-empty lines, bare page numbers left out."""
    out: list[str] = []
    for line in page.text.splitlines():
        text = " ".join(line.split())
        if text and not _NUMBER_ONLY.match(text):
            out.append(text)
            if len(out) >= count:
                break
    return out


def opening_line(page: Page) -> str | None:
    lines = top_lines(page, 1)
    return lines[0] if lines else None


def same_line(a: str | None, b: str | None) -> bool:
    """Two opening lines that read the same (case, spacing and digits aside): a running header."""
    if a is None or b is None:
        return False
    return re.sub(r"\d+", "#", a.lower()) == re.sub(r"\d+", "#", b.lower())


def says_continued(page: Page) -> bool:
    """The page's top lines say it continues a document ("(continued)", "(page 2)")."""
    return any(_CONTINUED.search(line) for line in top_lines(page))


def opening_title(page: Page) -> str | None:
    """The page's first line (a bare page number aside) when it reads as a title: short, capitalised, not a
    continuation or the rest of a sentence; else None."""
    for line in page.text.splitlines():
        text = line.strip()
        if not text or _NUMBER_ONLY.match(text):
            continue
        letters = [ch for ch in text if ch.isalpha()]
        low = text.lower()
        titled = (
            len(text) <= 60
            and bool(letters)
            and letters[0].isupper()
            and not text.endswith((",", ";", "-"))
            and "continu" not in low
            and "addendum" not in low
        )
        return text if titled else None
    return None


def assign_types(scored: list[PageScore], matcher: CueMatcher, types: list[str]) -> None:
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
            best = arg_max(s.scores, types)
            total = sum(s.scores.values())
            if (
                previous is not None
                and s.scores.get(previous, 0.0) >= settings.continuation_min_share * total
            ):
                s.page_type, s.continued = previous, previous != best
            elif s.scores[best] >= settings.min_page_score:
                s.page_type = best
        previous = s.page_type or previous


def split_segments(scored: list[PageScore]) -> list[Segment]:
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
    segments: list[Segment] = []
    for s, page_type in zip(scored, types, strict=True):
        assert page_type is not None  # some page has a type, so filling reaches every page
        if segments and segments[-1].page_type == page_type and not s.restart:
            segments[-1].pages.append(s)
            segments[-1].end = s.page.page_num
        else:
            segments.append(Segment(s.page.page_num, s.page.page_num, [s], page_type))
    return segments


def arg_max(values: dict[str, float] | dict[str, int], types: list[str]) -> str:
    """The type with the highest value; the earlier in taxonomy order wins a tie."""
    return max(types, key=lambda t: (values.get(t, 0), -types.index(t)))
