"""Model scores against ground truth, on small hand-computed cases: boundaries, mixture MAE, accuracy,
confusion and the two scopes (SME-reviewed and all)."""

from __future__ import annotations

from typing import Any

import pytest

from arbiter.metrics.model import (
    NO_LABEL,
    Labelled,
    Prediction,
    boundaries_from_starts,
    boundary_counts,
    mixture_error,
    mixture_from,
    prediction,
    score_models,
)


def _cls(dominant: Any, starts: list[Any], mixture: dict[str, float] | None = None) -> dict[str, Any]:
    return {
        "dominant_type": dominant,
        "segments": [{"start_page": s, "dominant_type": dominant} for s in starts],
        "document_mixture": [{"document_type": t, "share": v} for t, v in (mixture or {}).items()],
    }


@pytest.mark.parametrize(
    ("truth", "predicted", "counts"),
    [
        ([1], [1], (0, 0, 0)),  # one segment each: no boundary anywhere
        ([1, 4], [1, 4], (1, 0, 0)),
        ([1, 4], [1, 5], (0, 1, 1)),  # off by one page is a miss and a false alarm
        ([1, 3, 6], [1, 3], (1, 0, 1)),
        ([1], [1, 2, 3], (0, 2, 0)),
        ([1, 4, 4], [4], (1, 0, 0)),  # a repeated start page is one boundary
    ],
)
def test_boundary_counts(truth: list[int], predicted: list[int], counts: tuple[int, int, int]) -> None:
    """TP, FP, FN of one document's boundaries (start pages > 1)."""
    assert boundary_counts(boundaries_from_starts(truth), boundaries_from_starts(predicted)) == counts


def test_start_pages_that_are_not_integers_are_ignored() -> None:
    """Strings, floats, booleans and missing pages are not boundaries."""
    assert boundaries_from_starts([1, "4", 4.0, True, None, 5]) == frozenset({5})


@pytest.mark.parametrize(
    ("truth", "predicted", "error"),
    [
        ({"A": 0.8, "B": 0.2}, {"A": 0.6, "B": 0.4}, 0.2),
        ({"A": 1.0}, {"B": 1.0}, 1.0),  # a type one side omits has share 0
        ({"A": 0.5, "B": 0.5, "C": 0.0}, {"A": 0.5, "B": 0.3}, 0.2 / 3),
        ({}, {}, None),
    ],
)
def test_mixture_error(truth: dict[str, float], predicted: dict[str, float], error: float | None) -> None:
    """Mean absolute share difference over the union of types; two empty mixtures have none."""
    got = mixture_error(truth, predicted)
    assert got == (None if error is None else pytest.approx(error))


def test_mixture_entries_are_read_leniently() -> None:
    """A type listed twice has its shares added; entries without a string type and a number share are dropped."""
    entries = [
        {"document_type": "A", "share": 0.3},
        {"document_type": "A", "share": 0.2},
        {"document_type": "B", "share": True},
        "not an entry",
        {"share": 0.5},
        {"document_type": "C", "share": 1},
    ]
    assert mixture_from(entries) == {"A": 0.5, "C": 1}
    assert mixture_from("not a list") == {}


@pytest.mark.parametrize(
    ("classification", "expected"),
    [
        (None, None),
        ("text", None),
        ({}, Prediction(NO_LABEL)),
        ({"dominant_type": 5, "segments": "x"}, Prediction(NO_LABEL)),
        (_cls("LAB", [1, 3], {"LAB": 1.0}), Prediction("LAB", frozenset({3}), {"LAB": 1.0})),
    ],
)
def test_prediction_from_a_possibly_malformed_classification(
    classification: Any, expected: Prediction | None
) -> None:
    """No classification: no prediction; a classification without a usable dominant type: '(none)'."""
    assert prediction(classification) == expected


def _doc(
    doc_id: str, sme: bool, truth: dict[str, Any], primary: dict[str, Any] | None, production: str | None
) -> Labelled:
    got = prediction(truth)
    assert got is not None
    return Labelled(doc_id, sme, got, prediction(primary), production)


DOCS = [
    # sme, truth, primary, production
    _doc("a", True, _cls("LAB", [1, 4], {"LAB": 1.0}), _cls("LAB", [1, 4], {"LAB": 1.0}), "LAB"),
    _doc(
        "b",
        True,
        _cls("GEN", [1, 3, 6], {"GEN": 0.8, "LAB": 0.2}),
        _cls("LAB", [1, 3], {"GEN": 0.6, "LAB": 0.4}),
        None,
    ),
    _doc("c", False, _cls("PATH", [1], {"PATH": 1.0}), _cls("PATH", [1, 2], {"PATH": 1.0}), "GEN"),
    _doc("d", True, _cls("ADMIN", [1], {"ADMIN": 1.0}), None, "ADMIN"),
]


@pytest.mark.parametrize(
    ("model", "scope", "docs", "missing", "correct", "scored"),
    [
        ("primary", "sme", 3, 1, 1, 2),  # a right, b wrong, d has no primary
        ("primary", "all", 4, 1, 2, 3),  # plus c (right)
        ("production", "sme", 3, 1, 2, 2),  # a right, b none, d right
        ("production", "all", 4, 1, 2, 3),  # plus c (wrong)
    ],
)
def test_accuracy_by_model_and_scope(
    model: str, scope: str, docs: int, missing: int, correct: int, scored: int
) -> None:
    """Accuracy counts documents with a prediction; documents without one are counted as missing."""
    scores = next(s for s in score_models(DOCS) if s.model == model and s.scope == scope)
    assert (scores.docs, scores.missing, scores.accuracy.k, scores.accuracy.n) == (
        docs,
        missing,
        correct,
        scored,
    )


def test_boundaries_are_micro_averaged() -> None:
    """SME scope: a exact (TP 1), b misses page 6 (TP 1, FN 1); all: c adds a false boundary at page 2."""
    by = {(s.model, s.scope): s for s in score_models(DOCS)}
    sme, everything = by[("primary", "sme")].boundaries, by[("primary", "all")].boundaries
    assert sme is not None
    assert everything is not None
    assert (sme.tp, sme.fp, sme.fn) == (2, 0, 1)
    assert sme.precision.rate == pytest.approx(1.0)
    assert sme.recall.rate == pytest.approx(2 / 3)
    assert sme.f1 == pytest.approx(0.8)
    assert (sme.exact.k, sme.exact.n) == (1, 2)
    assert (everything.tp, everything.fp, everything.fn) == (2, 1, 1)
    assert everything.f1 == pytest.approx(4 / 6)
    assert everything.docs_with_boundaries == 3


def test_mixture_mae_is_the_mean_of_document_errors() -> None:
    """SME scope: a 0.0 and b 0.2 → MAE 0.1 over 2 documents; all adds c (0.0) → 0.0667 over 3."""
    by = {(s.model, s.scope): s for s in score_models(DOCS)}
    sme, everything = by[("primary", "sme")].mixture_mae, by[("primary", "all")].mixture_mae
    assert sme is not None
    assert everything is not None
    assert (sme.n, sme.mean) == (2, pytest.approx(0.1))
    assert (everything.n, everything.mean) == (3, pytest.approx(0.2 / 3))


def test_production_has_no_boundaries_or_mixture() -> None:
    """The production classifier gives only a dominant type, so those scores are absent, not zero."""
    production = next(s for s in score_models(DOCS) if s.model == "production")
    assert production.boundaries is None
    assert production.mixture_mae is None


def test_confusion_matrix_of_the_primary() -> None:
    """Rows are the truth, columns the primary's answer, in the profile's order first."""
    scores = next(
        s
        for s in score_models(DOCS, order=["LAB", "GEN", "PATH"])
        if (s.model, s.scope) == ("primary", "all")
    )
    assert scores.confusion.labels == ["LAB", "GEN", "PATH"]
    assert scores.confusion.counts == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]


def test_no_ground_truth_gives_undefined_scores() -> None:
    """With nothing to score every rate is undefined (None), never 0 %."""
    every = score_models([])
    assert [(s.model, s.scope) for s in every] == [
        ("primary", "sme"),
        ("primary", "all"),
        ("production", "sme"),
        ("production", "all"),
    ]
    for scores in every:
        assert scores.docs == 0
        assert scores.accuracy.rate is None
        if scores.boundaries is not None:
            assert scores.boundaries.f1 is None
            assert scores.boundaries.precision.rate is None
