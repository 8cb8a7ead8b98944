"""Policy what-if on hand-built histories: the flips, the rates and the paths are computed by hand."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from arbiter.contracts import Issue, StopReason
from arbiter.contracts.profile import Profile, load_profile
from arbiter.store import Store
from arbiter.whatif import paths
from arbiter.whatif.diff import diff_profiles
from arbiter.whatif.history import reading
from arbiter.whatif.report import figure_rows, render_html
from arbiter.whatif.simulate import simulate
from tests.store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (both databases)
from tests.whatif_helpers import attempt, classification, issue, outcome, record, review, rule, with_rules

MEDICAL = load_profile()


def _run(store: Store, current: Profile, candidate: Profile) -> dict[str, Any]:
    with reading(store.url) as conn:
        return simulate(conn, current, candidate)


def _flips(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(f["doc_id"], f["from"], f["to"], f["rule"]) for f in report["flips"]]


def _rate(data: dict[str, Any]) -> tuple[int, int]:
    return data["k"], data["n"]


# A candidate that only reorders rules ----------------------------------------------------------------


def test_reordering_two_escalating_rules_flips_nothing_and_renames_the_reason(store: Store) -> None:
    names = [r.name for r in MEDICAL.arbiter.rules]
    i, j = names.index("too_many_major"), names.index("several_non_fixable_major")
    reordered = list(MEDICAL.arbiter.rules)
    reordered[i], reordered[j] = reordered[j], reordered[i]
    candidate = with_rules(MEDICAL, reordered)
    # three non-fixable majors: too_many_major (current) / several_non_fixable_major (candidate)
    three = [issue("V2", 1, "MAJOR"), issue("V3", 1, "MAJOR"), issue("V4", 1, "MAJOR")]
    cases: dict[str, tuple[list[list[Issue]], StopReason]] = {
        "three-major": ([three], StopReason.ESCALATED_BY_POLICY),
        "clean": ([[]], StopReason.ACCEPTED),
        "minor": ([[issue("V4", 1, "MINOR")]], StopReason.ACCEPTED),
    }
    for doc_id, (attempts, stop) in cases.items():
        primary = classification(doc_id)
        made = [attempt(n, issues, MEDICAL) for n, issues in enumerate(attempts)]
        record(store, outcome(doc_id, made, stop, primary), primary)

    report = _run(store, MEDICAL, candidate)

    assert report["flips"] == []
    assert report["paths"] == {paths.REDECIDED: 3}
    cur = {s["label"]: s["rate"]["k"] for s in report["current"]["escalation_reasons"]}
    cand = {s["label"]: s["rate"]["k"] for s in report["candidate"]["escalation_reasons"]}
    assert cur == {"too_many_major": 1}
    assert cand == {"several_non_fixable_major": 1}
    assert any("new order" in line for line in diff_profiles(MEDICAL, candidate))


def test_the_recorded_profile_reproduces_every_recorded_decision(store: Store) -> None:
    primary = classification("retry")
    made = [
        attempt(0, [issue("V1", 1, "MAJOR", fixable=True), issue("V4", 1, "MINOR")], MEDICAL),
        attempt(1, [issue("V4", 1, "MINOR")], MEDICAL),
    ]
    record(store, outcome("retry", made, StopReason.ACCEPTED, primary), primary)
    report = _run(store, MEDICAL, MEDICAL)
    assert report["flips"] == []
    assert report["changed_sections"] == []
    assert report["current"]["decisions"] == report["candidate"]["decisions"]
    assert report["llm_calls"] == 0
    # The primary gave its type 0.9: a floor of 0.95 doubts it on the first attempt (rebuilt: the primary),
    # beside the fixable major: a non-fixable major escalates at once.
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.95})
    doubt = _run(store, MEDICAL, MEDICAL.model_copy(update={"tolerances": tolerances}))
    assert _flips(doubt) == [("retry", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major")]
    assert doubt["paths"] == {paths.REFOCUSED: 1}


# A candidate that accepts minor-only documents --------------------------------------------------------


def _strict_minor() -> Profile:
    """The medical profile, except that minor-only documents are escalated (what was recorded)."""
    rules = [
        r.model_copy(update={"decision": "ESCALATE_TO_SME"}) if r.name == "minor_only" else r
        for r in MEDICAL.arbiter.rules
    ]
    return with_rules(MEDICAL, rules, "strict-minor")


def test_accepting_minor_only_documents(store: Store) -> None:
    current = _strict_minor()
    minor = issue("V4", 1, "MINOR")
    docs: dict[str, tuple[list[list[Issue]], StopReason]] = {
        # two minors: current minor_only escalates; the candidate accepts (flip, rule minor_only)
        "m2 <b>*x*</b>": ([[minor, issue("V3", 1, "MINOR")]], StopReason.ESCALATED_BY_POLICY),
        # a non-fixable major beside the minor: both escalate
        "mixed": ([[minor, issue("V2", 1, "MAJOR")]], StopReason.ESCALATED_BY_POLICY),
        # fixed first (fixable major), then only a minor: current escalates at attempt 1, candidate accepts
        "fixed": ([[minor, issue("V1", 1, "MAJOR", fixable=True)], [minor]], StopReason.ESCALATED_BY_POLICY),
        "clean": ([[]], StopReason.ACCEPTED),
    }
    packets: dict[str, str] = {}
    for doc_id, (attempts, stop) in docs.items():
        primary = classification(doc_id)
        made = [attempt(n, issues, current) for n, issues in enumerate(attempts)]
        packet = record(store, outcome(doc_id, made, stop, primary), primary, audit=doc_id == "clean")
        assert packet is not None
        packets[doc_id] = packet
    # The SME: "m2" was wrong (another type), "mixed", "fixed" and the audited "clean" were right.
    review(store, packets["m2 <b>*x*</b>"], classification("m2 <b>*x*</b>", "CLINICAL_NOTE"), agrees=False)
    for doc_id in ("mixed", "fixed", "clean"):
        review(store, packets[doc_id], classification(doc_id), agrees=True)

    report = _run(store, current, MEDICAL)

    assert _flips(report) == [
        ("fixed", "ESCALATE_TO_SME", "AUTO_ACCEPT", "minor_only"),
        ("m2 <b>*x*</b>", "ESCALATE_TO_SME", "AUTO_ACCEPT", "minor_only"),
    ]
    assert report["flip_counts"] == {"to_accept": 2, "to_escalate": 0}
    assert set(report["paths"]) == {paths.REDECIDED}
    cand = {s["label"]: s["rate"]["k"] for s in report["candidate"]["decisions"]}
    assert cand == {"accepted first time": 2, "accepted after fixes": 1, "escalated to an SME": 1}
    # False accepts: current accepts only "clean" (right); the candidate also accepts "m2" (wrong), "fixed".
    assert _rate(report["false_accepts"]["current"]) == (0, 1)
    assert _rate(report["false_accepts"]["candidate"]) == (1, 3)
    assert report["false_accepts"]["candidate"]["doc_ids"] == ["m2 <b>*x*</b>"]
    # Needless escalations: current escalated "m2" (wrong), "mixed" and "fixed" (right); candidate "mixed".
    assert _rate(report["needless_escalations"]["current"]) == (2, 3)
    assert _rate(report["needless_escalations"]["candidate"]) == (1, 1)
    # Escalation load: 3 of 4 -> 1 of 4 documents.
    assert report["current"]["escalation_load"]["per_1000"] == 750.0
    assert report["candidate"]["escalation_load"]["per_1000"] == 250.0
    # Audits: "clean" (kept, 1 document, 0 of 1 wrong); newly accepted (2 documents, 1 of 2 wrong).
    audit = report["audit_false_accept"]
    assert _rate(audit["current"]) == (0, 1)
    assert audit["candidate"]["rate"] == pytest.approx((1 * 0.0 + 2 * 0.5) / 3)
    assert [(s["documents"], _rate(s["audit"])) for s in audit["candidate"]["strata"]] == [
        (1, (0, 1)),
        (2, (1, 2)),
    ]
    # Plain text everywhere: the doc_id's markup is escaped in HTML and kept verbatim in the rows.
    page = render_html(report, diff_profiles(current, MEDICAL))
    assert "<b>*x*</b>" not in page
    assert "m2 &lt;b&gt;*x*&lt;/b&gt;" in page
    assert all(isinstance(cell, str) for row in figure_rows(report) for cell in row)


def test_a_retry_beyond_the_record_is_reverified_or_kept(store: Store) -> None:
    """The candidate retries a document the record escalated at once: that fixed version was never verified.
    With no bundle stored it cannot be re-verified: the recorded decision is kept and the path says so."""
    primary = classification("needs-fix")
    made = [attempt(0, [issue("V1", 1, "MAJOR", fixable=True)] * 1 + [issue("V2", 1, "MAJOR")], MEDICAL)]
    record(store, outcome("needs-fix", made, StopReason.ESCALATED_BY_POLICY, primary), primary)
    rules = list(MEDICAL.arbiter.rules)
    names = [r.name for r in rules]
    fixable = rules.pop(names.index("fixable_major"))
    rules.insert(names.index("too_many_major"), fixable)
    candidate = with_rules(MEDICAL, rules)
    report = _run(store, MEDICAL, candidate)
    assert report["flips"] == []
    assert report["paths"] == {paths.KEPT: 1}


def test_requiring_primary_evidence_escalates_what_was_accepted_without_it(store: Store) -> None:
    """Turning require_primary_evidence on re-decides the stored issues: an accepted answer whose primary
    type had no evidence now escalates (non_fixable_major); one with only another minor stays accepted."""
    lenient = MEDICAL.model_copy(
        update={"arbiter": MEDICAL.arbiter.model_copy(update={"require_primary_evidence": False})}
    )
    unproven = issue("V1", 1, "MINOR").model_copy(update={"code": "V1.PRIMARY_EVIDENCE_MISSING"})
    for doc_id, found in (("unproven", unproven), ("minor", issue("V4", 1, "MINOR"))):
        primary = classification(doc_id)
        made = [attempt(0, [found], lenient)]
        record(store, outcome(doc_id, made, StopReason.ACCEPTED, primary), primary, audit=True)
    report = _run(store, lenient, MEDICAL)
    assert _flips(report) == [("unproven", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major")]


def test_simulation_reads_only(store: Store) -> None:
    primary = classification("one")
    record(store, outcome("one", [attempt(0, [], MEDICAL)], StopReason.ACCEPTED, primary), primary)
    with reading(store.url) as conn, pytest.raises(sa.exc.DBAPIError):
        conn.execute(sa.text("DELETE FROM runs"))


# A candidate that tightens a semantic threshold (re-verified from the stored bundles) -----------------


@pytest.fixture(scope="module", name="fixture_store")
def fixture_store_fixture(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tests.review_helpers import run_fixtures

    tmp = tmp_path_factory.mktemp("whatif")
    store = Store(f"sqlite:///{tmp / 'arbiter.db'}")
    store.migrate()
    # The demo classifications give these segments' dominant types a confidence of 0.90, 0.93, 0.95, 0.97.
    for rec in run_fixtures(
        tmp / "output", ("note-consult-02", "note-progress-01", "path-lung-01", "lab-labcorp-04")
    ):
        store.records.record(rec)
    yield store, tmp / "output"
    store.dispose()


def test_tightening_min_dominant_confidence_escalates_exactly_the_doubtful(fixture_store: Any) -> None:
    store, out_dir = fixture_store
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.92})
    candidate = MEDICAL.model_copy(update={"tolerances": tolerances})
    with reading(store.url) as conn:
        same = simulate(conn, MEDICAL, MEDICAL, out_dir=out_dir)
        report = simulate(conn, MEDICAL, candidate, out_dir=out_dir)
    assert same["flips"] == []
    assert same["paths"] == {paths.REDECIDED: 4}
    # Only note-consult-02 (0.90 < 0.92) flips; 0.93, 0.95 and 0.97 stay accepted.
    assert _flips(report) == [("note-consult-02", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major")]
    # Only V2's primary-doubt rule reads it, and only from the classification: re-checked on each stored
    # version, everything else decided from the stored issues.
    assert report["paths"] == {paths.REFOCUSED: 4}
    assert report["reverified_verifiers"] == ["V2"]
    # The full re-verification (a [content] change beside it forces it) agrees on these documents.
    content = MEDICAL.content.model_copy(update={"clear_share": 0.61})
    with reading(store.url) as conn:
        full = simulate(conn, MEDICAL, candidate.model_copy(update={"content": content}), out_dir=out_dir)
    assert _flips(full) == _flips(report)
    assert full["paths"] == {paths.REVERIFIED: 4}
    assert report["llm_findings_needed"]["count"] == 0
    assert report["llm_calls"] == 0


def test_a_missing_bundle_falls_back_to_the_stored_issues(fixture_store: Any, tmp_path: Path) -> None:
    store, _ = fixture_store
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.92})
    candidate = MEDICAL.model_copy(update={"tolerances": tolerances})
    content = MEDICAL.content.model_copy(update={"clear_share": 0.61})
    with reading(store.url) as conn:  # no bundles under tmp_path
        report = simulate(conn, MEDICAL, candidate.model_copy(update={"content": content}), out_dir=tmp_path)
    assert report["flips"] == []  # the stored issues say nothing of the new threshold
    assert report["paths"] == {paths.STORED_ONLY: 4}


# diff ------------------------------------------------------------------------------------------------


def test_diff_in_plain_words() -> None:
    rules = [r for r in MEDICAL.arbiter.rules if r.name != "minor_only"]
    clean = rule(MEDICAL, "clean")
    rules[rules.index(clean)] = clean.model_copy(
        update={"when": {"total": clean.when["total"].model_copy(update={"max": 1})}}
    )
    candidate = with_rules(MEDICAL, rules, "v2")
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.7})
    vendors = MEDICAL.vendors.model_copy(update={"routine_lab": [*MEDICAL.vendors.routine_lab, "Acme Labs"]})
    candidate = candidate.model_copy(update={"tolerances": tolerances, "vendors": vendors})
    lines = diff_profiles(MEDICAL, candidate)
    assert (
        "Rule 'minor_only' (position 9) is removed; it said when no critical problems and no major problems and at least 1 minor problems: accept."
        in lines
    )
    assert (
        "Rule 'clean' now applies when at most 1 problems of any severity (was when no problems of any severity)."
        in lines
    )
    assert "[tolerances] min_dominant_confidence changes from 0.6 to 0.7 (raised)." in lines
    assert "[vendors] routine_lab: adds 'Acme Labs'." in lines
    assert diff_profiles(MEDICAL, MEDICAL) == []


def test_worker_processes_reverify_as_this_process_does(
    fixture_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-verification split over worker processes gives each document the decision, path and answer it gets
    in this process, in document order."""
    from arbiter.whatif import batch

    store, out_dir = fixture_store
    content = MEDICAL.content.model_copy(update={"clear_share": 0.61})
    candidate = MEDICAL.model_copy(update={"content": content})
    with reading(store.url) as conn:
        serial = simulate(conn, MEDICAL, candidate, out_dir=out_dir)
        monkeypatch.setattr(batch, "MIN_PER_WORKER", 1)
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
        assert batch._workers(4, str(store.url)) == 2
        pooled = simulate(conn, MEDICAL, candidate, out_dir=out_dir)
    for report in (serial, pooled):
        report.pop("seconds")
    assert pooled == serial
    assert serial["paths"] == {paths.REVERIFIED: 4}


def test_a_retried_documents_first_version_is_rechecked_from_the_primarys_stored_segments(
    store: Store,
) -> None:
    """A focused re-check of a document fixed once reads the primary's segments (its first version) and the
    final segments slim: the whole stored outcome is never read, and the decision is the one the whole
    record gives."""
    from arbiter.whatif.history import read_history
    from arbiter.whatif.simulate import simulate_documents

    primary = classification("fixed-once")
    made = [attempt(0, [issue("V1", 1, "MAJOR", fixable=True)], MEDICAL), attempt(1, [], MEDICAL)]
    record(store, outcome("fixed-once", made, StopReason.ACCEPTED, primary), primary)
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.95})
    candidate = MEDICAL.model_copy(update={"tolerances": tolerances})
    with reading(store.url) as conn:
        history = read_history(conn, None, segments=True)
        [doc] = history.docs
        assert doc.primary_segments is not None
        decided = simulate_documents(conn, history, MEDICAL, candidate).candidate
    assert doc.full is None
    assert (decided[0].decision, decided[0].rule, decided[0].attempt) == (
        "ESCALATE_TO_SME",
        "non_fixable_major",
        0,
    )


@pytest.mark.parametrize("floor", [0.0, 0.5, 0.9, 0.91, 0.95, 1.0])
@pytest.mark.parametrize("margin", [0.1, 0.5])
def test_the_doubt_difference_counts_as_the_verifier_does(floor: float, margin: float) -> None:
    """The primary-doubt findings a candidate adds (or removes) are the verifier's own count under each
    profile, whether only the confidence floor changes or the tie margin too."""
    from arbiter.whatif.focused import doubt_delta, doubt_findings

    segments = classification("doubt")["segments"] + [
        {
            "segment_index": 2,
            "dominant_type": "CLINICAL_NOTE",
            "types": [
                {"document_type": "CLINICAL_NOTE", "share": 0.55, "confidence": 0.91},
                {"document_type": "LAB_REPORT", "share": 0.45, "confidence": 0.6},
            ],
        }
    ]
    tolerances = MEDICAL.tolerances.model_copy(
        update={"min_dominant_confidence": floor, "dominant_margin": margin}
    )
    candidate = MEDICAL.model_copy(update={"tolerances": tolerances})
    before, after = doubt_findings(segments, MEDICAL), doubt_findings(segments, candidate)
    assert before is not None
    assert after is not None
    assert doubt_delta(segments, MEDICAL, candidate) == after - before


@pytest.mark.parametrize(
    "broken", [{"share": None}, {"confidence": "high"}, {"document_type": None, "share": "x"}]
)
def test_an_unreadable_segment_gives_no_doubt_difference(broken: dict[str, Any]) -> None:
    """A stored segment with a type the verifier could not read gives None (the caller reads the whole
    record), as the verifier's own count does, whichever type it is."""
    from arbiter.whatif.focused import doubt_delta, doubt_findings

    segments = classification("doubt")["segments"]
    last = segments[-1]
    segments = [*segments[:-1], {**last, "types": [*last["types"][:-1], {**last["types"][-1], **broken}]}]
    tolerances = MEDICAL.tolerances.model_copy(update={"min_dominant_confidence": 0.95})
    candidate = MEDICAL.model_copy(update={"tolerances": tolerances})
    assert doubt_findings(segments, candidate) is None
    assert doubt_delta(segments, MEDICAL, candidate) is None


def test_the_collector_is_off_while_the_history_is_read_on_while_re_verifying_then_as_it_was(
    fixture_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A simulation reads, decides and compares with the cyclic garbage collector off, re-verifies with it
    on, and leaves it as it found it; the report is the one a run with the collector on gives."""
    import gc

    from arbiter.whatif import simulate as module

    store, out_dir = fixture_store
    content = MEDICAL.content.model_copy(update={"clear_share": 0.61})
    candidate = MEDICAL.model_copy(update={"content": content})
    seen: dict[str, bool] = {}
    read, reverify = module.read_history, module.reverify_all

    def spy_read(*args: Any, **kwargs: Any) -> Any:
        seen["read"] = gc.isenabled()
        return read(*args, **kwargs)

    def spy_reverify(*args: Any, **kwargs: Any) -> Any:
        seen["reverify"] = gc.isenabled()
        return reverify(*args, **kwargs)

    with reading(store.url) as conn:
        with module.collector(True):
            on = simulate(conn, MEDICAL, candidate, out_dir=out_dir)
        monkeypatch.setattr(module, "read_history", spy_read)
        monkeypatch.setattr(module, "reverify_all", spy_reverify)
        assert gc.isenabled()
        report = simulate(conn, MEDICAL, candidate, out_dir=out_dir)
        assert gc.isenabled()
        with module.collector(False):
            simulate(conn, MEDICAL, candidate, out_dir=out_dir)
            assert not gc.isenabled()
    assert seen == {"read": False, "reverify": True}
    for data in (on, report):
        data.pop("seconds")
    assert report == on
