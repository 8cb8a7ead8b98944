"""A candidate page reader, fitted on the corpus (and fixtures) and, when given, the pages clinicians reviewed,
with the held-out figures that say whether it is better (`arbiter model train`).

Two questions, each answered on pages the model being measured never saw:
- the corpus: leave-one-source-out page accuracy per type, fitted without and with the reviewed pages (they
  are always in training, never held out): do the reviewed pages cost anything on the sources we know?
- the reviewed pages: k folds by document; the shipped reader (which never saw them) against a candidate
  fitted on the corpus and the other folds: does the candidate read this kind of page where the shipped
  one did not?

The candidate's temperature is fitted on both held-out sets together. Fitting needs scikit-learn.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arbiter.reader.corpus import TYPES
from arbiter.reader.model import PageReader
from arbiter.reader.train import (
    GROUND_TRUTH,
    HeldOut,
    TrainPage,
    expected_calibration_error,
    fit,
    fit_temperature,
    report,
    softmax,
)

Log = Callable[[str], None]


def _weights(pages: Sequence[TrainPage], truth_weight: float) -> list[float]:
    return [truth_weight if p.source == GROUND_TRUTH else 1.0 for p in pages]


def corpus_held_out(
    pages: Sequence[TrainPage],
    always: Sequence[TrainPage] = (),
    *,
    truth_weight: float = 1.0,
    c: float = 4.0,
    log: Log | None = None,
) -> HeldOut:
    """Leave-one-source-out logits for every page of `pages`, each model fitted on the other sources and
    on `always` (weighted `truth_weight`), which is never held out."""
    sources = sorted({p.source for p in pages})
    logits = np.zeros((len(pages), len(TYPES)))
    for source in sources:
        train = [p for p in pages if p.source != source] + list(always)
        reader = fit(train, c=c, extra_weight=_weights(train, truth_weight)).reader()
        for i, page in enumerate(pages):
            if page.source == source:
                logits[i] = reader.logits(page.text)[0]
        if log:
            log(f"held out {source}" + (" (with the reviewed pages)" if always else ""))
    return HeldOut(logits, np.asarray([TYPES.index(p.type) for p in pages]), list(pages))


def folds_of(doc_ids: Sequence[str], k: int) -> dict[str, int]:
    """Documents into k folds, round robin in doc_id order (deterministic)."""
    return {doc_id: i % k for i, doc_id in enumerate(sorted(set(doc_ids)))}


def truth_held_out(
    base: Sequence[TrainPage],
    truth: Sequence[TrainPage],
    k: int,
    *,
    truth_weight: float = 1.0,
    c: float = 4.0,
    log: Log | None = None,
) -> HeldOut:
    """The reviewed pages' logits, each from a candidate fitted on `base` and the other folds' documents."""
    fold = folds_of([p.item for p in truth], k)
    logits = np.zeros((len(truth), len(TYPES)))
    for f in range(k):
        train = list(base) + [p for p in truth if fold[p.item] != f]
        reader = fit(train, c=c, extra_weight=_weights(train, truth_weight)).reader()
        for i, page in enumerate(truth):
            if fold[page.item] == f:
                logits[i] = reader.logits(page.text)[0]
        if log:
            log(f"held out fold {f + 1} of {k} of the reviewed documents")
    return HeldOut(logits, np.asarray([TYPES.index(p.type) for p in truth]), list(truth))


def accuracy(right: np.ndarray, labels: np.ndarray, pages: Sequence[TrainPage]) -> dict[str, Any]:
    """Page accuracy overall and per type, and the share of documents read right on every page."""
    per_doc: dict[str, bool] = {}
    for ok, page in zip(right.tolist(), pages, strict=True):
        per_doc[page.item] = per_doc.get(page.item, True) and bool(ok)
    return {
        "pages": len(pages),
        "accuracy": round(float(right.mean()), 4) if len(pages) else None,
        "per_type": {
            t: round(float(right[labels == k].mean()), 4) for k, t in enumerate(TYPES) if (labels == k).any()
        },
        "documents_all_right": round(sum(per_doc.values()) / len(per_doc), 4) if per_doc else None,
    }


def shipped_on(reader: PageReader, pages: Sequence[TrainPage]) -> dict[str, Any]:
    """How a reader (one that never saw these pages) reads them."""
    labels = np.asarray([TYPES.index(p.type) for p in pages])
    right = np.asarray([reader.read(p.text).best()[0] == p.type for p in pages])
    return accuracy(right, labels, pages)


def train_candidate(
    base: Sequence[TrainPage],
    truth: Sequence[TrainPage],
    *,
    shipped: PageReader,
    k: int = 5,
    truth_weight: float = 2.0,
    c: float = 4.0,
    version: str = "",
    note: str = "",
    log: Log | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate reader's data (write it with train.write_reader) and its before/after report."""
    without = corpus_held_out(base, c=c, log=log)
    t_without = fit_temperature(without.logits, without.labels)
    summary: dict[str, Any] = {"corpus": {"without_ground_truth": _brief(report(without, t_without))}}
    held_logits, held_labels = without.logits, without.labels
    documents = sorted({p.item for p in truth})
    if truth:
        k = max(2, min(k, len(documents)))
        with_truth = corpus_held_out(base, truth, truth_weight=truth_weight, c=c, log=log)
        folds = truth_held_out(base, truth, k, truth_weight=truth_weight, c=c, log=log)
        held_logits = np.vstack([with_truth.logits, folds.logits])
        held_labels = np.concatenate([with_truth.labels, folds.labels])
        temperature = fit_temperature(held_logits, held_labels)
        summary["corpus"]["with_ground_truth"] = _brief(report(with_truth, temperature))
        right = softmax(folds.logits, temperature).argmax(axis=1) == folds.labels
        summary["ground_truth"] = {
            "documents": len(documents),
            "folds": k,
            "weight": truth_weight,
            "pages_by_type": dict(sorted(Counter(p.type for p in truth).items())),
            "shipped": shipped_on(shipped, truth) | {"reader": shipped.version},
            "candidate": accuracy(right, folds.labels, folds.pages),
        }
    else:
        temperature = t_without
    calibration = expected_calibration_error(softmax(held_logits, temperature), held_labels)
    summary["temperature"] = round(temperature, 4)
    summary["calibration"] = calibration
    pages = list(base) + list(truth)
    fitted = fit(pages, c=c, temperature=temperature, extra_weight=_weights(pages, truth_weight))
    data = fitted.data
    data["version"] = version
    corpus = summary["corpus"].get("with_ground_truth") or summary["corpus"]["without_ground_truth"]
    trained: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "note": note,
        "c": c,
        "sources": sorted({p.source for p in pages}),
        "pages": dict(sorted(Counter(p.type for p in pages).items())),
        "held_out": {
            "accuracy": corpus["accuracy"],
            "per_type": corpus["per_type"],
            "ece": calibration["ece"],
        },
    }
    if truth:
        gt = summary["ground_truth"]
        trained["ground_truth"] = {
            "documents": gt["documents"],
            "pages": len(truth),
            "weight": truth_weight,
            "folds": gt["folds"],
            "held_out": {
                "shipped": {"reader": shipped.version, **_figures(gt["shipped"])},
                "candidate": _figures(gt["candidate"]),
            },
            "corpus_without": {
                k: summary["corpus"]["without_ground_truth"][k] for k in ("accuracy", "per_type")
            },
        }
    data["trained"] = trained
    return data, summary


def _brief(full: dict[str, Any]) -> dict[str, Any]:
    return {"pages": full["pages"], "accuracy": full["accuracy"], "per_type": full["per_type"]}


def _figures(side: dict[str, Any]) -> dict[str, Any]:
    return {k: side[k] for k in ("accuracy", "per_type", "documents_all_right")}
