"""Numbers on OCR'd pages: an approximate match verifies a snippet only when its numbers are the page's,
digit for digit, so a misquoted or made-up value ("Hemoglobin 10.0" against "16.0") never passes for a
recognition error. Pure; textmatch applies it to every non-exact match on an OCR'd page.

A number is a maximal run of digits, or several runs joined by single "." or "," ("10.4", "1,000",
"12.03.2026"), with its minus sign when a "-" stands before it as one ("-2.1", not the "-" of "11.7-15.5"
or "Ki-67"). Two numbers are equal when their sign and digit runs are: the glyph joining the runs is not
compared ("10.0" equals "10,0": Tesseract confuses the two), but where the runs break is ("1,000" is not
"1000", "10.4" is not "10 4" nor "104"). Other separators (space, "/", ":", "-") stand between numbers,
so a date is three numbers. Digits of other scripts compare by value.

The snippet's numbers, in order, must equal the numbers of the page text it is aligned with (character
by character, Levenshtein), from the first to the last aligned character, a number cut by the window's
edge read whole. Page numbers the snippet leaves out count too ("Hemoglobin g/dL" is not "Hemoglobin
10.4 g/dL"). Only the PAGE is read with OCR's common confusions (O/0, l/1, I/1, S/5), never the snippet,
and only where the snippet has the partner character at that place: a letter counts as the snippet's
digit inside a number ("1O.4" reads "10.4": every character of that run of letters, digits, "." and ","
is a digit or such a letter, with at least one real digit), and a digit as the snippet's letter inside a
word ("instabi1ity": its run is mostly letters, one of them no such letter).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from rapidfuzz.distance import Levenshtein

__all__ = ["CONFUSABLE", "Number", "NumberCheck", "check_numbers", "has_sign", "numbers"]

# The letters Tesseract reads for a digit (and the other way round); the text is case-folded by then.
CONFUSABLE: dict[str, str] = {"o": "0", "l": "1", "i": "1", "s": "5"}
# The farthest a window is widened at each end to read a number (or word) cut by its edge.
WIDEN_LIMIT = 64

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_RUN_BREAK = re.compile(r"[.,]")
# A run of letters and digits, joined by single "." or "," ("1o.4", "instabi1ity", "l858r").
_GROUP = re.compile(r"[^\W_]+(?:[.,][^\W_]+)*")


@dataclass(frozen=True)
class Number:
    """A number in a text: as written, its span, and what is compared (sign, then the digit runs)."""

    text: str
    start: int
    end: int
    key: tuple[str, ...]


@dataclass(frozen=True)
class NumberCheck:
    """The snippet's numbers and those of the page text aligned with it (as OCR wrote them)."""

    snippet: tuple[Number, ...]
    page: tuple[Number, ...]

    @property
    def agree(self) -> bool:
        return [n.key for n in self.snippet] == [n.key for n in self.page]

    def differences(self) -> tuple[tuple[Number, ...], tuple[Number, ...]]:
        """The snippet's numbers and the page's that do not pair up (both empty when they agree)."""
        ours, theirs = [n.key for n in self.snippet], [n.key for n in self.page]
        mine: list[Number] = []
        page: list[Number] = []
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes():
            if tag != "equal":
                mine.extend(self.snippet[i1:i2])
                page.extend(self.page[j1:j2])
        return tuple(mine), tuple(page)


def _ascii(digits: str) -> str:
    if digits.isascii():
        return digits
    return "".join(str(unicodedata.decimal(c)) for c in digits)


def has_sign(text: str, start: int) -> bool:
    """Does the number whose digits begin at `start` of a (normalised) text carry a minus sign: a "-"
    right before it that is not a hyphen after a letter, a digit, "." or "," ("-2.1", "pH -2.1"; not the
    "-" of "11.7-15.5" or "Ki-67")?"""
    if not 0 < start <= len(text) or text[start - 1] != "-":
        return False
    before = text[start - 2] if start >= 2 else " "
    return not (before.isalnum() or before in ".,")


def numbers(text: str) -> list[Number]:
    """The numbers of a (normalised) text, in order."""
    found: list[Number] = []
    for match in _NUMBER.finditer(text):
        start = match.start()
        sign = ""
        if has_sign(text, start):
            sign, start = "-", start - 1
        runs = tuple(_ascii(run) for run in _RUN_BREAK.split(match.group()))
        found.append(Number(text[start : match.end()], start, match.end(), (sign, *runs)))
    return found


def _widen(text: str, first: int, stop: int) -> tuple[int, int]:
    """[first, stop) grown to whole words and numbers (with a sign before them) at both ends."""
    end = min(max(stop, 0), len(text))
    start = min(max(first, 0), end)
    floor, ceiling = max(0, start - WIDEN_LIMIT), min(len(text), end + WIDEN_LIMIT)
    while start > floor and (
        text[start - 1].isalnum()
        or (text[start - 1] in "-.," and start < len(text) and text[start].isalnum())
    ):
        start -= 1
    while end < ceiling and (
        text[end].isalnum()
        or (
            text[end] in "-.," and end + 1 < len(text) and text[end + 1].isalnum() and text[end - 1].isalnum()
        )
    ):
        end += 1
    return start, end


def _partners(query: str, window: str) -> list[int]:
    """For each window character, the index of the query character aligned with it (-1: none)."""
    partner = [-1] * len(window)
    for op in Levenshtein.opcodes(query, window):
        if op.tag in ("equal", "replace"):
            for k in range(min(op.src_end - op.src_start, op.dest_end - op.dest_start)):
                partner[op.dest_start + k] = op.src_start + k
    return partner


def _misread_ok(window: str) -> tuple[list[bool], list[bool]]:
    """Per window character: may a letter here be a misread digit (it is in a number), and may a digit
    here be a misread letter (it is in a word)?"""
    as_digit = [False] * len(window)
    as_letter = [False] * len(window)
    for group in _GROUP.finditer(window):
        chars = group.group()
        has_digit = any(c.isdecimal() for c in chars)
        numeric = has_digit and all(c.isdecimal() or c in CONFUSABLE or c in ".," for c in chars)
        letters = sum(c.isalpha() for c in chars)
        wordy = letters > len(chars) - letters and any(c.isalpha() and c not in CONFUSABLE for c in chars)
        if numeric or wordy:
            marks = as_digit if numeric else as_letter
            marks[group.start() : group.end()] = [True] * len(chars)
    return as_digit, as_letter


def check_numbers(query: str, text: str, first: int, stop: int) -> NumberCheck:
    """Compare the numbers of `query` with those of text[first:stop], the span a search aligned it with
    (both normalised)."""
    snippet = tuple(numbers(query))
    start, end = _widen(text, first, stop)
    window = text[start:end]
    if not snippet and not any(c.isdecimal() for c in window):
        return NumberCheck((), ())
    partner = _partners(query, window)
    aligned = [j for j, i in enumerate(partner) if i >= 0]
    if not aligned:
        return NumberCheck(snippet, ())
    low, high = aligned[0], aligned[-1] + 1
    as_digit, as_letter = _misread_ok(window)
    read = list(window)
    for j, i in enumerate(partner):
        if i < 0 or window[j] == query[i]:
            continue
        page, mine = window[j], query[i]
        # OCR wrote a letter for the snippet's digit inside a number, or a digit for its letter in a word.
        letter_read = (
            as_digit[j] and page in CONFUSABLE and mine.isdecimal() and _ascii(mine) == CONFUSABLE[page]
        )
        digit_read = as_letter[j] and page.isdecimal() and CONFUSABLE.get(mine) == _ascii(page)
        if letter_read or digit_read:
            read[j] = mine
    page_numbers = tuple(
        replace(n, text=window[n.start : n.end])
        for n in numbers("".join(read))
        if n.end > low and n.start < high
    )
    return NumberCheck(snippet, page_numbers)
