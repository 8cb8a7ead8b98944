"""The trust demo's batches (`arbiter demo --trust`, docs/design.md §9.8): synthetic PDFs drawn by the demo
catalogue's builders (docs.py) with seeds of their own, each with its correct classification, and the answer
of the producer that classified it, a planted share of them wrong.

A batch is made of the known producers (`KNOWN`, each with its share of wrong answers) and, in the shifted
batch, a new producer (`NEW`) for `NEW_SHARE` of the documents with `NEW_WRONG` of its answers wrong. The
known producers' mistakes include the checks' blind spot (`BLIND_SPOT`: accepted, for the audits to find);
the new producer's are of the kinds the checks catch, as in bench/drift.py's scenario, so its shift shows as
escalations. Every draw derives from the batch name and the document's number, so the same sizes give the
same bytes.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.contracts.profile import Profile, load_profile
from arbiter.demo.docs import CATALOGUE
from arbiter.demo.layout import DocSpec, render
from arbiter.demo.truth import check, classification, finalise
from arbiter.demo.variants import entry, primary

KNOWN = {"model-a": 0.03, "model-b": 0.05, "model-c": 0.04}  # producer -> share of its answers that are wrong
NEW, NEW_SHARE, NEW_WRONG = "model-d", 0.05, 0.30
HARD_SHARE = 0.12  # right answers given with a low confidence all the same
PRODUCTION_WRONG = 0.08  # the production classifier's dominant type is another one this often
# Left out of the batches: the 30-page record (one document as slow as ten), the packet with a scanned page
# (decided differently with and without Tesseract) and the prompt-injection note (escalated whatever it says).
LEFT_OUT = ("record-30p", "packet-07-scanned", "note-injection-03")
BUILDERS = tuple(name for name in CATALOGUE if name not in LEFT_OUT)
# The type a producer mistakes each type for.
CONFUSED = {
    "GENOMIC_REPORT": "LAB_REPORT",
    "LAB_REPORT": "PATHOLOGY_REPORT",
    "PATHOLOGY_REPORT": "LAB_REPORT",
    "CLINICAL_NOTE": "ADMINISTRATIVE",
    "ADMINISTRATIVE": "CLINICAL_NOTE",
}
RIGHT = "right"
BLIND_SPOT = "extra-type"


@dataclass(frozen=True)
class TrustDoc:
    """One document of a batch: its PDF, the correct classification, the producer's answer and what was
    planted in it (`RIGHT`, or the kind of wrong answer)."""

    doc_id: str
    producer: str
    planted: str
    pdf: bytes
    truth: dict[str, Any]
    answer: dict[str, Any]
    production: str  # the production classifier's dominant type

    @property
    def wrong(self) -> bool:
        return self.planted != RIGHT


# ----------------------------------------------------------------- wrong answers
Plant = Callable[[dict[str, Any], list[str]], bool]


def _largest(d: dict[str, Any]) -> dict[str, Any]:
    segment: dict[str, Any] = max(d["segments"], key=lambda s: s["end_page"] - s["start_page"])
    return segment


def _wrong_type(d: dict[str, Any], types: list[str]) -> bool:
    """The largest segment's main type given to the type it is mistaken for, evidence and shares moving with
    the label: consistent and verbatim, but the pages read as the other type (the content rules' catch)."""
    s = _largest(d)
    old = primary(s)
    target = entry(s, CONFUSED[old["document_type"]])
    old["document_type"], target["document_type"] = target["document_type"], old["document_type"]
    finalise(d, types)
    return True


def _extra_type(d: dict[str, Any], types: list[str]) -> bool:
    """A type the largest segment does not hold, claimed SECONDARY with a third of its share and quoting the
    main type's last evidence: well-formed and verbatim, and no rule objects (a false accept for the audits)."""
    s = _largest(d)
    main = primary(s)
    other = entry(s, CONFUSED[main["document_type"]])
    if other["presence_level"] != "NO_EVIDENCE" or not main["evidence"]:
        return False
    main["share"] = round(main["share"] - 0.3, 4)
    other.update(presence_level="SECONDARY", share=0.3, confidence=0.7, evidence=[main["evidence"][-1]])
    finalise(d, types)
    return True


def _late_boundary(d: dict[str, Any], types: list[str]) -> bool:
    """The first boundary one page late: the first segment takes the next document's first page."""
    if len(d["segments"]) < 2 or d["segments"][1]["end_page"] == d["segments"][1]["start_page"]:
        return False
    first, second = d["segments"][0], d["segments"][1]
    first["end_page"] += 1
    second["start_page"] += 1
    for t in second["types"]:
        t["evidence"] = [e for e in t["evidence"] if e["page"] >= second["start_page"]]
    finalise(d, types)
    return True


def _merged(d: dict[str, Any], types: list[str]) -> bool:
    """The first two documents of a packet as one segment of the second one's type."""
    if len(d["segments"]) < 2:
        return False
    first, second = d["segments"][0], d["segments"][1]
    second["start_page"] = first["start_page"]
    del d["segments"][0]
    for index, segment in enumerate(d["segments"], start=1):
        segment["segment_index"] = index
    finalise(d, types)
    return True


# kind -> (how it is planted, its weight among wrong answers); a kind that does not fit the document (a
# boundary in a one-document PDF) gives way to the next one drawn.
PLANTS: dict[str, tuple[Plant, float]] = {
    "wrong-type": (_wrong_type, 0.45),
    "extra-type": (_extra_type, 0.35),
    "late-boundary": (_late_boundary, 0.1),
    "merged": (_merged, 0.1),
}


def plant(answer: dict[str, Any], rng: random.Random, types: list[str], *, blind_spot: bool = True) -> str:
    """Make the answer wrong in place; returns the kind planted (never `BLIND_SPOT` without `blind_spot`)."""
    kinds = [k for k in PLANTS if blind_spot or k != BLIND_SPOT]
    weights = [PLANTS[k][1] for k in kinds]
    for _ in range(20):
        kind = rng.choices(kinds, weights)[0]
        trial = copy.deepcopy(answer)
        if PLANTS[kind][0](trial, types):
            answer.clear()
            answer.update(trial)
            return kind
    _wrong_type(answer, types)  # fits every document
    return "wrong-type"


# ----------------------------------------------------------------- documents and batches
def _spec(builder: str, seed: str, doc_id: str) -> DocSpec:
    kind, sections, fax_header = CATALOGUE[builder](random.Random(seed))
    return DocSpec(
        doc_id=doc_id, title=f"{kind} {doc_id} (synthetic)", sections=sections, fax_header=fax_header
    )


def make_doc(batch: str, number: int, producer: str, wrong: bool, profile: Profile) -> TrustDoc:
    """Document `number` of the batch: a PDF from a catalogue builder (drawn again until its truth passes the
    generator's self-checks), the truth, and the producer's answer (confidences of its own; wrong if asked)."""
    rng = random.Random(f"arbiter-trust:{batch}:{number}")
    builder = rng.choice(BUILDERS)
    doc_id = f"{batch[0]}{number:04d}-{builder}"
    for attempt in range(10):
        doc = _spec(builder, f"arbiter-trust:{batch}:{number}:{attempt}", doc_id)
        pdf, pages = render(doc)
        truth = classification(doc, profile)
        try:
            check(doc, pages, truth, profile)
        except AssertionError:
            continue
        break
    else:  # pragma: no cover - every builder passes within a few seeds
        raise RuntimeError(f"no draw of {builder} passed the generator's checks")
    types = profile.taxonomy.document_types
    answer = copy.deepcopy(truth)
    answer["producer"] = {"name": producer, "version": "1"}
    # The producer's confidence in its main types: lower when it is wrong (hedging, as its extra types do),
    # and on some documents it finds hard though it is right. The risk score reads it (the calibration's x).
    hard = wrong or rng.random() < HARD_SHARE
    sure = rng.uniform(0.61, 0.8) if hard else rng.uniform(0.82, 0.99)
    for segment in answer["segments"]:
        primary(segment)["confidence"] = round(sure, 2)
    planted = plant(answer, rng, types, blind_spot=producer != NEW) if wrong else RIGHT
    production = truth["dominant_type"]
    if rng.random() < PRODUCTION_WRONG:
        production = rng.choice([t for t in types if t != production])
    return TrustDoc(doc_id, producer, planted, pdf, truth, answer, production)


def producers(batch: str, size: int, new_share: float) -> list[str]:
    """Who classified each document: the known producers in turn, and the new one at `new_share` of the
    documents, at places drawn once for the batch."""
    rng = random.Random(f"arbiter-trust:{batch}:producers")
    new_at = set(rng.sample(range(size), round(size * new_share)))
    known = list(KNOWN)
    out, turn = [], 0
    for i in range(size):
        if i in new_at:
            out.append(NEW)
        else:
            out.append(known[turn % len(known)])
            turn += 1
    return out


def make_batch(
    batch: str, size: int, new_share: float = 0.0, profile: Profile | None = None
) -> list[TrustDoc]:
    """The batch's documents. Each producer's wrong answers are exactly its share of its documents (rounded),
    at places drawn once for the batch."""
    profile = profile or load_profile()
    who = producers(batch, size, new_share)
    rng = random.Random(f"arbiter-trust:{batch}:wrong")
    wrong: set[int] = set()
    for producer, share in {**KNOWN, NEW: NEW_WRONG}.items():
        mine = [i for i, p in enumerate(who) if p == producer]
        wrong |= set(rng.sample(mine, round(len(mine) * share)))
    return [make_doc(batch, i, who[i], i in wrong, profile) for i in range(size)]


@dataclass(frozen=True)
class BatchFiles:
    """Where a batch was written."""

    folder: Path
    pdfs: Path
    classifications: Path
    production: Path
    truth: Path
    planted: Path


def dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_batch(folder: Path, docs: list[TrustDoc]) -> BatchFiles:
    """pdfs/, classifications/ (the producers' answers), truth/ (the correct classifications), production.csv
    and planted.csv (doc_id, producer, what was planted) under `folder`."""
    files = BatchFiles(
        folder,
        folder / "pdfs",
        folder / "classifications",
        folder / "production.csv",
        folder / "truth",
        folder / "planted.csv",
    )
    for path in (files.pdfs, files.classifications, files.truth):
        path.mkdir(parents=True, exist_ok=True)
    production, planted = io.StringIO(), io.StringIO()
    production.write("doc_id,dominant_type\n")
    planted_rows = csv.writer(planted, lineterminator="\n")
    planted_rows.writerow(["doc_id", "producer", "planted"])
    for doc in docs:
        (files.pdfs / f"{doc.doc_id}.pdf").write_bytes(doc.pdf)
        (files.classifications / f"{doc.doc_id}.json").write_text(dump(doc.answer), encoding="utf-8")
        (files.truth / f"{doc.doc_id}.json").write_text(dump(doc.truth), encoding="utf-8")
        production.write(f"{doc.doc_id},{doc.production}\n")
        planted_rows.writerow([doc.doc_id, doc.producer, doc.planted])
    files.production.write_text(production.getvalue(), encoding="utf-8")
    files.planted.write_text(planted.getvalue(), encoding="utf-8")
    return files
