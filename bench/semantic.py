"""Benchmark (semantic): does Arbiter escalate internally consistent WRONG answers and accept correct ones?

Every wrong answer here passes the rule-level consistency checks by construction: it is well-formed,
every segment's shares sum to 1, the mixture is the page-weighted segment shares (4 decimals, summing to
exactly 1), the dominant types are the arg-max, the page counts are right and every evidence snippet is
verbatim text of its claimed page inside its segment. Only its meaning is wrong: a segment labelled with
another type, a boundary in the wrong place, two documents merged, one split, two labels swapped, the
document's dominant type changed. Catching these takes semantic checks (rules about what the text says,
or a model), which is what this benchmark measures.

Inputs: every fixture PDF (fixtures/pdfs) with its correct classification (fixtures/classifications) and
every real PDF under `--corpus` (default ../shared/corpora/medical, never copied into the repository) with
its correct classification built from bench/semantic_truth.json. Seven generators turn each correct
answer into wrong ones (pure functions of the correct classification and the bundle); each wrong answer
is re-finalised (arbiter/demo/truth.finalise) so the rule-level consistency holds, and is checked: it must
differ from the truth in segments or types, and none of CONSISTENCY_CODES may fire on it (a case where
one fires is a generator bug; it is listed under `generation.inconsistent` and not measured).

Each answer then goes through the real chain, `arbiter.decide.governor.verify_with_retries`, twice: offline (no
LLM: the semantic phases are SKIPPED) and with the scripted sample model of fixtures/llm_samples.py as the
LLM (an LLMClient around SampleModel, one DocumentLLM per answer in VerifyContext, as the pipeline does).
The baseline classifier's own answers on every PDF are judged against the truth and verified the same way.

    .venv/bin/python bench/semantic.py [--quick] [--corpus DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
TRUTH_FILE = Path(__file__).resolve().parent / "semantic_truth.json"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "medical"

from arbiter.classify import get_classifier  # noqa: E402
from arbiter.contracts import DocumentBundle, FinalDecision, VerificationOutcome  # noqa: E402
from arbiter.contracts.profile import Profile, load_profile  # noqa: E402
from arbiter.decide.governor import verify_with_retries  # noqa: E402
from arbiter.demo.truth import finalise  # noqa: E402  (counts, dominant types, page-weighted mixture)
from arbiter.ingest import ingest_pdf  # noqa: E402
from arbiter.verifiers.base import VerifyContext  # noqa: E402
from arbiter.verifiers.textmatch import PageIndex  # noqa: E402
from arbiter.verifiers.textnorm import normalize_plain  # noqa: E402

KINDS = ("relabel_moved", "relabel_kept", "boundary_shift", "merge", "split", "swap", "doc_dominant")
MODES = ("offline", "sample_model")
QUICK_FIXTURES = ("packet-01", "note-discharge-04", "lab-quest-01")
QUICK_CORPUS = ("164947.pdf",)
PRODUCER = {"name": "semantic-bench", "version": "1"}
KEPT_SHARE = Decimal("0.1")  # relabel_kept: the true type, demoted to MENTIONED, keeps this share
LINE_CHARS = (12, 100)  # a verbatim evidence line picked from a page is this long (inclusive)

# Rule-level consistency: none of these may fire on a generated wrong answer (or on a correct one's
# truth file). A fixed list, so rules added later to catch meaning (new codes) are never mistaken for
# an inconsistent case.
CONSISTENCY_CODES = frozenset(
    {
        "V1.INVALID_JSON",
        "V1.SCHEMA_VIOLATION",
        "V1.DOC_ID_MISMATCH",
        "V1.SEGMENT_COUNT_MISMATCH",
        "V1.PAGE_OUT_OF_RANGE",
        "V1.INVERTED_PAGE_RANGE",
        "V1.PAGE_COUNT_MISMATCH",
        "V1.SEGMENT_INDEX_INVALID",
        "V1.CONFIDENCE_OUT_OF_RANGE",
        "V1.SHARE_OUT_OF_RANGE",
        "V1.UNKNOWN_DOCUMENT_TYPE",
        "V1.UNKNOWN_PRESENCE_LEVEL",
        "V1.MISSING_DOCUMENT_TYPE",
        "V1.DUPLICATE_DOCUMENT_TYPE",
        "V1.EVIDENCE_MISSING",
        "V1.PRIMARY_EVIDENCE_MISSING",
        "V2.SEGMENT_SHARES_SUM",
        "V2.MIXTURE_SHARES_SUM",
        "V2.PAGE_OVERLAP",
        "V2.INVERTED_PAGE_RANGE",
        "V2.MIXTURE_MISMATCH",
        "V2.DOMINANT_TYPE_MISMATCH",
        "V2.UNCOVERED_PAGES",
        "V3.HEADER_FOOTER_EVIDENCE",
        "V4.SNIPPET_WRONG_PAGE",
        "V4.SNIPPET_OUTSIDE_SEGMENT",
        "V4.SNIPPET_NOT_FOUND",
        "V4.SNIPPET_NUMBERS_DIFFER",
        "V4.PAGE_NO_TEXT_LAYER",
        "V4.ANCHOR_NOT_FOUND",
        "V4.SNIPPET_TOO_SHORT",
    }
)
TARGETS: dict[str, dict[str, Any]] = {
    "wrong_escalated_share": {"rule": ">=", "value": 0.95, "meaning": "share of wrong answers escalated"},
    "correct_escalated_share": {"rule": "<=", "value": 0.05, "meaning": "share of correct answers escalated"},
    "baseline_wrong_accepted": {
        "rule": "<=",
        "value": 0,
        "meaning": "baseline classifier answers that are wrong and yet accepted",
    },
}


@dataclass
class Doc:
    """One document: its bundle and its correct classification."""

    doc_id: str
    source: str  # "fixtures" or "corpus"
    pdf: Path
    bundle: DocumentBundle
    truth: dict[str, Any]


@dataclass
class Case:
    """One answer to verify: the correct one (kind "correct") or a generated wrong one."""

    doc_id: str
    source: str
    kind: str
    description: str
    data: dict[str, Any]
    decisions: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str | None] = field(default_factory=dict)
    first_codes: list[str] = field(default_factory=list)


# --- helpers over classification dicts ------------------------------------------------------------------


def _dec(value: float) -> Decimal:
    return Decimal(str(value))


def _r4(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)


def _by_type(segment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["document_type"]: t for t in segment["types"]}


def _pages(segment: dict[str, Any]) -> range:
    return range(segment["start_page"], segment["end_page"] + 1)


def _span(segment: dict[str, Any]) -> str:
    a, b = segment["start_page"], segment["end_page"]
    return f"p. {a}" if a == b else f"pp. {a}-{b}"


def _reasoning(kind: str, segment: dict[str, Any]) -> str:
    return f"{kind.replace('_', ' ').capitalize()} content on {_span(segment)}."


def signature(data: dict[str, Any]) -> tuple[Any, ...]:
    """What makes an answer right or wrong here: segment boundaries, each segment's and the document's type."""
    segments = tuple((s["start_page"], s["end_page"], s["dominant_type"]) for s in data["segments"])
    return (segments, data["dominant_type"])


def differences(answer: dict[str, Any], truth: dict[str, Any]) -> str:
    """A short account of how an answer's segments and types differ from the truth ('' when they agree)."""

    def show(data: dict[str, Any]) -> str:
        return ", ".join(f"{s['start_page']}-{s['end_page']} {s['dominant_type']}" for s in data["segments"])

    if signature(answer) == signature(truth):
        return ""
    return f"segments [{show(answer)}] vs truth [{show(truth)}]"


class Lines:
    """Verbatim evidence lines of a bundle's pages: picked deterministically, checked with V4's own locator."""

    def __init__(self, bundle: DocumentBundle, profile: Profile) -> None:
        self.index = PageIndex(bundle, profile.tolerances.fuzzy_match_threshold)
        self.profile = profile
        self.pages = {p.page_num: p for p in bundle.pages}
        self._cache: dict[int, list[str]] = {}
        counts: dict[str, int] = defaultdict(int)
        for page in bundle.pages:
            for line in {normalize_plain(x) for x in page.text.splitlines()}:
                counts[line] += 1
        self._seen = counts

    def verbatim(self, snippet: str, page: int) -> bool:
        """Found exactly (after V4's normalisation) on that page."""
        match = self.index.find(snippet, page)
        return match is not None and match.score >= 100.0

    def _ok(self, line: str, page: int) -> bool:
        low, high = LINE_CHARS
        if not low <= len(line) <= high or line[0].isdigit() or line[-1].isdigit() or line.endswith("-"):
            return False
        words = [w for w in line.split() if sum(c.isalpha() for c in w) >= 3]
        plain = normalize_plain(line)
        if len(words) < 2 or any(rx.search(plain) for rx in self.profile.header_footer_regexes):
            return False
        if any(p.casefold() in plain for p in self.profile.traps.injection_phrases):
            return False
        return self.verbatim(line, page)

    def of_page(self, page: int) -> list[str]:
        """Candidate lines of one page: those on no other page first, each in page order."""
        cached = self._cache.get(page)
        if cached is None:
            source = self.pages.get(page)
            cached = []
            if source is not None and source.has_text_layer and source.text.strip():
                found = [x.strip() for x in source.text.splitlines()]
                found = list(dict.fromkeys(x for x in found if x and self._ok(x, page)))
                cached = sorted(found, key=lambda x: self._seen[normalize_plain(x)] > 1)
            self._cache[page] = cached
        return cached

    def evidence(self, segment: dict[str, Any]) -> dict[str, Any] | None:
        """One evidence item for a segment: the first candidate line of its first page that has one, preferring
        a line no evidence of the segment already quotes."""
        used = {normalize_plain(e["snippet"]) for t in segment["types"] for e in t["evidence"]}
        found = [(page, line) for page in _pages(segment) for line in self.of_page(page)]
        fresh = [(page, line) for page, line in found if normalize_plain(line) not in used]
        for page, line in fresh or found:
            words = [w.strip(".,:;()[]") for w in line.split()]
            anchor = max(words, key=lambda w: (sum(c.isalpha() for c in w), -words.index(w)))
            return {"page": page, "snippet": line, "anchor": anchor}
        return None


@dataclass
class Ctx:
    profile: Profile
    lines: Lines

    @property
    def types(self) -> list[str]:
        return list(self.profile.taxonomy.document_types)

    @property
    def none(self) -> str:
        return self.profile.taxonomy.no_evidence_level

    @property
    def primary(self) -> str:
        return self.profile.taxonomy.presence_levels[0]

    @property
    def mentioned(self) -> str:
        """The weakest level short of no evidence (MENTIONED in the medical profile)."""
        return [x for x in self.profile.taxonomy.presence_levels if x != self.none][-1]


def refinalise(data: dict[str, Any], ctx: Ctx, kind: str) -> dict[str, Any]:
    """Renumber the segments and make counts, dominant types and the mixture agree with them."""
    for number, segment in enumerate(data["segments"], start=1):
        segment["segment_index"] = number
    data["producer"] = {**PRODUCER, "version": kind}
    return finalise(data, ctx.types)


def _clear(entry: dict[str, Any], ctx: Ctx) -> None:
    entry.update(presence_level=ctx.none, share=0.0, evidence=[])


def _relabel_move(segment: dict[str, Any], new: str, ctx: Ctx) -> None:
    """The segment's dominant type becomes `new`: it takes the old type's share, presence and evidence."""
    types = _by_type(segment)
    old = types[segment["dominant_type"]]
    entry = types[new]
    entry.update(
        presence_level=old["presence_level"],
        share=float(_dec(old["share"]) + _dec(entry["share"])),
        confidence=old["confidence"],
        evidence=old["evidence"] + entry["evidence"],
    )
    _clear(old, ctx)
    segment["dominant_type"] = new
    segment["classification_reasoning"] = _reasoning(new, segment)


def _repair(segment: dict[str, Any], ctx: Ctx) -> bool:
    """After pages left a segment: evidence off its pages is dropped; a present type left without evidence
    gets a verbatim line of the segment's pages (the dominant type) or gives its share to the dominant type."""
    pages = _pages(segment)
    dominant = max(segment["types"], key=lambda t: t["share"])
    for entry in segment["types"]:
        entry["evidence"] = [e for e in entry["evidence"] if e["page"] in pages]
    for entry in segment["types"]:
        if entry["presence_level"] == ctx.none or entry["evidence"]:
            continue
        if entry is dominant:
            line = ctx.lines.evidence(segment)
            if line is None:
                return False
            entry["evidence"] = [line]
        else:
            dominant["share"] = float(_dec(dominant["share"]) + _dec(entry["share"]))
            _clear(entry, ctx)
    return True


# --- the seven generators: (truth, ctx) -> [(description, wrong classification)] ---------------------------

Generated = list[tuple[str, dict[str, Any]]]


def relabel_moved(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """One segment's dominant type changed to each other type; its evidence moves with the label."""
    out: Generated = []
    for i, segment in enumerate(truth["segments"]):
        for new in ctx.types:
            if new == segment["dominant_type"]:
                continue
            data = copy.deepcopy(truth)
            _relabel_move(data["segments"][i], new, ctx)
            text = f"segment {i + 1} ({_span(segment)}) {segment['dominant_type']} -> {new}, evidence moved"
            out.append((text, refinalise(data, ctx, "relabel_moved")))
    return out


def relabel_kept(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """The new type is PRIMARY with a verbatim line of the segment as evidence; the true type keeps its
    evidence, demoted to MENTIONED with a small share."""
    out: Generated = []
    for i, segment in enumerate(truth["segments"]):
        line = ctx.lines.evidence(segment)
        if line is None:
            continue
        for new in ctx.types:
            old_type = segment["dominant_type"]
            if new == old_type:
                continue
            data = copy.deepcopy(truth)
            seg = data["segments"][i]
            types = _by_type(seg)
            old, entry = types[old_type], types[new]
            others = sum((_dec(t["share"]) for k, t in types.items() if k not in (old_type, new)), Decimal(0))
            share = _r4(Decimal(1) - KEPT_SHARE - others)
            rest = [_dec(t["share"]) for k, t in types.items() if k not in (old_type, new)]
            if share <= max([KEPT_SHARE, *rest]):  # the new type must be the clear arg-max
                continue
            evidence = [line, *(e for e in entry["evidence"] if e != line)]
            entry.update(
                presence_level=ctx.primary,
                share=float(share),
                confidence=old["confidence"],
                evidence=evidence,
            )
            old.update(presence_level=ctx.mentioned, share=float(KEPT_SHARE))
            seg["dominant_type"] = new
            seg["classification_reasoning"] = _reasoning(new, seg)
            text = f"segment {i + 1} ({_span(segment)}) {old_type} -> {new} (line of the page as evidence), {old_type} kept as MENTIONED"
            out.append((text, refinalise(data, ctx, "relabel_kept")))
    return out


def boundary_shift(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """A boundary between adjacent segments moved by one page, each way where both keep a page."""
    out: Generated = []
    segments = truth["segments"]
    for i in range(len(segments) - 1):
        for step in (-1, +1):
            left, right = segments[i], segments[i + 1]
            if (step < 0 and left["end_page"] == left["start_page"]) or (
                step > 0 and right["end_page"] == right["start_page"]
            ):
                continue
            data = copy.deepcopy(truth)
            a, b = data["segments"][i], data["segments"][i + 1]
            a["end_page"] += step
            b["start_page"] += step
            if not (_repair(a, ctx) and _repair(b, ctx)):
                continue
            moved = left["end_page"] if step < 0 else right["start_page"]
            where = "segment " + (f"{i + 2}" if step < 0 else f"{i + 1}")
            text = f"boundary between segments {i + 1} and {i + 2} moved: p. {moved} given to {where}"
            out.append((text, refinalise(data, ctx, "boundary_shift")))
    return out


def merge(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """Two adjacent segments merged into one: shares page-weighted, evidence of both."""
    out: Generated = []
    levels = list(ctx.profile.taxonomy.presence_levels)
    for i in range(len(truth["segments"]) - 1):
        data = copy.deepcopy(truth)
        a, b = data["segments"][i], data["segments"][i + 1]
        na, nb = len(_pages(a)), len(_pages(b))
        ta, tb = _by_type(a), _by_type(b)
        larger = a if na >= nb else b
        shares = {
            t: _r4((na * _dec(ta[t]["share"]) + nb * _dec(tb[t]["share"])) / (na + nb)) for t in ctx.types
        }
        top = larger["dominant_type"]
        best_other = max((v for t, v in shares.items() if t != top), default=Decimal(0))
        if shares[top] == best_other:  # a tie goes to the larger segment's type
            tied = next(t for t in ctx.types if t != top and shares[t] == best_other)
            shares[top] += Decimal("0.0001")
            shares[tied] -= Decimal("0.0001")
        top = max(ctx.types, key=lambda t: shares[t])
        shares[top] += Decimal(1) - sum(shares.values())
        entries = []
        for t in ctx.types:
            x, y = ta[t], tb[t]
            level = min(levels.index(x["presence_level"]), levels.index(y["presence_level"]))
            presence = levels[level]
            if t == top:
                presence = ctx.primary
            elif shares[t] > 0 and presence == ctx.primary:
                presence = levels[1]
            elif shares[t] == 0 and not (x["evidence"] or y["evidence"]):
                presence = ctx.none
            entries.append(
                {
                    "document_type": t,
                    "presence_level": presence,
                    "share": float(shares[t]),
                    "confidence": max(x["confidence"], y["confidence"]),
                    "evidence": x["evidence"] + y["evidence"],
                }
            )
        merged = {
            "segment_index": i + 1,
            "start_page": a["start_page"],
            "end_page": b["end_page"],
            "segment_page_count": na + nb,
            "dominant_type": top,
            "classification_reasoning": _reasoning(
                top, {"start_page": a["start_page"], "end_page": b["end_page"]}
            ),
            "types": entries,
        }
        data["segments"][i : i + 2] = [merged]
        text = (
            f"segments {i + 1} ({_span(a)} {a['dominant_type']}) and {i + 2} ({_span(b)} {b['dominant_type']}) "
            f"merged as {top}"
        )
        out.append((text, refinalise(data, ctx, "merge")))
    return out


def split(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """One multi-page segment split into two of the same type at each inner page boundary."""
    out: Generated = []
    for i, segment in enumerate(truth["segments"]):
        for cut in range(segment["start_page"], segment["end_page"]):
            data = copy.deepcopy(truth)
            first = data["segments"][i]
            second = copy.deepcopy(first)
            first["end_page"], second["start_page"] = cut, cut + 1
            if not (_repair(first, ctx) and _repair(second, ctx)):
                continue
            data["segments"][i + 1 : i + 1] = [second]
            text = f"segment {i + 1} ({_span(segment)} {segment['dominant_type']}) split after p. {cut}"
            out.append((text, refinalise(data, ctx, "split")))
    return out


def swap(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """Two segments of different types swap their types, each segment's evidence moving with its new label."""
    out: Generated = []
    segments = truth["segments"]
    for i in range(len(segments)):
        for j in range(i + 1, len(segments)):
            ti, tj = segments[i]["dominant_type"], segments[j]["dominant_type"]
            if ti == tj:
                continue
            data = copy.deepcopy(truth)
            _relabel_move(data["segments"][i], tj, ctx)
            _relabel_move(data["segments"][j], ti, ctx)
            text = f"segments {i + 1} ({_span(segments[i])} {ti}) and {j + 1} ({_span(segments[j])} {tj}) swap types"
            out.append((text, refinalise(data, ctx, "swap")))
    return out


def doc_dominant(truth: dict[str, Any], ctx: Ctx) -> Generated:
    """The document's dominant type changed to each other type: the fewest segments relabelled (those of the
    current dominant type, largest first), evidence moving with the label, the mixture recomputed."""
    out: Generated = []
    current = truth["dominant_type"]
    for new in ctx.types:
        if new == current:
            continue
        order = sorted(
            (i for i, s in enumerate(truth["segments"]) if s["dominant_type"] != new),
            key=lambda i: (
                truth["segments"][i]["dominant_type"] != current,
                -len(_pages(truth["segments"][i])),
                i,
            ),
        )
        data = copy.deepcopy(truth)
        changed: list[int] = []
        for i in order:
            _relabel_move(data["segments"][i], new, ctx)
            changed.append(i + 1)
            refinalise(data, ctx, "doc_dominant")
            if data["dominant_type"] == new:
                break
        if data["dominant_type"] != new:
            continue
        text = f"document {current} -> {new} (segments {', '.join(map(str, changed))} relabelled)"
        out.append((text, data))
    return out


GENERATORS: dict[str, Callable[[dict[str, Any], Ctx], Generated]] = {
    "relabel_moved": relabel_moved,
    "relabel_kept": relabel_kept,
    "boundary_shift": boundary_shift,
    "merge": merge,
    "split": split,
    "swap": swap,
    "doc_dominant": doc_dominant,
}


# --- inputs ----------------------------------------------------------------------------------------------


def _bundle(pdf: Path) -> DocumentBundle:
    result = ingest_pdf(pdf)
    if not isinstance(result, DocumentBundle):
        raise RuntimeError(f"{pdf.name} did not ingest: {result.message}")
    return result


def fixture_docs(only: tuple[str, ...] | None = None) -> list[Doc]:
    """Every fixture PDF with its correct classification (or those named)."""
    docs = []
    for path in sorted((FIXTURES / "classifications").glob("*.json")):
        if only is not None and path.stem not in only:
            continue
        pdf = FIXTURES / "pdfs" / f"{path.stem}.pdf"
        truth = json.loads(path.read_text(encoding="utf-8"))
        docs.append(Doc(path.stem, "fixtures", pdf, _bundle(pdf), truth))
    return docs


def truth_from_entry(entry: dict[str, Any], doc_id: str, profile: Profile) -> dict[str, Any]:
    """A full, valid ClassificationOutput from one semantic_truth.json entry (all profile types per segment)."""
    types = profile.taxonomy.document_types
    segments = []
    for number, seg in enumerate(entry["segments"], start=1):
        entries = []
        for kind in types:
            present = kind == seg["dominant_type"]
            entries.append(
                {
                    "document_type": kind,
                    "presence_level": profile.taxonomy.presence_levels[0]
                    if present
                    else profile.taxonomy.no_evidence_level,
                    "share": 1.0 if present else 0.0,
                    "confidence": 0.9,
                    "evidence": [dict(e) for e in seg["evidence"]] if present else [],
                }
            )
        segments.append(
            {
                "segment_index": number,
                "start_page": seg["start_page"],
                "end_page": seg["end_page"],
                "segment_page_count": 0,
                "dominant_type": "",
                "classification_reasoning": seg["reasoning"],
                "types": entries,
            }
        )
    data = {
        "doc_id": doc_id,
        "producer": {"name": "semantic-truth", "version": "1"},
        "number_of_segments": 0,
        "dominant_type": "",
        "vendor_signals": list(entry.get("vendor_signals", [])),
        "segments": segments,
        "document_mixture": [],
    }
    return finalise(data, types)


class TruthError(Exception):
    """semantic_truth.json does not fit the PDF it names."""


def check_truth(doc: Doc, profile: Profile) -> None:
    """Fail loudly when a truth snippet is not verbatim on its page, or the pages do not fit the document."""
    lines = Lines(doc.bundle, profile)
    segments = doc.truth["segments"]
    pages = [p for s in segments for p in _pages(s)]
    if pages != list(range(1, doc.bundle.total_pages + 1)):
        raise TruthError(
            f"semantic_truth.json: the segments of {doc.pdf.name} do not cover its pages once each"
        )
    for s in segments:
        for t in s["types"]:
            for e in t["evidence"]:
                where = f"{doc.pdf.name} p{e['page']}: {e['snippet']!r}"
                if not s["start_page"] <= e["page"] <= s["end_page"]:
                    raise TruthError(f"semantic_truth.json: snippet outside its segment: {where}")
                if not lines.verbatim(e["snippet"], e["page"]):
                    raise TruthError(f"semantic_truth.json: snippet not verbatim on its page: {where}")


def corpus_docs(
    corpus: Path, profile: Profile, only: tuple[str, ...] | None = None
) -> tuple[list[Doc], dict[str, Any]]:
    """The real PDFs under `corpus` that semantic_truth.json describes, each counted once, and a note."""
    note: dict[str, Any] = {"dir": str(corpus), "present": corpus.is_dir()}
    if not corpus.is_dir():
        note["note"] = f"corpus directory {corpus} is absent: real PDFs skipped, fixtures only"
        return [], note
    spec = json.loads(TRUTH_FILE.read_text(encoding="utf-8"))
    by_file = {e["file"]: e for e in spec["documents"]}
    docs: list[Doc] = []
    seen: dict[str, str] = {}
    duplicates: list[str] = []
    skipped: list[str] = []
    for pdf in sorted(corpus.glob("*.pdf")):
        if only is not None and pdf.name not in only:
            continue
        sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
        if sha in seen:
            duplicates.append(f"{pdf.name} is byte-identical to {seen[sha]}: counted once")
            continue
        seen[sha] = pdf.name
        entry = by_file.get(pdf.name)
        if entry is None:
            skipped.append(f"{pdf.name}: no entry in semantic_truth.json")
            continue
        if entry["sha256"] != sha:
            skipped.append(f"{pdf.name}: not the file semantic_truth.json was written for (sha256 differs)")
            continue
        bundle = _bundle(pdf)
        doc = Doc(bundle.doc_id, "corpus", pdf, bundle, truth_from_entry(entry, bundle.doc_id, profile))
        check_truth(doc, profile)
        docs.append(doc)
    note.update(documents=len(docs), duplicates=duplicates, skipped=skipped)
    return docs, note


# --- verification ----------------------------------------------------------------------------------------


class Chains:
    """verify_with_retries offline and with the sample model as the LLM (one DocumentLLM per answer)."""

    def __init__(self, profile: Profile, tmp: Path) -> None:
        self.profile = profile
        self.client: Any = None
        self.llm_note = ""
        self.llm_calls = 0
        self.semantic: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        try:
            from arbiter.llm.config import LLMSettings
            from arbiter.run.compose import llm_client
            from fixtures.llm_samples import SampleModel

            settings = LLMSettings(
                backend="replay", cache_dir=tmp / "llm-cache", use_cache=False, rpm=0, run_token_budget=0
            )
            self.client, _ = llm_client(settings, backend=SampleModel())
            self.llm_note = (
                "fixtures/llm_samples.SampleModel (the scripted model `--llm replay` replays) behind "
                "arbiter.llm.LLMClient; VerifyContext(llm=client.for_document(doc_id)) per answer, as the pipeline"
            )
        except Exception as exc:  # the offline figures still stand
            self.llm_note = f"sample model not wired: {type(exc).__name__}: {exc}"

    def modes(self) -> tuple[str, ...]:
        return MODES if self.client is not None else MODES[:1]

    def verify(self, data: dict[str, Any], bundle: DocumentBundle, mode: str) -> VerificationOutcome:
        raw = json.dumps(data, ensure_ascii=False).encode("utf-8")
        if mode == "offline":
            outcome = verify_with_retries(raw, bundle, self.profile)
        else:
            doc_llm = self.client.for_document(bundle.doc_id)
            outcome = verify_with_retries(raw, bundle, self.profile, context=VerifyContext(llm=doc_llm))
            self.llm_calls += doc_llm.usage()[0]
        self.semantic[mode][str(outcome.semantic_checks)] += 1
        return outcome

    def summary(self) -> dict[str, Any]:
        """Per mode: answers verified by semantic_checks (rules_only / rules_and_model), and the model's calls."""
        out: dict[str, Any] = {
            m: {"semantic_checks": dict(sorted(c.items()))} for m, c in self.semantic.items()
        }
        if "sample_model" in out:
            out["sample_model"]["llm_calls"] = self.llm_calls
        return out


def _codes(outcome: VerificationOutcome) -> list[str]:
    if not outcome.attempts:
        return []
    return sorted({i.code for r in outcome.attempts[0].verifier_results for i in r.issues})


def _escalated(outcome: VerificationOutcome) -> bool:
    return outcome.final_decision == FinalDecision.ESCALATE_TO_SME


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _tally(cases: list[Case], mode: str) -> dict[str, Any]:
    escalated = sum(c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME for c in cases)
    return {"cases": len(cases), "escalated": escalated, "share_escalated": _share(escalated, len(cases))}


def _met(name: str, value: float | None) -> bool:
    if value is None:
        return False
    bound = TARGETS[name]["value"]
    return bool(value >= bound if TARGETS[name]["rule"] == ">=" else value <= bound)


def _target(name: str) -> str:
    return f"{TARGETS[name]['rule']} {TARGETS[name]['value']}"


def generate(doc: Doc, ctx: Ctx) -> tuple[list[Case], list[dict[str, Any]]]:
    """Every wrong answer of one document, and any generated answer that is not really wrong (a bug)."""
    cases, bugs = [], []
    for kind, generator in GENERATORS.items():
        for description, data in generator(copy.deepcopy(doc.truth), ctx):
            if signature(data) == signature(doc.truth):
                bugs.append(
                    {"doc": doc.doc_id, "kind": kind, "description": description, "problem": "not wrong"}
                )
                continue
            cases.append(Case(doc.doc_id, doc.source, kind, description, data))
    return cases, bugs


def run(
    quick: bool = False,
    corpus: Path | None = None,
    fixtures: tuple[str, ...] | None = None,
    corpus_files: tuple[str, ...] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Generate, verify and tally; `quick` keeps a few documents (QUICK_FIXTURES, QUICK_CORPUS)."""
    say = log or (lambda _msg: None)
    started = time.perf_counter()
    profile = load_profile()
    corpus = DEFAULT_CORPUS if corpus is None else corpus
    if quick:
        fixtures = fixtures or QUICK_FIXTURES
        corpus_files = corpus_files or QUICK_CORPUS
    docs = fixture_docs(fixtures)
    real, corpus_note = corpus_docs(corpus, profile, corpus_files)
    docs += real
    say(f"semantic: {len(docs)} documents ({len(real)} real)")

    correct: list[Case] = []
    wrong: list[Case] = []
    generation_bugs: list[dict[str, Any]] = []
    applicable: dict[str, dict[str, int]] = {k: {"documents": 0, "cases": 0} for k in KINDS}
    for doc in docs:
        ctx = Ctx(profile, Lines(doc.bundle, profile))
        correct.append(Case(doc.doc_id, doc.source, "correct", "the correct classification", doc.truth))
        cases, bugs = generate(doc, ctx)
        generation_bugs += bugs
        for kind in KINDS:
            n = sum(c.kind == kind for c in cases)
            applicable[kind]["documents"] += n > 0
            applicable[kind]["cases"] += n
        wrong += cases
    bundles = {d.doc_id: d.bundle for d in docs}
    truths = {d.doc_id: d.truth for d in docs}
    sources = {d.doc_id: d.source for d in docs}

    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-semantic-") as tmp:
        chains = Chains(profile, Path(tmp))
        for mode in chains.modes():
            t0 = time.perf_counter()
            for case in correct + wrong:
                outcome = chains.verify(case.data, bundles[case.doc_id], mode)
                case.decisions[mode] = outcome.final_decision
                case.reasons[mode] = outcome.escalation_reason
                if mode == "offline":
                    case.first_codes = _codes(outcome)
            timings[f"verify_{mode}_s"] = round(time.perf_counter() - t0, 2)
            say(
                f"semantic: {len(correct) + len(wrong)} answers verified ({mode}) in {timings[f'verify_{mode}_s']} s"
            )

        inconsistent = [
            {
                "doc": c.doc_id,
                "kind": c.kind,
                "description": c.description,
                "codes": sorted(set(c.first_codes) & CONSISTENCY_CODES),
            }
            for c in correct + wrong
            if set(c.first_codes) & CONSISTENCY_CODES
        ]
        measured = [c for c in wrong if not set(c.first_codes) & CONSISTENCY_CODES]

        t0 = time.perf_counter()
        baseline = _baseline(docs, truths, sources, chains, profile)
        timings["baseline_s"] = round(time.perf_counter() - t0, 2)

    wrong_report: dict[str, Any] = {}
    correct_report: dict[str, Any] = {}
    for mode in chains.modes():
        overall = _tally(measured, mode)
        by_kind = {k: _tally([c for c in measured if c.kind == k], mode) for k in KINDS}
        by_source = {
            s: {
                **_tally([c for c in measured if c.source == s], mode),
                "by_kind": {
                    k: _tally([c for c in measured if c.source == s and c.kind == k], mode) for k in KINDS
                },
            }
            for s in ("fixtures", "corpus")
        }
        wrong_report[mode] = {
            **overall,
            "target": _target("wrong_escalated_share"),
            "met": _met("wrong_escalated_share", overall["share_escalated"]),
            "by_kind": by_kind,
            "by_source": by_source,
            "escalation_reasons": _reasons(measured, mode),
        }
        right = _tally(correct, mode)
        correct_report[mode] = {
            **right,
            "target": _target("correct_escalated_share"),
            "met": _met("correct_escalated_share", right["share_escalated"]),
            "by_source": {
                s: _tally([c for c in correct if c.source == s], mode) for s in ("fixtures", "corpus")
            },
            "escalated_documents": {
                c.doc_id: c.reasons[mode]
                for c in correct
                if c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME
            },
        }

    accepted: dict[str, list[str]] = {"both": [], "offline_only": [], "sample_model_only": []}
    for c in measured:
        off = c.decisions.get("offline") == FinalDecision.AUTO_ACCEPT
        llm = c.decisions.get("sample_model") == FinalDecision.AUTO_ACCEPT
        label = f"{c.doc_id} | {c.kind} | {c.description}"
        if off and llm:
            accepted["both"].append(label)
        elif off:
            accepted["offline_only"].append(label)
        elif llm:
            accepted["sample_model_only"].append(label)

    headline = wrong_report["offline"]["share_escalated"]
    met = {
        f"{name}.{mode}": report[mode]["met"]
        for name, report in (
            ("wrong_escalated_share", wrong_report),
            ("correct_escalated_share", correct_report),
        )
        for mode in chains.modes()
    }
    for mode in chains.modes():
        met[f"baseline_wrong_accepted.{mode}"] = baseline["wrong_accepted"][mode] <= 0
    return {
        "benchmark": "semantic",
        "mode": "quick" if quick else "full",
        "wrong_escalated_share": headline,  # offline (rules only): the figure bench/run.py judges
        "targets": {k: {**v, "target": _target(k)} for k, v in TARGETS.items()},
        "code": code_state(),
        "inputs": {
            "fixtures": {
                "dir": "fixtures/pdfs",
                "documents": sum(d.source == "fixtures" for d in docs),
                "note": "fixtures/scanned not included: its pages need OCR; bench/ocr_speed.py covers them",
            },
            "corpus": corpus_note,
        },
        "modes": {
            "offline": "verify_with_retries without an LLM: the V2/V3/V4 semantic phases are SKIPPED",
            "sample_model": chains.llm_note
            if chains.client is not None
            else f"not measured: {chains.llm_note}",
        },
        "verified": chains.summary(),
        "generation": {
            "kinds": {k: (GENERATORS[k].__doc__ or "").split("\n")[0] for k in KINDS},
            "applicable": applicable,
            "generated": len(wrong),
            "measured": len(measured),
            "checked_codes": sorted(CONSISTENCY_CODES),
            "inconsistent": inconsistent,
            "not_wrong": generation_bugs,
        },
        "wrong": wrong_report,
        "correct": correct_report,
        "accepted_wrong": accepted,
        "baseline": baseline,
        "met": met,
        "all_met": all(met.values()),
        "timings": timings,
        "wall_time_s": round(time.perf_counter() - started, 2),
    }


def code_state() -> dict[str, Any]:
    """The commit measured and any uncommitted change to the code that decides (verifiers, arbiter, fixtures)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return ""
        return done.stdout

    status = git("status", "--porcelain", "--untracked-files=all", "--", "arbiter", "verifiers", "fixtures")
    changed = [line[3:] for line in status.splitlines() if len(line) > 3]  # "XY path"
    return {"git_commit": git("rev-parse", "--short", "HEAD").strip() or None, "uncommitted_changes": changed}


def _reasons(cases: list[Case], mode: str) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for c in cases:
        if c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME:
            counts[str(c.reasons.get(mode))] += 1
    return dict(sorted(counts.items()))


def _baseline(
    docs: list[Doc],
    truths: dict[str, dict[str, Any]],
    sources: dict[str, str],
    chains: Chains,
    profile: Profile,
) -> dict[str, Any]:
    """The baseline classifier's own answer on every PDF: right or wrong against the truth, and decided how."""
    classifier = get_classifier("baseline")
    rows = []
    wrong_accepted = dict.fromkeys(chains.modes(), 0)
    for doc in docs:
        produced = classifier.classify(doc.bundle, profile)
        data = json.loads(produced.raw)
        diff = differences(data, truths[doc.doc_id])
        row: dict[str, Any] = {"doc": doc.doc_id, "source": sources[doc.doc_id], "right": not diff}
        if diff:
            row["wrong"] = diff
        for mode in chains.modes():
            outcome = chains.verify(data, doc.bundle, mode)
            row[mode] = str(outcome.final_decision)
            if diff and not _escalated(outcome):
                wrong_accepted[mode] += 1
        rows.append(row)
    return {
        "documents": len(rows),
        "right": sum(r["right"] for r in rows),
        "wrong": sum(not r["right"] for r in rows),
        "wrong_accepted": wrong_accepted,
        "target": _target("baseline_wrong_accepted"),
        "answers": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Semantic benchmark: consistent wrong answers vs Arbiter.")
    parser.add_argument("--quick", action="store_true", help="a few documents (the smoke test's size)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="directory of real PDFs")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--loso",
        action="store_true",
        help="leave one source out: each source of corpus/ judged by a reader fitted on the others (the headline)",
    )
    parser.add_argument("--only", nargs="*", help="with --loso: hold out only these sources")
    parser.add_argument(
        "--offline", action="store_true", help="with --loso: offline mode only (no sample model)"
    )
    parser.add_argument(
        "--lexicons-too",
        action="store_true",
        help="with --loso: the lexicons' contradiction rules run beside the reader",
    )
    args = parser.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if args.loso:
        from bench.semantic_loso import run as run_loso

        modes = ("offline",) if args.offline else None
        report = run_loso(
            quick=args.quick,
            only=tuple(args.only) if args.only else None,
            modes=modes,
            log=say,
            lexicons_too=True if args.lexicons_too else None,
        )
    else:
        report = run(quick=args.quick, corpus=args.corpus, log=say)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
