"""The LLM benchmark's inputs (the fixture mix) and fake model: fixed latency ± seeded jitter, schema-valid
answers for every purpose (the fixture's classification for "classify").
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.classify.gemini import GeminiClassifier
from arbiter.contracts import DocumentBundle, TokenUsage
from arbiter.contracts.profile import Profile
from arbiter.ingest import ingest_pdf
from arbiter.llm.port import LLM, LLMRequest, RawCompletion

ClassifyFn = Callable[[DocumentBundle, Profile, LLM], str]
MODEL = "bench-fake-model"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@dataclass
class Doc:
    doc_id: str
    bundle: DocumentBundle
    classification: str  # the fixture's correct answer: what the fake model "classifies"


def fixture_docs(limit: int | None = None) -> list[Doc]:
    """Every fixture PDF that has a correct classification next to it, ingested once (not timed)."""
    docs = []
    for cls_path in sorted((FIXTURES / "classifications").glob("*.json")):
        pdf = FIXTURES / "pdfs" / f"{cls_path.stem}.pdf"
        if not pdf.exists():
            continue
        bundle = ingest_pdf(pdf, doc_id=cls_path.stem)
        if not isinstance(bundle, DocumentBundle):
            continue
        docs.append(Doc(cls_path.stem, bundle, cls_path.read_text(encoding="utf-8")))
        if limit is not None and len(docs) >= limit:
            break
    return docs


def copies(docs: Sequence[Doc], count: int) -> list[Doc]:
    """`count` copies of the mix under distinct doc_ids (the throughput run reads no cache, so none is free)."""
    out = []
    for n in range(count):
        for doc in docs:
            doc_id = f"{doc.doc_id}~{n}"
            data = json.loads(doc.classification)
            data["doc_id"] = doc_id
            bundle = doc.bundle.model_copy(update={"doc_id": doc_id})
            out.append(Doc(doc_id, bundle, json.dumps(data, indent=2, ensure_ascii=False)))
    return out


class LatencyBackend:
    """Sleeps latency ± jitter (uniform; seeded per request, so thread order does not change it) and answers:
    the fixture's classification for "classify", the smallest schema-valid JSON for everything else."""

    name = "bench-fake"

    def __init__(
        self, answers: dict[str, str], *, latency_s: float = 0.3, jitter_s: float = 0.05, seed: int = 0
    ) -> None:
        self.answers = answers
        self.latency_s = latency_s
        self.jitter_s = jitter_s
        self.seed = seed
        self._lock = threading.Lock()
        self.calls = 0
        self.by_purpose: Counter[str] = Counter()
        self.slept_s = 0.0

    def complete(self, request: LLMRequest) -> RawCompletion:
        digest = hashlib.sha256(f"{self.seed}|{request.doc_id}|{request.key()}".encode()).digest()
        rng = random.Random(digest)
        delay = max(0.0, self.latency_s + rng.uniform(-self.jitter_s, self.jitter_s))
        with self._lock:
            self.calls += 1
            self.by_purpose[request.purpose] += 1
            self.slept_s += delay
        time.sleep(delay)
        if request.purpose == "classify":
            text = self.answers[str(request.doc_id)]
        else:
            text = json.dumps(minimal_instance(request.response_schema))
        return RawCompletion(
            text=text,
            usage=TokenUsage(
                input_tokens=len(request.system + request.prompt) // 4, output_tokens=len(text) // 4
            ),
            model=request.model,
            finish_reason="stop",
        )

    def mean_latency_s(self) -> float | None:
        with self._lock:
            return self.slept_s / self.calls if self.calls else None


def minimal_instance(schema: Any, root: Any = None) -> Any:
    """The smallest value that fits a JSON Schema: required properties only, empty arrays, first enum."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        target: Any = root
        for part in str(schema["$ref"]).lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return minimal_instance(target, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return minimal_instance(schema[combinator][0], root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: minimal_instance(properties.get(name, {}), root) for name in schema.get("required", [])}
    if kind == "array":
        item = schema.get("items", {})
        return [minimal_instance(item, root) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


def classify(bundle: DocumentBundle, profile: Profile, llm: LLM) -> str:
    """The shipped LLM classifier (GeminiClassifier) over one document's LLM: one "classify" call."""
    return GeminiClassifier(llm, MODEL).classify(bundle, profile).raw
