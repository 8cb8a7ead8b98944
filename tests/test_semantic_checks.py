"""How an accept was earned: semantic_checks (rules only, or rules and a model) and require_llm_phases."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import store_fixtures as sf
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.contracts import (
    Decision,
    FinalDecision,
    PacketKind,
    PhaseStatus,
    SemanticChecks,
    VerificationOutcome,
    VerifierResult,
    VerifierStatus,
    semantic_checks_of,
)
from arbiter.contracts.profile import Profile, load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.decide.policy import count_issues, decide
from arbiter.record.packets import build_blind_packet, build_packet
from arbiter.store import Store
from arbiter.verifiers.base import VerifyContext
from tests.governor_helpers import NAMES, fakes, profile_with, result, rules_profile, tiny_loader
from tests.governor_helpers import bundle as tiny_bundle
from tests.llm_fakes import FakeLLM
from tests.phase_fakes import answer, fault, finding, quiet_llm
from tests.v34_helpers import classification, make_bundle, make_page, segment

RULES, MODEL = SemanticChecks.RULES_ONLY, SemanticChecks.RULES_AND_MODEL
P, F, S, E, B, NA = (
    PhaseStatus.PASSED,
    PhaseStatus.FAILED,
    PhaseStatus.SKIPPED,
    PhaseStatus.ERRORED,
    PhaseStatus.BUDGET_EXHAUSTED,
    PhaseStatus.NOT_APPLICABLE,
)
LAB_PAGE = "LABORATORY REPORT\nCity Hospital Laboratory\nHemoglobin 13.5 g/dL\nPotassium 4.1 mmol/L"
NOTE_PAGE = "Progress Note\nPatient seen in clinic for follow-up of anaemia."


def clean_document() -> tuple[str, Any]:
    """A two-page lab report and clinical note whose classification every rule check passes."""
    data = classification(
        segment(
            1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Hemoglobin 13.5 g/dL"), (1, "Potassium 4.1 mmol/L")]}
        ),
        segment(2, 2, "CLINICAL_NOTE", {"CLINICAL_NOTE": [(2, NOTE_PAGE.split("\n")[1])]}),
    )
    return json.dumps(data), make_bundle(make_page(1, LAB_PAGE), make_page(2, NOTE_PAGE))


def strict() -> Profile:
    return profile_with(arbiter={"require_llm_phases": True})


def verify_clean(profile: Profile, llm: Any) -> VerificationOutcome:
    raw, bundle = clean_document()
    return verify_with_retries(raw, bundle, profile, context=VerifyContext(llm=llm))


def phased(phases: dict[str, PhaseStatus]) -> list[VerifierResult]:
    """Clean results of V1..V4 with these LLM phase states (V1 has none)."""
    return [result(name).model_copy(update={"llm_phase": phases.get(name, NA)}) for name in NAMES]


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        pytest.param({"V2": P, "V3": P, "V4": P}, MODEL, id="all-passed"),
        pytest.param({"V2": P, "V3": F, "V4": P}, MODEL, id="a-finding-is-still-a-model-check"),
        pytest.param({"V2": P, "V3": P, "V4": S}, RULES, id="one-skipped"),
        pytest.param({"V2": S, "V3": S, "V4": S}, RULES, id="no-backend"),
        pytest.param({"V2": P, "V3": E, "V4": P}, RULES, id="one-errored"),
        pytest.param({"V2": P, "V3": P, "V4": B}, RULES, id="budget-exhausted"),
        pytest.param({"V2": P, "V3": P}, RULES, id="v4-without-phase"),
        pytest.param({}, RULES, id="no-phases-at-all"),
    ],
)
def test_semantic_checks_of_a_table_of_phases(
    phases: dict[str, PhaseStatus], expected: SemanticChecks
) -> None:
    """rules_and_model only when the model judged (PASSED or FAILED) in every V2/V3/V4 phase."""
    assert semantic_checks_of(phased(phases)) == expected


def test_no_verifier_with_a_phase_is_rules_only() -> None:
    """Results of rule-only verifiers alone never claim a model."""
    assert semantic_checks_of([result("V1")]) == RULES
    assert semantic_checks_of([]) == RULES


@pytest.mark.parametrize(
    ("llm", "expected"),
    [pytest.param(None, RULES, id="no-llm"), pytest.param(quiet_llm, MODEL, id="fake-llm")],
)
def test_governor_records_how_the_accept_was_earned(llm: Any, expected: SemanticChecks) -> None:
    """A clean document is accepted either way; the outcome says whether a model took part."""
    outcome = verify_clean(load_profile(), llm() if llm else None)
    assert outcome.final_decision == FinalDecision.AUTO_ACCEPT
    assert outcome.semantic_checks == expected


def test_governor_with_fake_verifiers_is_rules_only() -> None:
    """Verifiers that report no LLM phase give rules_only."""
    outcome = verify_with_retries("{}", tiny_bundle(), load_profile(), verifiers=fakes(), loader=tiny_loader)
    assert outcome.final_decision == FinalDecision.AUTO_ACCEPT
    assert outcome.semantic_checks == RULES


def test_a_failing_model_phase_is_rules_only_and_escalates() -> None:
    """A model that errors for V4 leaves the decision on the rules alone (and the error escalates)."""
    llm = FakeLLM(by_purpose={"V4": fault("timeout")}, default=answer())
    outcome = verify_clean(load_profile(), llm)
    assert outcome.final_decision == FinalDecision.ESCALATE_TO_SME
    assert outcome.semantic_checks == RULES


def test_a_model_finding_still_counts_as_rules_and_model() -> None:
    """A phase that FAILED (the model found something) ran: the escalation was earned with a model."""
    note = finding("note", "Page 2 may be a discharge summary.")
    outcome = verify_clean(load_profile(), FakeLLM(by_purpose={"V3": answer(note)}, default=answer()))
    assert outcome.semantic_checks == MODEL


def test_require_llm_phases_defaults_to_false() -> None:
    """The medical profile leaves the switch off; rules-only accepts stay possible."""
    assert load_profile().arbiter.require_llm_phases is False


@pytest.mark.parametrize(
    ("llm", "decision", "reason", "expected"),
    [
        pytest.param(None, FinalDecision.ESCALATE_TO_SME, "check_not_run", RULES, id="no-llm-escalates"),
        pytest.param(quiet_llm, FinalDecision.AUTO_ACCEPT, None, MODEL, id="fake-llm-accepts"),
    ],
)
def test_require_llm_phases(
    llm: Any, decision: FinalDecision, reason: str | None, expected: SemanticChecks
) -> None:
    """With require_llm_phases, a clean document with no model escalates (check_not_run); with one it accepts."""
    outcome = verify_clean(strict(), llm() if llm else None)
    assert (outcome.final_decision, outcome.escalation_reason) == (decision, reason)
    assert outcome.semantic_checks == expected
    if reason:
        assert "language-model phases of V2, V3 and V4 did not run" in (outcome.escalation_message or "")
        assert outcome.attempts[-1].decision.counts.not_run == 3


@pytest.mark.parametrize(
    ("phases", "required", "not_run"),
    [
        pytest.param({"V2": P, "V3": P, "V4": P}, NAMES, 0, id="all-ran"),
        pytest.param({"V2": S, "V3": P, "V4": P}, NAMES, 1, id="one-skipped"),
        pytest.param({"V2": S, "V3": S, "V4": S}, NAMES, 3, id="no-backend"),
        pytest.param({"V2": S, "V3": S, "V4": P}, ("V1", "V4"), 0, id="unrequired-skips-ignored"),
        pytest.param({"V2": P, "V3": P, "V4": NA}, NAMES, 1, id="no-phase-recorded"),
        pytest.param({"V2": P, "V3": P, "V4": B}, NAMES, 0, id="budget-counted-elsewhere"),
    ],
)
def test_count_issues_with_require_llm_phases(
    phases: dict[str, PhaseStatus], required: tuple[str, ...], not_run: int
) -> None:
    """A required verifier whose model phase did not run is not_run; without the switch nothing changes."""
    results = phased(phases)
    assert count_issues(results, required, require_llm_phases=True).not_run == not_run
    assert count_issues(results, required).not_run == 0


def test_a_skipped_verifier_counts_once() -> None:
    """A verifier that did not run at all is not counted again for its model phase."""
    results = phased({"V3": P, "V4": P})
    results[1] = result("V2", [], VerifierStatus.SKIPPED)
    assert count_issues(results, NAMES, require_llm_phases=True).not_run == 1


def test_the_guard_holds_when_a_rule_would_accept_without_a_model() -> None:
    """Even a profile rule that accepts anything cannot accept a document whose required model phase was skipped."""
    accept_all = {"name": "accept_all", "when": {}, "decision": "AUTO_ACCEPT", "reason": "Anything goes."}
    profile = rules_profile([accept_all], require_llm_phases=True)
    decision = decide(phased({"V2": P, "V3": S, "V4": P}), profile)
    assert decision.decision == Decision.ESCALATE_TO_SME
    assert decision.rule == "fail_closed_guard"
    assert "language-model phase of V3 did not run" in decision.reason


def test_an_accept_on_the_rules_is_unchanged_without_the_switch() -> None:
    """require_llm_phases off: skipped phases do not stop a clean accept, and the reason is the rule's own."""
    decision = decide(phased({"V2": S, "V3": S, "V4": S}), load_profile())
    assert (decision.decision, decision.rule) == (Decision.AUTO_ACCEPT, "clean")
    assert "language-model" not in decision.reason


def test_an_outcome_stored_before_the_field_existed_works_it_out() -> None:
    """Old stored JSON without semantic_checks loads, the value taken from the final attempt."""
    with_model = verify_clean(load_profile(), quiet_llm())
    data = json.loads(with_model.model_dump_json())
    del data["semantic_checks"]
    assert VerificationOutcome.model_validate(data).semantic_checks == MODEL
    data["attempts"] = []
    assert VerificationOutcome.model_validate(data).semantic_checks == RULES


def test_escalation_packets_show_it_and_blind_packets_do_not() -> None:
    """An escalation packet carries semantic_checks; a blind audit packet stays free of machine verdicts."""
    raw, bundle = clean_document()
    escalated = verify_with_retries(raw, bundle, strict())
    common: dict[str, Any] = {
        "pdf_path": "/x/doc-1.pdf",
        "pdf_sha256": "0" * 64,
        "bundle_path": None,
        "total_pages": 2,
        "primary": json.loads(raw),
        "run_id": "run-1",
    }
    packet = build_packet(escalated, production=None, **common)
    assert packet.semantic_checks == RULES
    accepted = verify_clean(load_profile(), quiet_llm())
    blind = build_blind_packet(PacketKind.AUDIT, accepted, **common)
    assert blind.semantic_checks is None


def test_an_outcome_without_attempts_is_rules_only() -> None:
    """An outcome built with no attempts (an unreadable PDF, as the pipeline builds it) never claims a model."""
    outcome = VerificationOutcome(
        doc_id="doc-1",
        final_decision=FinalDecision.ESCALATE_TO_SME,
        escalation_reason="pdf_encrypted",
        stop_reason="input_failed",
        policy_version="p",
    )
    assert outcome.semantic_checks == RULES


def test_the_store_keeps_it_on_sqlite_and_postgresql(store: Store) -> None:
    """The outcome and the escalation packet read back from the database say how the decision was earned."""
    record = sf.escalated("doc-s")
    assert record.packet is not None
    outcome = record.outcome.model_copy(update={"semantic_checks": MODEL})
    packet = record.packet.model_copy(update={"semantic_checks": MODEL})
    store.records.record(dataclasses.replace(record, outcome=outcome, packet=packet))
    stored = store.records.outcome("doc-s", record.run_id)
    assert stored is not None
    assert stored.semantic_checks == MODEL
    assert store.queue.get(packet.packet_id).semantic_checks == MODEL
