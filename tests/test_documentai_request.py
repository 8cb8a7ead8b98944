"""The field mask every Document AI request carries is exactly what the mapping reads: over every recorded
response (the fixtures, and Google's published samples when ../shared/corpora is there), the mapping
touches no field outside the mask, touches every field in it, and maps a response cut down to the mask to
the same pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.cloud import documentai

from arbiter.ingest.documentai.mapping import map_document
from arbiter.ingest.documentai.proto import CanonicalDocument, canonical
from arbiter.ingest.documentai.request import FIELD_MASK, batch_request, process_request
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.shape import DocumentAIFormatError
from tests.conftest import CORPORA, FIXTURES

PROCESSOR = "projects/demo-project/locations/us/processors/abc123"
SHARDED = "tb_toolbox_large_document_test"


def responses() -> Iterator[tuple[str, Any]]:
    """(name, response or list of shards) for every recorded response there is."""
    for path in sorted((FIXTURES / "documentai").glob("*/*.json")):
        yield path.name, json.loads(path.read_text(encoding="utf-8"))
    corpus = CORPORA / "documentai"
    if corpus.is_dir():
        for path in sorted(corpus.glob("*.json")):
            if not path.name.startswith(SHARDED):
                yield path.name, json.loads(path.read_text(encoding="utf-8"))
        shards = sorted(corpus.glob(f"{SHARDED}-*.json"))
        if shards:
            yield SHARDED, [json.loads(p.read_text(encoding="utf-8")) for p in shards]


RESPONSES = list(responses())


def camel(path: str) -> str:
    head, _, tail = path.partition("_")
    return head + "".join(part.capitalize() for part in tail.split("_")) if tail else head


MASK = {".".join(camel(part) for part in path.split(".")) for path in FIELD_MASK}


class Reads(CanonicalDocument):
    """A canonical Document that notes which of its keys (and its pages' keys) are read."""

    def __init__(self, data: dict[str, Any], seen: set[str], where: str = "") -> None:
        super().__init__(data)
        self.seen = seen
        self.where = where

    def _note(self, key: object) -> None:
        self.seen.add(f"{self.where}{key}")

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self._note(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)


def watched(document: CanonicalDocument, seen: set[str]) -> Reads:
    data = dict(document)
    if isinstance(data.get("pages"), list):
        data["pages"] = [Reads(dict(page), seen, "pages.") for page in data["pages"]]
    return Reads(data, seen)


def pruned(document: CanonicalDocument) -> CanonicalDocument:
    """The document as a request with the field mask would get it back."""
    kept: dict[str, Any] = {key: value for key, value in document.items() if key in MASK}
    page_fields = {path.removeprefix("pages.") for path in MASK if path.startswith("pages.")}
    if "pages" in document:
        kept["pages"] = [{k: v for k, v in page.items() if k in page_fields} for page in document["pages"]]
    return CanonicalDocument(kept)


def canonical_all(response: Any) -> list[CanonicalDocument]:
    return [canonical(shard) for shard in (response if isinstance(response, list) else [response])]


def mapped(documents: list[CanonicalDocument]) -> Any:
    try:
        return map_document(documents if len(documents) > 1 else documents[0])
    except DocumentAIFormatError as error:
        return ("error", error.path, error.problem)


def test_the_mapping_reads_exactly_the_fields_of_the_mask() -> None:
    """Every top-level and page field the mapping reads is in the mask, and every field in the mask is read."""
    seen: set[str] = set()
    for _, response in RESPONSES:
        documents = canonical_all(response)
        mapped([watched(document, seen) for document in documents])
    read = {key for key in seen if key.count(".") == 0 or key.startswith("pages.")} - {"pages"}
    assert read - MASK == set(), "the mapping reads fields the mask leaves out"
    assert MASK - read == set(), "the mask asks for fields the mapping never reads"


@pytest.mark.parametrize(("name", "response"), RESPONSES, ids=[name for name, _ in RESPONSES])
def test_a_response_cut_down_to_the_mask_maps_to_the_same_pages(name: str, response: Any) -> None:
    """What the service sends back under the field mask maps to the same pages (or error) as the full response."""
    documents = canonical_all(response)
    assert mapped([pruned(document) for document in documents]) == mapped(documents)


def test_the_mask_leaves_out_what_the_bundle_never_uses() -> None:
    """Page images, the layout parser's chunks, entities and symbols are not asked for."""
    for left_out in ("pages.image", "chunkedDocument", "entities", "pages.symbols", "pages.visualElements"):
        assert left_out not in MASK
    document = documentai.Document.pb()
    for path in FIELD_MASK:  # each path names a real field of the official Document type
        head, _, tail = path.partition(".")
        field = document.DESCRIPTOR.fields_by_name[head]
        if tail:
            assert tail in field.message_type.fields_by_name


def test_online_and_batch_requests_carry_the_mask() -> None:
    """ProcessRequest.field_mask and GcsOutputConfig.field_mask are the same list of paths."""
    settings = DocumentAISettings(processor=PROCESSOR)
    online = process_request(settings, b"%PDF-1.7")
    batch = batch_request(settings, "gs://b/in/x.pdf", "gs://b/out/")
    assert list(online.field_mask.paths) == list(FIELD_MASK)
    assert list(batch.document_output_config.gcs_output_config.field_mask.paths) == list(FIELD_MASK)
    assert online.imageless_mode is True


def test_the_fixtures_cover_both_forms(tmp_path: Path) -> None:
    """The responses checked above include layout-parser blocks and OCR pages, so both readers are exercised."""
    documents = [doc for _, response in RESPONSES for doc in canonical_all(response)]
    assert any("documentLayout" in doc for doc in documents)
    assert any("pages" in doc and "text" in doc for doc in documents)
