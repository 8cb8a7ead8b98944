"""The synthetic corpus in memory, and the demo's inputs written from it (byte for byte the committed
`fixtures/` files, which `fixtures/generate.py --check` and a test keep so)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.contracts.profile import Profile, load_profile
from arbiter.demo.catalogue import variants
from arbiter.demo.choices import demo_choices, production_rows
from arbiter.demo.damaged import damaged_files
from arbiter.demo.docs import CATALOGUE, build
from arbiter.demo.layout import render
from arbiter.demo.truth import check, classification


def dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Corpus:
    """Every generated document: PDFs, correct classifications, defect variants and their expectations."""

    pdfs: dict[str, bytes]  # doc_id -> the PDF
    truths: dict[str, dict[str, Any]]  # doc_id -> its correct classification
    cases: list[dict[str, Any]]  # one row per (document, variant): expected.json
    texts: dict[str, str]  # "classifications/<doc_id>.json" or "variants/<case>.json" -> file text

    def demo_classifications(self) -> dict[str, str]:
        """doc_id -> the classification the demo verifies (a third of them deliberately wrong)."""
        return {doc_id: self.texts[path] for doc_id, path in demo_choices(self.cases).items()}

    def production_csv(self) -> str:
        rows = production_rows(self.truths)
        return "doc_id,dominant_type\n" + "".join(f"{d},{t}\n" for d, t in rows)

    def damaged(self) -> dict[str, bytes]:
        """The damaged inputs (locked, truncated, not a PDF, empty) by file name."""
        return damaged_files(self.pdfs[next(iter(CATALOGUE))])


def build_corpus(profile: Profile | None = None) -> Corpus:
    """Render every catalogued document and derive its truth and variants (deterministic, about a second)."""
    profile = profile or load_profile()
    pdfs: dict[str, bytes] = {}
    truths: dict[str, dict[str, Any]] = {}
    cases: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for doc_id in CATALOGUE:
        doc = build(doc_id)
        pdf, pages = render(doc)
        truth = classification(doc, profile)
        check(doc, pages, truth, profile)
        pdfs[doc_id], truths[doc_id] = pdf, truth
        texts[f"classifications/{doc_id}.json"] = dump(truth)
        for variant in variants(doc, pages, truth, profile):
            path = f"classifications/{doc_id}.json"
            if variant.name != "correct":
                path = f"variants/{doc_id}__{variant.name}.json"
                text = variant.raw if variant.raw is not None else dump(variant.data)
                texts[path] = text
            cases.append(
                {
                    "case": f"{doc_id}__{variant.name}",
                    "doc_id": doc_id,
                    "pdf": f"pdfs/{doc_id}.pdf",
                    "classification": path,
                    **variant.expectation,
                }
            )
    return Corpus(pdfs, truths, cases, texts)


@dataclass(frozen=True)
class DemoInputs:
    """Where the demo's inputs were written."""

    folder: Path
    pdfs: Path
    damaged: Path
    classifications: Path
    production: Path


def write_demo_inputs(folder: Path, corpus: Corpus | None = None) -> DemoInputs:
    """Write the demo's inputs under `folder` (pdfs/, damaged/, classifications/, production.csv).

    A file already holding the same bytes is left alone, so a second demo changes nothing on disk.
    """
    corpus = corpus or build_corpus()
    inputs = DemoInputs(
        folder=folder,
        pdfs=folder / "pdfs",
        damaged=folder / "damaged",
        classifications=folder / "classifications",
        production=folder / "production.csv",
    )
    files: dict[Path, bytes] = {inputs.production: corpus.production_csv().encode("utf-8")}
    files.update({inputs.pdfs / f"{doc_id}.pdf": pdf for doc_id, pdf in corpus.pdfs.items()})
    files.update({inputs.damaged / name: data for name, data in corpus.damaged().items()})
    files.update(
        {
            inputs.classifications / f"{doc_id}.json": text.encode("utf-8")
            for doc_id, text in corpus.demo_classifications().items()
        }
    )
    for path, data in files.items():
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return inputs
