"""The pages and page pairs the readers learn from: the corpus's documents (alone and in packets) and the
fixtures, rendered to PDF and read back by ingestion, so the readers learn from what the checks will see."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def ingest_items(corpus_items: Sequence[Item]) -> dict[str, list[str]]:
    """Each rendered item's page texts as ingestion reads them from its PDF (what the checks will see)."""
    from arbiter.contracts import DocumentBundle
    from arbiter.ingest import ingest_pdf

    out: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for item in corpus_items:
            path = Path(tmp) / f"{item.id}.pdf"
            path.write_bytes(item.pdf)
            bundle = ingest_pdf(path, doc_id=item.id)
            if not isinstance(bundle, DocumentBundle):
                raise RuntimeError(f"corpus item {item.id} did not ingest: {bundle.message}")
            out[item.id] = [p.text for p in sorted(bundle.pages, key=lambda p: p.page_num)]
    return out


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


def corpus_pairs(docs: Sequence[CorpusDoc]) -> list[Any]:
    """Every pair of consecutive pages of the corpus's items (documents alone and in packets), rendered and
    ingested, labelled by whether the later page starts a document."""
    from arbiter.reader.starts import Pair

    rendered = items(list(docs))
    texts = ingest_items(rendered)
    pairs: list[Pair] = []
    for item in rendered:
        page_texts = texts[item.id]
        starts = {part.first for part in item.parts}
        for number in range(2, len(page_texts) + 1):
            pairs.append(
                Pair(
                    item.source,
                    item.id,
                    number,
                    page_texts[number - 2],
                    page_texts[number - 1],
                    number in starts,
                )
            )
    return pairs
