"""Benchmark: the Document AI extractor's own cost (offline, on the recorded responses) against local ingestion.

Same PDFs (those with recordings in fixtures/documentai/replay), same process, one thread:

- `documentai_replay`: DocumentAIIngestor with the replay source — local pre-flight (page sizes, text
  layers, SHA-256), reading the recorded JSON and mapping it into a DocumentBundle;
- `map_only`: map_document on already-parsed recorded Documents (the mapping alone);
- `local_ingest` (baseline): arbiter.ingest.ingest_pdf without OCR.

The network call a live run adds (seconds per request) is not measured: it dwarfs all of these.
Reported: pages/s of each (median of repeats, order rotated) and `ratio` = documentai_replay ÷ local_ingest.

`--corpus ../shared/corpora/documentai` instead maps each real response there (a batch output's shards as
one; PDF page facts where the PDF is there, else US Letter pages without a text layer) and reports per
response: its pages, those with text, the visible characters of its text and those placed on pages, the
pages with line boxes and the boxes, the seconds to map; or the error it fails with.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

FIXTURES = corpus.REPO / "fixtures"
REPLAY = FIXTURES / "documentai" / "replay"
DOCS = ("lab-quest-01", "admin-priorauth-02", "gen-caris-04", "record-30p")


def run(rounds: int = 20, repeats: int = 3) -> dict[str, Any]:
    """Each engine reads every recorded PDF `rounds` times per repeat; pages/s is the median over repeats."""
    from arbiter.ingest import IngestFailure, OcrConfig, ingest_pdf
    from arbiter.ingest.documentai import (
        DocumentAIIngestor,
        DocumentAISettings,
        PageFacts,
        ReplaySource,
        map_document,
    )

    pdfs = [FIXTURES / "pdfs" / f"{doc_id}.pdf" for doc_id in DOCS]
    docai = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), ReplaySource(REPLAY))
    parsed: list[tuple[dict[str, Any], list[PageFacts]]] = []
    for path in sorted(REPLAY.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))["document"]
        pages = max(
            (b.get("pageSpan", {}).get("pageEnd", 1) for b in document["documentLayout"]["blocks"]), default=1
        )
        parsed.append((document, [PageFacts(612.0, 792.0, True)] * pages))

    def documentai_replay() -> int:
        total = 0
        for pdf in pdfs:
            result = docai.ingest(pdf)
            if isinstance(result, IngestFailure):
                raise RuntimeError(result.message)
            total += len(result.pages)
        return total

    def map_only() -> int:
        return sum(len(map_document(document, facts)) for document, facts in parsed)

    def local_ingest() -> int:
        total = 0
        for pdf in pdfs:
            result = ingest_pdf(pdf, ocr=OcrConfig(enabled=False))
            if isinstance(result, IngestFailure):
                raise RuntimeError(result.message)
            total += len(result.pages)
        return total

    engines: dict[str, Callable[[], int]] = {
        "documentai_replay": documentai_replay,
        "map_only": map_only,
        "local_ingest": local_ingest,
    }
    for engine in engines.values():  # warm-up: imports, caches
        engine()
    samples: dict[str, list[float]] = {name: [] for name in engines}
    names = list(engines)
    for repeat in range(repeats):
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            started = time.perf_counter()
            pages = sum(engines[name]() for _ in range(rounds))
            samples[name].append(pages / (time.perf_counter() - started))
    rates = {name: round(statistics.median(values), 1) for name, values in samples.items()}
    return {
        "pdfs": len(pdfs),
        "pages_per_round": documentai_replay(),
        "rounds": rounds,
        "repeats": repeats,
        "pages_per_s": rates,
        "ratio": round(rates["documentai_replay"] / rates["local_ingest"], 3),
    }


def _visible(value: str) -> int:
    return sum(1 for char in value if not char.isspace())


def map_corpus(folder: Path, only: set[str] | None = None) -> dict[str, Any]:
    """Each real response in `folder` (those named in `only`, when given) mapped: what its pages carry, or
    its error (see the module's doc)."""
    import re

    from arbiter.ingest import IngestFailure, OcrConfig, ingest_pdf
    from arbiter.ingest.documentai import DocumentAIFormatError, PageFacts, map_document

    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.json")):
        shard = re.fullmatch(r"(.+)-\d+", path.stem)
        name = (
            shard.group(1) if shard and len(list(folder.glob(f"{shard.group(1)}-*.json"))) > 1 else path.stem
        )
        groups.setdefault(name, []).append(path)
    report: dict[str, Any] = {}
    for name, paths in groups.items():
        if only is not None and name not in only:
            continue
        payloads = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
        documents = [p.get("document", p) if isinstance(p, dict) else p for p in payloads]
        text_chars = sum(_visible(d.get("text") or "") for d in documents)
        pdf = folder / f"{re.sub(r'-0$', '', name)}.pdf"
        facts: list[PageFacts] | None = None
        if pdf.is_file():
            local = ingest_pdf(pdf, ocr=OcrConfig(enabled=False))
            if not isinstance(local, IngestFailure):
                facts = [PageFacts(p.width, p.height, p.has_text_layer) for p in local.pages]
        started = time.perf_counter()
        try:
            if facts is None:
                count = len(map_document(documents if len(documents) > 1 else documents[0]))
                facts = [PageFacts(612.0, 792.0, False)] * count
            pages = map_document(documents if len(documents) > 1 else documents[0], facts)
        except DocumentAIFormatError as error:
            report[name] = {"files": len(paths), "text_chars": text_chars, "error": str(error)}
            continue
        report[name] = {
            "files": len(paths),
            "pdf": pdf.is_file(),
            "pages": len(pages),
            "pages_with_text": sum(1 for p in pages if p.text.strip()),
            "text_chars": text_chars,
            "chars_on_pages": sum(_visible(p.text) for p in pages),
            "pages_with_boxes": sum(1 for p in pages if p.lines),
            "line_boxes": sum(len(p.lines) for p in pages),
            "statuses": sorted({str(p.ocr_status) for p in pages}),
            "seconds": round(time.perf_counter() - started, 2),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--corpus", type=Path, help="a folder of real Document AI responses to map instead")
    args = parser.parse_args(argv)
    result = map_corpus(args.corpus) if args.corpus else run(rounds=args.rounds, repeats=args.repeats)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
