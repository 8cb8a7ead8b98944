"""Where a matched span meets a number: does it start or end inside one, does a match that ignores spaces and
hyphens drop a minus sign, and the span grown over the numbers its edges cut. Used by textmatch.PageIndex
so that "1.5" never matches inside "11.5", nor "2.1" inside "-2.1".
"""

from __future__ import annotations

from arbiter.verifiers.ocr_numbers import has_sign, numbers


def numeric_edges(query: str) -> tuple[bool, bool]:
    """Whether a (normalised, non-empty) query begins and ends with a number the page could continue: a
    digit, or a "." or "," against a digit ("5." may be the start of "5.5")."""
    lead = query[0].isdecimal() or (query[0] in ".," and query[1:2].isdecimal())
    tail = query[-1].isdecimal() or (query[-1] in ".," and query[-2:-1].isdecimal())
    return lead, tail


def cuts_number(text: str, first: int, stop: int, lead: bool, tail: bool, *, signed: bool = False) -> bool:
    """Does the span [first, stop) of a normalised text start or end inside a number? At the start (when
    the query begins with a number, `lead`): a digit before it, or a digit and "."/"," before a digit (it
    starts after a number's decimal separator), or before a digit a minus sign (ocr_numbers.has_sign: it
    drops the sign of "-2.1"), unless the query's first number is `signed` itself (a compact query lost
    it); at the end (`tail`): a digit after it, or "."/"," and a digit after a digit. A hyphen, a space or a
    letter ends a number ("12-15", "Ki-67")."""
    if lead and first > 0:
        before = text[first - 1]
        if before.isdecimal():
            return True
        if not signed and text[first : first + 1].isdecimal() and has_sign(text, first):
            return True
        if (
            before in ".,"
            and first >= 2
            and text[first - 2].isdecimal()
            and text[first : first + 1].isdecimal()
        ):
            return True
    if tail and stop < len(text):
        after = text[stop]
        if after.isdecimal():
            return True
        if after in ".," and text[stop - 1].isdecimal() and text[stop + 1 : stop + 2].isdecimal():
            return True
    return False


def signs_differ(query: str, text: str, first: int, stop: int) -> bool:
    """Does a match ignoring spaces and hyphens drop or add a minus sign: are the snippet's signed numbers
    not those of the page text [first, stop) (a sign just before it read as the first number's)?"""
    if "-" not in query and "-" not in text[max(first - 1, 0) : stop]:
        return False
    low = max(first - 2, 0)
    theirs = [n.key for n in numbers(text[low:stop]) if n.key[0] and n.end + low > first]
    return [n.key for n in numbers(query) if n.key[0]] != theirs


def whole_numbers(text: str, first: int, stop: int) -> tuple[int, int]:
    """[first, stop) grown over the digits (and "."/"," between digits) of numbers cut by its edges, and
    over the minus sign of the first one."""
    while first > 0 and (
        text[first - 1].isdecimal()
        or (
            text[first - 1] in ".,"
            and first >= 2
            and text[first - 2].isdecimal()
            and text[first : first + 1].isdecimal()
        )
    ):
        first -= 1
    if text[first : first + 1].isdecimal() and has_sign(text, first):
        first -= 1
    while stop < len(text) and (
        text[stop].isdecimal()
        or (text[stop] in ".," and text[stop - 1].isdecimal() and text[stop + 1 : stop + 2].isdecimal())
    ):
        stop += 1
    return first, stop
