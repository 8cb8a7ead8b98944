"""End to end on the committed fixtures: every case reaches its expected decision through the real chain."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from arbiter.contracts import DocumentBundle, VerificationOutcome
from arbiter.contracts.profile import load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.ingest import ingest_pdf
from tests.conftest import FIXTURES

CASES: list[dict[str, Any]] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
BY_NAME = {case["case"]: case for case in CASES}
PROFILE = load_profile()


@cache
def bundle_for(pdf: str) -> DocumentBundle:
    result = ingest_pdf(FIXTURES / pdf)
    assert isinstance(result, DocumentBundle), result
    return result


@cache
def outcome_for(name: str) -> VerificationOutcome:
    """The case's outcome through the real chain, computed once for all the tests below (it is deterministic)."""
    case = BY_NAME[name]
    raw = (FIXTURES / case["classification"]).read_bytes()
    return verify_with_retries(raw, bundle_for(case["pdf"]), PROFILE)


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_fixture_case_reaches_expected_decision(case: dict[str, Any]) -> None:
    """The real ingestion, verifiers, arbiter and governor give each fixture case its expected outcome."""
    outcome = outcome_for(case["case"])
    first_codes = {i.code for r in outcome.attempts[0].verifier_results for i in r.issues}
    assert set(case["expected_codes"]) <= first_codes, (case["note"], sorted(first_codes))
    assert outcome.final_decision == case["expected_decision"], (case["note"], outcome.escalation_reason)
    if case["expected_decision"] == "ESCALATE_TO_SME":
        assert outcome.escalation_reason == case["expected_reason"], (case["note"], sorted(first_codes))
    else:
        assert outcome.accepted_after_fixes == case["accepted_after_fixes"], case["note"]
        if case.get("expected_reason"):
            assert outcome.attempts[-1].decision.rule == case["expected_reason"], case["note"]


def test_correct_classifications_accepted_first_time() -> None:
    """Every correct classification (not a variant) of a benign document is accepted on the first attempt."""
    correct = [
        c
        for c in CASES
        if c["classification"].startswith("classifications/") and c["expected_decision"] == "AUTO_ACCEPT"
    ]
    assert len(correct) >= 30
    for case in correct:
        outcome = outcome_for(case["case"])
        codes = [i.code for i in outcome.final_issues]
        assert outcome.final_decision == "AUTO_ACCEPT", (case["case"], codes)
        assert len(outcome.attempts) == 1, case["case"]


def test_no_fixture_case_accepted_with_a_blocker() -> None:
    """Fail closed: no case with a BLOCKER in any attempt, or a check that did not run, ends AUTO_ACCEPT."""
    accepted = [o for o in map(outcome_for, BY_NAME) if o.final_decision == "AUTO_ACCEPT"]
    assert len(accepted) >= 30
    for outcome in accepted:
        assert [a.decision.counts.blocker for a in outcome.attempts] == [0] * len(outcome.attempts)
        assert all(r.status in ("PASSED", "FAILED") for r in outcome.attempts[-1].verifier_results)
