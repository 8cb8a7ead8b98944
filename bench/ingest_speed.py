"""Benchmark (b): ingestion pages/s of arbiter.ingest.ingest_pdf against pypdf, with raw pypdfium2 as ceiling.

Same files, same process, one thread, engine order rotated every repeat. arbiter does more than the
others (line boxes, paragraphs, block types, SHA-256 of the file); pypdf and pypdfium2 only extract text.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

FIXTURE_PDFS = corpus.REPO / "fixtures" / "pdfs"


def _arbiter(path: Path) -> int:
    from arbiter.ingest import IngestFailure, OcrConfig, ingest_pdf

    # Text extraction only, like the engines it is compared with (bench/ocr_speed.py measures OCR).
    result = ingest_pdf(path, ocr=OcrConfig(enabled=False))
    if isinstance(result, IngestFailure):
        raise RuntimeError(result.kind)
    return len(result.pages)


def _pypdf(path: Path) -> int:
    from pypdf import PdfReader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pypdf warns on the odd malformed object; not what is measured
        reader = PdfReader(path)
        for page in reader.pages:
            page.extract_text()
        return len(reader.pages)


def _pdfium(path: Path) -> int:
    import pypdfium2

    from arbiter.ingest import PDFIUM_LOCK

    with PDFIUM_LOCK:
        pdf = pypdfium2.PdfDocument(path)
        try:
            for page in pdf:
                textpage = page.get_textpage()
                textpage.get_text_range()
                textpage.close()
                page.close()
            return len(pdf)
        finally:
            pdf.close()


ENGINES: dict[str, Callable[[Path], int]] = {"arbiter": _arbiter, "pypdf": _pypdf, "pypdfium2_raw": _pdfium}


def _readable_by_all(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The files every engine reads (a fixture may be encrypted or broken on purpose)."""
    kept, dropped = [], []
    for path in paths:
        try:
            for engine in ENGINES.values():
                engine(path)
        except Exception:
            dropped.append(path.name)
            continue
        kept.append(path)
    return kept, dropped


def _pass(engine: Callable[[Path], int], paths: list[Path]) -> tuple[int, float]:
    started = time.perf_counter()
    pages = sum(engine(path) for path in paths)
    return pages, time.perf_counter() - started


def hot_spots(paths: list[Path], top: int = 12) -> list[str]:
    """cProfile of arbiter ingestion over the files: the functions with the most own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for path in paths:
        _arbiter(path)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    rows = []
    for (file, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((tottime, cumtime, calls, f"{Path(file).name}:{line}({func})"))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows) or 1.0
    return [
        f"{name}: {tot / total:.0%} own time, {cum:.3f} s cumulative, {n} calls"
        for tot, cum, n, name in rows[:top]
    ]


def run(
    *,
    pdfs: int = 100,
    pages: int = 10,
    repeats: int = 3,
    include_fixtures: bool = True,
    data_dir: Path | None = None,
    seed: int = 0,
    profile_if_missed: bool = True,
) -> dict[str, Any]:
    directory = (data_dir or corpus.DATA_DIR) / f"pdfs-{pages}p"
    t0 = time.perf_counter()
    paths = corpus.write_pdfs(directory, pdfs, pages=pages, seed=seed, prefix="ingest")
    generate_s = time.perf_counter() - t0
    fixtures = sorted(FIXTURE_PDFS.glob("*.pdf")) if include_fixtures and FIXTURE_PDFS.is_dir() else []
    paths, dropped = _readable_by_all(paths + fixtures)  # also the warm-up: imports, font caches
    if not paths:
        raise RuntimeError("no PDF was readable by every engine")

    seconds: dict[str, list[float]] = {name: [] for name in ENGINES}
    page_counts: dict[str, int] = {}
    names = list(ENGINES)
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            n, s = _pass(ENGINES[name], paths)
            page_counts[name] = n
            seconds[name].append(s)
    total_pages = page_counts["arbiter"]
    rates = {name: round(total_pages / statistics.median(s), 1) for name, s in seconds.items()}
    ratio = round(rates["arbiter"] / rates["pypdf"], 2)
    result: dict[str, Any] = {
        "pdfs": len(paths),
        "synthetic_pdfs": pdfs,
        "fixture_pdfs": len([p for p in paths if p.parent == FIXTURE_PDFS]),
        "skipped_unreadable": dropped,
        "pages": total_pages,
        "pages_agree": len(set(page_counts.values())) == 1,
        "repeats": repeats,
        "generate_s": round(generate_s, 2),
        "pages_per_s": rates,
        "ratio": ratio,
        "target_ratio_min": 4.0,
        "ceiling_share": round(rates["arbiter"] / rates["pypdfium2_raw"], 2),
        "seconds": {name: [round(x, 3) for x in s] for name, s in seconds.items()},
    }
    if profile_if_missed and ratio < 4.0:
        result["arbiter_hot_spots"] = hot_spots(paths)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdfs", type=int, default=100)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-fixtures", action="store_true")
    args = parser.parse_args(argv)
    result = run(
        pdfs=args.pdfs, pages=args.pages, repeats=args.repeats, include_fixtures=not args.no_fixtures
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
