"""Profile phrases found in normalised text at word boundaries (V3's traps, and the content reading's look
for text addressed to an AI system)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from arbiter.verifiers.textnorm import normalize_plain


@lru_cache(maxsize=1024)
def phrase_pattern(phrase: str) -> tuple[str, re.Pattern[str]]:
    """A phrase as a regex over normalised text (whole words; spaces/hyphens between words optional),
    with its longest word: a cheap `in` test that rules most texts out before the regex runs."""
    words = [w for w in re.split(r"[\s\-]+", normalize_plain(phrase)) if w]
    if not words:
        return "", re.compile(r"(?!)")
    body = r"[\s\-]*".join(re.escape(w) for w in words)
    # No leading look-behind: a pattern that starts with a literal lets the regex engine skip ahead to
    # candidate positions; the word boundary before the match is checked by find_phrase instead.
    return max(words, key=len), re.compile(body + r"(?!\w)")


@lru_cache(maxsize=1024)
def _phrase_test(phrase: str) -> tuple[tuple[str, ...], re.Pattern[str]]:
    """The phrase's distinct words, longest first, and its regex. Every word of a match is in the text,
    so a word that is not there rules the phrase out with one fast substring scan (and no regex)."""
    _, pattern = phrase_pattern(phrase)
    words = [w for w in re.split(r"[\s\-]+", normalize_plain(phrase)) if w]
    return tuple(sorted(dict.fromkeys(words), key=len, reverse=True)), pattern


@lru_cache(maxsize=64)
def _phrase_tests(phrases: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...]:
    """_phrase_test of each phrase of a profile list, looked up once per list instead of once per phrase."""
    return tuple((phrase, *_phrase_test(phrase)) for phrase in phrases)


def find_phrase(text: str, phrase: str) -> re.Match[str] | None:
    """Where a profile phrase occurs in normalised text, at word boundaries."""
    words, pattern = _phrase_test(phrase)
    for word in words:
        if word not in text:
            return None
    return _at_word_start(text, pattern)


def _at_word_start(text: str, pattern: re.Pattern[str]) -> re.Match[str] | None:
    for match in pattern.finditer(text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return match
    return None


def first_phrase(text: str, phrases: Iterable[str]) -> tuple[str, re.Match[str]] | None:
    """The first profile phrase (in profile order) found in normalised text, with its match.

    Phrases share words ("... instructions", "... report ..."): each word is looked for once per text,
    since scanning a page for a word costs more than the rest of the test.
    """
    present: dict[str, bool] = {}
    for phrase, words, pattern in _phrase_tests(tuple(phrases)):
        for word in words:
            there = present.get(word)
            if there is None:
                there = present[word] = word in text
            if not there:
                break
        else:
            found = _at_word_start(text, pattern)
            if found:
                return phrase, found
    return None
