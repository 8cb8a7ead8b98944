"""The content reading carried with its bundle: made once, right after extraction, and read back by every
later verification of the same pages under the same settings (retries, re-runs with another model, what-if
simulations), so that checking an answer reads no page again.

A carried reading is used only when both seals match: its key (this reading code's version and a digest of
the profile's reading settings, the page readers' files included) and the digest of the pages it read (their
text and shape). Otherwise the pages are read again, as if nothing had been carried: a stale or altered
reading is never trusted.
"""

from __future__ import annotations

import hashlib

from arbiter import __version__
from arbiter.contracts import DocumentBundle, Page
from arbiter.contracts.bundle import BundleReadings, PageReadingRecord
from arbiter.contracts.profile import Profile
from arbiter.ingest.pagination import PageMark
from arbiter.verifiers.content_reading import ContentReading, Cue, PageReading
from arbiter.verifiers.made_once import made_once

# Bumped whenever what a reading holds or how a page is read changes: carried readings of another version are
# read again.
READING_VERSION = "3"


# The `[content]` settings that only the rules comparing a reading with an answer use (thresholds, the types
# whose evidence may be labels): changing them keeps a reading, so a what-if over them reads no page again.
# Every other setting, and any added later, is part of the key. tests/test_content_carry.py checks that the
# code that reads a page names none of these.
RULE_ONLY = frozenset(
    {
        "label_evidence_types",
        "clear_score",
        "clear_share",
        "support_share",
        "page_clear_score",
        "evidence_other_score",
    }
)
READER_RULE_ONLY = frozenset(
    {"support", "page_clear", "page_support", "min_words", "start_keep", "start_continue", "start_new"}
)
_EXCLUDE: dict[str, object] = {**dict.fromkeys(RULE_ONLY, True), "reader": set(READER_RULE_ONLY)}

_KEYS: dict[int, tuple[object, str]] = {}


def reading_key(profile: Profile) -> str:
    """What a reading depends on besides the pages: this code, the `[content]` settings that change a reading
    (with the readers' file digests; not the rules' thresholds), the title region's limits and the phrases
    addressed to an AI system."""
    return made_once(_KEYS, profile, lambda: _key(profile))


def _key(profile: Profile) -> str:
    content, traps = profile.content, profile.traps
    region = f"{traps.title_region_paragraphs}/{traps.title_max_chars}/{traps.injection_phrases}"
    settings = content.model_dump_json(exclude=_EXCLUDE)  # type: ignore[arg-type]
    digest = hashlib.sha256(f"{region}|{settings}".encode()).hexdigest()
    return f"{READING_VERSION}/{__version__}/{digest}"


def pages_sha256(bundle: DocumentBundle) -> str:
    """A digest of what a reading reads: each page's number, text-layer and OCR flags, size, text, and how
    many paragraphs and line boxes it has (their split of the text comes from the same extraction)."""
    pages = bundle.pages
    shape = "\x1e".join(
        [
            f"{p.page_num}\x1f{p.has_text_layer:d}{p.ocr_applied:d}\x1f{p.width}x{p.height}"
            f"\x1f{len(p.paragraphs)}\x1f{len(p.lines)}\x1f{len(p.text)}"
            for p in pages
        ]
    )
    text = "\x1e".join([p.text for p in pages])  # each page's length is in its shape: no two splits alike
    return hashlib.sha256(f"{shape}\x1d{text}".encode("utf-8", "surrogatepass")).hexdigest()


def to_carry(bundle: DocumentBundle, reading: ContentReading, profile: Profile) -> BundleReadings:
    """`reading` (the bundle's content reading under `profile`) as the bundle carries it."""
    records = [_record(reading.pages[page.page_num]) for page in bundle.pages]
    return BundleReadings(key=reading_key(profile), pages_sha256=pages_sha256(bundle), pages=records)


def carried(bundle: DocumentBundle, profile: Profile) -> ContentReading | None:
    """The reading the bundle carries, when it was made of these pages under these settings; else None."""
    readings = bundle.readings
    if readings is None or readings.key != reading_key(profile) or len(readings.pages) != len(bundle.pages):
        return None
    if readings.pages_sha256 != pages_sha256(bundle):
        return None
    pages = {}
    for page, record in zip(bundle.pages, readings.pages, strict=True):
        if record.page != page.page_num:
            return None
        pages[page.page_num] = _reading(record, page)
    settings = profile.content.reader
    return ContentReading(pages, (settings.model, settings.sha256) if settings is not None else None)


def _record(page: PageReading) -> PageReadingRecord:
    return PageReadingRecord(
        page=page.page,
        readable=page.readable,
        scores=page.scores,
        cues=[(c.doc_type, c.kind, c.seen, c.weight) for c in page.cues],
        fields=page.fields,
        marks=[(m.number, m.total, m.template, m.seen) for m in page.marks],
        title=page.title,
        title_seen=page.title_seen,
        continuation=page.continuation,
        probs=page.probs,
        words=page.words,
        start=page.start,
        start_why=page.start_why,
        orders=page.orders,
        injection=page.injection,
    )


def _reading(record: PageReadingRecord, page: Page) -> PageReading:
    # The record's dicts and lists are the reading's own (nothing changes a reading once made): not copied.
    return PageReading(
        page=record.page,
        readable=record.readable,
        scores=record.scores,
        cues=list(map(Cue._make, record.cues)),
        fields=record.fields,
        marks=tuple(PageMark(*mark) for mark in record.marks),
        title=record.title,
        title_seen=record.title_seen,
        continuation=record.continuation,
        probs=record.probs,
        words=record.words,
        text=page.text if record.probs is not None else "",
        start=record.start,
        start_why=record.start_why,
        orders=record.orders,
        injection=record.injection,
        source=page,
    )
