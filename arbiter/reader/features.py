"""What the page reader sees of a page: named features, each a string a person can read.

Five families, each with its prefix:
- ``w:`` a word (letters, lowercased, inner hyphens and apostrophes kept), and ``c:`` its character
  3- and 4-grams with word edges (``<mac``, ``osco``): a word never seen in training still shares pieces
  with ones that were ("macroscopy" with "macroscopic");
- ``s:`` the shape of a token that holds a digit or a symbol: capitals as X, small letters as x, digits
  as 9, runs collapsed (``c.35G>T`` is ``x.9X>X``, ``*1/*4`` is ``*9/*9``, ``rs1065852`` is ``x9``,
  ``12.5`` is ``9.9``): HGVS, star alleles, rsIDs, values with units and codes without a list of them;
- ``b:`` two words in a row;
- ``h:`` the first words of a short line (a heading or a field's label: "h:final diagnosis", "h:member id");
- ``l:`` layout: how many lines, how much of the page is numbers, fill-in blanks and check boxes, how
  many lines end in ":".

Views: the content check reads every family (``FULL``); a second view without character pieces, shapes
and layout (``WORDS``) exists so that a primary built from it does not share the checker's view.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_TOKENS = re.compile(r"\S+")
_CORE = re.compile(r"[a-z][a-z'\-]*[a-z]|[a-z]")
_SHAPE_KEEP = re.compile(r"[^A-Za-z0-9]")
_LINE_WORDS = re.compile(r"[a-z][a-z'\-]*")
_BLANK = "___"
_BOXES = ("☐", "□", "☑", "☒", "[ ]", "[x]", "[X]", "( )")

FULL = frozenset("wcsbhl")
WORDS = frozenset("wbh")
VIEWS = {"full": FULL, "words": WORDS}


def _shape(token: str) -> str:
    out: list[str] = []
    for ch in token:
        if ch.isdigit():
            kind = "9"
        elif ch.isalpha():
            kind = "X" if ch.isupper() else "x"
        else:
            kind = ch
        if len(out) >= 1 and out[-1] == kind and kind in "9Xx":
            continue
        out.append(kind)
    return "".join(out)[:12]


_TOKEN_CACHE: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}
_CACHE_LIMIT = 200_000


def token_features(token: str, view: frozenset[str] = FULL) -> tuple[str, ...]:
    """A whitespace-separated token's features: its word, the word's pieces, its shape (cached)."""
    key = (token, view)
    found = _TOKEN_CACHE.get(key)
    if found is not None:
        return found
    feats: list[str] = []
    lower = token.lower()
    for core in _CORE.findall(lower):
        if len(core) < 2:
            continue
        if "w" in view:
            feats.append("w:" + core)
        if "c" in view and len(core) >= 4:
            edged = f"<{core}>"
            for n in (3, 4):
                feats.extend("c:" + edged[i : i + n] for i in range(len(edged) - n + 1))
    if "s" in view and (_SHAPE_KEEP.search(token) or any(ch.isdigit() for ch in token)):
        stripped = token.strip(".,;:()[]\"'")
        if stripped and any(not ch.isalpha() for ch in stripped):
            feats.append("s:" + _shape(stripped))
    result = tuple(feats)
    if len(_TOKEN_CACHE) >= _CACHE_LIMIT:
        _TOKEN_CACHE.clear()
    _TOKEN_CACHE[key] = result
    return result


def _bin(value: float, edges: tuple[float, ...]) -> int:
    for index, edge in enumerate(edges):
        if value < edge:
            return index
    return len(edges)


def page_features(text: str, view: frozenset[str] = FULL) -> Iterator[tuple[str, str]]:
    """Every feature occurrence on a page as (feature, what the page printed), in reading order."""
    tokens = _TOKENS.findall(text)
    previous: str | None = None
    numeric = 0
    for token in tokens:
        feats = token_features(token, view)
        for feat in feats:
            yield feat, token
        if any(ch.isdigit() for ch in token):
            numeric += 1
        if "b" in view:
            cores = [f[2:] for f in feats if f.startswith("w:")]
            for core in cores:
                if previous is not None:
                    yield f"b:{previous} {core}", f"{previous} {core}"
                previous = core
            if not cores:
                previous = None
    yield from line_features(text, view, numeric, len(tokens))


_BOX_LINE = re.compile(r"^.*(?:☐|□|☑|☒|\[ \]|\[[xX]\]|\( \)).*$", re.MULTILINE)
_BLANK_LINE = re.compile(r"^.*___.*$", re.MULTILINE)
_COLON_END = re.compile(r":[ \t]*$", re.MULTILINE)


def line_features(text: str, view: frozenset[str], numeric: int, tokens: int) -> Iterator[tuple[str, str]]:
    """The heading (h:) and layout (l:) features of a page, given how many of its tokens hold a digit."""
    heads, layout = "h" in view, "l" in view
    if not heads and not layout:
        return
    count = 0
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        count += 1
        if heads and len(line) <= 60:
            words = _LINE_WORDS.findall(line[:40].lower(), 0)[:2]
            if words:
                yield "h:" + " ".join(words), line[:40]
    if layout:
        yield f"l:lines{_bin(count, (5, 12, 25, 40))}", f"{count} lines"
        share = numeric / max(tokens, 1)
        yield f"l:numbers{_bin(share, (0.05, 0.12, 0.2, 0.3, 0.45))}", f"{share:.0%} of words are numbers"
        blanks = len(_BLANK_LINE.findall(text)) if _BLANK in text else 0
        if blanks:
            yield f"l:blanks{_bin(blanks, (2, 5))}", f"{blanks} lines with blanks ____"
        boxes = len(_BOX_LINE.findall(text)) if ("[" in text or "(" in text or not text.isascii()) else 0
        if boxes:
            yield f"l:boxes{_bin(boxes, (2, 5))}", f"{boxes} lines with check boxes"
        colons = len(_COLON_END.findall(text)) if ":" in text else 0
        if colons:
            yield f"l:colons{_bin(colons / max(count, 1), (0.1, 0.25, 0.5))}", f"{colons} lines ending in ':'"


def feature_counts(text: str, view: frozenset[str] = FULL) -> dict[str, int]:
    """How often each feature occurs on the page."""
    counts: dict[str, int] = {}
    for feat, _ in page_features(text, view):
        counts[feat] = counts.get(feat, 0) + 1
    return counts
