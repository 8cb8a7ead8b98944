"""The pages and page pairs the readers learn from: the corpus's documents (alone and in packets) and the
fixtures, rendered to PDF and read back by ingestion, so the readers learn from what the checks will see."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from arbiter.contracts import Page
from arbiter.reader.corpus import CorpusDoc, Item, items


@dataclass(frozen=True)
class TrainPage:
    """One page to learn from: its text as ingestion read it, its type, and where it came from."""

    source: str
    item: str
    page: int
    type: str
    text: str
    starts: bool  # the first page of a document


def ingest_bundles(corpus_items: Sequence[Item]) -> dict[str, list[Page]]:
    """Each rendered item's pages as ingestion reads them from its PDF (what the checks will see)."""
    from arbiter.contracts import DocumentBundle
    from arbiter.ingest import ingest_pdf

    out: dict[str, list[Page]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for item in corpus_items:
            path = Path(tmp) / f"{item.id}.pdf"
            path.write_bytes(item.pdf)
            bundle = ingest_pdf(path, doc_id=item.id)
            if not isinstance(bundle, DocumentBundle):
                raise RuntimeError(f"corpus item {item.id} did not ingest: {bundle.message}")
            out[item.id] = sorted(bundle.pages, key=lambda p: p.page_num)
    return out


def ingest_items(corpus_items: Sequence[Item]) -> dict[str, list[str]]:
    """Each rendered item's page texts as ingestion reads them from its PDF."""
    return {key: [p.text for p in pages] for key, pages in ingest_bundles(corpus_items).items()}


def corpus_pages(docs: Sequence[CorpusDoc]) -> list[TrainPage]:
    """Every page of every single-document item of the corpus, rendered and ingested."""
    rendered = items(list(docs), packets=False)
    texts = ingest_items(rendered)
    pages: list[TrainPage] = []
    for item in rendered:
        part = item.parts[0]
        for number, text in enumerate(texts[item.id], start=1):
            pages.append(TrainPage(item.source, item.id, number, part.doc.type, text, number == 1))
    return pages


# ------------------------------------------------------------------------------------------ fitting


FIXTURE_SOURCE = "arbiter-fixtures"


def fixture_pages() -> list[TrainPage]:
    """The pages of the project's own generated documents (arbiter/demo), as one more source, typed by their
    correct classification's segments (scanned pages with no text left out)."""
    from arbiter.contracts.profile import load_profile
    from arbiter.demo.corpus import build_corpus

    built = build_corpus(load_profile(open_reader=False))
    rendered = [Item(doc_id, FIXTURE_SOURCE, [], pdf=pdf) for doc_id, pdf in sorted(built.pdfs.items())]
    texts = ingest_items(rendered)
    pages: list[TrainPage] = []
    for doc_id, page_texts in texts.items():
        truth = built.truths[doc_id]
        for segment in truth["segments"]:
            for number in range(segment["start_page"], segment["end_page"] + 1):
                text = page_texts[number - 1] if number <= len(page_texts) else ""
                if text.strip():
                    pages.append(
                        TrainPage(
                            FIXTURE_SOURCE,
                            doc_id,
                            number,
                            segment["dominant_type"],
                            text,
                            number == segment["start_page"],
                        )
                    )
    return pages


JOINS_PER_SOURCE = 25  # documents of one source joined end to start, at most this many pairs per source


def corpus_pairs(docs: Sequence[CorpusDoc]) -> list[Any]:
    """Every pair of consecutive pages of the corpus's items (documents alone and in packets), rendered and
    ingested, labelled by whether the later page starts a document; and, since the packets alone hold few
    starts, more starts made by joining one source's documents end to start (the last page of one, the first
    page of the next, as each was rendered alone), up to JOINS_PER_SOURCE a source."""
    from arbiter.ingest.pagination import page_fill
    from arbiter.reader.starts import Pair

    rendered = items(list(docs))
    ingested = ingest_bundles(rendered)
    pairs: list[Pair] = []
    for item in rendered:
        pages = ingested[item.id]
        starts = {part.first for part in item.parts}
        for number in range(2, len(pages) + 1):
            before, after = pages[number - 2], pages[number - 1]
            pairs.append(
                Pair(
                    item.source,
                    item.id,
                    number,
                    before.text,
                    after.text,
                    number in starts,
                    before_fill=page_fill(before),
                )
            )
    singles: dict[str, list[Item]] = {}
    for item in rendered:
        if not item.is_packet and ingested[item.id]:
            singles.setdefault(item.source, []).append(item)
    for source, alone in singles.items():
        for first, second in list(pairwise(alone))[:JOINS_PER_SOURCE]:
            before, after = ingested[first.id][-1], ingested[second.id][0]
            pairs.append(
                Pair(
                    source,
                    f"{first.id}+{second.id}",
                    1,
                    before.text,
                    after.text,
                    True,
                    before_fill=page_fill(before),
                )
            )
    return pairs
