"""Batch processing for PDFs past the online limits: one `:batchProcess` operation per PDF, through Cloud
Storage.

    BatchRunner(client, storage, settings).shards(content, key)  ->  [(shard name, shard JSON), …]

The PDF is uploaded to `{ARBITER_DOCUMENTAI_GCS_URI}/arbiter-{token}/input/{key}.pdf` (the key is the
file's SHA-256, never its name), the processor is asked to write its answer under `…/output/`, and the
long-running operation is polled (GET v1/{operation}) with growing pauses until it is done or
`batch_timeout_s` has passed; then it is cancelled and the document fails as a timeout. A finished
operation's BatchProcessMetadata says, per input document, its status and the folder its answer was
written to (`…/output/{operation id}/{input index}/`), where the Document is one JSON file per shard
(`{input name}-{shard index}.json`, each with `shardInfo`: index, count and text offset). Only that
folder is read, and it must lie inside the job's own output folder. Whatever happens, the job's objects
(the PDF and the answer) are deleted afterwards: they hold patient records.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from google.cloud import documentai
from google.longrunning import operations_pb2
from google.rpc import code_pb2

from arbiter.ingest.documentai.client import DocumentAIClient, DocumentAIError
from arbiter.ingest.documentai.gcs import Storage
from arbiter.ingest.documentai.request import PDF, batch_request
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.net import google as google_errors

log = logging.getLogger(__name__)

MAX_SHARDS = 1000  # a 500-page document in shards of one page is 500
_SUCCEEDED = documentai.BatchProcessMetadata.State.SUCCEEDED
_METADATA = "google.cloud.documentai.v1.BatchProcessMetadata"


class BatchRunner:
    """Runs one batch operation per PDF and reads its output shards; thread-safe (nothing is shared but the
    clients, which are)."""

    def __init__(
        self,
        client: DocumentAIClient,
        storage: Storage,
        settings: DocumentAISettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        token: Callable[[], str] = lambda: uuid.uuid4().hex,
        first_poll_s: float = 5.0,
        max_poll_s: float = 60.0,
    ) -> None:
        self.client = client
        self.storage = storage
        self.settings = settings
        self.clock = clock
        self.sleep = sleep
        self.token = token
        self.first_poll_s = first_poll_s
        self.max_poll_s = max_poll_s

    def shards(self, content: bytes, key: str) -> list[tuple[str, Any]]:
        """The output shards of the batch operation for this PDF: (file name, parsed JSON), in listing order."""
        job = f"{self.storage.prefix}arbiter-{self.token()}/"
        input_name, output_prefix = f"{job}input/{key}.pdf", f"{job}output/"
        label = key[:12]
        try:
            self.storage.upload(input_name, content, PDF)
            request = batch_request(
                self.settings, self.storage.uri(input_name), self.storage.uri(output_prefix)
            )
            name = self.client.start_batch(request, label=label)
            log.info("documentai: %s: batch operation started", label)
            done = self._wait(name, label)
            folder = self._output_folder(done, self.storage.uri(input_name), output_prefix)
            names = [n for n in self.storage.names(folder) if n.endswith(".json")]
            if not names:
                raise DocumentAIError(
                    "extractor_failed", "Google Document AI's batch operation wrote no answer for this PDF."
                )
            if len(names) > MAX_SHARDS:
                raise DocumentAIError(
                    "extractor_failed",
                    f"Google Document AI's batch answer for this PDF has {len(names):,} shards, more than "
                    f"{MAX_SHARDS:,}.",
                )
            return [(n.rsplit("/", 1)[-1], _parse(self.storage.download(n))) for n in names]
        finally:
            self._clean(input_name, output_prefix, label)

    def _wait(self, name: str, label: str) -> operations_pb2.Operation:
        """The operation once done; cancelled, and a timeout error, once batch_timeout_s has passed."""
        limit = self.settings.batch_timeout_s
        start = self.clock()
        pause = self.first_poll_s
        while True:
            operation = self.client.operation(name, label=label)
            if operation.done:
                return operation
            elapsed = self.clock() - start
            if elapsed >= limit:
                try:
                    self.client.cancel(name, label=label)
                except DocumentAIError as error:
                    log.warning("documentai: %s: cancelling the batch operation failed: %s", label, error)
                raise DocumentAIError(
                    "timeout",
                    f"Google Document AI's batch operation did not finish within {limit:g} s and was "
                    "cancelled (ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S sets how long to wait).",
                )
            self.sleep(min(pause, limit - elapsed))
            pause = min(pause * 2, self.max_poll_s)

    def _output_folder(self, operation: operations_pb2.Operation, input_uri: str, output_prefix: str) -> str:
        """The object-name prefix of this PDF's answer, from the finished operation; DocumentAIError when the
        operation or the document failed, or the answer is not inside the job's output folder."""
        if operation.HasField("error") and operation.error.code != code_pb2.OK:
            raise _failed(operation.error.code, operation.error.message, "batch operation")
        if not operation.metadata.type_url.endswith(_METADATA):
            raise DocumentAIError(
                "extractor_failed", "Google Document AI's batch operation finished without its metadata."
            )
        metadata = documentai.BatchProcessMetadata.deserialize(operation.metadata.value)
        if metadata.state != _SUCCEEDED:
            state = documentai.BatchProcessMetadata.State(metadata.state).name
            detail = google_errors.summary(state, metadata.state_message)
            raise DocumentAIError(
                "extractor_failed",
                f"Google Document AI's batch operation did not succeed ({detail.strip()}).",
            )
        statuses = [s for s in metadata.individual_process_statuses if s.input_gcs_source == input_uri]
        if len(statuses) != 1:
            raise DocumentAIError(
                "extractor_failed", "Google Document AI's batch operation gave no status for this PDF."
            )
        status = statuses[0]
        if status.status.code != code_pb2.OK:
            raise _failed(status.status.code, status.status.message, "batch processing of this PDF")
        folder = str(status.output_gcs_destination).rstrip("/") + "/"
        root = self.storage.uri(output_prefix)
        if not folder.startswith(root) or any(part in (".", "..") for part in folder.split("/")):
            raise DocumentAIError(
                "extractor_failed",
                "Google Document AI's batch operation wrote its answer outside the folder it was given.",
            )
        return folder.removeprefix(f"gs://{self.storage.bucket}/")

    def _clean(self, input_name: str, output_prefix: str, label: str) -> None:
        """Deletes the job's PDF and answer, each object on its own; a failure is logged (the job's folder,
        named by a random token and the PDF's hash, and the reason), never raised."""

        def given() -> list[str]:
            return [input_name]

        def listed() -> list[str]:
            return self.storage.names(output_prefix)

        for names in (given, listed):
            try:
                for name in names():
                    self.storage.delete(name)
            except DocumentAIError as error:
                log.warning(
                    "documentai: %s: could not delete the batch job's objects under %s: %s",
                    label,
                    self.storage.uri(output_prefix).removesuffix("output/"),
                    error.message,
                )


def _failed(code: int, message: str, what: str) -> DocumentAIError:
    name = code_pb2.Code.Name(code) if code in code_pb2.Code.values() else str(code)
    return DocumentAIError(
        "extractor_failed",
        f"Google Document AI's {what} failed ({google_errors.summary(name, message).strip()}).",
    )


def _parse(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise DocumentAIError(
            "extractor_failed",
            f"A shard of Google Document AI's batch answer for this PDF cannot be read ({type(exc).__name__}).",
        ) from None
