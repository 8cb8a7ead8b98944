"""The grounded-answer kind's reading of text: word families matched by a real stemmer, numbers compared only
when they measure the same thing, imperative sentences read as obligations, and evidence found when a
sentence leaves the question's words to its section title. Each case failed on the first version."""

from __future__ import annotations

import json

import pytest

from arbiter.contracts.grounded import GroundedItem
from arbiter.demo.grounded.build import clean_item, planted
from arbiter.demo.grounded.chunks import CHUNKS
from arbiter.demo.grounded.fresh import FRESH_CHUNKS, FRESH_SPECS
from arbiter.demo.grounded.questions import SPECS
from arbiter.kinds import GROUNDED, kind
from arbiter.run.items import verify_item
from arbiter.verifiers.grounded.text import coverage, read
from arbiter.verifiers.grounded.v2_consistency import answering_sentences

SPEC = kind(GROUNDED)
PROFILE = SPEC.load_profile()
BY_ID = {s.qid: s for s in SPECS}

FAMILIES = [
    ("notify", "the notification required"),
    ("notified", "shall notify"),
    ("discovering a breach", "after discovery of a breach"),
    ("disclosures", "may disclose"),
    ("requests", "requested"),
    ("identify", "identification"),
]


@pytest.mark.parametrize(("said", "held"), FAMILIES, ids=[f for f, _ in FAMILIES])
def test_words_of_one_family_match(said: str, held: str) -> None:
    """A word matches its inflections and derivations (notify ~ notification) in the support overlap."""
    assert coverage(read(said, PROFILE).content, read(held, PROFILE).content) == 1.0


UNRELATED = [("provide", "provision"), ("state", "statute"), ("access", "accounting")]


@pytest.mark.parametrize(("a", "b"), UNRELATED, ids=[a for a, _ in UNRELATED])
def test_unrelated_words_do_not_match(a: str, b: str) -> None:
    """Words that only look alike are not joined."""
    assert coverage(read(a, PROFILE).content, read(b, PROFILE).content) == 0.0


IMPERATIVES = [
    ("Retain the documentation for 6 years from the date of its creation.", True),
    ("(i) Time limit (Required). Retain the documentation for 6 years.", True),
    ("Implement technical policies and procedures to allow access only to authorised persons.", True),
    ("Review of the records is done yearly.", False),
    ("Documentation may be kept for 6 years.", False),
    ("the documentation retained for 6 years", False),
]


@pytest.mark.parametrize(("text", "obliges"), IMPERATIVES, ids=[t[:24] for t, _ in IMPERATIVES])
def test_an_imperative_sentence_is_an_obligation(text: str, obliges: bool) -> None:
    """A sentence opening with a bare verb ("Retain ...") obliges as "must" does; a noun opening does not."""
    assert read(text, PROFILE).obligation is obliges


ESCALATED = [
    ("Q26", "modal_changed", "V3.MODAL_CHANGED"),  # "Retain ..." → "should be retained"
    ("Q29", "modal_changed", "V3.MODAL_CHANGED"),  # "Implement ..." → "should allow"
    ("Q20", "abstained_with_evidence", "V2.ABSTAINED_WITH_EVIDENCE"),
]


@pytest.mark.parametrize(("qid", "fault", "code"), ESCALATED, ids=[f"{q}-{f}" for q, f, _ in ESCALATED])
def test_faults_the_first_version_missed_are_escalated(qid: str, fault: str, code: str) -> None:
    """A modal weakened from an imperative quote, and an abstention over answering evidence, are escalated."""
    made = planted(BY_ID[qid], fault)
    assert made is not None
    outcome = verify_item(SPEC, json.dumps(made.item), PROFILE)
    assert outcome.final_decision == "ESCALATE_TO_SME"
    assert code in {i.code for i in outcome.final_issues}


@pytest.mark.parametrize("qid", ["Q20", "Q36"])
def test_correct_answers_the_first_version_escalated_are_accepted(qid: str) -> None:
    """ "notify" found in "notification"; "30 days after discovery" not set against "60 days after year end"."""
    outcome = verify_item(SPEC, json.dumps(clean_item(BY_ID[qid])), PROFILE)
    assert outcome.final_decision == "AUTO_ACCEPT", [i.code for i in outcome.final_issues]


def _policy_item(policy: str) -> dict[str, object]:
    """Q20's correct answer (60 days after discovery) with another retrieved chunk, uncited, saying `policy`."""
    item = clean_item(BY_ID["Q20"])
    chunk = dict(item["chunks"][0])
    chunk |= {"chunk_id": "X01", "source": "policy", "section": "Breach notification", "text": policy}
    chunk["score"] = 0.8
    item["chunks"] = [*item["chunks"], chunk]
    return item


_RULE = (
    "A covered entity shall provide the notification without unreasonable delay and in no case later than "
)
CONFLICTS = [
    (_RULE + "30 calendar days after discovery of a breach.", True),
    (_RULE + "30 days; discovery of a breach starts the clock.", True),
    (_RULE + "30 days after the end of each calendar year in which a breach was discovered.", False),
]


@pytest.mark.parametrize(("policy", "conflicts"), CONFLICTS, ids=["same-event", "no-anchor", "other-event"])
def test_numbers_conflict_only_when_they_measure_the_same_thing(policy: str, conflicts: bool) -> None:
    """Another number of days from the same event is a conflict; days from another event are another rule."""
    outcome = verify_item(SPEC, json.dumps(_policy_item(policy)), PROFILE)
    found = "V2.CONFLICT_NOT_PRESENTED" in {i.code for i in outcome.final_issues}
    assert found is conflicts


def test_a_sentence_is_read_with_its_section_title() -> None:
    """A sentence that leaves the question's subject to its section title still answers the question."""
    item = clean_item(BY_ID["Q20"])
    item["question"] = {"text": "How soon must individuals be notified of a breach?", "language": "en"}
    chunk = item["chunks"][0]
    chunk["section"] = "Notification to individuals: timeliness"
    chunk["text"] = (
        "A covered entity shall act without unreasonable delay and in no case later than 60 days after discovery of a breach."
    )
    grounded = GroundedItem.model_validate(item)
    assert [sentence for _, sentence in answering_sentences(grounded, PROFILE)] == [chunk["text"]]


def test_fresh_held_out_questions_build_from_their_own_chunks() -> None:
    """The fresh split's chunks are new (no id shared with the first corpus) and every quote is cut from them."""
    assert not CHUNKS.keys() & FRESH_CHUNKS.keys()
    assert len(FRESH_SPECS) == 10
    for spec in FRESH_SPECS:
        item = clean_item(spec)
        texts = {c["chunk_id"]: c["text"] for c in item["chunks"]}
        assert all(q["text"] in texts[q["chunk_id"]] for q in item["answer"]["quotes"])
