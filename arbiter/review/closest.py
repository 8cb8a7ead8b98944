"""For a quote that is not on its page: the closest text the page does hold, word by word, with the
words that differ marked, so a reviewer sees at once whether it is a near miss or an invention.

rapidfuzz aligns the quote with the page (after the same normalisation V4 uses) and then compares the two
word sequences. Everything here is plain data; the page shows it as escaped text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from arbiter.contracts import DocumentBundle
from arbiter.verifiers.span_boxes import word_span
from arbiter.verifiers.textmatch import PageIndex, normalize_plain

# Below this similarity (0-100) nothing on the page is said to resemble the quote.
MIN_SCORE = 50.0
_WORD = re.compile(r"\S+")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]{}"


@dataclass(frozen=True)
class Word:
    text: str
    differs: bool  # not in the other text at this place


@dataclass(frozen=True)
class Closest:
    """The page text most like a quote: where it is, how alike (0-100), and both sides word by word."""

    page: int
    start: int
    end: int
    score: float
    found: tuple[Word, ...]  # the page's words; `differs` where the quote says something else
    quoted: tuple[Word, ...]  # the quote's words; `differs` where the page says something else


def _key(word: str) -> str:
    return normalize_plain(word).strip(_EDGE_PUNCTUATION)


def word_diff(quoted: str, found: str) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """Both texts as words, each marked when the other text does not have it at that place."""
    ours, theirs = _WORD.findall(quoted), _WORD.findall(found)
    ours_differ, theirs_differ = [True] * len(ours), [True] * len(theirs)
    for op in Levenshtein.opcodes([_key(w) for w in ours], [_key(w) for w in theirs]):
        if op.tag == "equal":
            ours_differ[op.src_start : op.src_end] = [False] * (op.src_end - op.src_start)
            theirs_differ[op.dest_start : op.dest_end] = [False] * (op.dest_end - op.dest_start)
    return (
        tuple(Word(w, d) for w, d in zip(ours, ours_differ, strict=True)),
        tuple(Word(w, d) for w, d in zip(theirs, theirs_differ, strict=True)),
    )


def closest_text(
    quote: str, bundle: DocumentBundle, pages: Iterable[int], fuzzy_threshold: float = 92.0
) -> Closest | None:
    """The text of `pages` most like the quote (whole words), or None when nothing reaches MIN_SCORE."""
    query = normalize_plain(quote)
    if not query:
        return None
    index = PageIndex.shared(bundle, fuzzy_threshold)
    best: tuple[float, int, int, int] | None = None
    for page in pages:
        text = index.text_of(page).text
        if not text.strip():
            continue
        aligned = fuzz.partial_ratio_alignment(query, text, score_cutoff=MIN_SCORE)
        if aligned is None or aligned.dest_end <= aligned.dest_start:
            continue
        if best is None or aligned.score > best[0]:
            best = (aligned.score, page, aligned.dest_start, aligned.dest_end)
    if best is None:
        return None
    score, page, first, stop = best
    match = index.span(page, first, stop)
    source = bundle.page(page)
    if match is None or source is None:
        return None
    text = source.text
    start, end = word_span(text, match.start, match.end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    quoted, found = word_diff(quote, text[start:end])
    return Closest(page, start, end, round(score, 1), found, quoted)
