"""Benchmark (OCR): pages/s and character error rate of the OCR fallback on the scanned fixtures, and
the share of scanned documents accepted with OCR off (the baseline) and on.

- speed: `arbiter.ingest.ingest_pdf` on `fixtures/scanned/pdfs` (every page is an image), against the
  floor of rendering each page with pypdfium2 and running the Tesseract program on it, nothing else;
- CER per noise kind: Levenshtein distance between the OCR'd text and the digital original's text
  layer (the known text), both normalised as V4 normalises (Unicode, dashes, quotes, whitespace, case),
  divided by the length of the known text;
- acceptance: the whole pipeline (file classifier, V1-V4, arbiter, fixes) over the scanned fixtures'
  classifications, once with ARBITER_OCR=off and once with OCR on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rapidfuzz.distance import Levenshtein

from arbiter.contracts import DocumentBundle
from arbiter.ingest import OcrConfig, ingest_pdf
from arbiter.ingest.ocr import DEFAULT_DPI, probe, render_gray, run_tesseract
from arbiter.verifiers.textnorm import normalize_plain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCANNED = FIXTURES / "scanned"


def scanned_cases(docs: int | None = None, doc_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The scanned fixture cases of the documents named, else of the first `docs` (all when None)."""
    cases: list[dict[str, Any]] = json.loads((SCANNED / "expected.json").read_text(encoding="utf-8"))
    wanted: list[str] = []
    for case in cases:
        if case["doc_id"] not in wanted:
            wanted.append(case["doc_id"])
    keep = set(doc_ids) if doc_ids else set(wanted[:docs] if docs is not None else wanted)
    return [c for c in cases if c["doc_id"] in keep]


def _bundle(path: Path, doc_id: str, ocr: OcrConfig) -> DocumentBundle:
    result = ingest_pdf(path, doc_id=doc_id, ocr=ocr)
    if not isinstance(result, DocumentBundle):
        raise RuntimeError(f"{path.name} did not ingest: {result.message}")
    return result


def _floor(path: Path, cfg: OcrConfig) -> int:
    """Render every page and run Tesseract on it: what OCR costs before arbiter turns words into a page."""
    import pypdfium2 as pdfium

    engine = probe(cfg.tesseract_cmd, cfg.language).engine
    assert engine is not None
    doc = pdfium.PdfDocument(path)
    try:
        for page in doc:
            drawn = render_gray(page.raw, page.get_width(), page.get_height(), cfg.dpi)
            run_tesseract(engine, drawn, drawn.scale * 72.0, cfg.page_timeout_s)
            page.close()
        return len(doc)
    finally:
        doc.close()


def speed_and_cer(cases: list[dict[str, Any]], repeats: int) -> dict[str, Any]:
    """OCR pages/s (arbiter and the floor, median of `repeats`) and CER per noise kind."""
    cfg = OcrConfig()
    docs = {c["doc_id"]: c for c in cases}
    seconds: dict[str, list[float]] = {"arbiter": [], "floor_render_tesseract": []}
    bundles: dict[str, DocumentBundle] = {}
    pages = 0
    warm = FIXTURES / next(iter(docs.values()))["pdf"]  # imports, the engine check, file caches: not timed
    _bundle(warm, "warm-up", cfg)
    _floor(warm, cfg)
    for r in range(repeats):
        order = ["arbiter", "floor_render_tesseract"][:: 1 if r % 2 == 0 else -1]
        for name in order:
            t0 = time.perf_counter()
            pages = 0
            for doc_id, case in docs.items():
                path = FIXTURES / case["pdf"]
                if name == "arbiter":
                    bundles[doc_id] = _bundle(path, doc_id, cfg)
                    pages += len(bundles[doc_id].pages)
                else:
                    pages += _floor(path, cfg)
            seconds[name].append(time.perf_counter() - t0)
    pages_per_s = {name: round(pages / statistics.median(s), 3) for name, s in seconds.items()}
    distance: dict[str, int] = defaultdict(int)
    length: dict[str, int] = defaultdict(int)
    per_doc: dict[str, float] = {}
    confidence: dict[str, list[float]] = defaultdict(list)
    ocr_pages = 0
    for doc_id, case in docs.items():
        known = _bundle(FIXTURES / case["source_pdf"], doc_id, OcrConfig(enabled=False))
        doc_distance = doc_length = 0
        for original, scanned in zip(known.pages, bundles[doc_id].pages, strict=True):
            ocr_pages += scanned.ocr_applied
            ref, hyp = normalize_plain(original.text), normalize_plain(scanned.text)
            d = Levenshtein.distance(ref, hyp)
            distance[case["noise"]] += d
            length[case["noise"]] += len(ref)
            doc_distance, doc_length = doc_distance + d, doc_length + len(ref)
            if scanned.ocr_confidence is not None:
                confidence[case["noise"]].append(scanned.ocr_confidence)
        per_doc[doc_id] = round(doc_distance / max(doc_length, 1), 4)
    all_distance, all_length = sum(distance.values()), sum(length.values())
    return {
        "pages": pages,
        "ocr_pages": ocr_pages,
        "pages_per_s": pages_per_s,
        "ratio_to_floor": round(pages_per_s["arbiter"] / pages_per_s["floor_render_tesseract"], 3),
        "seconds": {name: [round(x, 3) for x in s] for name, s in seconds.items()},
        "cer": round(all_distance / max(all_length, 1), 4),
        "cer_by_noise": {kind: round(distance[kind] / max(length[kind], 1), 4) for kind in sorted(distance)},
        "cer_by_doc": per_doc,
        "mean_confidence_by_noise": {k: round(statistics.fmean(v), 2) for k, v in sorted(confidence.items())},
    }


def acceptance(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Decisions of the whole pipeline on each scanned case with OCR off and on, against expected.json."""
    from arbiter.record.mirrors import FileStore
    from arbiter.run.compose import PipelineParts, build_engine, pipeline

    out: dict[str, Any] = {}
    for mode, cfg, key in (
        ("ocr_off", OcrConfig(enabled=False), "without_ocr"),
        ("ocr_on", OcrConfig(), "with_ocr"),
    ):
        decisions: dict[str, str] = {}
        matches = 0
        with tempfile.TemporaryDirectory() as tmp:
            for case in cases:
                # One classification per run directory: the file classifier reads <doc_id>.json.
                folder = Path(tmp) / "in" / case["case"]
                folder.mkdir(parents=True)
                (folder / f"{case['doc_id']}.json").write_bytes(
                    (FIXTURES / case["classification"]).read_bytes()
                )
                chain = pipeline(
                    build_engine(classifier="file", classifications=folder),
                    PipelineParts(
                        store=FileStore(Path(tmp) / mode / case["case"]),
                        ingest=lambda path, doc_id, cfg=cfg: ingest_pdf(path, doc_id=doc_id, ocr=cfg),
                        run_id=f"bench-ocr-{mode}",
                    ),
                )
                result = chain.process(FIXTURES / case["pdf"], case["doc_id"], force=True)
                decisions[case["case"]] = result.final_decision
                matches += result.final_decision == case[key]["expected_decision"]
        correct = [c["case"] for c in cases if c["case"].endswith("__correct")]
        accepted = sum(decisions[c] == "AUTO_ACCEPT" for c in correct)
        out[mode] = {
            "correct_documents": len(correct),
            "accepted": accepted,
            "accept_share": round(accepted / max(len(correct), 1), 3),
            "decisions_as_expected": f"{matches}/{len(cases)}",
            "decisions": decisions,
        }
    return out


def run(*, docs: int | None = None, doc_ids: list[str] | None = None, repeats: int = 3) -> dict[str, Any]:
    cfg = OcrConfig.from_env()
    found = probe(cfg.tesseract_cmd, cfg.language)
    if found.engine is None:
        raise RuntimeError(found.problem or "Tesseract is not available")
    cases = scanned_cases(docs, doc_ids)
    if not cases:
        raise RuntimeError("no scanned fixture matches; run fixtures/generate.py")
    result: dict[str, Any] = {
        "tesseract": found.engine.version,
        "dpi": DEFAULT_DPI,
        "documents": len({c["doc_id"] for c in cases}),
        "cases": len(cases),
        "repeats": repeats,
        "threads": os.environ.get("OMP_THREAD_LIMIT", "1 (set per Tesseract process)"),
    }
    result |= speed_and_cer(cases, repeats)
    accept = acceptance(cases)
    result["accept_share"] = {mode: accept[mode]["accept_share"] for mode in accept}
    result["acceptance"] = accept
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " ") if __doc__ else None
    )
    parser.add_argument(
        "--docs", type=int, default=None, metavar="N", help="only the first N scanned documents"
    )
    parser.add_argument(
        "--doc", action="append", dest="doc_ids", metavar="DOC_ID", help="a scanned doc_id (repeatable)"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        metavar="N",
        help="timed passes over the pages, the median reported (default: 3)",
    )
    args = parser.parse_args(argv)
    print(json.dumps(run(docs=args.docs, doc_ids=args.doc_ids, repeats=args.repeats), indent=2))


if __name__ == "__main__":
    main()
