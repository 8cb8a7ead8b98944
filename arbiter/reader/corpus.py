"""The reader's corpus: committed texts by source (corpus/sources/<id>/, see corpus/FORMAT.md), rendered to
PDF by this code, and packets of 2-4 of a source's documents built from them.

Everything here is deterministic: a document's look (font size, margins, page numbering or none) and a
packet's make-up are drawn from a seeded generator keyed on ids, so every run renders the same bytes. The
truth of an item is its segments (first page, last page, type); a packet's parts keep their own text, and
some lose their title line and their page numbering, as faxed pages arrive.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen import canvas

from arbiter.demo.layout import BOLD, REGULAR, _register_fonts, draw, wrap
from arbiter.errors import ConfigError

FORM_FEED = "\f"
LINES_PER_PAGE = 52
MAX_LINE = 95
TYPES = ("GENOMIC_REPORT", "LAB_REPORT", "PATHOLOGY_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE")


class CorpusError(ConfigError):
    """A corpus folder that does not follow corpus/FORMAT.md."""


@dataclass(frozen=True)
class Source:
    id: str
    name: str
    repository: str
    commit: str
    licence: str
    kind: str
    url: str = ""


@dataclass(frozen=True)
class CorpusDoc:
    """One document of the corpus: its source, type and pages of text."""

    id: str
    source: str
    type: str
    pages: tuple[str, ...]
    title: str | None = None
    origin: str = ""


@dataclass
class Part:
    doc: CorpusDoc
    first: int  # 1-based page of the item where this document starts
    last: int
    numbered: bool
    titled: bool


@dataclass
class Item:
    """A PDF to classify: one document, or a packet of several from one source."""

    id: str
    source: str
    parts: list[Part]
    pdf: bytes = b""
    page_texts: list[str] = field(default_factory=list)

    @property
    def segments(self) -> list[tuple[int, int, str]]:
        return [(p.first, p.last, p.doc.type) for p in self.parts]

    @property
    def is_packet(self) -> bool:
        return len(self.parts) > 1


def default_root() -> Path:
    """The corpus folder: $ARBITER_CORPUS, else corpus/ in the working directory (a checkout's root; the corpus
    is not installed with the package)."""
    return Path(os.environ.get("ARBITER_CORPUS") or "corpus")


def load_sources(root: Path) -> dict[str, Source]:
    out: dict[str, Source] = {}
    for folder in sorted((root / "sources").iterdir()):
        meta = folder / "SOURCE.toml"
        if not folder.is_dir() or not meta.is_file() or not (folder / "docs.toml").is_file():
            continue
        data = tomllib.loads(meta.read_text(encoding="utf-8"))
        try:
            out[folder.name] = Source(
                id=folder.name,
                name=str(data["name"]),
                repository=str(data.get("repository", "")),
                commit=str(data.get("commit", "")),
                licence=str(data["licence"]),
                kind=str(data.get("kind", "real")),
                url=str(data.get("url", "")),
            )
        except KeyError as exc:
            raise CorpusError(f"{meta}: missing {exc.args[0]!r}") from None
    return out


def load_corpus(root: Path | None = None, *, sources: Iterable[str] | None = None) -> list[CorpusDoc]:
    """Every document of the corpus (or of the named sources), in a stable order."""
    root = root or default_root()
    wanted = set(sources) if sources is not None else None
    docs: list[CorpusDoc] = []
    seen: set[str] = set()
    for source in load_sources(root):
        if wanted is not None and source not in wanted:
            continue
        folder = root / "sources" / source
        listing = tomllib.loads((folder / "docs.toml").read_text(encoding="utf-8"))
        for entry in listing.get("doc", []):
            doc_type = entry.get("type")
            if doc_type not in TYPES:
                raise CorpusError(f"{folder}/docs.toml: {entry.get('id')!r} has type {doc_type!r}")
            path = folder / entry["file"]
            if not path.is_file():
                raise CorpusError(f"{folder}/docs.toml: {entry['file']} is missing")
            doc_id = str(entry["id"])
            if doc_id in seen:
                raise CorpusError(f"{folder}/docs.toml: document id {doc_id!r} is used twice")
            seen.add(doc_id)
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            pages = tuple(p.strip("\n") for p in split_pages(text) if p.strip())
            if not pages:
                raise CorpusError(f"{path}: no text")
            title = entry.get("title") or None
            docs.append(CorpusDoc(doc_id, source, doc_type, pages, title, str(entry.get("origin", ""))))
    return docs


def split_pages(text: str) -> list[str]:
    """A document's pages: at form feeds, and every LINES_PER_PAGE wrapped lines within each."""
    pages: list[str] = []
    for chunk in text.split(FORM_FEED):
        lines = [piece for line in chunk.split("\n") for piece in _fold(line)]
        while lines and not lines[-1].strip():
            lines.pop()
        for start in range(0, max(len(lines), 1), LINES_PER_PAGE):
            pages.append("\n".join(lines[start : start + LINES_PER_PAGE]))
    return pages


def _fold(line: str) -> list[str]:
    line = line.rstrip().replace("\t", "    ")
    if len(line) <= MAX_LINE:
        return [line]
    out: list[str] = []
    while len(line) > MAX_LINE:
        cut = line.rfind(" ", 0, MAX_LINE)
        cut = cut if cut > MAX_LINE // 2 else MAX_LINE
        out.append(line[:cut].rstrip())
        line = "  " + line[cut:].strip()
    out.append(line)
    return out


# ------------------------------------------------------------------------------------------ items
def _rng(*keys: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join(keys).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def single_items(docs: list[CorpusDoc]) -> list[Item]:
    """Each document on its own, numbered or not (about half each, by id)."""
    items = []
    for doc in docs:
        numbered = _rng("numbered", doc.id).random() < 0.5
        items.append(Item(doc.id, doc.source, [Part(doc, 1, len(doc.pages), numbered, True)]))
    return items


def packet_items(docs: list[CorpusDoc], share: float = 0.5) -> list[Item]:
    """Packets of 2-4 documents of one source, about `share` of each source's documents in packets; a part
    other than the first is sent without its title line a third of the time and unnumbered half the time."""
    by_source: dict[str, list[CorpusDoc]] = {}
    for doc in docs:
        by_source.setdefault(doc.source, []).append(doc)
    items: list[Item] = []
    for source, members in sorted(by_source.items()):
        rng = _rng("packets", source)
        pool = sorted(members, key=lambda d: d.id)
        rng.shuffle(pool)
        # Prefer packets that mix types, as real packets do: interleave the source's types.
        pool = _interleave(pool)
        budget = max(2, int(len(pool) * share))
        taken = pool[:budget]
        number = 0
        while len(taken) >= 2:
            size = min(len(taken), rng.choice((2, 2, 3, 4)))
            chosen, taken = taken[:size], taken[size:]
            if len(taken) == 1:
                chosen, taken = [*chosen, *taken], []
            number += 1
            parts: list[Part] = []
            page = 1
            for position, doc in enumerate(chosen):
                numbered = rng.random() < 0.5
                titled = position == 0 or doc.title is None or rng.random() >= 1 / 3
                count = len(doc.pages)
                parts.append(Part(doc, page, page + count - 1, numbered, titled))
                page += count
            items.append(Item(f"{source}-packet-{number:02d}", source, parts))
    return items


def _interleave(docs: list[CorpusDoc]) -> list[CorpusDoc]:
    groups: dict[str, list[CorpusDoc]] = {}
    for doc in docs:
        groups.setdefault(doc.type, []).append(doc)
    out: list[CorpusDoc] = []
    while any(groups.values()):
        for key in sorted(groups):
            if groups[key]:
                out.append(groups[key].pop(0))
    return out


def items(docs: list[CorpusDoc], *, packets: bool = True) -> list[Item]:
    """Every single-document item and (by default) every packet, rendered."""
    out = single_items(docs) + (packet_items(docs) if packets else [])
    for item in out:
        render(item)
    return out


# ------------------------------------------------------------------------------------------ rendering
WIDTH, HEIGHT = letter


@dataclass(frozen=True)
class Style:
    size: float
    margin: float
    numbering: str  # a format with {k} and {n}
    title_bold: bool
    running: bool  # later pages repeat the document's first line at the top, as letterheads and headers do


_NUMBERING = ("Page {k} of {n}", "Page {k} of {n}", "{k} of {n}", "Page {k}/{n}", "Page: {k} of {n}")


def style_of(doc: CorpusDoc) -> Style:
    rng = _rng("style", doc.id)
    return Style(
        size=rng.choice((8.5, 9.0, 9.5, 10.0)),
        margin=rng.choice((42.0, 54.0, 64.0)),
        numbering=rng.choice(_NUMBERING),
        title_bold=rng.random() < 0.7,
        running=rng.random() < 0.5,
    )


def render(item: Item) -> Item:
    """Draw the item's pages into a PDF (item.pdf) and keep the text drawn on each page (item.page_texts)."""
    _register_fonts()
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=letter, invariant=1)
    c.setTitle(item.id)
    texts: list[str] = []
    for part in item.parts:
        style = style_of(part.doc)
        total = len(part.doc.pages)
        for k, page in enumerate(part.doc.pages, start=1):
            lines = page.split("\n")
            if k > 1 and style.running:
                lines = [part.doc.pages[0].split("\n")[0], "", *lines]
            if k == 1 and not part.titled and part.doc.title and lines and lines[0].strip() == part.doc.title:
                lines = lines[1:]
                while lines and not lines[0].strip():
                    lines = lines[1:]
            drawn = _draw_page(
                c, lines, style, bold_first=k == 1 and part.titled and part.doc.title is not None
            )
            if part.numbered:
                mark = style.numbering.format(k=k, n=total)
                draw(
                    c,
                    WIDTH - style.margin - pdfmetrics.stringWidth(mark, "Helvetica", 8),
                    30,
                    mark,
                    REGULAR,
                    8,
                )
                drawn.append(mark)
            texts.append("\n".join(drawn))
            c.showPage()
    c.save()
    item.pdf = buffer.getvalue()
    item.page_texts = texts
    return item


def _draw_page(c: canvas.Canvas, lines: list[str], style: Style, *, bold_first: bool) -> list[str]:
    y = HEIGHT - style.margin - 10
    leading = style.size * 1.3
    width = WIDTH - 2 * style.margin
    drawn: list[str] = []
    for index, raw in enumerate(lines):
        text = raw.rstrip()
        if y < 48:
            break
        if not text.strip():
            y -= leading * 0.7
            continue
        font = BOLD if (bold_first and index == 0 and style.title_bold) else REGULAR
        size = style.size + (2.0 if font == BOLD else 0.0)
        indent = len(text) - len(text.lstrip(" "))
        for piece in wrap(text.strip(), font, size, width - indent * size * 0.5) or [""]:
            draw(c, style.margin + indent * size * 0.5, y, piece, font, size)
            drawn.append(piece)
            y -= leading + (2.0 if font == BOLD else 0.0)
            if y < 48:
                break
    return drawn


def sources_markdown(root: Path | None = None) -> str:
    """corpus/SOURCES.md: every source with its licence, commit and documents per type (made from the folders;
    a test keeps the committed file equal to it)."""
    root = root or default_root()
    docs = load_corpus(root)
    rows = [
        "# Corpus sources",
        "",
        "Made by `python -m arbiter.reader.corpus` from each `sources/<id>/SOURCE.toml` and `docs.toml`; do not edit by",
        "hand. `kind`: **real** — the source's own words; **converted** — the source's structured examples laid",
        "out as printed documents by `tools/<id>.py` (the values and wording are the source's); **authored** —",
        "fictional documents written for this corpus by the project (no real person, no copied text).",
        "",
        "| source | repository @ commit | licence | kind | "
        + " | ".join(_SHORT[t] for t in TYPES)
        + " | all |",
        "| --- | --- | --- | --- | " + " | ".join("---:" for _ in TYPES) + " | ---: |",
    ]
    for source in load_sources(root).values():
        mine = [d for d in docs if d.source == source.id]
        where = f"{source.repository} @ {source.commit[:10]}" if source.repository else "—"
        counts = " | ".join(str(sum(d.type == t for d in mine)) for t in TYPES)
        rows.append(f"| {source.id} | {where} | {source.licence} | {source.kind} | {counts} | {len(mine)} |")
    totals = " | ".join(str(sum(d.type == t for d in docs)) for t in TYPES)
    rows.append(f"| **all** | | | | {totals} | {len(docs)} |")
    return "\n".join(rows) + "\n"


_SHORT = {
    "GENOMIC_REPORT": "GEN",
    "LAB_REPORT": "LAB",
    "PATHOLOGY_REPORT": "PATH",
    "CLINICAL_NOTE": "NOTE",
    "ADMINISTRATIVE": "ADMIN",
}


if __name__ == "__main__":
    (default_root() / "SOURCES.md").write_text(sources_markdown(), encoding="utf-8")
    print(f"wrote {default_root() / 'SOURCES.md'}")
