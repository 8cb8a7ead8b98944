"""Issue 31's acceptance, end to end: a grounded-answer run reviewed at the desk by two reviewers (agreements,
a statement marked unsupported, a citation fixed, an abstention, a blind second review that disagrees and its
adjudication), exported, and measured: `arbiter metrics --kind grounded-answer` and the export say what a
hand count of those decisions says."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from answer_helpers import AGREEABLE, NO_EVIDENCE, UNSUPPORTED, WRONG_CITATION, packet_of, profile_file
from review_helpers import PASSWORD, Seeded, app_pointed, app_test, sign_in
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import PacketKind
from arbiter.demo.grounded.build import demo_items, write_jsonl
from arbiter.kinds import GROUNDED, kind
from arbiter.run.item_batch import run_items
from arbiter.store import Store

ACCEPTED = ("q01", "q03")  # correct answers the rules accept: one statement citing REQ-001 each
ITEMS = (*ACCEPTED, *AGREEABLE, UNSUPPORTED, WRONG_CITATION, NO_EVIDENCE)


@pytest.fixture(name="chain")
def chain_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    url = f"sqlite:///{tmp_path / 'arbiter.db'}"
    store = Store(url)
    store.migrate()
    chosen = [p for p in demo_items() if p.item["item_id"] in ITEMS]
    assert len(chosen) == len(ITEMS)
    items = write_jsonl(chosen, tmp_path / "items" / "items.jsonl")
    summary = run_items(
        kind(GROUNDED), [items], tmp_path / "output", db=url, profile=profile_file(tmp_path, 1.0)
    )
    assert (summary["accepted_first_time"] + summary["accepted_after_fixes"], summary["escalated"]) == (2, 6)
    for name, role in (("alice", "reviewer"), ("bob", "reviewer"), ("root", "admin")):
        store.users.add(name, role, PASSWORD)
    data = Seeded(store, url, tmp_path / "output", [], docs=tmp_path / "items")
    try:
        with app_pointed(data, monkeypatch):
            yield data
    finally:
        store.dispose()


def _desk(
    data: Seeded, doc_id: str, user: str, packet_kind: PacketKind = PacketKind.ESCALATION
) -> tuple[Any, str]:
    """The packet claimed by `user` and open on the desk (AppTest, signed in)."""
    packet = packet_of(data.store, doc_id, packet_kind)
    for summary in data.store.queue.page(limit=500):  # the packet auto-advance opened after the last save
        if summary.claimed_by == user and summary.packet_id != packet.packet_id:
            data.store.queue.release(summary.packet_id, user)
    assert data.store.queue.claim(packet.packet_id, user) is not None
    at = sign_in(app_test(), user)
    at.switch_page("views/packet.py").run()
    assert not at.exception, at.exception
    assert at.session_state["arbiter_packet_id"] == packet.packet_id
    return at, packet.packet_id


def _save(at: Any) -> None:
    at.button(key="answer_save").click().run()
    assert not at.exception, at.exception


def test_two_reviewers_at_the_desk_give_ground_truth_whose_metrics_match_a_hand_count(
    chain: Seeded, tmp_path: Path
) -> None:
    """Agreements, an unsupported statement, a fixed citation, an abstention, a disagreeing blind second
    review and its adjudication: the metrics and the export equal the hand count below."""
    for doc_id in AGREEABLE:  # alice agrees with three answers (one of them an abstention)
        at, _ = _desk(chain, doc_id, "alice")
        at.button(key="answer_agree").click().run()
        assert not at.exception, at.exception
    at, pid = _desk(chain, UNSUPPORTED, "alice")  # statement 3 turns "may" into "must"
    at.selectbox(key=f"ans_verdict_{pid}_2").select("changed_modal").run()
    _save(at)
    at, pid = _desk(chain, UNSUPPORTED, "bob", PacketKind.SECOND_REVIEW)  # blind: bob gives another reason
    at.selectbox(key=f"ans_verdict_{pid}_2").select("not_in_source").run()
    _save(at)
    at, pid = _desk(chain, UNSUPPORTED, "root", PacketKind.ADJUDICATION)  # root keeps alice's answer
    at.radio(key=f"adj_choice_{pid}").set_value("FIRST").run()
    at.button(key="save_adjudication").click().run()
    assert not at.exception, at.exception
    at, pid = _desk(chain, WRONG_CITATION, "alice")  # statement 1 cites C05; C09 holds its quote
    at.selectbox(key=f"ans_chunk_{pid}_0").select("C09").run()
    _save(at)
    at, pid = _desk(chain, NO_EVIDENCE, "alice")  # nothing retrieved answers it
    at.toggle(key=f"ans_abstain_{pid}").set_value(True).run()
    at.text_area(key=f"ans_missing_{pid}").input("A rule that states the deadline").run()
    _save(at)

    runner = CliRunner()
    shown = runner.invoke(app, ["metrics", "--kind", GROUNDED, "--db", chain.url, "--json"])
    assert shown.exit_code == 0, shown.output
    scores = next(s for s in json.loads(shown.output)["scores"] if s["scope"] == "all")
    # Hand count over the 8 items. Statements of the primary's answers, judged: q01, q03, q17, q23 one each,
    # supported as answered or agreed; q41 abstains (none); q02 three: 1 and 2 supported, 3 unsupported
    # (changed modal, the adjudicated answer); q11 one, corrected (REQ-900 -> REQ-001); q38 one, unsupported
    # (not in source: replaced by an abstention). 9 judged, 6 supported, 7 kept.
    assert scores["items"] == 8
    assert scores["statements"] == 9
    assert (scores["groundedness"]["k"], scores["groundedness"]["n"]) == (6, 9)
    assert (scores["kept"]["k"], scores["kept"]["n"]) == (7, 9)
    # Cites: the primary's 9 (one a statement); kept by the truth: the 6 supported statements' own; the truth
    # cites those 6 and q11's REQ-001.
    assert (scores["citation_precision"]["k"], scores["citation_precision"]["n"]) == (6, 9)
    assert (scores["citation_recall"]["k"], scores["citation_recall"]["n"]) == (6, 7)
    # Abstentions: the truth abstains on q41 and q38, the primary on q41 only.
    assert (scores["abstention_accuracy"]["k"], scores["abstention_accuracy"]["n"]) == (7, 8)
    assert (scores["abstained_when_it_should"]["k"], scores["abstained_when_it_should"]["n"]) == (1, 2)
    assert (scores["answered_when_it_could"]["k"], scores["answered_when_it_could"]["n"]) == (6, 6)
    # Answers right as given: q01, q03, q17, q23, q41; wrong: q02, q11, q38.
    assert (scores["answer_accuracy"]["k"], scores["answer_accuracy"]["n"]) == (5, 8)
    reasons = {r["label"]: r["rate"]["k"] for r in scores["unsupported_reasons"]}
    assert reasons == {"changed_modal": 1, "not_in_source": 1}

    out = tmp_path / "export"
    exported = runner.invoke(
        app, ["export", "--kind", GROUNDED, "--db", chain.url, "--to", str(out), "--format", "csv"]
    )
    assert exported.exit_code == 0, exported.output
    with (out / "answers.csv").open(encoding="utf-8") as handle:
        rows = {r["item_id"]: r for r in csv.DictReader(handle)}
    assert set(rows) == set(ITEMS)
    assert {d: rows[d]["answer_correct"] for d in ITEMS} == {
        **dict.fromkeys((*ACCEPTED, *AGREEABLE), "true"),
        **dict.fromkeys((UNSUPPORTED, WRONG_CITATION, NO_EVIDENCE), "false"),
    }
