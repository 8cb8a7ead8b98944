"""The grounded-answer kind (issue 30.3/30.4): each planted fault is caught by its check, correct answers are
accepted, meaning-preserving slips are fixed, nothing crashes, and the CLI runs it end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.demo.grounded.build import clean_item, demo_items, planted
from arbiter.demo.grounded.fault import FIXABLE, WRONG
from arbiter.demo.grounded.questions import SPECS
from arbiter.kinds import GROUNDED, kind
from arbiter.run.items import verify_item
from tests.conftest import FIXTURES

SPEC = kind(GROUNDED)
PROFILE = SPEC.load_profile()
BY_ID = {s.qid: s for s in SPECS}
runner = CliRunner()


def outcome_of(item: dict[str, object]):  # type: ignore[no-untyped-def]
    return verify_item(SPEC, json.dumps(item), PROFILE)


def codes(item: dict[str, object]) -> set[str]:
    return {i.code for i in outcome_of(item).final_issues}


# (question, planted fault, a code that must be among the findings)
CAUGHT = [
    ("Q01", "unsupported_statement", "V4.STATEMENT_UNSUPPORTED"),
    ("Q01", "quote_not_in_chunk", "V4.QUOTE_NOT_IN_CHUNK"),
    ("Q07", "modal_changed", "V3.MODAL_CHANGED"),
    ("Q13", "modal_changed", "V3.MODAL_CHANGED"),
    ("Q01", "number_changed", "V3.NUMBER_NOT_IN_QUOTE"),
    ("Q03", "irrelevant_citation", "V4.STATEMENT_UNSUPPORTED"),
    ("Q01", "abstained_with_evidence", "V2.ABSTAINED_WITH_EVIDENCE"),
    ("Q38", "answered_without_evidence", "V2.ANSWERED_WITHOUT_EVIDENCE"),
    ("Q35", "conflict_hidden", "V2.CONFLICT_NOT_PRESENTED"),
    ("Q01", "language_mismatch", "V2.LANGUAGE_MISMATCH"),
    ("Q08", "hedged", "V3.HEDGED_REQUIREMENT"),
    ("Q08", "compliance_claim", "V3.COMPLIANCE_CLAIM"),
    ("Q08", "chunk_instruction", "V3.CHUNK_INSTRUCTION"),
    ("Q08", "low_score_citation", "V3.LOW_SCORE_CITATION"),
]


@pytest.mark.parametrize(("qid", "fault", "code"), CAUGHT, ids=[f"{q}-{f}" for q, f, _ in CAUGHT])
def test_each_planted_fault_is_escalated_by_its_check(qid: str, fault: str, code: str) -> None:
    """A wrong answer of each kind is escalated, its own check among the findings, with the rule named."""
    made = planted(BY_ID[qid], fault)
    assert made is not None
    outcome = outcome_of(made.item)
    assert outcome.final_decision == "ESCALATE_TO_SME"
    assert code in {i.code for i in outcome.final_issues}
    assert all(a.decision.rule for a in outcome.attempts)


@pytest.mark.parametrize("qid", ["Q01", "Q06", "Q21", "Q35", "Q38"])
def test_correct_answers_are_accepted_by_the_clean_rule(qid: str) -> None:
    """A correct answer (one or two quotes, conflicting sources given both ways, an honest abstention) passes."""
    outcome = outcome_of(clean_item(BY_ID[qid]))
    assert outcome.final_decision == "AUTO_ACCEPT"
    assert outcome.attempts[-1].decision.rule == "clean"


@pytest.mark.parametrize("slip", FIXABLE)
def test_meaning_preserving_slips_are_fixed_then_accepted(slip: str) -> None:
    """Quote spacing, wrong offsets and a wrong confidence level are fixed by patch and the answer accepted."""
    made = planted(BY_ID["Q05"], slip)
    assert made is not None
    outcome = outcome_of(made.item)
    assert outcome.final_decision == "AUTO_ACCEPT"
    assert len(outcome.attempts) == 2
    assert outcome.attempts[0].fixes_applied


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([s for s in SPECS if s.answerable]), st.sampled_from(WRONG), st.sampled_from(FIXABLE))
def test_no_fix_hides_a_wrong_answer(spec, fault: str, slip: str) -> None:  # type: ignore[no-untyped-def]
    """A wrong answer that also carries a fixable slip is still escalated after the fixes (hypothesis)."""
    made = planted(spec, fault)
    if made is None:
        return
    from arbiter.demo.grounded.fault import FAULTS

    item = FAULTS[slip](spec, json.loads(json.dumps(made.item))) or made.item
    outcome = outcome_of(item)
    if made.planted in {"clean"}:
        return
    assert outcome.final_decision == "ESCALATE_TO_SME"


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
            ),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_no_input_crashes_it_and_unreadable_input_is_escalated(raw) -> None:  # type: ignore[no-untyped-def]
    """Any text, bytes or JSON ends in a decision; what is not a valid item is escalated by V1, never accepted."""
    outcome = verify_item(SPEC, raw, PROFILE)
    assert outcome.final_decision == "ESCALATE_TO_SME"
    assert {i.code for i in outcome.final_issues} & {"V1.ITEM_INVALID_JSON", "V1.ITEM_SCHEMA_VIOLATION"}


def test_committed_demo_items_are_the_generators_output() -> None:
    """fixtures/grounded/items.jsonl is exactly what the committed generator writes (no hand edits)."""
    lines = (FIXTURES / "grounded" / "items.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [json.dumps(p.item, ensure_ascii=False) for p in demo_items()]
    wrong = sum(p.planted in WRONG for p in demo_items())
    assert len(SPECS) >= 40
    assert wrong * 3 >= len(SPECS)


def test_every_demo_quote_is_verbatim_in_its_chunk() -> None:
    """Each correct answer's quotes are substrings of the chunk they cite, by construction."""
    for spec in SPECS:
        item = clean_item(spec)
        chunks = {c["chunk_id"]: c["text"] for c in item["chunks"]}
        for quote in item["answer"]["quotes"]:
            assert quote["text"] in chunks[quote["chunk_id"]]


def test_cli_run_verify_and_schema_serve_the_kind(tmp_path: Path) -> None:
    """`arbiter run --kind grounded-answer`, `verify --kind ... --item` and `schema grounded-answer` work offline."""
    items = FIXTURES / "grounded" / "items.jsonl"
    result = runner.invoke(app, ["run", str(items), "--kind", GROUNDED, "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    (summary_path,) = (tmp_path / "runs").glob("*/summary.json")
    summary = json.loads(summary_path.read_text())
    assert summary["documents"] == 45
    assert summary["kind"] == GROUNDED
    assert summary["escalated"] >= 14
    again = runner.invoke(app, ["run", str(items), "--kind", GROUNDED, "--out", str(tmp_path), "--quiet"])
    assert "45 unchanged" in again.output
    one = tmp_path / "one.json"
    one.write_text(json.dumps(clean_item(BY_ID["Q01"])))
    verified = runner.invoke(app, ["verify", "--kind", GROUNDED, "--item", str(one), "--json"])
    assert verified.exit_code == 0
    assert json.loads(verified.output)["final_decision"] == "AUTO_ACCEPT"
    schema = runner.invoke(app, ["schema", GROUNDED])
    assert schema.exit_code == 0
    assert "question" in json.loads(schema.output)["properties"]


def test_pdf_only_options_are_refused_for_items(tmp_path: Path) -> None:
    """An option items do not use (--classifier, --password, --audit-share) is refused in one line, never
    silently ignored; --engine is taken (--ray-address without it is refused)."""
    items = FIXTURES / "grounded" / "items.jsonl"
    for options, named in (
        (["--classifier", "baseline", "--password", "x"], "--classifier, --password"),
        (["--audit-share", "0.5"], "--audit-share"),
        (["--ray-address", "127.0.0.1:1"], "--ray-address needs --engine ray"),
        (["--engine", "spark"], "Unknown engine"),
    ):
        result = runner.invoke(app, ["run", str(items), "--kind", GROUNDED, "--out", str(tmp_path), *options])
        assert result.exit_code != 0
        assert named in " ".join(result.output.split()), result.output


def test_grounded_demo_queues_its_escalations_and_says_how_to_review(tmp_path: Path) -> None:
    """`arbiter demo --kind grounded-answer` escalates every planted fault, accepts every correct answer,
    leaves the escalations in its database's queue and prints the commands that open them at the desk."""
    from arbiter.store import Store

    out = tmp_path / "out"
    result = runner.invoke(app, ["demo", "--kind", "grounded-answer", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Planted wrong answers escalated: 14 of 14" in text
    assert "accepted: 31 of 31" in text
    assert f"review --out {out}" in text
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        assert store.queue.counts()["by_kind"][GROUNDED]["PENDING"] >= 14
    finally:
        store.dispose()
