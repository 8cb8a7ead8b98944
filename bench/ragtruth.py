"""The grounded-answer kind's offline support check against RAGTruth's human labels (issue 30, item 5).

    .venv/bin/python bench/ragtruth.py --data DIR [--split test] [--tasks QA,Summary,Data2txt]

DIR holds RAGTruth's `response.jsonl` and `source_info.jsonl` as in its `dataset/` folder
(https://github.com/ParticleMedia/RAGTruth, MIT licence; at commit `RAGTRUTH_COMMIT`). The data is
not part of this repository; see bench/README.md for how to get it. One JSON object is printed.

Each response becomes a grounded-answer item (arbiter.contracts.grounded): the source as chunks (QA: one
chunk a passage; Summary: the article; Data2txt: the business's fields, and one chunk a review), the response
split into sentences as statements (the kind's own splitter). RAGTruth responses cite nothing, so each
statement is given as quotes the chunk sentences that best support it (at most `MAX_QUOTES`, chosen greedily
by the statement's content words and numbers they hold), and then V4's own per-statement support decision
(arbiter.verifiers.grounded.v4_evidence.support_gaps: content-word coverage, numbers, negation, modality)
is applied unchanged. A response is predicted hallucinated when any statement is unsupported; RAGTruth
labels it hallucinated when it has any labelled span. The QA prompt's own refusal sentence ("Unable to answer
based on given passages.") is an abstention, not a statement.

Held out: every threshold and word list is the shipped grounded-answer profile's, set on Arbiter's demo corpus
(arbiter/demo/grounded); nothing here was tuned on RAGTruth.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.contracts.grounded import (
    Answer,
    Chunk,
    GroundedItem,
    GroundedProfile,
    Question,
    Quote,
    Statement,
    load_grounded_profile,
)
from arbiter.verifiers.grounded.text import Reading, read, sentences, shared
from arbiter.verifiers.grounded.v4_evidence import support_gaps

RAGTRUTH_URL = "https://github.com/ParticleMedia/RAGTruth"
RAGTRUTH_COMMIT = "c103204b9ce28d6bbad859304bf30de72b8ed8fe"
# git blob ids of the two files at RAGTRUTH_COMMIT (`git hash-object FILE` prints the same for a faithful copy).
RAGTRUTH_BLOBS = {
    "response.jsonl": "f9ae5913fb9976684f3e13be3cd3465062db54cc",
    "source_info.jsonl": "119277774009f110aa58596b93f9512f62594a89",
}
TASKS = ("QA", "Summary", "Data2txt")
# The most quotes one statement cites: the demo corpus's statements cite one or two (fixed before any
# RAGTruth response was read, not tuned on it).
MAX_QUOTES = 2
REFUSAL = "unable to answer based on given passages"
_PASSAGE = re.compile(r"(?:^|\n)\s*passage\s*\d+\s*:", re.IGNORECASE)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")

PAPER_BASELINES: dict[str, Any] | None = None
PAPER_BASELINES_WHY = (
    "Not found verbatim in the fetched repository (ParticleMedia/RAGTruth at commit "
    f"{RAGTRUTH_COMMIT}): its README gives the dataset's fields and statistics only, and baseline/ holds the "
    "fine-tuning and evaluation code without results. The response-level table of the paper (Niu et al., ACL "
    "2024, arXiv 2401.00396) is not quoted from memory; read it there to set beside these figures."
)


# ------------------------------------------------------------------------------------------ converting


def chunks_of(task: str, source_info: Any) -> list[str]:
    """The source as chunk texts: QA's passages, a summary's article, a business's fields and reviews."""
    if task == "QA":
        text = source_info["passages"] if isinstance(source_info, dict) else str(source_info)
        return [p.strip() for p in _PASSAGE.split(text) if p.strip()]
    if task == "Summary":
        return [str(source_info).strip()]
    if task == "Data2txt":
        info = dict(source_info)
        reviews = info.pop("review_info", None) or []
        fields = [f"{name}: {value}." for name, value in _flatten(info)]
        out = ["\n".join(fields)] if fields else []
        for review in reviews:
            out.append("\n".join(f"{name}: {value}." for name, value in _flatten(review)))
        return [c for c in out if c.strip()]
    raise ValueError(f"unknown RAGTruth task type {task!r}")


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Nested fields as (words of the path, value): {"BusinessParking": {"lot": true}} → ("Business Parking
    lot", "True"). Empty values are left out."""
    if isinstance(value, dict):
        for name, inner in value.items():
            label = _CAMEL.sub(" ", str(name)).replace("_", " ")
            yield from _flatten(inner, f"{prefix} {label}".strip())
    elif isinstance(value, list):
        for inner in value:
            yield from _flatten(inner, prefix)
    elif value is not None and str(value).strip():
        yield prefix, str(value)


def question_of(task: str, source_info: Any) -> str:
    if task == "QA" and isinstance(source_info, dict) and str(source_info.get("question", "")).strip():
        return str(source_info["question"])
    return {"Summary": "Summarize the news article.", "Data2txt": "Write an overview of the business."}.get(
        task, "Answer from the passages."
    )


def statements_of(response: str) -> list[str]:
    """The response's sentences (the kind's splitter, line by line), list markers stripped; pieces without a
    letter and the QA prompt's refusal sentence are no statements."""
    out = []
    for line in response.splitlines():
        for sentence in sentences(_LIST_MARK.sub("", line)):
            if not any(ch.isalpha() for ch in sentence):
                continue
            if REFUSAL in " ".join(sentence.lower().split()):
                continue
            out.append(sentence)
    return out


@dataclass(frozen=True)
class _Candidate:
    chunk_id: str
    text: str
    reading: Reading


def best_quotes(statement: str, candidates: list[_Candidate], profile: GroundedProfile) -> list[_Candidate]:
    """The chunk sentences that best support a statement, greedily: each next one holds the most of the
    statement's content words and numbers the ones before it did not (ties: the one that agrees with the
    statement's negation, then the earlier one); none is added that holds nothing new."""
    said = read(statement, profile)
    content, numbers = set(said.content), set(said.numbers)
    chosen: list[_Candidate] = []
    while len(chosen) < MAX_QUOTES and (content or numbers):
        best, best_key = None, (0, 0, False)
        for cand in candidates:
            if cand in chosen:
                continue
            gain = (
                len(shared(content, cand.reading.content)),
                len(numbers & cand.reading.numbers),
                cand.reading.negated == said.negated,
            )
            if gain[0] + gain[1] > 0 and gain > best_key:
                best, best_key = cand, gain
        if best is None:
            break
        chosen.append(best)
        content -= shared(content, best.reading.content)
        numbers -= best.reading.numbers
    return chosen


def to_item(response: dict[str, Any], source: dict[str, Any], profile: GroundedProfile) -> GroundedItem:
    """One RAGTruth response as a grounded-answer item, each statement citing its best-supporting sentences."""
    task = source["task_type"]
    chunks = [
        Chunk(chunk_id=f"C{n}", source=f"RAGTruth {source['source_id']}", text=text, score=1.0)
        for n, text in enumerate(chunks_of(task, source["source_info"]), 1)
    ]
    candidates = [
        _Candidate(c.chunk_id, s, read(s, profile))
        for c in chunks
        for line in c.text.splitlines()
        for s in sentences(line)
    ]
    quotes: dict[tuple[str, str], Quote] = {}
    statements = []
    for text in statements_of(response["response"]):
        cites = []
        for cand in best_quotes(text, candidates, profile):
            quote = quotes.setdefault(
                (cand.chunk_id, cand.text),
                Quote(quote_id=f"Q{len(quotes) + 1}", chunk_id=cand.chunk_id, text=cand.text),
            )
            cites.append(quote.quote_id)
        statements.append(Statement(text=text, cites=cites))
    return GroundedItem(
        item_id=f"ragtruth-{response['id']}",
        question=Question(text=question_of(task, source["source_info"])),
        chunks=chunks,
        answer=Answer(
            statements=statements,
            quotes=list(quotes.values()),
            abstained=not statements,
            missing_evidence=["the passages do not answer the question"] if not statements else [],
        ),
    )


# ------------------------------------------------------------------------------------------ scoring


def unsupported(item: GroundedItem, profile: GroundedProfile) -> list[tuple[int, list[str]]]:
    """The statements V4's support decision rejects, with its reasons. A statement that states something
    (content words or numbers) and finds no chunk sentence sharing any of it is unsupported too."""
    texts = {q.quote_id: q.text for q in item.answer.quotes}
    out = []
    for i, statement in enumerate(item.answer.statements):
        quotes = [texts[q] for q in statement.cites]
        if quotes:
            gaps = support_gaps(statement.text, quotes, profile)
        else:
            said = read(statement.text, profile)
            gaps = ["no chunk sentence holds any of its words"] if said.content or said.numbers else []
        if gaps:
            out.append((i, gaps))
    return out


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    statements: int = 0
    statements_unsupported: int = 0
    abstained: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, labelled: bool, predicted: bool) -> None:
        if labelled and predicted:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif labelled:
            self.fn += 1
        else:
            self.tn += 1

    def figures(self) -> dict[str, Any]:
        n = self.tp + self.fp + self.fn + self.tn
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else None
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else None
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall
            else None
        )
        return {
            "n": n,
            "labelled_hallucinated": self.tp + self.fn,
            "predicted_hallucinated": self.tp + self.fp,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": _round(precision),
            "recall": _round(recall),
            "f1": _round(f1),
            "predict_all_hallucinated_f1": _round(
                2 * (self.tp + self.fn) / (n + self.tp + self.fn) if n else None
            ),
            "statements": self.statements,
            "statements_unsupported": self.statements_unsupported,
            "responses_abstained": self.abstained,
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def score(
    responses: Iterable[dict[str, Any]],
    sources: dict[str, dict[str, Any]],
    profile: GroundedProfile,
    split: str = "test",
    tasks: Iterable[str] = TASKS,
) -> dict[str, Tally]:
    """Response-level tallies by task, and "overall", over one split."""
    wanted = set(tasks)
    tallies: dict[str, Tally] = {t: Tally() for t in TASKS if t in wanted}
    overall = Tally()
    for response in responses:
        if response.get("split") != split:
            continue
        source = sources[str(response["source_id"])]
        task = source["task_type"]
        if task not in wanted:
            continue
        item = to_item(response, source, profile)
        rejected = unsupported(item, profile)
        labelled, predicted = bool(response.get("labels")), bool(rejected)
        for tally in (tallies[task], overall):
            tally.add(labelled, predicted)
            tally.statements += len(item.answer.statements)
            tally.statements_unsupported += len(rejected)
            tally.abstained += item.answer.abstained
    tallies["overall"] = overall
    return tallies


def _blob_id(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with response.jsonl, source_info.jsonl"
    )
    parser.add_argument("--split", default="test", choices=("test", "train"))
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated: QA,Summary,Data2txt")
    parser.add_argument(
        "--profile", type=Path, default=None, help="grounded-answer profile (default: shipped)"
    )
    args = parser.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(TASKS)}")
    files = {name: args.data / name for name in RAGTRUTH_BLOBS}
    absent = [str(p) for p in files.values() if not p.is_file()]
    if absent:
        parser.error(f"not found: {', '.join(absent)} (see bench/README.md for how to get RAGTruth)")
    profile = load_grounded_profile(args.profile)
    started = time.perf_counter()
    sources = {str(s["source_id"]): s for s in read_jsonl(files["source_info.jsonl"])}
    tallies = score(read_jsonl(files["response.jsonl"]), sources, profile, args.split, tasks)
    seconds = time.perf_counter() - started
    n = tallies["overall"].tp + tallies["overall"].fp + tallies["overall"].fn + tallies["overall"].tn
    return {
        "benchmark": "grounded-answer offline support check (V4's rule) against RAGTruth's response labels",
        "data": {
            "source": RAGTRUTH_URL,
            "commit": RAGTRUTH_COMMIT,
            "licence": "MIT",
            "split": args.split,
            "matches_that_commit": {name: _blob_id(p) == RAGTRUTH_BLOBS[name] for name, p in files.items()},
        },
        "rule": (
            "a response is predicted hallucinated when any of its sentences is unsupported by its best "
            f"{MAX_QUOTES} chunk sentence(s) under V4's support decision; labelled hallucinated when it has any "
            "labelled span"
        ),
        "profile": {
            "name": profile.name,
            "version": profile.version,
            "support_min_coverage": profile.thresholds.support_min_coverage,
        },
        "held_out": (
            "thresholds and word lists are the shipped profile's, set on Arbiter's own demo corpus; nothing was "
            "tuned on RAGTruth, and these are the shipped threshold's figures"
        ),
        "by_task": {t: tallies[t].figures() for t in TASKS if t in tallies},
        "overall": tallies["overall"].figures(),
        "paper_baselines": PAPER_BASELINES,
        "why": PAPER_BASELINES_WHY if PAPER_BASELINES is None else None,
        "seconds": round(seconds, 2),
        "responses_per_second": round(n / seconds, 1) if seconds else None,
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
