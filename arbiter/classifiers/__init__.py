"""Primary classifiers behind one interface: `baseline` (offline, the default) and `file` (pre-computed)."""

from __future__ import annotations

from pathlib import Path

from arbiter.classifiers.base import ClassificationError, Classifier, ClassifierOutput
from arbiter.classifiers.baseline import BaselineClassifier
from arbiter.classifiers.file import FileClassifier
from arbiter.errors import ConfigError

CLASSIFIERS = ("baseline", "file")

__all__ = [
    "CLASSIFIERS",
    "BaselineClassifier",
    "ClassificationError",
    "Classifier",
    "ClassifierOutput",
    "FileClassifier",
    "get_classifier",
]


def get_classifier(name: str, *, classifications_dir: Path | None = None) -> Classifier:
    """The classifier called `name`; `file` reads `{doc_id}.json` from `classifications_dir`."""
    if name == "baseline":
        return BaselineClassifier()
    if name == "file":
        if classifications_dir is None:
            raise ConfigError(
                "The file classifier needs a directory of classification files (--classifications)."
            )
        return FileClassifier(classifications_dir)
    raise ConfigError(f"Unknown classifier {name!r}; choose one of: {', '.join(CLASSIFIERS)}.")
