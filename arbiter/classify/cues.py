"""Cue matching for the baseline classifier: text normalisation, the profile's cue phrases compiled into
one regular expression, and verbatim snippets quoted from a page's lines.
"""

from __future__ import annotations

import bisect
import re
import string
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from arbiter.contracts import BlockType, Page
from arbiter.contracts.profile import Baseline, Profile
from arbiter.errors import ConfigError

# Characters that print as a dash or a quote; each family becomes one ASCII character.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe31\ufe32\ufe58\ufe63\uff0d"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u00b4\u02bc"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb"
_CHARS = {
    **dict.fromkeys(_DASHES, "-"),
    **dict.fromkeys(_SINGLE_QUOTES, "'"),
    **dict.fromkeys(_DOUBLE_QUOTES, '"'),
}
# Every character str.isspace() accepts. Translating them to " " and collapsing runs of plain spaces
# is several times faster than a regular expression over the Unicode whitespace class.
_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_TABLE = str.maketrans({**_CHARS, **dict.fromkeys(_WHITESPACE, " ")})
_TABLE_KEEP_LINES = str.maketrans({**_CHARS, **dict.fromkeys(_WHITESPACE.replace("\n", ""), " ")})
_RUNS = re.compile("  +")
# Punctuation and list symbols split words ("_" is a word character, as in regular expressions).
_PUNCTUATION = str.maketrans(
    dict.fromkeys(string.punctuation.replace("_", "") + "•◦▪▫‣∙·●○■□➢➤✓✔°±×÷§©®™…¶†‡", " ")
)
_LINE = re.compile(r"[^\n]+")
_HEADER_FOOTER = {BlockType.HEADER, BlockType.FOOTER}
# Fill-in form structure, on normalised (lowercase) lines: a blank to write on ("____"), a check box
# ("☐", "[ ]", "[x]"), and a question answered by ticking "Yes" or "No".
_BLANKS = re.compile(r"_{3,}|[☐☑☒□▢◻❏❐❑❒]|\[ ?[x✓✔]? ?\]")
_YES_NO = re.compile(r"(?:^|[\s?:.*])yes\W{0,3}no\W*$")


def normalise(text: str) -> str:
    """Lowercase, NFKC (ligatures, full-width forms), one dash and quote each, single spaces."""
    return _RUNS.sub(" ", unicodedata.normalize("NFKC", text).lower().translate(_TABLE)).strip()


def normalise_many(texts: list[str]) -> list[str]:
    """`normalise` of each text, in one pass over the joined texts (a page's paragraphs or lines)."""
    joined = "\n".join(texts)
    if joined.count("\n") != len(texts) - 1:
        joined = "\n".join(t.replace("\n", " ") for t in texts)
    normalised = unicodedata.normalize("NFKC", joined).lower().translate(_TABLE_KEEP_LINES)
    parts = _RUNS.sub(" ", normalised).split("\n")
    if len(parts) != len(texts):  # normalisation made or ate a line break: go one by one
        return [normalise(t) for t in texts]
    return [part.strip() for part in parts]


def normalise_mapped(text: str) -> tuple[str, Sequence[int]]:
    """`normalise` character by character, with origin[i] = index in `text` of normalised character i."""
    if text.isascii() and " ".join(text.split()) == text:  # plain single-spaced ASCII: offsets unchanged
        return text.lower(), range(len(text))
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = ch.lower() if ch.isascii() else unicodedata.normalize("NFKC", ch).lower().translate(_TABLE)
        for c in piece:
            if c.isspace():
                if not out or out[-1] == " ":
                    continue
                c = " "
            out.append(c)
            origin.append(i)
    while out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), origin


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def whole_word_spans(text: str, phrase: str) -> Iterator[tuple[int, int]]:
    """Where `phrase` occurs in `text` as whole words (str.find, much faster than a regex here)."""
    start = text.find(phrase)
    while start != -1:
        end = start + len(phrase)
        if (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end])):
            yield start, end
        start = text.find(phrase, start + 1)


def words_of(normalised: str) -> set[str]:
    """The distinct words of a normalised text (ASCII punctuation separates words)."""
    return set(normalised.translate(_PUNCTUATION).split())


class _PhraseIndex:
    """Phrases keyed by their first word: a page's word set picks the few worth searching for."""

    def __init__(self, phrases: Iterable[str]) -> None:
        phrases = sorted(phrases)
        self.by_first: dict[str, list[str]] = {}
        for phrase in phrases:
            words = phrase.translate(_PUNCTUATION).split()
            if words:
                self.by_first.setdefault(words[0], []).append(phrase)
        # A phrase inside a longer one ("fax cover" in "fax cover sheet") is not counted twice.
        self.inside: dict[str, set[str]] = {}
        for short in phrases:
            for long in phrases:
                if long != short and short in long and next(whole_word_spans(long, short), None):
                    self.inside.setdefault(short, set()).add(long)

    def find(self, normalised: str, words: set[str] | None = None) -> list[str]:
        """The phrases in `normalised`; `words` may be the word set of a larger text that contains it."""
        own_words = words is None
        if words is None:
            words = words_of(normalised)
        found = []
        for word in sorted(words.intersection(self.by_first)):
            for phrase in self.by_first[word]:
                # A one-word phrase is found by the word set alone when that set is this text's own.
                if (own_words and phrase == word) or next(
                    whole_word_spans(normalised, phrase), None
                ) is not None:
                    found.append(phrase)
        if not self.inside:
            return found
        return [
            phrase
            for phrase in found
            if phrase not in self.inside or not self.inside[phrase].intersection(found)
        ]


@dataclass(frozen=True)
class Snippet:
    page: int
    text: str
    anchor: str


@dataclass
class CueMatcher:
    """The profile's baseline settings compiled once: cue weights, vendor names, header/footer patterns."""

    settings: Baseline
    cues: dict[str, dict[str, float]]  # normalised phrase -> document type -> weight
    vendors: dict[str, str]  # normalised vendor name -> its spelling in the profile
    header_footer: list[re.Pattern[str]]
    injection: list[str]
    levels: list[tuple[float, str]]  # (least share, presence level), highest first
    admin_titles: frozenset[str]  # normalised [traps].administrative_titles
    _cue_index: _PhraseIndex = field(init=False)
    _vendor_index: _PhraseIndex = field(init=False)

    def __post_init__(self) -> None:
        self._cue_index = _PhraseIndex(self.cues)
        self._vendor_index = _PhraseIndex(self.vendors)

    def phrases_in(self, normalised: str, words: set[str] | None = None) -> list[str]:
        """The cue phrases that occur in this normalised text as whole words, sorted."""
        return self._cue_index.find(normalised, words)

    def vendor_keys_in(self, normalised: str, words: set[str] | None = None) -> list[str]:
        return self._vendor_index.find(normalised, words)

    def vendor_names(self, keys: set[str]) -> list[str]:
        """The profile's spelling of these vendors, in profile order."""
        return [name for key, name in self.vendors.items() if key in keys]

    def is_header_footer(self, normalised: str) -> bool:
        return any(r.search(normalised) for r in self.header_footer)

    def strip_header_footer(self, normalised: str) -> str:
        for r in self.header_footer:
            normalised = r.sub(" ", normalised)
        return normalised

    def presence_level(self, share: float, dominant: bool) -> str:
        if dominant:
            return self.levels[0][1]
        return next((level for least, level in self.levels if share >= least), self.levels[-1][1])


# Keyed by identity, not Profile.digest: model_copy(update=...) keeps a stale cached digest.
_CACHE: dict[int, tuple[Profile, CueMatcher]] = {}
_CACHE_SIZE = 16


def matcher_for(profile: Profile) -> CueMatcher:
    """The compiled matcher for this profile (built once per profile); ConfigError if its settings are wrong."""
    cached = _CACHE.get(id(profile))
    if cached is not None and cached[0] is profile:
        return cached[1]
    matcher = _build(profile)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(profile)] = (profile, matcher)
    return matcher


def _build(profile: Profile) -> CueMatcher:
    settings = profile.baseline
    taxonomy = profile.taxonomy
    if settings is None:
        raise ConfigError(
            f"The profile {profile.name!r} has no [baseline] section, so the baseline classifier cannot run; "
            "add one or choose another classifier."
        )
    unknown = sorted(set(settings.cues) - set(taxonomy.document_types))
    if settings.routine_lab_type is not None and settings.routine_lab_type not in taxonomy.document_types:
        unknown.append(settings.routine_lab_type)
    if unknown:
        raise ConfigError(f"The profile's [baseline] names unknown document types: {', '.join(unknown)}.")
    levels = settings.presence_min_share
    bad = [lv for lv in levels if lv not in taxonomy.presence_levels or lv == taxonomy.no_evidence_level]
    if not levels or bad:
        raise ConfigError(
            "The profile's [baseline].presence_min_share must give a least share for each presence level "
            f"except {taxonomy.no_evidence_level}" + (f"; unknown: {', '.join(bad)}." if bad else ".")
        )
    cues: dict[str, dict[str, float]] = {}

    def add(phrase: str, doc_type: str, weight: float, *, replace: bool = False) -> None:
        key = normalise(phrase)
        if not key or weight <= 0:
            return
        per_type = cues.setdefault(key, {})
        if replace or doc_type not in per_type:
            per_type[doc_type] = weight
        else:
            per_type[doc_type] = max(per_type[doc_type], weight)

    for doc_type, phrases in settings.cues.items():
        for phrase, weight in phrases.items():
            add(phrase, doc_type, weight, replace=True)
    for phrase in profile.vendors.genomic_content:
        add(phrase, taxonomy.genomic_type, settings.genomic_content_weight)
    for phrase in profile.traps.administrative_titles:
        add(phrase, taxonomy.administrative_type, settings.administrative_title_weight)
    vendors: dict[str, str] = {}
    for name in profile.vendors.genomic:
        add(name, taxonomy.genomic_type, settings.vendor_weight)
    if settings.routine_lab_type is not None:
        for name in profile.vendors.routine_lab:
            add(name, settings.routine_lab_type, settings.vendor_weight)
    for name in [*profile.vendors.routine_lab, *profile.vendors.genomic]:
        if normalise(name):
            vendors.setdefault(normalise(name), name)
    # Order cue types by taxonomy so every later iteration is deterministic.
    order = {t: i for i, t in enumerate(taxonomy.document_types)}
    cues = {p: dict(sorted(w.items(), key=lambda kv: order[kv[0]])) for p, w in sorted(cues.items())}
    ranked = sorted(((share, level) for level, share in levels.items()), key=lambda sl: -sl[0])
    return CueMatcher(
        settings=settings,
        cues=cues,
        vendors=vendors,
        header_footer=profile.header_footer_regexes,
        injection=[n for n in (normalise(p) for p in profile.traps.injection_phrases) if n],
        levels=ranked,
        admin_titles=frozenset(n for n in (normalise(t) for t in profile.traps.administrative_titles) if n),
    )


class PageLines:
    """A page's text lines (from Page.lines when the extractor gave them), normalised only when needed."""

    def __init__(self, page: Page) -> None:
        self.page = page
        text = page.text
        size = len(text)
        self.spans = [
            (ln.start, min(ln.end, size)) for ln in page.lines if ln.start < ln.end and ln.start < size
        ]
        if not self.spans:
            self.spans = [m.span() for m in _LINE.finditer(text)]
        self._normalised: dict[int, str] = {}
        self._lower = text.lower()
        self.header_footer = [normalise(p.text) for p in page.paragraphs if p.block_type in _HEADER_FOOTER]

    def normalised(self, index: int) -> str:
        if index not in self._normalised:
            a, b = self.spans[index]
            self._normalised[index] = normalise(self.page.text[a:b])
        return self._normalised[index]

    def candidates(self, phrase: str) -> Iterator[int]:
        """Line indices to try for `phrase`: those where plain lowercase finds it first, then all others."""
        first: list[int] = []
        if len(self._lower) == len(self.page.text):  # lowercasing kept every offset
            starts = [a for a, _ in self.spans]
            hit = self._lower.find(phrase)
            while hit != -1:
                index = bisect.bisect_right(starts, hit) - 1
                if index >= 0 and hit < self.spans[index][1] and (not first or first[-1] != index):
                    first.append(index)
                hit = self._lower.find(phrase, hit + 1)
        yield from first
        tried = set(first)
        yield from (i for i in range(len(self.spans)) if i not in tried)


def find_snippet(lines: PageLines, phrase: str, matcher: CueMatcher) -> Snippet | None:
    """A verbatim line of the page holding `phrase`, trimmed to fit, avoiding header/footer text."""
    page = lines.page
    for index in lines.candidates(phrase):
        quick = lines.normalised(index)
        if phrase not in quick or any(quick in h for h in lines.header_footer):
            continue
        if any(bad in quick for bad in matcher.injection):
            continue
        start, end = lines.spans[index]
        line = page.text[start:end]
        norm, origin = normalise_mapped(line)
        # Spans of running header/footer text (page numbers, fax numbers, MRN, DOB) inside the line.
        blocked = [
            (origin[m.start()], origin[m.end() - 1] + 1)
            for r in matcher.header_footer
            for m in r.finditer(norm)
            if m.end() > m.start()
        ]
        for m_start, m_end in whole_word_spans(norm, phrase):
            a, b = origin[m_start], origin[m_end - 1] + 1
            if any(bs < b and a < be for bs, be in blocked):
                continue
            lo = max((be for _, be in blocked if be <= a), default=0)
            hi = min((bs for bs, _ in blocked if bs >= b), default=len(line))
            text = _window(line, lo, hi, a, b, matcher.settings.max_snippet_chars)
            if text and not matcher.is_header_footer(normalise(text)):
                return Snippet(page=page.page_num, text=text, anchor=line[a:b])
    return None


def _window(line: str, lo: int, hi: int, a: int, b: int, max_chars: int) -> str:
    """line[lo:hi] around the anchor line[a:b], cut at spaces to at most max_chars, ends stripped."""
    if hi - lo > max_chars:
        room = max(0, max_chars - (b - a))
        start = max(lo, a - room // 2)
        end = min(hi, max(start + max_chars, b))
        start = max(lo, min(start, end - max_chars, a))
        if start > lo and not line[start - 1].isspace():
            gap = next((i for i in range(start, a) if line[i].isspace()), None)
            start = gap + 1 if gap is not None else start
        if end < hi and not line[end].isspace():
            gap = next((i for i in range(end - 1, b - 1, -1) if line[i].isspace()), None)
            end = gap if gap is not None else end
        lo, hi = start, end
    return line[lo:hi].strip()


@dataclass(frozen=True)
class FormLine:
    """What a normalised line says about fill-in form structure."""

    label: str | None  # the first field label, "member id #:", when the line is made of labels
    fillable: bool  # labels, blanks or check boxes only: nothing has been written in
    certain: bool  # a field whatever follows: several labels, a blank or a box, or a yes/no question


def form_line(normalised: str, max_label_chars: int) -> FormLine:
    """Read one normalised line as a fill-in field: label-only ("Patient name:", "Signature: Date:"), a
    blank or check boxes ("Signature ______", "[ ] New request"), or a yes/no question."""
    blanks = len(_BLANKS.findall(normalised))
    rest = _BLANKS.sub(" ", normalised).strip()
    parts = rest.split(":")
    labels = [part.strip() for part in parts[:-1]]
    if (
        len(parts) > 1
        and not parts[-1].strip()
        and all(0 < len(lb) <= max_label_chars and any(c.isalpha() for c in lb) for lb in labels)
    ):
        first = rest[: rest.index(":") + 1].strip()
        return FormLine(first, True, len(labels) > 1 or blanks > 0)
    if _YES_NO.search(rest):
        return FormLine(None, True, True)
    if blanks and len(rest) <= max_label_chars:
        return FormLine(None, True, True)
    return FormLine(None, False, False)


def form_fields(lines: list[str], max_label_chars: int) -> list[FormLine | None]:
    """The fill-in fields among a page's normalised body lines (None for the others).

    A line of one bare label ("Medications:") is a field only when the next line is fillable too or it is
    the last: a report's section heading ends with ":" as well, but its content follows it.
    """
    read = [form_line(line, max_label_chars) for line in lines]
    fields: list[FormLine | None] = []
    for i, line in enumerate(read):
        last = i == len(read) - 1
        fields.append(line if line.certain or (line.fillable and (last or read[i + 1].fillable)) else None)
    return fields
