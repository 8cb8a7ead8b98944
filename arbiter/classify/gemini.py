"""The `gemini` primary classifier: every page, delimited as untrusted data, to an LLM that answers JSON.

Its answer is handed on as raw text and verified by V1–V4 like any other classification. The response
schema is ClassificationOutput's, inlined (no $ref) for Gemini's `response_json_schema`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from arbiter.classify.base import ClassificationError, ClassifierOutput
from arbiter.contracts import ClassificationOutput, DocumentBundle
from arbiter.contracts.profile import Profile
from arbiter.errors import Deferred
from arbiter.llm.port import LLM, LLMError, LLMRequest
from arbiter.verifiers.llm_phase import DEFAULT_MODEL, failure_reason
from arbiter.verifiers.llm_prompt import TextBudget, page_block, page_text, render

PROMPTS = Path(__file__).resolve().parent / "prompts"
MAX_OUTPUT_TOKENS = 32_768  # a long packet's classification with evidence for every segment
PAGE_CHARS = 4_000  # at most this much of one page ...
TOTAL_CHARS = 100_000  # ... and of all pages together (about 25k tokens)
_DROPPED_KEYWORDS = {"title", "default", "$defs"}


class ClassificationDeferred(Deferred):
    """Batch mode queued the classification request; the document waits for the batch job."""

    def __init__(self, doc_id: str) -> None:
        super().__init__(f"The classification of {doc_id} was queued for a batch job.")
        self.doc_id = doc_id


@cache
def _prompt(name: str) -> str:
    return (PROMPTS / name).read_text(encoding="utf-8")


def response_schema(profile: Profile) -> dict[str, Any]:
    """ClassificationOutput's JSON Schema, self-contained (refs inlined), every field required, with the
    profile's types and presence levels as enums so the model cannot invent one."""
    source = ClassificationOutput.model_json_schema()
    schema = _inline(source, source.get("$defs", {}))
    enums = {
        "document_type": list(profile.taxonomy.document_types),
        "dominant_type": list(profile.taxonomy.document_types),
        "presence_level": list(profile.taxonomy.presence_levels),
    }
    _tighten(schema, enums)
    return dict(schema)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _inline(defs[ref.rsplit("/", 1)[-1]], defs)
    out = {key: _inline(value, defs) for key, value in node.items() if key not in _DROPPED_KEYWORDS}
    options = out.get("anyOf")
    # Optional[str] comes as anyOf [string, null]: a plain type list is simpler for every backend.
    if isinstance(options, list) and all(set(o) == {"type"} for o in options):
        del out["anyOf"]
        out["type"] = [o["type"] for o in options]
    return out


def _tighten(node: Any, enums: dict[str, list[str]]) -> None:
    if isinstance(node, list):
        for item in node:
            _tighten(item, enums)
        return
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        node["required"] = list(properties)
        for name, prop in properties.items():
            if name in enums and prop.get("type") == "string":
                prop["enum"] = enums[name]
    for value in node.values():
        _tighten(value, enums)


class GeminiClassifier:
    """Classifies a bundle with an LLM (Gemini by default); `llm` is the client or a fake."""

    name = "gemini"
    version = "1.0.0"

    def __init__(self, llm: LLM, model: str = DEFAULT_MODEL) -> None:
        self.llm = llm
        self.model = model

    def for_document(self, llm: LLM) -> GeminiClassifier:
        """The same classifier asking through `llm` (one document's LLM: its calls count against it)."""
        return GeminiClassifier(llm, self.model)

    def request(self, bundle: DocumentBundle, profile: Profile) -> LLMRequest:
        """The request for one document (public so batch mode can build it without sending it)."""
        return LLMRequest(
            purpose="classify",
            model=self.model,
            system=_prompt("system.md"),
            prompt=self.prompt(bundle, profile),
            response_schema=response_schema(profile),
            temperature=0.0,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            doc_id=bundle.doc_id,
        )

    def prompt(self, bundle: DocumentBundle, profile: Profile) -> str:
        pages = max(bundle.total_pages, 1)
        budget = TextBudget(min(PAGE_CHARS, TOTAL_CHARS // pages), TOTAL_CHARS)
        blocks = []
        for number in range(1, bundle.total_pages + 1):
            text = page_text(bundle, number)
            blocks.append(page_block(number, budget.take(number, text) if text else "[no text on this page]"))
        quoted = ", ".join(f'"{t}"' for t in profile.traps.administrative_titles[:6])
        values = {
            "doc_id": bundle.doc_id,
            "total_pages": str(bundle.total_pages),
            "model": self.model,
            "version": self.version,
            "document_types": ", ".join(profile.taxonomy.document_types),
            "presence_levels": ", ".join(profile.taxonomy.presence_levels),
            "administrative_type": profile.taxonomy.administrative_type,
            "administrative_titles": quoted,
            "routine_labs": ", ".join(profile.vendors.routine_lab),
            "genomic_vendors": ", ".join(profile.vendors.genomic),
            "truncation": budget.notice(),
            "documents": "\n\n".join(blocks),
        }
        return render(_prompt("classify.md"), values)

    def classify(self, bundle: DocumentBundle, profile: Profile) -> ClassifierOutput:
        try:
            response = self.llm.complete(self.request(bundle, profile))
        except LLMError as exc:
            if exc.kind == "deferred":
                raise ClassificationDeferred(bundle.doc_id) from None
            reason = (
                "the token budget ran out before it could classify."
                if exc.kind == "budget_exhausted"
                else failure_reason(exc.kind, exc.message)
            )
            raise ClassificationError(
                f"The Gemini classifier could not classify this document: {reason}"
            ) from None
        text = response.text if response.text.strip() else json.dumps(response.data, ensure_ascii=False)
        return ClassifierOutput(raw=text, producer=f"gemini:{self.model}")
