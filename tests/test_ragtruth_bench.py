"""bench/ragtruth.py on a hand-written RAGTruth-shaped sample (not RAGTruth's data; no network): responses
become grounded-answer items, V4's support decision finds the planted unsupported sentence, and the
response-level counts come out as labelled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arbiter.contracts.grounded import load_grounded_profile
from bench import ragtruth

PROFILE = load_grounded_profile()

PASSAGES = (
    "passage 1:The museum opens at 9 am on weekdays. Admission is free for children under twelve.\n\n"
    "passage 2:The museum's west wing holds the collection of Dutch paintings. Photography is not allowed "
    "in the west wing.\n\n"
)
SOURCES: list[dict[str, Any]] = [
    {
        "source_id": "s1",
        "task_type": "QA",
        "source": "MARCO",
        "source_info": {"question": "when does the museum open and what does it cost", "passages": PASSAGES},
        "prompt": "Briefly answer the following question: ...",
    },
    {
        "source_id": "s2",
        "task_type": "Summary",
        "source": "CNN/DM",
        "source_info": "The city council approved a new bridge on Tuesday. The bridge will cost 40 million "
        "dollars. Construction starts next spring.",
        "prompt": "Summarize the following news ...",
    },
]
PLANTED = "The museum also offers guided tours by famous astronauts every Sunday evening."
RESPONSES: list[dict[str, Any]] = [
    {  # supported: each sentence in the passages
        "id": "1",
        "source_id": "s1",
        "model": "m",
        "temperature": 0.7,
        "labels": [],
        "split": "test",
        "quality": "good",
        "response": "The museum opens at 9 am on weekdays. Admission is free for children under twelve.",
    },
    {  # planted: an unsupported sentence, labelled
        "id": "2",
        "source_id": "s1",
        "model": "m",
        "temperature": 0.7,
        "labels": [{"start": 38, "end": 116, "text": PLANTED, "label_type": "Evident Baseless Info"}],
        "split": "test",
        "quality": "good",
        "response": "The museum opens at 9 am on weekdays. " + PLANTED,
    },
    {  # a refusal: an abstention, not a statement
        "id": "3",
        "source_id": "s1",
        "model": "m",
        "temperature": 0.7,
        "labels": [],
        "split": "test",
        "quality": "incorrect_refusal",
        "response": "Unable to answer based on given passages.",
    },
    {  # summary with a wrong number, labelled
        "id": "4",
        "source_id": "s2",
        "model": "m",
        "temperature": 0.7,
        "labels": [{"start": 0, "end": 10, "text": "x", "label_type": "Evident Conflict"}],
        "split": "test",
        "quality": "good",
        "response": "The city council approved a new bridge. The bridge will cost 60 million dollars.",
    },
    {  # train split: left out of a test run
        "id": "5",
        "source_id": "s2",
        "model": "m",
        "temperature": 0.7,
        "labels": [],
        "split": "train",
        "quality": "good",
        "response": "The council met.",
    },
]


def _by_id() -> dict[str, dict[str, Any]]:
    return {s["source_id"]: s for s in SOURCES}


def test_a_response_becomes_an_item_whose_statements_cite_the_passages() -> None:
    item = ragtruth.to_item(RESPONSES[1], _by_id()["s1"], PROFILE)
    assert [c.text.split(".")[0] for c in item.chunks] == [
        "The museum opens at 9 am on weekdays",
        "The museum's west wing holds the collection of Dutch paintings",
    ]
    assert [s.text for s in item.answer.statements] == ["The museum opens at 9 am on weekdays.", PLANTED]
    first = item.answer.statements[0]
    assert [q.text for q in item.answer.quotes if q.quote_id in first.cites] == [
        "The museum opens at 9 am on weekdays."
    ]
    rejected = ragtruth.unsupported(item, PROFILE)
    assert [i for i, _ in rejected] == [1]  # the planted sentence, and only it
    assert "content words" in rejected[0][1][0]


def test_a_refusal_is_an_abstention() -> None:
    item = ragtruth.to_item(RESPONSES[2], _by_id()["s1"], PROFILE)
    assert item.answer.abstained
    assert not item.answer.statements
    assert ragtruth.unsupported(item, PROFILE) == []


def test_counts_on_the_test_split() -> None:
    tallies = ragtruth.score(RESPONSES, _by_id(), PROFILE)
    qa, summary, overall = tallies["QA"].figures(), tallies["Summary"].figures(), tallies["overall"].figures()
    assert (qa["n"], qa["tp"], qa["fp"], qa["fn"], qa["tn"]) == (3, 1, 0, 0, 2)
    assert qa["responses_abstained"] == 1
    assert (summary["n"], summary["tp"]) == (1, 1)  # 60 million: a number the article does not hold
    assert (overall["n"], overall["precision"], overall["recall"], overall["f1"]) == (4, 1.0, 1.0, 1.0)


def test_the_command_reads_a_folder_and_prints_the_figures(tmp_path: Path) -> None:
    for name, rows in (("source_info.jsonl", SOURCES), ("response.jsonl", RESPONSES)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = ragtruth.main(["--data", str(tmp_path), "--tasks", "QA"])
    assert set(out["by_task"]) == {"QA"}
    assert out["overall"]["n"] == 3
    assert out["overall"]["recall"] == 1.0
    assert out["data"]["matches_that_commit"] == {"response.jsonl": False, "source_info.jsonl": False}
    assert out["paper_baselines"] is None
    assert out["why"]
    json.dumps(out)  # printable


def test_a_missing_folder_says_how_to_get_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        ragtruth.main(["--data", str(tmp_path)])
    assert "bench/README.md" in capsys.readouterr().err
