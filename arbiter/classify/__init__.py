"""Primary classifiers behind one interface: `baseline` (offline, the default), `file` (pre-computed) and
`gemini` (an LLM through the port)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arbiter.classify.base import ClassificationError, Classifier, ClassifierOutput
from arbiter.classify.baseline import BaselineClassifier
from arbiter.classify.file import FileClassifier
from arbiter.classify.gemini import ClassificationDeferred, GeminiClassifier
from arbiter.errors import ConfigError
from arbiter.verifiers.llm_phase import model_of

CLASSIFIERS = ("baseline", "file", "gemini")

__all__ = [
    "CLASSIFIERS",
    "BaselineClassifier",
    "ClassificationDeferred",
    "ClassificationError",
    "Classifier",
    "ClassifierOutput",
    "FileClassifier",
    "GeminiClassifier",
    "get_classifier",
]


def get_classifier(
    name: str,
    *,
    classifications_dir: Path | None = None,
    llm: Any = None,
    model: str | None = None,
) -> Classifier:
    """The classifier called `name`; `file` reads `{doc_id}.json` from `classifications_dir`; `gemini` asks
    `llm` (an arbiter.llm.port.LLM) with `model` (default: the client's configured model)."""
    if name == "gemini":
        if llm is None:
            raise ConfigError(
                "The gemini classifier needs a language model backend (set ARBITER_LLM=gemini and a key)."
            )
        return GeminiClassifier(llm, model or model_of(llm))
    if name == "baseline":
        return BaselineClassifier()
    if name == "file":
        if classifications_dir is None:
            raise ConfigError(
                "The file classifier needs a directory of classification files (--classifications)."
            )
        return FileClassifier(classifications_dir)
    raise ConfigError(f"Unknown classifier {name!r}; choose one of: {', '.join(CLASSIFIERS)}.")
