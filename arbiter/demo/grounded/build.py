"""The grounded-answer demo corpus, generated: every question's correct item, and faulty variants planted the
ways the seeds describe (fault.py). Deterministic: the same code writes the same bytes.

`demo_items()` is the committed demo (fixtures/grounded/items.jsonl): 42 questions, a third answered wrongly,
plus three answers with only meaning-preserving slips (quote spacing, offsets, confidence) that Arbiter fixes.
`bench_items()` is every applicable fault on every question (bench/grounded.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.demo.grounded.chunks import CHUNKS
from arbiter.demo.grounded.fault import FAULTS, FIXABLE, TEXTS, WRONG
from arbiter.demo.grounded.questions import SPECS
from arbiter.demo.grounded.spec import Spec

PRODUCER = {"name": "demo-composer", "version": "1"}
_REGULATION = sorted(c for c in CHUNKS if c.startswith("C"))


@dataclass(frozen=True)
class Planted:
    """One generated item and what was planted in it ("clean", a WRONG fault, or a FIXABLE slip)."""

    item: dict[str, Any]
    qid: str
    planted: str

    @property
    def expected(self) -> str:
        return "ESCALATE_TO_SME" if self.planted in WRONG else "AUTO_ACCEPT"


def _h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def held_out(qid: str) -> bool:
    """The held-out split, fixed by a hash of the question id (about a third): nothing is tuned on it."""
    return _h("held-out", qid) % 3 == 0


def _score(qid: str, chunk: str, low: float, high: float) -> float:
    return round(low + (high - low) * (_h(qid, chunk) % 1000) / 999, 2)


def chunk_json(chunk_id: str, score: float) -> dict[str, Any]:
    source, section, page, text = TEXTS[chunk_id]
    return {
        "chunk_id": chunk_id,
        "source": source,
        "page": page,
        "section": section,
        "text": text,
        "score": score,
    }


def _distractors(spec: Spec, taken: set[str]) -> list[str]:
    pool = [c for c in _REGULATION if c not in taken]
    first = pool[_h(spec.qid, "d1") % len(pool)]
    rest = [c for c in pool if c != first]
    return [first, rest[_h(spec.qid, "d2") % len(rest)]]


def clean_item(spec: Spec) -> dict[str, Any]:
    """The question's correct item: the cited chunks scored high, two distractors, one chunk below threshold."""
    chunks: list[dict[str, Any]] = []
    if spec.answerable:
        quoted = list(dict.fromkeys(c for c, _ in spec.quotes))
        chunks += [chunk_json(c, _score(spec.qid, c, 0.72, 0.93)) for c in quoted]
        extra = _distractors(spec, set(quoted))
    else:
        extra = list(spec.retrieved)
    chunks += [chunk_json(c, _score(spec.qid, c, 0.52, 0.68)) for c in extra[:1]]
    chunks += [chunk_json(c, _score(spec.qid, c, 0.25, 0.45)) for c in extra[1:]]
    quotes = []
    for n, (chunk_id, text) in enumerate(spec.quotes, 1):
        at = TEXTS[chunk_id][3].find(text)
        if at < 0:
            raise ValueError(f"{spec.qid}: quote {n} is not in chunk {chunk_id}")
        quotes.append(
            {
                "quote_id": f"REQ-{n:03d}",
                "chunk_id": chunk_id,
                "text": text,
                "start": at,
                "end": at + len(text),
            }
        )
    statements = [
        {"text": text, "cites": [quotes[i]["quote_id"] for i in cites]} for text, cites in spec.statements
    ]
    answer: dict[str, Any] = {"language": "en", "statements": statements, "quotes": quotes}
    if spec.answerable:
        answer["confidence"] = "low" if len(quotes) == 1 else "medium"
    else:
        answer |= {"confidence": None, "abstained": True, "missing_evidence": list(spec.missing)}
    return {
        "item_id": spec.qid.lower(),
        "producer": PRODUCER,
        "question": {"text": spec.question, "language": "en"},
        "chunks": chunks,
        "answer": answer,
    }


def planted(spec: Spec, fault: str) -> Planted | None:
    """The question's item with `fault` planted, or None when the fault does not apply to it."""
    item = clean_item(spec)
    if fault == "clean":
        return Planted(item, spec.qid, "clean")
    changed = FAULTS[fault](spec, json.loads(json.dumps(item)))
    if changed is None:
        return None
    changed["item_id"] = f"{spec.qid.lower()}-{fault.replace('_', '-')}"
    return Planted(changed, spec.qid, fault)


def bench_items(specs: tuple[Spec, ...] = SPECS) -> list[Planted]:
    """Every question's clean item, every applicable wrong answer and every fixable slip."""
    out = []
    for spec in specs:
        for fault in ("clean", *FAULTS):
            made = planted(spec, fault)
            if made is not None:
                out.append(made)
    return out


def demo_items() -> list[Planted]:
    """42 questions, every third answered wrongly (the wrong kinds in turn, each where it applies), plus
    three fixable slips."""
    out: list[Planted] = []
    turn = 0
    for n, spec in enumerate(SPECS):
        made = None
        if n % 3 == 1:
            for step in range(len(WRONG)):
                made = planted(spec, WRONG[(turn + step) % len(WRONG)])
                if made is not None:
                    turn = (turn + step + 1) % len(WRONG)
                    break
        out.append(made or Planted(clean_item(spec), spec.qid, "clean"))
    for qid, slip in zip(("Q05", "Q11", "Q26"), FIXABLE, strict=True):
        spec = next(s for s in SPECS if s.qid == qid)
        made = planted(spec, slip)
        if made is not None:
            out.append(made)
    return out


def write_jsonl(items: list[Planted], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p.item, ensure_ascii=False) + "\n" for p in items), encoding="utf-8")
    return path


def write_truth(items: list[Planted], path: Path) -> Path:
    """What was planted in each demo item and the decision expected of it."""
    rows = [{"item_id": p.item["item_id"], "planted": p.planted, "expected": p.expected} for p in items]
    path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # python -m arbiter.demo.grounded.build FOLDER (in a checkout: fixtures/grounded)
    import sys

    if len(sys.argv) != 2:
        sys.exit(
            "usage: python -m arbiter.demo.grounded.build FOLDER   (the checkout's is fixtures/grounded)"
        )
    root = Path(sys.argv[1])
    demo = demo_items()
    write_jsonl(demo, root / "items.jsonl")
    write_truth(demo, root / "truth.json")
    print(f"{len(demo)} items written to {root}")
