"""The classifier interface (docs/design.md §7.2): a DocumentBundle in, the classification's raw JSON text out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile
from arbiter.errors import ArbiterError
from arbiter.llm.port import LLM


class ClassificationError(ArbiterError):
    """The classifier could not produce an answer for this document; the message is plain English.

    The pipeline turns it into the escalation "classification_failed"; it never stops a batch.
    """


@dataclass(frozen=True)
class ClassifierOutput:
    """The classification exactly as the classifier produced it: JSON text (V1 parses and checks it)."""

    raw: str
    producer: str


class Classifier(Protocol):
    name: str

    def classify(self, bundle: DocumentBundle, profile: Profile) -> ClassifierOutput: ...


@runtime_checkable
class UsesDocumentLLM(Protocol):
    """A classifier that asks a language model: `for_document` gives the copy whose calls go through one
    document's LLM, so they count against that document's budget and usage."""

    def for_document(self, llm: LLM) -> Classifier: ...
