"""Responses read through Google's own `Document` type (google-cloud-documentai), and batch shards merged.

`canonical` parses a response with protobuf's JSON mapping for `google.cloud.documentai.Document`, which
accepts both spellings Google's tools write (lowerCamelCase, as the REST API answers, and the proto's
snake_case field names, as `MessageToJson(preserving_proto_field_name=True)` and the samples save them),
ignores fields it does not know (newer API versions) and checks every value's type. It then writes the
message back as canonical proto3 JSON (lowerCamelCase, int64 as strings, defaults left out), the one
shape the mapping reads. What the mapping never reads (entities, page images of megabytes of base64,
detected languages, symbols…) is dropped first: protobuf's JSON parser is plain Python, paid per field.

`merge_shards` joins a batch operation's output shards (`shardInfo`: index, count and the offset of the
shard's text in the whole document's) into one Document. Anchors in a shard count from the shard's own
text (as Google's toolbox reads them), so each shard's anchors move by its offset in the merged text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.cloud import documentai
from google.protobuf import descriptor, json_format, message_factory

from arbiter.ingest.documentai.ocr_pages import anchor_offset
from arbiter.ingest.documentai.shape import DocumentAIFormatError, integer, obj, text

# "… at Document.pages[0].layout.textAnchor.textSegments[0].endIndex…": the field's path, when given.
_AT = re.compile(r" at Document\.([A-Za-z0-9_.\[\]]+?)\.*(?:$|\s)")
_FIELD = re.compile(r"Failed to parse (\w+) field")


class CanonicalDocument(dict[str, Any]):
    """A Document as canonical proto3 JSON, already checked by the official type (parsing it again is a no-op)."""


def canonical(document: Any) -> CanonicalDocument:
    """The Document (or a ProcessResponse's) through `documentai.Document`; DocumentAIFormatError naming the
    field when a value does not fit it. The error never quotes a value (it may be document text)."""
    if isinstance(document, CanonicalDocument):
        return document
    if document is None:
        return CanonicalDocument()
    if not isinstance(document, Mapping):
        raise DocumentAIFormatError("", "is not a JSON object")
    if "document" in document:  # a ProcessResponse
        inner = document.get("document")
        if not isinstance(inner, Mapping):
            raise DocumentAIFormatError("document", "is not a JSON object")
        document = inner
    message = documentai.Document.pb()()
    try:
        json_format.ParseDict(_without_unread(document), message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        if "too deep" in str(exc):
            where = error_path(str(exc)).split(".")[0]
            raise DocumentAIFormatError(where, "nests fields more than 100 levels deep") from None
        found = _locate(_without_unread(document), message.DESCRIPTOR, "")
        where, problem = found or (error_path(str(exc)), "does not fit a Document AI Document")
        raise DocumentAIFormatError(where, problem) from None
    except (RecursionError, ValueError, TypeError, AttributeError):
        raise DocumentAIFormatError("", "is not a Document AI Document (it cannot be parsed)") from None
    return CanonicalDocument(json_format.MessageToDict(message))


def canonical_of_message(document: Any) -> CanonicalDocument:
    """A `google.cloud.documentai_v1.Document` protobuf message (as Google's client returns it) as canonical
    JSON, without the fields the mapping never reads. The message is changed in place (they are cleared)."""
    for name in _UNREAD_FIELDS:
        document.ClearField(name)
    for page in document.pages:
        for name in _UNREAD_PAGE_FIELDS:
            page.ClearField(name)
    return CanonicalDocument(json_format.MessageToDict(document))


# What the mapping never reads, left out before parsing (in both spellings): parsing costs time per field.
_UNREAD = frozenset(
    {"entities", "entityRelations", "entity_relations", "revisions", "textChanges", "text_changes"}
    | {
        "textStyles",
        "text_styles",
        "chunkedDocument",
        "chunked_document",
        "error",
        "blobAssets",
        "blob_assets",
    }
)
_UNREAD_ON_PAGES = frozenset(
    {"image", "transforms", "detectedLanguages", "detected_languages", "symbols", "provenance"}
    | {"imageQualityScores", "image_quality_scores", "detectedBarcodes", "detected_barcodes"}
)


_UNREAD_FIELDS = tuple(
    name for name in sorted(_UNREAD) if name in documentai.Document.pb().DESCRIPTOR.fields_by_name
)
_UNREAD_PAGE_FIELDS = tuple(
    name
    for name in sorted(_UNREAD_ON_PAGES)
    if name in documentai.Document.Page.pb().DESCRIPTOR.fields_by_name
)


def _without_unread(document: Mapping[str, Any]) -> Mapping[str, Any]:
    copy = {k: v for k, v in document.items() if k not in _UNREAD}
    pages = document.get("pages")
    if isinstance(pages, list):
        copy["pages"] = [
            {k: v for k, v in page.items() if k not in _UNREAD_ON_PAGES}
            if isinstance(page, Mapping)
            else page
            for page in pages
        ]
    return copy


def _fits(value: Any, descriptor: Any) -> bool:
    try:
        json_format.ParseDict(
            value, message_factory.GetMessageClass(descriptor)(), ignore_unknown_fields=True
        )
    except (json_format.ParseError, ValueError, TypeError, AttributeError, RecursionError):
        return False
    return True


def _locate(value: Any, descriptor: Any, path: str, depth: int = 0) -> tuple[str, str] | None:
    """The path of the first field in `value` that does not fit the message `descriptor`, and what is wrong
    with it, found by parsing its parts again (only on an error: protobuf reports none of the list indices);
    None when none is found."""
    if not isinstance(value, Mapping) or depth > 200:
        return None
    for key, item in value.items():
        field = descriptor.fields_by_camelcase_name.get(key) or descriptor.fields_by_name.get(key)
        if field is None or _fits({key: item}, descriptor):
            continue
        where = f"{path}.{field.camelcase_name}" if path else field.camelcase_name
        if field.is_repeated and not isinstance(item, list):
            return where, "is not a list"
        sub = field.message_type
        if sub is None:
            if isinstance(item, list):
                for index, element in enumerate(item):
                    if not _fits({key: [element]}, descriptor):
                        return f"{where}[{index}]", _EXPECTED.get(field.cpp_type, "is not valid")
            return where, _EXPECTED.get(field.cpp_type, "is not valid")
        elements: list[tuple[int | None, Any]] = (
            list(enumerate(item)) if isinstance(item, list) else [(None, item)]
        )
        for position, element in elements:
            at = where if position is None else f"{where}[{position}]"
            if not isinstance(element, Mapping):
                return at, "is not a JSON object"
            if not _fits(element, sub):
                return _locate(element, sub, at, depth + 1) or (at, "does not fit a Document AI Document")
        return where, "does not fit a Document AI Document"
    return None


_CPP = descriptor.FieldDescriptor
_EXPECTED = {
    _CPP.CPPTYPE_STRING: "is not a string",
    _CPP.CPPTYPE_BOOL: "is not true or false",
    _CPP.CPPTYPE_FLOAT: "is not a number",
    _CPP.CPPTYPE_DOUBLE: "is not a number",
    _CPP.CPPTYPE_INT32: "is not a whole number",
    _CPP.CPPTYPE_INT64: "is not a whole number",
    _CPP.CPPTYPE_UINT32: "is not a whole number",
    _CPP.CPPTYPE_UINT64: "is not a whole number",
    _CPP.CPPTYPE_ENUM: "is not one of its named values",
}


def error_path(message: str) -> str:
    """The failing field's path from a ParseError's message: the full path when protobuf gives it, else the
    chain of field names it failed in."""
    found = _AT.search(message)
    if found:
        return found.group(1)
    return ".".join(_FIELD.findall(message))


def merge_shards(shards: Sequence[Any]) -> CanonicalDocument:
    """One Document from a batch output's shards (any order); a single unsharded Document passes through.

    The shards must be one complete set (indices 0 … count-1, each once) whose text offsets follow each
    other; anything else is a DocumentAIFormatError, never a document with pages silently missing.
    """
    docs = [canonical(shard) for shard in shards]
    if not docs:
        raise DocumentAIFormatError("", "has no shards")
    if len(docs) == 1 and not _is_shard(docs[0]):
        return docs[0]
    infos = [obj(doc, "shardInfo", "") for doc in docs]
    indexed = sorted(
        ((integer(info, "shardIndex", "shardInfo"), i) for i, info in enumerate(infos)), key=lambda t: t[0]
    )
    counts = {integer(info, "shardCount", "shardInfo") for info in infos}
    if counts != {len(docs)} or [index for index, _ in indexed] != list(range(len(docs))):
        raise DocumentAIFormatError(
            "shardInfo", f"does not describe one complete set of shards ({len(docs)} given)"
        )
    merged_text: list[str] = []
    pages: list[Any] = []
    blocks: list[Any] = []
    position = 0
    for index, i in indexed:
        doc = docs[i]
        declared = integer(infos[i], "textOffset", "shardInfo")
        if declared != position:
            raise DocumentAIFormatError(
                "shardInfo.textOffset",
                f"of shard {index} does not follow the text of the shards before it",
            )
        shard_text = text(doc, "text", "")
        shift = position - anchor_offset(doc, len(shard_text))
        pages.extend(_shift_anchors(page, shift) for page in doc.get("pages", []))
        blocks.extend(obj(doc, "documentLayout", "").get("blocks", []))
        merged_text.append(shard_text)
        position += len(shard_text)
    merged = CanonicalDocument({k: v for k, v in docs[indexed[0][1]].items() if k not in _PER_SHARD})
    if position:
        merged["text"] = "".join(merged_text)
    if pages:
        merged["pages"] = pages
    if blocks:
        merged["documentLayout"] = {"blocks": blocks}
    return merged


_PER_SHARD = frozenset({"shardInfo", "text", "pages", "documentLayout", "entities", "chunkedDocument"})


def _is_shard(doc: Mapping[str, Any]) -> bool:
    info = obj(doc, "shardInfo", "")
    return integer(info, "shardCount", "shardInfo") > 1 or integer(info, "textOffset", "shardInfo") > 0


def _shift_anchors(value: Any, offset: int) -> Any:
    """`value` with every textAnchor's segments moved by `offset` (canonical JSON: int64 as strings)."""
    if offset == 0:
        return value
    if isinstance(value, list):
        return [_shift_anchors(item, offset) for item in value]
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "textAnchor" and isinstance(item, Mapping):
            anchor = dict(item)
            anchor["textSegments"] = [
                {
                    **segment,
                    "startIndex": str(integer(segment, "startIndex", "textSegments") + offset),
                    "endIndex": str(integer(segment, "endIndex", "textSegments") + offset),
                }
                for segment in _mappings(item.get("textSegments"))
            ]
            out[key] = anchor
        else:
            out[key] = _shift_anchors(item, offset)
    return out


def _mappings(value: Any) -> Iterable[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
