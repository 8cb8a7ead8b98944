"""Fitting the page reader: a multinomial logistic regression over named page features, calibrated by a
temperature fitted on held-out sources, written as plain JSON (arbiter/reader/model.py reads it).

Generalisation across sources is the point, so:
- a feature is kept only when pages of at least ``min_sources`` training sources show it (a hospital's
  name or one vendor's boilerplate cannot become a rule; each clinician-reviewed document counts as one);
- every training page is weighted so that each (source, type) pair weighs the same in total, and each
  type the same: a source with 80 lab pages does not drown one with 8;
- the temperature is fitted on out-of-source predictions (each source predicted by a model fitted on
  the others), so the probabilities mean what they say on documents from a source never seen.

Fitting needs scikit-learn (the ``train`` extra); reading does not.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from arbiter.reader.corpus import TYPES
from arbiter.reader.features import VIEWS, feature_counts
from arbiter.reader.model import FORMAT, PageReader, write_json_file
from arbiter.reader.pages import FIXTURE_SOURCE as FIXTURE_SOURCE  # what fitting reads, named here too
from arbiter.reader.pages import TrainPage as TrainPage
from arbiter.reader.pages import corpus_pages as corpus_pages
from arbiter.reader.pages import corpus_pairs as corpus_pairs
from arbiter.reader.pages import fixture_pages as fixture_pages
from arbiter.reader.pages import ingest_items as ingest_items

GROUND_TRUTH = "ground-truth"  # pages clinicians reviewed (arbiter/reader/ground_truth.py)


def origin_of(page: TrainPage) -> str:
    """What `min_sources` counts: a corpus source, or for ground truth each reviewed document (production
    documents carry no source; a word must still show on pages of two of them)."""
    return f"{GROUND_TRUTH}/{page.item}" if page.source == GROUND_TRUTH else page.source


@dataclass
class Fitted:
    data: dict[str, Any]

    def reader(self) -> PageReader:
        return PageReader(self.data)


def _weights(pages: Sequence[TrainPage], extra: Sequence[float] | None = None) -> np.ndarray:
    pair = Counter((p.source, p.type) for p in pages)
    sources_per_type = Counter(t for _, t in pair)
    w = np.asarray([1.0 / (pair[(p.source, p.type)] * sources_per_type[p.type]) for p in pages])
    w *= len(pages) / w.sum()
    if extra is not None:
        w *= np.asarray(extra)
    return w


def fit(
    pages: Sequence[TrainPage],
    *,
    view: str = "full",
    c: float = 4.0,
    min_sources: int = 2,
    min_pages: int = 2,
    temperature: float | None = None,
    extra_weight: Sequence[float] | None = None,
) -> Fitted:
    """A reader fitted on these pages (temperature 1 unless given: see calibrate)."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    chosen = VIEWS[view]
    counts = [feature_counts(p.text, chosen) for p in pages]
    seen_sources: dict[str, set[str]] = defaultdict(set)
    seen_pages: Counter[str] = Counter()
    for page, found in zip(pages, counts, strict=True):
        origin = origin_of(page)
        for feat in found:
            seen_sources[feat].add(origin)
            seen_pages[feat] += 1
    vocab = sorted(f for f, s in seen_sources.items() if len(s) >= min_sources and seen_pages[f] >= min_pages)
    index = {f: i for i, f in enumerate(vocab)}
    rows, cols, vals = [], [], []
    for r, found in enumerate(counts):
        entries = [(index[f], math.log1p(n)) for f, n in found.items() if f in index]
        norm = math.sqrt(sum(v * v for _, v in entries)) or 1.0
        for col, v in entries:
            rows.append(r)
            cols.append(col)
            vals.append(v / norm)
    matrix = csr_matrix((vals, (rows, cols)), shape=(len(pages), len(vocab)))
    present = [t for t in TYPES if any(p.type == t for p in pages)]
    labels = np.asarray([present.index(p.type) for p in pages])
    model = LogisticRegression(C=c, max_iter=2000, tol=1e-5)
    model.fit(matrix, labels, sample_weight=_weights(pages, extra_weight))
    coef = np.zeros((len(TYPES), len(vocab)))
    bias = np.full(len(TYPES), -30.0)  # a type no training page had is never read
    for k, name in enumerate(present):
        coef[TYPES.index(name)] = model.coef_[k] if len(present) > 2 else (model.coef_[0] * (1 if k else -1))
        bias[TYPES.index(name)] = model.intercept_[k] if len(present) > 2 else 0.0
    features = {
        name: [round(float(x), 4) for x in coef[:, i]]
        for i, name in enumerate(vocab)
        if np.abs(coef[:, i]).max() >= 5e-4
    }
    data = {
        "format": FORMAT,
        "version": "",
        "view": view,
        "types": list(TYPES),
        "bias": [round(float(b), 4) for b in bias],
        "temperature": round(temperature, 4) if temperature else 1.0,
        "trained": {},
        "features": features,
    }
    return Fitted(data)


def log_probs(reader: PageReader, texts: Iterable[str]) -> np.ndarray:
    return np.asarray([reader.logits(t)[0] for t in texts])


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature that minimises the negative log-likelihood of held-out predictions."""
    best_t, best_nll = 1.0, math.inf
    for t in np.exp(np.linspace(math.log(0.2), math.log(8.0), 161)):
        scaled = logits / t
        scaled -= scaled.max(axis=1, keepdims=True)
        logp = scaled - np.log(np.exp(scaled).sum(axis=1, keepdims=True))
        nll = -float(logp[np.arange(len(labels)), labels].mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return best_t


def softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    scaled = logits / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    e = np.exp(scaled)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> dict[str, Any]:
    """ECE of the top-class probability, with the reliability table (confidence, accuracy, count per bin)."""
    top = probs.max(axis=1)
    right = probs.argmax(axis=1) == labels
    table = []
    ece = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        mask = (top > lo) & (top <= hi) if b else (top >= lo) & (top <= hi)
        n = int(mask.sum())
        if not n:
            continue
        conf, acc = float(top[mask].mean()), float(right[mask].mean())
        ece += n / len(labels) * abs(conf - acc)
        table.append(
            {"bin": f"{lo:.1f}-{hi:.1f}", "pages": n, "confidence": round(conf, 3), "accuracy": round(acc, 3)}
        )
    return {"ece": round(ece, 4), "reliability": table}


@dataclass
class HeldOut:
    """Each page's logits from a model that never saw its source."""

    logits: np.ndarray
    labels: np.ndarray
    pages: list[TrainPage]


def out_of_source(
    pages: Sequence[TrainPage],
    *,
    view: str = "full",
    c: float = 4.0,
    log: Callable[[str], None] | None = None,
    extra_weight: Sequence[float] | None = None,
) -> HeldOut:
    """Leave-one-source-out logits for every page."""
    sources = sorted({p.source for p in pages})
    logits = np.zeros((len(pages), len(TYPES)))
    for source in sources:
        train_idx = [i for i, p in enumerate(pages) if p.source != source]
        test_idx = [i for i, p in enumerate(pages) if p.source == source]
        weights = [extra_weight[i] for i in train_idx] if extra_weight is not None else None
        reader = fit([pages[i] for i in train_idx], view=view, c=c, extra_weight=weights).reader()
        for i in test_idx:
            logits[i] = reader.logits(pages[i].text)[0]
        if log:
            log(f"held out {source}: {len(test_idx)} pages")
    labels = np.asarray([TYPES.index(p.type) for p in pages])
    return HeldOut(logits, labels, list(pages))


def report(held: HeldOut, temperature: float) -> dict[str, Any]:
    """Held-out page accuracy overall, per type and per source, and calibration."""
    probs = softmax(held.logits, temperature)
    right = probs.argmax(axis=1) == held.labels
    per_type = {
        t: round(float(right[held.labels == k].mean()), 4)
        for k, t in enumerate(TYPES)
        if (held.labels == k).any()
    }
    per_source: dict[str, Any] = {}
    for source in sorted({p.source for p in held.pages}):
        mask = np.asarray([p.source == source for p in held.pages])
        per_source[source] = {"pages": int(mask.sum()), "accuracy": round(float(right[mask].mean()), 4)}
    return {
        "pages": len(held.pages),
        "accuracy": round(float(right.mean()), 4),
        "per_type": per_type,
        "per_source": per_source,
        "calibration": expected_calibration_error(probs, held.labels),
    }


def train_reader(
    pages: Sequence[TrainPage],
    *,
    view: str = "full",
    c: float = 4.0,
    version: str = "",
    note: str = "",
    log: Callable[[str], None] | None = None,
    extra_weight: Sequence[float] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A calibrated reader fitted on every page, with its leave-one-source-out report."""
    held = out_of_source(pages, view=view, c=c, log=log, extra_weight=extra_weight)
    temperature = fit_temperature(held.logits, held.labels)
    summary = report(held, temperature)
    fitted = fit(pages, view=view, c=c, temperature=temperature, extra_weight=extra_weight)
    fitted.data["version"] = version
    fitted.data["trained"] = {
        "date": dt.date.today().isoformat(),
        "note": note,
        "c": c,
        "sources": sorted({p.source for p in pages}),
        "pages": dict(sorted(Counter(p.type for p in pages).items())),
        "held_out": {k: summary[k] for k in ("accuracy", "per_type")}
        | {"ece": summary["calibration"]["ece"]},
    }
    return fitted.data, summary


def write_reader(data: dict[str, Any], path: Path) -> None:
    """One feature a line, sorted, so a change of weights reads as a diff."""
    write_json_file(data, path)


SHIPPED = "page_reader.json"
STARTS = "start_reader.json"
BASELINE = "baseline_reader.json"  # the offline baseline classifier's own reader: the words view
BASELINE_VIEW = "words"


def main(argv: list[str] | None = None) -> int:
    """Fit the shipped reader on the committed corpus and the fixtures: `python -m arbiter.reader.train`."""
    import argparse
    import hashlib
    import sys

    from arbiter.reader.corpus import default_root, load_corpus
    from arbiter.reader.model import PACKAGED

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument(
        "--corpus", type=Path, default=None, help="corpus folder (default: the checkout's corpus/)"
    )
    parser.add_argument("--out", type=Path, default=PACKAGED / SHIPPED)
    parser.add_argument("--version", default=dt.date.today().isoformat())
    parser.add_argument(
        "--only",
        choices=("check", "baseline"),
        default=None,
        help="refit only the content check's readers, or only the baseline classifier's (default: all three)",
    )
    args = parser.parse_args(argv)
    docs = load_corpus(args.corpus or default_root())
    pages = corpus_pages(docs) + fixture_pages()
    out: dict[str, Any] = {}
    if args.only != "check":
        base, base_summary = train_reader(
            pages,
            view=BASELINE_VIEW,
            version=args.version,
            note="corpus/ and arbiter/demo fixtures; the baseline classifier's reader (words view)",
            log=lambda m: print(m, file=sys.stderr),
        )
        base_path = args.out.parent / BASELINE
        write_reader(base, base_path)
        out["baseline_file"] = str(base_path)
        out["baseline_sha256"] = hashlib.sha256(base_path.read_bytes()).hexdigest()
        out["baseline_held_out"] = {k: base_summary[k] for k in ("accuracy", "calibration")}
    if args.only == "baseline":
        print(json.dumps(out, indent=1))
        return 0
    data, summary = train_reader(
        pages,
        version=args.version,
        note="corpus/ and arbiter/demo fixtures",
        log=lambda m: print(m, file=sys.stderr),
    )
    write_reader(data, args.out)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    from arbiter.reader.starts import fit_starts, write_starts

    pairs = corpus_pairs(docs)
    starts = fit_starts(pairs)
    starts["version"] = args.version
    starts["trained"] = {
        "date": dt.date.today().isoformat(),
        "sources": sorted({p.source for p in pairs}),
        "pairs": len(pairs),
        "starts": sum(p.starts for p in pairs),
    }
    starts_path = args.out.parent / STARTS
    write_starts(starts, starts_path)
    out = out | {
        "file": str(args.out),
        "sha256": digest,
        "features": len(data["features"]),
        "starts_file": str(starts_path),
        "starts_sha256": hashlib.sha256(starts_path.read_bytes()).hexdigest(),
        **summary,
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
