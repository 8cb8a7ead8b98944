"""Model scores against ground truth: dominant-type accuracy, confusion, page-level boundary
precision/recall/F1 and mixture MAE, for the primary model and the production classifier.

Definitions (the docs site's "Ground truth and metrics" page, docs/ground-truth/index.md):
- A document's boundaries are the start pages greater than 1 of its segments (page 1 starts every
  document, so it is no boundary); a one-segment document has none. Per document, TP = boundaries in
  both, FP = predicted only, FN = truth only; precision, recall and F1 are micro-averaged (sums over
  documents). A document where neither side has a boundary adds nothing to them but counts as an exact match.
- Mixture MAE: per document, the mean over the union of both mixtures' types of |share_truth − share_pred|
  (a type one side omits has share 0); the MAE is the mean of that over documents. Documents with two
  empty mixtures are left out.
- A prediction whose dominant type is missing or not a string is the label "(none)" and counts as wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field
from math import fsum
from typing import Any, Literal

from arbiter.metrics.result import Boundaries, MeanEstimate, ModelScores
from arbiter.metrics.stats import confusion, mean_estimate, rate

NO_LABEL = "(none)"
Model = Literal["primary", "production"]
Scope = Literal["sme", "all"]


@dataclass(slots=True)
class Prediction:
    """What one classification says, reduced to what the scores compare."""

    dominant: str
    boundaries: frozenset[int] = frozenset()
    mixture: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class Labelled:
    """One document's newest ground truth (as of the report's time) and what each model said."""

    doc_id: str
    sme: bool
    truth: Prediction
    primary: Prediction | None
    production: str | None
    run_id: str | None = None


def dominant_label(value: Any) -> str:
    return value if type(value) is str and value else NO_LABEL


def boundaries_from_starts(starts: Iterable[Any]) -> frozenset[int]:
    """Start pages greater than 1; anything that is not an integer page is ignored."""
    return frozenset(p for p in starts if type(p) is int and p > 1)


def mixture_from(entries: Any) -> dict[str, float]:
    """Shares by type from a document_mixture list; a type listed twice has its shares added, entries
    without a string type and a numeric share are ignored."""
    shares: dict[str, float] = {}
    if type(entries) is not list:
        return shares
    for entry in entries:
        if type(entry) is dict:
            kind, share = entry.get("document_type"), entry.get("share")
            if type(kind) is str and (type(share) is float or type(share) is int):
                shares[kind] = shares.get(kind, 0.0) + share
    return shares


def prediction(classification: Any) -> Prediction | None:
    """A Prediction from a classification dict (ClassificationOutput shape, possibly malformed)."""
    if not isinstance(classification, dict):
        return None
    segments = classification.get("segments")
    starts = (
        [s.get("start_page") for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []
    )
    return Prediction(
        dominant=dominant_label(classification.get("dominant_type")),
        boundaries=boundaries_from_starts(starts),
        mixture=mixture_from(classification.get("document_mixture")),
    )


def boundary_counts(truth: Set[int], predicted: Set[int]) -> tuple[int, int, int]:
    """(TP, FP, FN) of one document's predicted boundaries against the truth's."""
    tp = len(truth & predicted)
    return tp, len(predicted) - tp, len(truth) - tp


def mixture_error(truth: dict[str, float], predicted: dict[str, float]) -> float | None:
    """Mean absolute share difference over the union of types; None when both mixtures are empty."""
    kinds = truth.keys() | predicted.keys()
    if not kinds:
        return None
    return sum(abs(truth.get(k, 0.0) - predicted.get(k, 0.0)) for k in kinds) / len(kinds)


class ModelAccumulator:
    """Scores of one model in one scope, built one document at a time (constant memory per document)."""

    def __init__(self, model: Model, scope: Scope, structured: bool) -> None:
        self.model, self.scope, self.structured = model, scope, structured
        self.docs = self.missing = self.correct = 0
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.tp = self.fp = self.fn = self.with_boundaries = self.exact = 0
        self.errors: list[float] = []  # summed exactly at the end: the figures do not depend on read order

    def add(self, truth: Prediction, predicted: Prediction | str | None) -> None:
        if predicted is None:
            self.add_missing()
        elif isinstance(predicted, str):
            self.add_label(truth.dominant, predicted)
        else:
            tp, fp, fn = boundary_counts(truth.boundaries, predicted.boundaries)
            self.add_compared(
                truth.dominant,
                predicted.dominant,
                tp,
                fp,
                fn,
                mixture_error(truth.mixture, predicted.mixture),
            )

    def add_missing(self) -> None:
        self.docs += 1
        self.missing += 1

    def add_label(self, truth: str, label: str) -> None:
        self.docs += 1
        self.pairs[(truth, label)] += 1
        self.correct += truth == label

    def add_compared(self, truth: str, label: str, tp: int, fp: int, fn: int, error: float | None) -> None:
        self.add_label(truth, label)
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn
        self.with_boundaries += bool(tp or fp or fn)
        self.exact += not (fp or fn)
        if error is not None:
            self.errors.append(error)

    def result(self, order: Sequence[str] = ()) -> ModelScores:
        scored = self.docs - self.missing
        boundaries: Boundaries | None = None
        mae: MeanEstimate | None = None
        if self.structured:
            denom = 2 * self.tp + self.fp + self.fn
            boundaries = Boundaries(
                tp=self.tp,
                fp=self.fp,
                fn=self.fn,
                precision=rate(self.tp, self.tp + self.fp),
                recall=rate(self.tp, self.tp + self.fn),
                f1=2 * self.tp / denom if denom else None,
                docs_with_boundaries=self.with_boundaries,
                exact=rate(self.exact, scored),
            )
            errors = self.errors
            mae = mean_estimate(fsum(errors), fsum(e * e for e in errors), len(errors), floor=0.0)
        return ModelScores(
            model=self.model,
            scope=self.scope,
            docs=self.docs,
            missing=self.missing,
            accuracy=rate(self.correct, scored),
            confusion=confusion(self.pairs, order),
            boundaries=boundaries,
            mixture_mae=mae,
        )


class ModelScorer:
    """The four score sets: primary and production, each over SME-reviewed truth and over all truth."""

    def __init__(self) -> None:
        self.acc = {
            (model, scope): ModelAccumulator(model, scope, structured=model == "primary")
            for model in ("primary", "production")
            for scope in ("sme", "all")
        }
        self.primary = [self.acc[("primary", "all")]]
        self.primary_sme = [*self.primary, self.acc[("primary", "sme")]]
        self.production = [self.acc[("production", "all")]]
        self.production_sme = [*self.production, self.acc[("production", "sme")]]

    def add(self, doc: Labelled) -> None:
        primary = doc.primary
        self.add_values(
            doc.sme,
            doc.truth.dominant,
            doc.truth.boundaries,
            doc.truth.mixture,
            None if primary is None else primary.dominant,
            frozenset() if primary is None else primary.boundaries,
            {} if primary is None else primary.mixture,
            doc.production,
        )

    def add_values(
        self,
        sme: bool,
        truth: str,
        truth_bounds: Set[int],
        truth_mix: dict[str, float],
        primary: str | None,
        primary_bounds: Set[int],
        primary_mix: dict[str, float],
        production: str | None,
    ) -> None:
        """One document, compared once and added to every scope it belongs to; primary None: no primary."""
        if primary is None:
            for acc in self.primary_sme if sme else self.primary:
                acc.add_missing()
        else:
            tp = len(truth_bounds & primary_bounds)
            fp, fn = len(primary_bounds) - tp, len(truth_bounds) - tp
            error = mixture_error(truth_mix, primary_mix)
            for acc in self.primary_sme if sme else self.primary:
                acc.add_compared(truth, primary, tp, fp, fn, error)
        for acc in self.production_sme if sme else self.production:
            if production is None:
                acc.add_missing()
            else:
                acc.add_label(truth, production)

    def results(self, order: Sequence[str] = ()) -> list[ModelScores]:
        return [a.result(order) for a in self.acc.values()]


def score_models(docs: Iterable[Labelled], order: Sequence[str] = ()) -> list[ModelScores]:
    scorer = ModelScorer()
    for doc in docs:
        scorer.add(doc)
    return scorer.results(order)
