"""Whether a page's text layer can be used as it is, or the page must be read by OCR.

Scans and faxes often carry no text layer, or a junk one: a stray character or two, a page number or
fax header stamped over the image, glyph codes with no Unicode meaning, a scanner's failed OCR. The
rules below run in order; the first that fires gives the reason the page is OCR'd. A real page with
little text (a signature page, "Page 2 of 2") passes: it is not drawn over a full-page image.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

import pypdfium2.raw as pdfium_c

# Fewer non-space characters than this is no text layer at all (the same bound as textpage.has_text_layer).
MIN_TEXT_CHARS = 3
# Below this share of letters and digits among the non-space characters the layer is glyph garbage
# (unmapped font codes, box-drawing, dots). Real pages measured 0.80–0.97, tables of numbers included.
MIN_ALNUM_SHARE = 0.5
# With at least this many tokens, fewer than MIN_WORDLIKE_SHARE of them looking like words or numbers
# is a junk layer (a scanner's failed OCR: "lI1 ,:; rnm"). Real pages measured 0.72–1.0.
MIN_TOKENS_FOR_SHARE = 8
MIN_WORDLIKE_SHARE = 0.4
# A page whose images cover at least this share of its area and whose text layer has fewer word-like
# tokens than MIN_WORDS_OVER_SCAN is a scan with a stamped line (fax header, page number, Bates number).
SCAN_IMAGE_SHARE = 0.6
MIN_WORDS_OVER_SCAN = 25
# The tests look at the page's first SAMPLE_CHARS characters and, for the word-like share, at most
# SAMPLE_TOKENS tokens: enough to judge a page, and cheap on a long one (ingestion reads ~1,000 pages/s).
SAMPLE_CHARS = 2000
SAMPLE_TOKENS = 80
# Page objects looked at for the image share: a vector drawing can hold hundreds of thousands.
MAX_OBJECTS = 5000

_TOKEN = re.compile(r"[^\W_]+")
_VOWELS = frozenset("aeiouy")
_CONFUSABLE = frozenset("lIi1|oO0")
_LATIN_END = 0x24F  # letters beyond Latin Extended-B are not vowel-checked (Greek, Cyrillic, CJK ...)


class OcrReason(StrEnum):
    """Why a page's text layer is not usable."""

    EMPTY = "empty"  # no text layer, or fewer than MIN_TEXT_CHARS characters
    GLYPH_GARBAGE = "glyph_garbage"  # mostly characters that are neither letters nor digits
    NON_WORDS = "non_words"  # mostly tokens that are neither words nor numbers
    SPARSE_OVER_IMAGE = "sparse_over_image"  # a few words over an image covering the page


@dataclass(frozen=True, slots=True)
class LayerStats:
    """Counts over a page's text layer."""

    chars: int  # non-space characters
    alnum: int  # letters and digits
    tokens: int  # runs of letters and digits (up to SAMPLE_TOKENS)
    wordlike: int  # tokens that look like a word or a number


@lru_cache(maxsize=4096)  # a text layer repeats its words: about a third of the check's time before
def _wordlike(token: str) -> bool:
    """A word (two letters or more, a vowel in Latin script), a number, or a code mixing letters and digits
    ("C34", "x10E3", "22C3"), unless only of the shapes failed OCR confuses ("lI1", "0O1l")."""
    if token.isdigit():
        return True
    if len(token) < 2:
        return False
    if not token.isalpha():
        return not _CONFUSABLE.issuperset(token) and any(ch.isdigit() for ch in token)
    folded = token.casefold()
    if not folded.isascii():
        if any(ord(ch) > _LATIN_END for ch in folded):
            return True
        folded = unicodedata.normalize("NFKD", folded)
    return not _VOWELS.isdisjoint(folded)


def layer_stats(text: str) -> LayerStats:
    """Character and token counts of a text layer (of its first SAMPLE_CHARS characters)."""
    text = text[:SAMPLE_CHARS]
    tokens = _TOKEN.findall(text)
    alnum = sum(map(len, tokens))
    chars = len("".join(text.split()))
    sample = tokens[:SAMPLE_TOKENS]
    return LayerStats(chars, alnum, len(sample), sum(map(_wordlike, sample)))


def ocr_reason(text: str, image_share: Callable[[], float]) -> OcrReason | None:
    """Why the page's text layer is not usable, or None when it is; `image_share` is asked only if needed."""
    stats = layer_stats(text)
    if stats.chars < MIN_TEXT_CHARS:
        return OcrReason.EMPTY
    if stats.alnum < MIN_ALNUM_SHARE * stats.chars:
        return OcrReason.GLYPH_GARBAGE
    if stats.tokens >= MIN_TOKENS_FOR_SHARE and stats.wordlike < MIN_WORDLIKE_SHARE * stats.tokens:
        return OcrReason.NON_WORDS
    if stats.wordlike < MIN_WORDS_OVER_SCAN and image_share() >= SCAN_IMAGE_SHARE:
        return OcrReason.SPARSE_OVER_IMAGE
    return None


def readable(text: str) -> bool:
    """Whether text read by OCR is worth keeping: it passes the same tests as a text layer, the image
    one aside, and holds at least one word (a speckled blank page gives a few marks, no words)."""
    stats = layer_stats(text)
    return (
        stats.chars >= MIN_TEXT_CHARS
        and stats.alnum >= MIN_ALNUM_SHARE * stats.chars
        and stats.wordlike >= 1
        and not (stats.tokens >= MIN_TOKENS_FOR_SHARE and stats.wordlike < MIN_WORDLIKE_SHARE * stats.tokens)
    )


def image_share(page: Any, width: float, height: float) -> float:
    """Share of the page's area covered by images (areas summed, capped at 1); the caller holds PDFIUM_LOCK.

    An image inside a form XObject counts with the form's bounds, which contain it.
    """
    area = width * height
    if area <= 0:
        return 0.0
    left, bottom, right, top = (pdfium_c.FS_FLOAT() for _ in range(4))
    covered = 0.0
    count = min(int(pdfium_c.FPDFPage_CountObjects(page)), MAX_OBJECTS)
    for i in range(count):
        obj = pdfium_c.FPDFPage_GetObject(page, i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM and not _form_has_image(obj, 0):
            continue
        if kind not in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM):
            continue
        if pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            covered += max(right.value - left.value, 0.0) * max(top.value - bottom.value, 0.0)
            if covered >= area:
                return 1.0
    return covered / area


def _form_has_image(form: Any, depth: int) -> bool:
    if depth > 4:
        return False
    count = min(int(pdfium_c.FPDFFormObj_CountObjects(form)), MAX_OBJECTS)
    for i in range(count):
        obj = pdfium_c.FPDFFormObj_GetObject(form, i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE or (
            kind == pdfium_c.FPDF_PAGEOBJ_FORM and _form_has_image(obj, depth + 1)
        ):
            return True
    return False
