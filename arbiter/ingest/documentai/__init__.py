"""Google Cloud Document AI as an extractor (`--extractor documentai`): a PDF becomes the same DocumentBundle
local ingestion makes, from a layout parser (or OCR) processor's response.

- `mapping`: Document JSON into contract Pages (pure; `layout_blocks`, `ocr_pages`, `draft`, `shape`);
- `client`: the calls through Google's client (`process_document`, `batch_process_documents` and the
  long-running operation), credentials, retries; `request`: the requests, with their field mask;
- `batch`, `gcs`: batch processing through a Cloud Storage folder, and the four Cloud Storage calls it needs;
- `sources`: the live source (online or batch, recording) and the replay source;
- `ingestor`: local pre-flight, page parts, the bundle or the IngestFailure;
- `settings`, `factory`: ARBITER_DOCUMENTAI_* settings (and the documented limits) and the ingestor a run gets.

    DocumentAIError          no Document: the service, the credentials or the recording failed
    DocumentAIFormatError    a response not shaped like a Document (its path names the field)

Both end as an IngestFailure for that document only (an escalation with the reason); bad settings are a
ConfigError (arbiter.errors) when the run starts.
"""

from __future__ import annotations

from arbiter.ingest.documentai.client import DocumentAIClient, DocumentAIError
from arbiter.ingest.documentai.factory import open_documentai
from arbiter.ingest.documentai.ingestor import EXTRACTOR_NAME, DocumentAIIngestor
from arbiter.ingest.documentai.mapping import MAPPING_VERSION, PageFacts, document_of, map_document
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.shape import DocumentAIFormatError
from arbiter.ingest.documentai.sources import LiveSource, ReplaySource

__all__ = [
    "EXTRACTOR_NAME",
    "MAPPING_VERSION",
    "DocumentAIClient",
    "DocumentAIError",
    "DocumentAIFormatError",
    "DocumentAIIngestor",
    "DocumentAISettings",
    "LiveSource",
    "PageFacts",
    "ReplaySource",
    "document_of",
    "map_document",
    "open_documentai",
]
