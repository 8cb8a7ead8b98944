"""Benchmark: the Document AI extractor's own cost (offline, on the recorded responses) against local ingestion.

Same PDFs (those with recordings in fixtures/documentai/replay), same process, one thread:

- `documentai_replay`: DocumentAIIngestor with the replay source — local pre-flight (page sizes, text
  layers, SHA-256), reading the recorded JSON and mapping it into a DocumentBundle;
- `map_only`: map_document on already-parsed recorded Documents (the mapping alone);
- `local_ingest` (baseline): arbiter.ingest.ingest_pdf without OCR.

The network call a live run adds (seconds per request) is not measured: it dwarfs all of these.
Reported: pages/s of each (median of repeats, order rotated) and `ratio` = documentai_replay ÷ local_ingest.
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
    from arbiter.documentai import (
        DocumentAIIngestor,
        DocumentAISettings,
        PageFacts,
        ReplaySource,
        map_document,
    )
    from arbiter.ingest import IngestFailure, OcrConfig, ingest_pdf

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(json.dumps(run(rounds=args.rounds, repeats=args.repeats), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
