"""The baseline classifier's learned reading of pages (`[baseline.reader]`): a page reader of its own, fitted
on the words view (words, pairs of words, the first words of short lines), gives each page a probability per
type, and the lines that pull it most toward a type are what the answer quotes as that type's evidence.

It replaces the cue phrases' scores and hits of each readable page; everything after (continuation pages,
numbering restarts, segments, confidence and the answer's JSON) is the baseline's own. The content check
reads the same page with a different file and view (verifiers/v2_reader.py), yet two linear readers of one
corpus still share many mistakes on a source neither has seen (`bench/semantic.py --loso` counts them: 41 of
the 72 pages this reader typed wrong held out). So the cue phrases, a reader of another kind, must back a
segment's type before it is answered with confidence (`cue_disagreement`).
"""

from __future__ import annotations

from typing import Literal

from arbiter.classify.baseline_pages import Hit, PageScore, Segment, arg_max
from arbiter.classify.cues import CueMatcher, PageLines, normalise
from arbiter.contracts.profile import BaselineReader, Profile
from arbiter.reader.model import PageReader, reader_for

# Lines quoted per type and page, at most (the segment keeps `evidence_per_type` of them).
_LINES_PER_PAGE = 3
_RANK_SHARES = (0.5, 0.3, 0.2)


def baseline_reader(settings: BaselineReader) -> PageReader:
    """The reader `[baseline.reader]` pins (refused unless its file is exactly that one)."""
    return reader_for(settings.model, settings.sha256)


def read_pages(scored: list[PageScore], profile: Profile, matcher: CueMatcher) -> None:
    """Each readable page's scores (probability x full_evidence_score, for the types it gives at least
    min_share) and hits (its best lines per type) from the learned reader, in place."""
    baseline = profile.baseline
    assert baseline is not None
    assert baseline.reader is not None
    settings = baseline.reader
    reader = baseline_reader(settings)
    scale = baseline.full_evidence_score
    admin = profile.taxonomy.administrative_type
    for s in scored:
        # A page of fill-in fields (score_page found them) keeps its form score and quotes for the
        # administrative type; the cue phrases' other scores and hits give way to the reader's.
        form_score = s.scores.get(admin, 0.0) if s.form_fields else 0.0
        form_hits = [h for h in s.hits.get(admin, []) if h.kind == "form"] if s.form_fields else []
        # What the cue phrases alone make of the page: a second reading the answer's confidence checks.
        if s.title_type is not None:
            s.cue_type = s.title_type
        elif s.scores and max(s.scores.values()) >= baseline.min_page_score:
            s.cue_type = arg_max(s.scores, profile.taxonomy.document_types)
        s.title_type = None
        s.scores, s.hits = {}, {}
        if not s.readable:
            continue
        reading = reader.read(s.page.text)
        if reading.words < settings.min_words:
            continue  # too little to read: the page takes its neighbour's type
        claimed = {t: p for t, p in reading.probs.items() if p >= settings.min_share}
        lines = _quotable(s, matcher, settings.min_line_chars, baseline.max_snippet_chars)
        for doc_type, prob in claimed.items():
            ranked = sorted(zip(reader.line_scores(lines, doc_type), lines, strict=True), key=lambda x: -x[0])
            best = [line for score, line in ranked[:_LINES_PER_PAGE] if score > 0]
            s.scores[doc_type] = prob * scale
            # On a form, another type's wording is what to write in its fields, not what the page is:
            # its evidence counts as field labels, which hold the confidence at the floor.
            kind: Literal["read", "label"] = "label" if form_score and doc_type != admin else "read"
            # The best line weighs most (evidence quotes the heaviest first); together they weigh the score.
            shares = _RANK_SHARES[: len(best)]
            s.hits[doc_type] = [
                Hit(prob * scale * share / sum(shares), line, False, kind)
                for share, line in zip(shares, best, strict=True)
            ]
        if form_score:
            s.scores[admin] = s.scores.get(admin, 0.0) + form_score
            s.hits.setdefault(admin, []).extend(form_hits)


def _quotable(s: PageScore, matcher: CueMatcher, low: int, high: int) -> list[str]:
    """The page's lines a snippet may quote whole: normalised, of a length a reviewer can read, not running
    header or footer text, with letters in them."""
    page_lines = PageLines(s.page)
    out: list[str] = []
    seen: set[str] = set()
    for index in range(len(page_lines.spans)):
        line = page_lines.normalised(index)
        if not low <= len(line) <= high or line in seen or sum(ch.isalpha() for ch in line) < low // 2:
            continue
        if matcher.is_header_footer(line) or any(line in h for h in page_lines.header_footer):
            continue
        if any(bad in line for bad in matcher.injection):
            continue
        seen.add(line)
        out.append(normalise(line))
    return out


def cue_disagreement(seg: Segment, dominant: str) -> str | None:
    """Why the cue phrases do not back the learned reader's type for a segment (None when they do): none of
    its pages reads as that type to them, or most of the pages they can type read as another. The two
    readings fail on different pages, so a segment they do not agree on is one to doubt, not to answer
    with confidence."""
    typed = [s.cue_type for s in seg.pages if s.cue_type is not None]
    agree = sum(t == dominant for t in typed)
    if agree and 2 * agree >= len(typed):
        return None
    if not typed:
        return f"the cue phrases recognise none of its pages, so nothing backs {dominant}"
    other = max(set(typed), key=typed.count)
    return (
        f"the cue phrases read {sum(t == other for t in typed)} of its {len(seg.pages)} pages as {other}, "
        f"not {dominant}"
    )
