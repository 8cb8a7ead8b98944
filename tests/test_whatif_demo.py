"""Issue 17's done-when check: the demo's history (`arbiter demo --llm replay`) plus a scripted set of SME
reviews, then `arbiter policy simulate --json` with a stricter and a looser candidate. Every expected flip
and rate below was worked out by hand from the demo's recorded outcomes, not by the code under test."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.store import Store
from tests.whatif_helpers import review

runner = CliRunner()
MEDICAL_TOML = Path(__file__).resolve().parents[1] / "arbiter" / "profiles" / "medical.toml"
# The SME gives these a different dominant type than the machine's answer; every other review agrees.
CORRECTED = ("lab-quest-01", "path-breast-02", "gen-tempus-03")


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo's store with every packet that shows an answer reviewed (the input failures show none):
    escalations by one SME, the blind second reviews by another, the audits by the first."""
    tmp = tmp_path_factory.mktemp("whatif-demo")
    out = tmp / "demo"
    ran = runner.invoke(app, ["demo", "--out", str(out), "--llm", "replay", "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    for packet in store.queue.page(status="PENDING", limit=1000):
        answer = store.queue.get(packet.packet_id).final_classification
        if answer is None:
            continue
        truth = copy.deepcopy(answer)
        wrong = packet.doc_id in CORRECTED
        if wrong:
            truth["dominant_type"] = "ADMINISTRATIVE"
        reviewer = "sme-2" if packet.kind == "SECOND_REVIEW" else "sme-1"
        review(store, packet.packet_id, truth, agrees=not wrong, reviewer=reviewer)
    store.dispose()

    text = MEDICAL_TOML.read_text(encoding="utf-8")
    minor_only = (
        'name = "minor_only"\nwhen = { blocker = { max = 0 }, major = { max = 0 }, minor = { min = 1 } }\n'
        'decision = "AUTO_ACCEPT"'
    )
    stricter = _edit(text, minor_only, minor_only.replace("AUTO_ACCEPT", "ESCALATE_TO_SME"))
    stricter = _edit(stricter, "min_dominant_confidence = 0.6\n", "min_dominant_confidence = 0.92\n")
    looser = _edit(text, '"Quest Diagnostics", ', "")
    looser = _edit(looser, "\nclear_score = 5.0\n", "\nclear_score = 1000.0\n")
    looser = _edit(looser, "page_clear_score = 6.0 ", "page_clear_score = 1000.0 ")
    looser = _edit(looser, "evidence_other_score = 2.0 ", "evidence_other_score = 1000.0 ")
    # ... and the page reader's contradiction out of reach too (it gives a type at least 0).
    looser = _edit(looser, "\nsupport = 0.05\n", "\nsupport = 0.0\n")
    looser = _edit(looser, "page_clear = 0.95 ", "page_clear = 1.0 ")
    (tmp / "stricter.toml").write_text(stricter, encoding="utf-8")
    (tmp / "looser.toml").write_text(looser, encoding="utf-8")
    return {"out": out, "stricter": tmp / "stricter.toml", "looser": tmp / "looser.toml"}


def _simulate(demo: dict[str, Path], candidate: str) -> dict[str, Any]:
    result = runner.invoke(
        app, ["policy", "simulate", "--profile", str(demo[candidate]), "--out", str(demo["out"]), "--json"]
    )
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _kn(data: dict[str, Any]) -> tuple[int, int, list[str]]:
    return data["k"], data["n"], data["doc_ids"]


def test_a_stricter_candidate_flips_exactly_the_documents_found_by_hand(demo: dict[str, Path]) -> None:
    """min_dominant_confidence 0.92 and minor-only escalated: the accepted documents with a segment at
    confidence 0.90 (note-consult-02, note-discharge-04, record-30p) and the one minor-only accept
    (lab-labcorp-04) escalate; nothing else changes."""
    report = _simulate(demo, "stricter")
    flips = [(f["doc_id"], f["from"], f["to"], f["rule"]) for f in report["flips"]]
    assert flips == [
        ("lab-labcorp-04", "AUTO_ACCEPT", "ESCALATE_TO_SME", "minor_only"),
        ("note-consult-02", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major"),
        ("note-discharge-04", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major"),
        ("record-30p", "AUTO_ACCEPT", "ESCALATE_TO_SME", "non_fixable_major"),
    ]
    # 35 documents: 4 input failures kept, 31 decided again with the V2 doubt rule re-run (no bundle read).
    assert report["documents"] == 35
    assert sorted(report["paths"].values()) == [4, 31]
    assert report["llm_calls"] == 0
    assert report["llm_findings_needed"]["count"] == 0
    # Reviewed and accepted: the audited note-discharge-04 and packet-05. The candidate escalates the first,
    # whose audit agreed: one more needless escalation (the ten escalations reviewed, seven answers right).
    assert _kn(report["false_accepts"]["current"]) == (0, 2, [])
    assert _kn(report["false_accepts"]["candidate"]) == (0, 1, [])
    needless = [
        "admin-requisition-03",
        "gen-guardant-02",
        "lab-labcorp-02",
        "lab-quest-03",
        "note-injection-03",
        "packet-03",
        "packet-07-scanned",
    ]
    assert _kn(report["needless_escalations"]["current"]) == (7, 10, needless)
    assert _kn(report["needless_escalations"]["candidate"]) == (
        8,
        11,
        sorted([*needless, "note-discharge-04"]),
    )


def test_a_looser_candidate_flips_exactly_the_document_found_by_hand(demo: dict[str, Path]) -> None:
    """Quest Diagnostics no longer a routine lab and the [content] "reads as another type" scores (and the
    page reader's) out of reach: lab-quest-01's three findings (V3's routine-vendor blocker, V2's and V4's content contradictions)
    go and it is accepted clean; every other escalation keeps a finding those settings do not touch."""
    report = _simulate(demo, "looser")
    flips = [(f["doc_id"], f["from"], f["to"], f["rule"]) for f in report["flips"]]
    assert flips == [("lab-quest-01", "ESCALATE_TO_SME", "AUTO_ACCEPT", "clean")]
    assert sorted(report["paths"].values()) == [4, 31]  # 31 re-verified (rules only) from their bundles
    assert report["llm_calls"] == 0
    # The SME corrected lab-quest-01: the candidate accepts a wrong answer.
    assert _kn(report["false_accepts"]["current"]) == (0, 2, [])
    assert _kn(report["false_accepts"]["candidate"]) == (1, 3, ["lab-quest-01"])
    # Re-weighted audit rate: 21 accepted by both, 0 of 2 audits wrong; 1 accepted only by the candidate,
    # 1 of 1 wrong: (21 * 0 + 1 * 1) / 22.
    audit = report["audit_false_accept"]["candidate"]
    assert [(s["documents"], s["audit"]["k"], s["audit"]["n"]) for s in audit["strata"]] == [
        (21, 0, 2),
        (1, 1, 1),
    ]
    assert audit["rate"] == pytest.approx(1 / 22)
    # [content] feeds the model's prompts: the documents the model judged need its findings afresh, the 31
    # verified but gen-guardant-02 (V1's blocker stopped V2-V4 before any model phase).
    assert report["llm_findings_needed"]["count"] == 30
