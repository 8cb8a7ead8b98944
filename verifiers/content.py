"""Independent content evidence: what each page's own text says about each document type, with no model.

Three kinds of signal, all from the profile's `[content]` table: section headings and titles (a short line
that starts with a listed phrase, or a heading block holding one), value patterns (results with units,
HGVS variants, TNM stages, dosing, member ids, ...) and layout (a results-table header row, fill-in
fields). It is a second opinion kept apart from the baseline classifier's cues, so it also checks the
baseline. V2 compares it with segments and boundaries, V4 with evidence; the LLM prompts quote it.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Callable
from functools import lru_cache, partial

from arbiter.contracts import DocumentBundle, Page
from arbiter.contracts.content_profile import ValuePattern
from arbiter.contracts.profile import Content, Profile
from arbiter.ingest.pagination import page_fill, page_marks
from arbiter.reader.model import reader_for
from arbiter.reader.starts import start_reader_for
from arbiter.verifiers.content_about import about_context
from arbiter.verifiers.content_carry import carried, to_carry
from arbiter.verifiers.content_lines import is_field, page_lines
from arbiter.verifiers.content_match import (
    _compiled,
    _heading_index,
    _headings_in,
    _may_hold_header,
    _results_header,
)
from arbiter.verifiers.content_reading import ContentReading, Cue, PageReading
from arbiter.verifiers.literals import Needs, needs, starts
from arbiter.verifiers.made_once import made_once
from arbiter.verifiers.phrases import first_phrase
from arbiter.verifiers.textnorm import PLAIN_CACHE_CHARS, normalize, normalize_plain

log = logging.getLogger(__name__)
_LIST_ITEM = re.compile(r"\s*(?:[•◦▪‣●○■□*\-–]|\d{1,2}[.)]\s)")  # a list item is no title


# ------------------------------------------------------------------------------------------ reading
_SHARED: dict[tuple[int, int], tuple[weakref.ref[DocumentBundle], ContentReading]] = {}
_SHARED_LOCK = threading.Lock()
_SHARED_SIZE = 8


def _forget(key: tuple[int, int], ref: weakref.ref[DocumentBundle]) -> None:
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and entry[0] is ref:
            del _SHARED[key]


_PENDING: dict[tuple[int, int], threading.Lock] = {}


def read_bundle(bundle: DocumentBundle, profile: Profile) -> ContentReading:
    """The content reading of a bundle, computed once and shared by V2 and V4 and by every retry attempt
    (bundles never change). V2 and V4 run on two threads at once: the second waits for the first's reading
    rather than computing it again."""
    key = (id(bundle), id(profile))
    while True:
        with _SHARED_LOCK:
            entry = _SHARED.get(key)
            if entry is not None and entry[0]() is bundle:
                return entry[1]
            pending = _PENDING.get(key)
            if pending is None:
                pending = _PENDING[key] = threading.Lock()
                pending.acquire()
                break
        with pending:  # another thread is reading this bundle: wait for it, then look again
            pass
    try:
        reading = _read(bundle, profile)
        with _SHARED_LOCK:
            _SHARED[key] = (weakref.ref(bundle, partial(_forget, key)), reading)
            while len(_SHARED) > _SHARED_SIZE:
                del _SHARED[next(iter(_SHARED))]
    finally:
        with _SHARED_LOCK:
            del _PENDING[key]
        pending.release()
    return reading


def known_reading(bundle: DocumentBundle, profile: Profile) -> ContentReading | None:
    """The bundle's reading when it is at hand without reading a page for it (made already in this process,
    or carried in the bundle); None otherwise, or when it cannot be had."""
    with _SHARED_LOCK:
        entry = _SHARED.get((id(bundle), id(profile)))
        if entry is not None and entry[0]() is bundle:
            return entry[1]
    if bundle.readings is None:
        return None
    try:
        return read_bundle(bundle, profile)
    except Exception:  # the content check reports its own failure; the caller does without the reading
        return None


def carry_reading(bundle: DocumentBundle, profile: Profile) -> None:
    """Read a freshly extracted bundle's pages now and carry the reading in it (`bundle.readings`), so that its
    verifications, in this process or after it is filed, read no page again (verifiers/content_carry.py).
    A reading that fails here is left out: the bundle is verified as before, and reads its pages then."""
    try:
        bundle.readings = to_carry(bundle, read_bundle(bundle, profile), profile)
    except Exception as exc:  # the check reads again and reports its own failure; ingestion goes on
        log.warning("document %s: pages not read at ingestion (%s)", bundle.doc_id, type(exc).__name__)
        bundle.readings = None


def _read(bundle: DocumentBundle, profile: Profile) -> ContentReading:
    was = carried(bundle, profile)  # read right after extraction, for these pages and these settings
    if was is not None:
        return was
    reading = ContentReading({page.page_num: read_page(page, profile) for page in bundle.pages})
    settings = profile.content.reader
    if settings is not None:
        reader = reader_for(settings.model, settings.sha256)
        reading.settings, reading._reader = (settings.model, settings.sha256), reader
        for page in bundle.pages:
            page_reading = reading.pages[page.page_num]
            if page_reading.readable:
                learned = reader.read(page.text)
                page_reading.probs, page_reading.words, page_reading.text = (
                    learned.probs,
                    learned.words,
                    page.text,
                )
        if settings.starts is not None and settings.starts_sha256 is not None:
            starts = start_reader_for(settings.starts, settings.starts_sha256)
            by_number = {page.page_num: page for page in bundle.pages}
            for page in bundle.pages:
                earlier, later = reading.pages.get(page.page_num - 1), reading.pages[page.page_num]
                if earlier is None or not (earlier.readable and later.readable):
                    continue
                fill = page_fill(by_number[page.page_num - 1])
                later.start, later.start_why = starts.probability(earlier.text, later.text, None, None, fill)
    return reading


def read_page(page: Page, profile: Profile) -> PageReading:
    """What one page's headings, values and layout say about each document type."""
    content = profile.content
    readable = (page.has_text_layer or page.ocr_applied) and bool(page.text.strip())
    reading = PageReading(page=page.page_num, readable=readable, source=page)
    if not readable:
        return reading
    # V3 looks for text addressed to an AI system only on the pages where this finds it (the same test).
    reading.injection = first_phrase(normalize(page.text).text, profile.traps.injection_phrases) is not None
    lines: list[tuple[str, bool]] = []
    reading.lines = lines
    body, running = page_lines(page)
    printed = [*running, *(text for text, _ in body)]
    reading.marks = page_marks(((t, normalize_plain(t)) for t in printed), content.transmission_words)
    # The lexicons' cues (headings, table headers, value patterns, fill-in forms) feed only their own
    # contradiction rules: with a page reader that decides alone (lexicons_too off) they are not read.
    cues = content.reader is None or content.reader.lexicons_too
    phrases = _heading_index(content)
    norms = [normalize_plain(text).strip() for text, _ in body]
    # A results-table header needs enough column words on its line: a page without that many has none.
    table_type = content.results_header_type if cues else None
    if table_type and not _may_hold_header("\n".join(norms), content):
        table_type = None
    for (text, heading_block), norm in zip(body, norms, strict=True):
        fillable = is_field(norm, heading_block)
        lines.append((norm, fillable))
        if fillable:
            reading.fields += 1
            continue
        if not cues:
            continue
        if len(norm) <= content.heading_max_chars or heading_block:
            for doc_type, start, weight in _headings_in(norm, phrases, heading_block):
                kind = "heading"
                if doc_type != content.about_type and about_context(norm, start, content):
                    doc_type, kind = content.about_type or doc_type, "about"
                reading.cues.append(Cue(doc_type, kind, _clip(text), weight))
        if table_type and _results_header(norm, content):
            reading.cues.append(Cue(table_type, "table", _clip(text), content.results_header_weight))
    page_text = "\n".join(text for text, _ in body) if cues else ""
    folded = page_text.lower()
    for pattern in content.patterns if cues else ():
        located = starts(pattern.regex)
        if not located.words and needs(pattern.regex).absent(page_text, folded):
            continue  # a word every match contains is not on the page: nothing to find
        # Tried only where a word that locates every match is (none on the page: nothing to find).
        matches = located.finditer(_compiled(pattern.regex), page_text, folded)
        for count, match in enumerate(matches):
            if count >= content.pattern_cap:
                break
            seen = f'{pattern.what} ("{_clip(match.group().strip(), 40)}")'
            reading.cues.append(Cue(pattern.type, "pattern", seen, pattern.weight))
    n_lines = len(lines)
    if (
        cues
        and content.form_type
        and reading.fields >= content.form_min_fields
        and reading.fields >= content.form_min_share * n_lines
    ):
        examples = [norm for norm, fillable in lines if fillable][:2]
        listed = ", ".join(f'"{_clip(e, 30)}"' for e in examples)
        seen = f"{reading.fields} fill-in fields of {n_lines} lines (e.g. {listed})"
        weight = content.form_field_weight * min(reading.fields, content.form_field_cap)
        reading.cues.append(Cue(content.form_type, "form", seen, weight))
    _title(reading, body, profile)
    if not reading.orders:  # an order's title may sit in the page's header block
        reading.orders = any(
            _order_title(normalize_plain(text), content.order_words)
            for text in running[: profile.traps.title_region_paragraphs + 1]
            if len(text) <= profile.traps.title_max_chars
        )
    if reading.orders and content.about_type:
        # An order's test names are what it asks for, not results: they count for the order's type.
        reading.cues = [
            Cue(content.about_type, "about", c.seen, c.weight)
            if c.kind == "heading" and c.doc_type != content.about_type
            else c
            for c in reading.cues
        ]
    for cue in reading.cues:
        reading.scores[cue.doc_type] = reading.scores.get(cue.doc_type, 0.0) + cue.weight
    return reading


# Snippets remembered per profile: models quote the same titles and headings again and again.
SNIPPET_MEMO = 4096


def read_snippet(text: str, profile: Profile, *, orders: bool = False) -> dict[str, float]:
    """What a quoted snippet's own words say: headings anywhere in it, value patterns, a table header. A
    heading phrase in an about context (after "Re:", "ordered", ...), or anywhere in a snippet quoted from
    a page that `orders`, counts for the profile's about_type instead of the type it names. Remembered per
    profile for snippets up to PLAIN_CACHE_CHARS (a retry, and the next document, quote the same ones)."""
    content = profile.content
    if len(text) > PLAIN_CACHE_CHARS:
        return _read_snippet(content, text, orders)
    memo = made_once(
        _SNIPPETS, content, lambda: lru_cache(maxsize=SNIPPET_MEMO)(partial(_snippet_items, content))
    )
    return dict(memo(text, orders))


_SNIPPETS: dict[int, tuple[object, Callable[[str, bool], tuple[tuple[str, float], ...]]]] = {}


def _snippet_items(content: Content, text: str, orders: bool) -> tuple[tuple[str, float], ...]:
    # A tuple: what is remembered cannot be changed by a caller.
    return tuple(_read_snippet(content, text, orders).items())


def _read_snippet(content: Content, text: str, orders: bool) -> dict[str, float]:
    norm = normalize_plain(text).strip()
    scores: dict[str, float] = {}
    if not norm or is_field(norm, heading_block=False):
        return scores
    for doc_type, start, weight in _headings_in(norm, _heading_index(content), anywhere=True):
        about = content.about_type
        if about and doc_type != about and (orders or about_context(norm, start, content)):
            doc_type = about
        scores[doc_type] = scores.get(doc_type, 0.0) + weight
    if content.results_header_type and _results_header(norm, content):
        key = content.results_header_type
        scores[key] = scores.get(key, 0.0) + content.results_header_weight
    folded = text.lower()
    for doc_type, weight, words, regex in _pattern_tests(content.patterns):
        if words.absent(text, folded):
            continue  # a word every match contains is not in the snippet
        if regex.search(text):
            scores[doc_type] = scores.get(doc_type, 0.0) + weight
    return scores


_TESTS: dict[int, tuple[object, list[tuple[str, float, Needs, re.Pattern[str]]]]] = {}


def _pattern_tests(patterns: list[ValuePattern]) -> list[tuple[str, float, Needs, re.Pattern[str]]]:
    """Each value pattern's type, weight, needed words and regex, made once per list of patterns."""
    return made_once(
        _TESTS, patterns, lambda: [(p.type, p.weight, needs(p.regex), _compiled(p.regex)) for p in patterns]
    )


def is_form_label(snippet: str, page: int, reading: ContentReading) -> bool:
    """A snippet that is only a form label or an empty field: every line holding it, on its claimed page or
    else anywhere in the document, is a field (or, found on no one line, the snippet itself reads as one).
    Where it was found does not change the answer, so correcting a snippet's page cannot hide it."""
    norm = normalize_plain(snippet).strip()
    if not norm:
        return False
    if not is_field(norm, heading_block=False) and not any(r.fields for r in reading.pages.values()):
        return False  # no page has a fill-in field: wherever it is found (or not), no field holds it
    claimed = reading.pages.get(page)
    pages = [claimed] if claimed is not None else []
    pages += [r for n, r in sorted(reading.pages.items()) if n != page]
    for candidate in pages:
        holding = [fillable for line, fillable in lines_of(candidate) if norm in line]
        if holding:
            return all(holding)
    return is_field(norm, heading_block=False)


def lines_of(reading: PageReading) -> list[tuple[str, bool]]:
    """A page's body lines, normalised, with whether each is a fill-in field (made now for a carried reading,
    from the page it was read from; as read_page makes them)."""
    if reading.lines is None:
        made: list[tuple[str, bool]] = []
        if reading.readable and reading.source is not None:
            for text, heading_block in page_lines(reading.source)[0]:
                norm = normalize_plain(text).strip()
                made.append((norm, is_field(norm, heading_block)))
        reading.lines = made
    return reading.lines


# ------------------------------------------------------------------------------------------ helpers
def _title(reading: PageReading, body: list[tuple[str, bool]], profile: Profile) -> None:
    """The document title and continuation marker in the page's title region (its first short lines)."""
    traps, content = profile.traps, profile.content
    region = [
        text
        for text, _ in body[: traps.title_region_paragraphs + 1]
        if len(text) <= traps.title_max_chars and not _LIST_ITEM.match(text)
    ]
    for text in region:
        norm = normalize_plain(text)
        if reading.continuation is None:
            marker = next((m for m in content.continuation_markers if _has_phrase(norm, m)), None)
            if marker is not None:
                reading.continuation = _clip(text)
        if reading.title is None:
            title = next((t for t in content.document_titles if _has_phrase(norm, t)), None)
            if title is not None:
                reading.title, reading.title_seen = title, _clip(text)
        if not reading.orders and (
            any(_has_phrase(norm, t) for t in content.order_titles) or _order_title(norm, content.order_words)
        ):
            reading.orders = True


def _order_title(norm: str, words: list[str]) -> bool:
    """A title line (no digit, no colon) that names an order, a request or a consent."""
    if ":" in norm or any(ch.isdigit() for ch in norm):
        return False
    return any(_has_phrase(norm, w) for w in words)


def _has_phrase(norm: str, phrase: str) -> bool:
    if phrase not in norm:
        return False
    return _phrase_pattern(phrase).search(norm) is not None


@lru_cache(maxsize=2048)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A profile's titles and markers outnumber re's own cache: each compiled once."""
    return re.compile(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])")


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
