"""Where Documents come from: the live processor (online, or batch through Cloud Storage) or recordings.

`key` names the PDF (`<sha256>`) or a part of it (`<sha256>.p<first>-<last>`). A live source records each
online response as `<key>.json` and each batch answer as a folder `<key>/` of its shards; the replay
source reads both, and never reaches the network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from google.cloud import documentai
from google.protobuf import json_format

from arbiter import atomic
from arbiter.ingest.documentai.batch import BatchRunner
from arbiter.ingest.documentai.client import DocumentAIClient, DocumentAIError
from arbiter.ingest.documentai.mapping import document_of
from arbiter.ingest.documentai.proto import CanonicalDocument, canonical_of_message, merge_shards


def response_json(response: documentai.ProcessResponse) -> dict[str, Any]:
    """A ProcessResponse as the REST API writes it (lowerCamelCase JSON), for recordings."""
    return dict(json_format.MessageToDict(documentai.ProcessResponse.pb(response)))


class DocumentSource(Protocol):
    """Where Documents come from: `document` answers one online request, `batch_document` one batch
    operation (a PDF past the online limits)."""

    def document(self, content: bytes, key: str) -> Mapping[str, Any]: ...

    def batch_document(self, content: bytes, key: str) -> Mapping[str, Any]: ...

    def close(self) -> None: ...


class LiveSource:
    """The processor itself; with `record_dir`, each answer is also written there (`<key>.json` for an
    online response, `<key>/shard-NNNN.json` for a batch answer's shards)."""

    def __init__(
        self, client: DocumentAIClient, record_dir: Path | None = None, batch: BatchRunner | None = None
    ) -> None:
        self.client = client
        self.record_dir = record_dir
        self.batch = batch

    def document(self, content: bytes, key: str) -> CanonicalDocument:
        response = self.client.process(content, label=key[:12])
        if self.record_dir is not None:
            atomic.write_json(self.record_dir / f"{key}.json", response_json(response))
        return canonical_of_message(documentai.Document.pb(response.document))

    def batch_document(self, content: bytes, key: str) -> CanonicalDocument:
        if self.batch is None:
            raise DocumentAIError(
                "extractor_failed",
                "This PDF needs Document AI batch processing, which needs a Cloud Storage folder: set "
                "ARBITER_DOCUMENTAI_GCS_URI=gs://BUCKET/PREFIX.",
            )
        shards = [payload for _, payload in self.batch.shards(content, key)]
        if self.record_dir is not None:
            folder = self.record_dir / key
            for stale in folder.glob("*.json") if folder.is_dir() else []:
                stale.unlink()
            for index, payload in enumerate(shards):
                atomic.write_json(folder / f"shard-{index:04d}.json", payload)
        return merge_shards(shards)

    def close(self) -> None:
        self.client.close()
        if self.batch is not None:
            self.batch.storage.close()


_PART = re.compile(r"\.p(\d+)-(\d+)\.json")


class ReplaySource:
    """Recorded responses only (`<key>.json`, as LiveSource records them, or a folder `<key>/` holding a batch
    operation's output shards for that PDF): never the network, and a missing recording is an error, never
    a silent fallback to another extractor."""

    def __init__(self, replay_dir: Path) -> None:
        self.replay_dir = Path(replay_dir)

    def has_whole(self, sha: str) -> bool:
        """Whether the whole PDF's response is recorded (a file, or a folder of a batch output's shards), so
        a PDF longer than one request replays from it rather than from parts."""
        return (self.replay_dir / f"{sha}.json").is_file() or (self.replay_dir / sha).is_dir()

    def recorded_parts(self, sha: str, total: int) -> list[tuple[int, int]] | None:
        """The page ranges of parts recorded for this PDF when they cover its `total` pages exactly, one after
        another (as a run with another pages-per-request setting sent them); None otherwise."""
        ranges = sorted(
            (int(match[1]), int(match[2]))
            for path in self.replay_dir.glob(f"{sha}.p*-*.json")
            if (match := _PART.fullmatch(path.name.removeprefix(sha))) is not None
        )
        following = 1
        for first, last in ranges:
            if first != following or last < first:
                return None
            following = last + 1
        return ranges if ranges and following == total + 1 else None

    def document(self, content: bytes, key: str) -> Mapping[str, Any]:
        path = self.replay_dir / f"{key}.json"
        folder = self.replay_dir / key
        if path.is_file():
            return document_of(self._load(path))
        if folder.is_dir():
            shards = sorted(folder.glob("*.json"))
            if not shards:
                raise DocumentAIError(
                    "extractor_failed",
                    f"The Document AI replay folder {folder.name[:12]}… for this PDF holds no .json shards.",
                )
            return merge_shards([self._load(shard) for shard in shards])
        raise DocumentAIError(
            "extractor_failed",
            f"No recorded Document AI response for this PDF in {self.replay_dir}: there is no {key}.json "
            f"(recordings are named by the PDF's SHA-256, and pages for a part). Record one by running with "
            f"a live processor and ARBITER_DOCUMENTAI_RECORD_DIR={self.replay_dir}.",
        )

    def batch_document(self, content: bytes, key: str) -> Mapping[str, Any]:
        """A batch answer replays like an online one: from `<key>.json` or the folder `<key>/` of shards."""
        return self.document(content, key)

    @staticmethod
    def _load(path: Path) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise DocumentAIError(
                "extractor_failed",
                f"The recorded Document AI response {path.name} cannot be read ({type(exc).__name__}).",
            ) from None

    def close(self) -> None:
        return None
