"""Items of a kind that carries its own context (arbiter/kinds: `inputs="items"`, e.g. grounded-answer):
reading them from JSONL files or folders of JSON files, and verifying one through the same retry governor,
arbiter rules and fixes as a PDF's classification — with a language model when one is given (the kind's
model phases, e.g. grounded-answer V4's entailment check, each item with its own token budget)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.contracts import DocumentBundle, VerificationOutcome
from arbiter.decide.governor import verify_with_retries
from arbiter.errors import InputError
from arbiter.kinds import KindSpec
from arbiter.llm.client import LLMClient
from arbiter.run.worker import llm_usage
from arbiter.verifiers.base import VerifyContext

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RawItem:
    item_id: str
    raw: str
    origin: str  # "file.jsonl:12" or "folder/x.json", for messages (never the item's text)


def _id_of(text: str, fallback: str) -> str:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return fallback
    value = data.get("item_id") if isinstance(data, dict) else None
    if isinstance(value, str) and value and not value.startswith("."):
        return _SAFE.sub("_", value)[:128]
    return fallback


def read_items(inputs: Iterable[Path]) -> list[RawItem]:
    """Items from JSONL files (one per non-blank line) and folders of .json/.jsonl files, in order. An item
    that is not JSON is still an item (V1 reports it); two items with one id are the user's mistake."""
    found: list[RawItem] = []
    for path in inputs:
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in {".json", ".jsonl"}) if path.is_dir() else [path]
        )
        if not path.exists():
            raise InputError(f"Input {path} does not exist.")
        for file in files:
            text = file.read_text(encoding="utf-8", errors="replace")
            if file.suffix == ".jsonl":
                for n, line in enumerate(text.splitlines(), 1):
                    if line.strip():
                        found.append(
                            RawItem(
                                _id_of(line, f"{_SAFE.sub('_', file.stem)}-line-{n}"), line, f"{file}:{n}"
                            )
                        )
            else:
                found.append(RawItem(_id_of(text, _SAFE.sub("_", file.stem)), text, str(file)))
    seen: dict[str, str] = {}
    for item in found:
        if item.item_id in seen:
            raise InputError(
                f"Two items share the id {item.item_id!r} ({seen[item.item_id]} and {item.origin})."
            )
        seen[item.item_id] = item.origin
    if not found:
        raise InputError("No items found in the inputs given (JSONL files, or folders of .json files).")
    return found


def check_item(
    kind: KindSpec, raw: str | bytes, profile: Any, *, item_id: str = "item", llm: LLMClient | None = None
) -> tuple[VerificationOutcome, DocumentBundle]:
    """One item through the kind's loader and verifiers, the arbiter's rules and the retry governor; with
    the bundle of its context (the chunks as pages). With `llm`, the verifiers' model phases run on the item's
    own token budget, and the outcome counts its calls, tokens and cost; without, they are skipped."""
    from arbiter.verifiers.grounded.subject import GroundedSubject, bundle_for

    loader = kind.subject_loader()
    subject = loader(raw)
    if isinstance(subject, GroundedSubject) and subject.item is not None:
        item_id = subject.item.item_id
    bundle = bundle_for(subject, item_id) if isinstance(subject, GroundedSubject) else None
    if bundle is None:
        raise InputError(f"The kind {kind.name} has no context bundle for items.")
    doc_llm = llm.for_document(item_id) if llm is not None else None
    outcome = verify_with_retries(
        raw,
        bundle,
        profile,
        verifiers=kind.build_verifiers(),
        context=VerifyContext(llm=doc_llm) if doc_llm is not None else None,
        loader=loader,
    )
    usage = llm_usage(doc_llm)
    return (outcome.model_copy(update=usage) if usage else outcome), bundle


def verify_item(
    kind: KindSpec, raw: str | bytes, profile: Any, *, item_id: str = "item", llm: LLMClient | None = None
) -> VerificationOutcome:
    """One item's outcome (`arbiter verify --kind`; nothing written)."""
    return check_item(kind, raw, profile, item_id=item_id, llm=llm)[0]
