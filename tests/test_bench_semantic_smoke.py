"""Smoke test of the semantic benchmark at its quick size: wrong answers really wrong and consistent, JSON shape.

How many wrong answers Arbiter escalates is measured by `bench/semantic.py`, never asserted here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from bench import run as bench_run
from bench import semantic
from tests.conftest import corpora_missing

# The rule codes that must never fire on a generated wrong answer (the issue's list).
CONSISTENCY = {
    "V1.PAGE_COUNT_MISMATCH",
    "V2.SEGMENT_SHARES_SUM",
    "V2.MIXTURE_SHARES_SUM",
    "V2.MIXTURE_MISMATCH",
    "V2.DOMINANT_TYPE_MISMATCH",
    "V4.SNIPPET_NOT_FOUND",
    "V4.SNIPPET_WRONG_PAGE",
}


def test_wrong_answers_are_wrong_and_pass_the_consistency_rules() -> None:
    """Every kind applies to packet-01; each answer differs from the truth and trips no consistency rule."""
    profile = load_profile()
    (doc,) = semantic.fixture_docs(("packet-01",))
    ctx = semantic.Ctx(profile, semantic.Lines(doc.bundle, profile))
    cases, bugs = semantic.generate(doc, ctx)
    assert bugs == []
    assert CONSISTENCY <= semantic.CONSISTENCY_CODES
    assert {c.kind for c in cases} == set(semantic.KINDS)
    for case in cases:
        assert semantic.signature(case.data) != semantic.signature(doc.truth), case.description
        outcome = verify_with_retries(json.dumps(case.data).encode(), doc.bundle, profile)
        codes = {i.code for r in outcome.attempts[0].verifier_results for i in r.issues}
        assert not codes & semantic.CONSISTENCY_CODES, (case.kind, case.description, codes)


def test_quick_run_through_bench_run_reports_both_modes() -> None:
    """bench/run.py runs it: per-kind tallies offline and with the sample model, targets, baseline, no bugs."""
    report = bench_run.run(["semantic"], "tiny")
    result = report["results"]["semantic"]
    assert "error" not in result, result.get("traceback")
    assert set(report["met"]) == {"semantic"}
    assert result["generation"]["inconsistent"] == []
    assert result["generation"]["not_wrong"] == []
    answers = result["generation"]["generated"] + 2 * result["baseline"]["documents"]  # + correct answers
    assert result["verified"]["sample_model"]["semantic_checks"] == {"rules_and_model": answers}
    assert result["verified"]["offline"]["semantic_checks"] == {"rules_only": answers}
    for mode in semantic.MODES:
        wrong = result["wrong"][mode]
        assert set(wrong["by_kind"]) == set(semantic.KINDS)
        assert wrong["cases"] == sum(k["cases"] for k in wrong["by_kind"].values()) > 0
        assert wrong["target"] == ">= 0.95"
        assert result["correct"][mode]["target"] == "<= 0.05"
        assert mode in result["baseline"]["wrong_accepted"]
    assert set(result["accepted_wrong"]) == {"both", "offline_only", "sample_model_only"}
    assert result["baseline"]["documents"] == result["correct"]["offline"]["cases"] >= 3


def test_absent_corpus_is_noted(tmp_path: Path) -> None:
    """A missing --corpus directory is a note in the JSON, and the fixtures are still measured."""
    result = semantic.run(corpus=tmp_path / "absent", fixtures=("lab-quest-01",))
    assert result["inputs"]["corpus"]["present"] is False
    assert "absent" in result["inputs"]["corpus"]["note"]
    assert result["wrong"]["offline"]["by_source"]["corpus"]["cases"] == 0
    assert result["wrong"]["offline"]["by_source"]["fixtures"]["cases"] > 0


def test_truth_snippet_not_on_its_page_fails_loudly() -> None:
    """A truth snippet that is not verbatim on its page stops the run with the file, page and snippet."""
    profile = load_profile()
    (doc,) = semantic.fixture_docs(("lab-quest-01",))
    semantic.check_truth(doc, profile)
    broken = copy.deepcopy(doc)
    evidence = next(t for t in broken.truth["segments"][0]["types"] if t["evidence"])["evidence"][0]
    evidence["snippet"] = "a sentence this page never had"
    with pytest.raises(semantic.TruthError, match="not verbatim"):
        semantic.check_truth(broken, profile)


@pytest.mark.corpus
@pytest.mark.skipif(corpora_missing(), reason="../shared/corpora is not beside this checkout")
def test_corpus_truth_reads_every_real_pdf_once() -> None:
    """semantic_truth.json covers every real PDF; the byte-identical copy is counted once; snippets verbatim."""
    docs, note = semantic.corpus_docs(semantic.DEFAULT_CORPUS, load_profile())
    assert len(docs) == 5
    assert note["skipped"] == []
    assert note["duplicates"] == ["UD_sample.pdf is byte-identical to C-CDA_R2_UD_sample.pdf: counted once"]
    (labcorp,) = (d for d in docs if d.doc_id == "164947")
    assert [(s["start_page"], s["end_page"]) for s in labcorp.truth["segments"]] == [(1, 1), (2, 3)]


# Enough corpus sources (with the project's fixtures, a fifth) for every fold to fit on other sources and take
# its temperature from their out-of-source pages; the whole corpus only makes each of those fits slower.
LOSO_SOURCES = ("note-ctakes", "lab-cdc-ti", "path-authored-us", "admin-carin-bb")


@pytest.mark.slow
def test_leave_one_source_out_reports_held_out_and_in_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """The held-out run fits readers without the held-out source and reports each kind, the correct answers,
    the baseline (with how many of its page mistakes the check shares) and the in-sample figures beside them."""
    from arbiter.reader.corpus import load_corpus
    from bench import semantic_loso

    monkeypatch.setattr(semantic_loso, "load_corpus", lambda: load_corpus(sources=LOSO_SOURCES))
    report = semantic_loso.run(quick=True, only=("note-ctakes",), modes=("offline",), in_sample_too=True)
    held = report["held_out"]["offline"]
    assert set(held["wrong"]["by_kind"]) == set(semantic.KINDS)
    assert held["correct"]["cases"] >= 3
    assert held["baseline"]["documents"] == held["correct"]["cases"]
    # Independence: the baseline's page mistakes and how many of them the check's reader shares.
    assert 0 <= held["baseline"]["pages_check_same_mistake"] <= held["baseline"]["pages_wrong"]
    assert held["baseline"]["wrong_accepted"] <= held["baseline"]["accepted"] <= held["baseline"]["documents"]
    assert report["in_sample_shipped_readers"]["offline"]["correct"]["cases"] == held["correct"]["cases"]
    fold = report["folds"]["note-ctakes"]
    assert fold["licence"] == "Apache-2.0"
    assert report["reader_pages_held_out"]["per_source"]["note-ctakes"]["pages"] > 0
    assert set(report["sources"]) == {*LOSO_SOURCES, "arbiter-fixtures"}  # every other source was fitted on
