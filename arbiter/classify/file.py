"""The `file` classifier: pre-computed classifications (e.g. from production) read as `{doc_id}.json`.

The text is handed on untouched, so broken JSON reaches V1, which reports it precisely.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from arbiter.classify.base import ClassificationError, ClassifierOutput
from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile
from arbiter.errors import ConfigError


class FileClassifier:
    name = "file"
    version = "1.0.0"

    def __init__(self, directory: Path) -> None:
        directory = Path(directory)
        if not directory.is_dir():
            raise ConfigError(f"The classifications directory {directory} does not exist.")
        self.directory = directory

    def path_for(self, doc_id: str) -> Path:
        """Where the classification of this document is expected; refuses ids that would leave the directory."""
        name = f"{doc_id}.json"
        # A doc_id is a file stem: anything that names another directory ("../x", "a/b", absolute
        # paths, NUL) could read files outside the one the user pointed at.
        if (
            not doc_id.strip()
            or doc_id in {".", ".."}
            or any(ch in doc_id for ch in "/\\\x00")
            or Path(name).name != name
        ):
            raise ClassificationError(
                f"The document name {doc_id!r} cannot be used to look up a classification file."
            )
        return self.directory / name

    def classify(self, bundle: DocumentBundle, profile: Profile) -> ClassifierOutput:
        path = self.path_for(bundle.doc_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ClassificationError(f"No classification file {path.name} in {self.directory}.") from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ClassificationError(
                f"The classification file {path} could not be read ({reason})."
            ) from None
        try:
            # utf-8-sig: a byte-order mark is an encoding artefact, not part of the JSON text.
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            # Garbled bytes still go to V1, which reports the classification as unreadable JSON.
            text = data.decode("utf-8", errors="replace")
        return ClassifierOutput(raw=text, producer=f"file:{path}")

    def input_digest(self, doc_id: str) -> str | None:
        """sha256 of the classification file's bytes, or None when there is none (re-runs skip on it)."""
        try:
            return hashlib.sha256(self.path_for(doc_id).read_bytes()).hexdigest()
        except (ClassificationError, OSError):
            return None
