"""The requests Arbiter sends to a processor, built from the official types (google-cloud-documentai).

    FIELD_MASK          the Document fields the mapping reads, asked for by every request (online and batch)
    process_request     one `:process` request: the PDF inline, imageless mode, layout options, the mask
    batch_request       one `:batchProcess` request: a PDF on Cloud Storage, the answer to a folder there

A field mask "only supports top-level document and pages field" (`{document_field}` or
`pages.{page_field}`, API reference of ProcessRequest.field_mask and GcsOutputConfig.field_mask). It lists
what mapping.py reads, through layout_blocks.py (`documentLayout`) and ocr_pages.py (`text` and those page
fields), plus `shardInfo`, which merging a batch output's shards reads. Everything else is left out: page
images (megabytes of base64 per page, which imageless mode also drops), the layout parser's
`chunkedDocument` (the text again, in chunks), entities, symbols, detected languages, transforms.
`tests/test_documentai_request.py` checks the mask against every recorded response: the mapping reads no
field outside it and maps a response cut down to it to the same pages.
"""

from __future__ import annotations

from google.cloud import documentai
from google.protobuf import field_mask_pb2

from arbiter.ingest.documentai.settings import DocumentAISettings

# proto field names (the REST request writes them in lowerCamelCase: "documentLayout,pages.pageNumber,…")
FIELD_MASK: tuple[str, ...] = (
    "text",
    "document_layout",
    "shard_info",
    "pages.page_number",
    "pages.dimension",
    "pages.layout",
    "pages.blocks",
    "pages.paragraphs",
    "pages.lines",
    "pages.tokens",
    "pages.form_fields",
    "pages.tables",
)
PDF = "application/pdf"


def field_mask() -> field_mask_pb2.FieldMask:
    return field_mask_pb2.FieldMask(paths=list(FIELD_MASK))


def process_options(settings: DocumentAISettings) -> documentai.ProcessOptions | None:
    """Layout parsers are asked for block bounding boxes; other processors reject a layoutConfig."""
    if settings.processor_type != "layout":
        return None
    return documentai.ProcessOptions(
        layout_config=documentai.ProcessOptions.LayoutConfig(return_bounding_boxes=True)
    )


def process_request(settings: DocumentAISettings, content: bytes) -> documentai.ProcessRequest:
    """The ProcessRequest for one PDF (or part of one) sent inline."""
    request = documentai.ProcessRequest(
        name=settings.processor,
        raw_document=documentai.RawDocument(content=content, mime_type=PDF),
        skip_human_review=True,
        field_mask=field_mask(),
        imageless_mode=settings.imageless_mode,
    )
    options = process_options(settings)
    if options is not None:
        request.process_options = options
    return request


def batch_request(
    settings: DocumentAISettings, input_uri: str, output_uri: str
) -> documentai.BatchProcessRequest:
    """The BatchProcessRequest for one PDF at `input_uri`, answering as JSON shards under `output_uri`."""
    request = documentai.BatchProcessRequest(
        name=settings.processor,
        input_documents=documentai.BatchDocumentsInputConfig(
            gcs_documents=documentai.GcsDocuments(
                documents=[documentai.GcsDocument(gcs_uri=input_uri, mime_type=PDF)]
            )
        ),
        document_output_config=documentai.DocumentOutputConfig(
            gcs_output_config=documentai.DocumentOutputConfig.GcsOutputConfig(
                gcs_uri=output_uri, field_mask=field_mask()
            )
        ),
        skip_human_review=True,
    )
    options = process_options(settings)
    if options is not None:
        request.process_options = options
    return request
