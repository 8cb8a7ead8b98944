"""Document AI's documented limits (cloud.google.com/document-ai/limits): 40 MB per online request, 15 pages
or 30 in imageless mode (on by default), batch processing for what is past them; the settings that choose
them, and replays that keep working whatever partition recorded them."""

from __future__ import annotations

import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pypdf
import pytest

from arbiter.contracts import DocumentBundle
from arbiter.errors import ConfigError
from arbiter.ingest import IngestFailure, ingest_pdf
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.sources import ReplaySource
from arbiter.net import switch
from tests.conftest import FIXTURES
from tests.test_documentai_client import PDF, PROCESSOR, REPLAY, Recorder, Server, ingestor, recorded, reply

RECORD_30P = FIXTURES / "pdfs" / "record-30p.pdf"
MB = 1_000_000


class Batcher(Recorder):
    """A Recorder that also takes batch requests, answering them with empty Documents."""

    def __init__(self) -> None:
        super().__init__()
        self.batched: list[str] = []

    def batch_document(self, content: bytes, key: str) -> dict[str, Any]:
        self.batched.append(key)
        self.sent.append((key, content))
        return {}


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets the client past the network switch; the fake adapter still keeps every byte local."""
    monkeypatch.setattr(switch, "ALLOW_NETWORK", True)


def padded(tmp_path: Path, megabytes: int) -> Path:
    """lab-quest-01 with an attachment of random bytes, so that the file takes `megabytes` MB (two pages)."""
    writer = pypdf.PdfWriter(clone_from=PDF)
    writer.add_attachment("padding.bin", random.Random(megabytes).randbytes(megabytes * MB))
    buffer = io.BytesIO()
    writer.write(buffer)
    path = tmp_path / f"padded-{megabytes}mb.pdf"
    path.write_bytes(buffer.getvalue())
    return path


@pytest.mark.usefixtures("online")
def test_requests_are_imageless_and_ask_only_for_the_mapped_fields() -> None:
    """The :process body carries imagelessMode and a fieldMask of the fields the mapping reads."""
    server = Server(reply(200, recorded(PDF)))
    with ingestor(server) as docai:
        assert isinstance(docai.ingest(PDF), DocumentBundle)
    body = json.loads(server.requests[0].body or b"")
    assert body["imagelessMode"] is True
    assert body["fieldMask"] == (
        "text,documentLayout,shardInfo,pages.pageNumber,pages.dimension,pages.layout,pages.blocks,"
        "pages.paragraphs,pages.lines,pages.tokens,pages.formFields,pages.tables"
    )


@pytest.mark.usefixtures("online")
def test_imageless_mode_can_be_turned_off() -> None:
    """ARBITER_DOCUMENTAI_IMAGELESS=false sends no imagelessMode (proto3 leaves a false out)."""
    settings = DocumentAISettings.from_env({"ARBITER_DOCUMENTAI_IMAGELESS": "false"}, processor=PROCESSOR)
    assert (settings.imageless_mode, settings.per_request) == (False, 15)
    server = Server(reply(200, recorded(PDF)))
    with ingestor(server, imageless_mode=False) as docai:
        docai.ingest(PDF)
    assert "imagelessMode" not in json.loads(server.requests[0].body or b"")


@pytest.mark.parametrize(
    ("settings", "keys"),
    [
        ({}, ["{sha}"]),  # imageless: 30 pages in one online request
        ({"imageless_mode": False}, ["{sha}.p1-15", "{sha}.p16-30"]),
        ({"pages_per_request": 20}, ["{sha}.p1-20", "{sha}.p21-30"]),
        ({"imageless_mode": False, "pages_per_request": 10}, ["{sha}.p1-10", "{sha}.p11-20", "{sha}.p21-30"]),
    ],
)
def test_pages_per_online_request_follow_the_documented_limit(
    settings: dict[str, Any], keys: list[str]
) -> None:
    """A 30-page PDF goes in one imageless request, in two without imageless mode, or as configured."""
    source = Recorder()
    config = DocumentAISettings(processor=PROCESSOR, **settings)
    assert isinstance(DocumentAIIngestor(config, source).ingest(RECORD_30P), DocumentBundle)
    sha = hashlib.sha256(RECORD_30P.read_bytes()).hexdigest()
    assert [key for key, _ in source.sent] == [key.format(sha=sha) for key in keys]


def test_a_pdf_between_20_and_40_mb_is_sent_online(tmp_path: Path) -> None:
    """A 25 MB PDF is within the 40 MB online limit: it is sent, not refused as too large."""
    source = Recorder()
    result = DocumentAIIngestor(DocumentAISettings(processor=PROCESSOR), source).ingest(padded(tmp_path, 25))
    assert isinstance(result, DocumentBundle), result
    assert len(source.sent) == 1


def test_a_pdf_over_40_mb_needs_a_bucket_and_goes_through_batch_with_one(tmp_path: Path) -> None:
    """Over 40 MB, without ARBITER_DOCUMENTAI_GCS_URI the PDF fails naming it; with it, it goes to batch."""
    pdf = padded(tmp_path, 41)
    refused = DocumentAIIngestor(DocumentAISettings(processor=PROCESSOR), Recorder()).ingest(pdf)
    assert isinstance(refused, IngestFailure)
    assert refused.kind == "too_large"
    assert "at most 40 MB per file in an online request" in refused.message
    assert "ARBITER_DOCUMENTAI_GCS_URI" in refused.message
    source = Batcher()
    config = DocumentAISettings(processor=PROCESSOR, gcs_uri="gs://staging-bucket/arbiter")
    assert isinstance(DocumentAIIngestor(config, source).ingest(pdf), DocumentBundle)
    assert source.batched == [hashlib.sha256(pdf.read_bytes()).hexdigest()]


@pytest.mark.parametrize(
    ("settings", "batched", "online"),
    [
        ({"imageless_mode": False}, ["{sha}"], []),  # past 15 pages: one batch operation for the whole PDF
        ({}, [], ["{sha}"]),  # within 30 imageless pages: online
        ({"batch": "always"}, ["{sha}"], []),
        ({"batch": "off", "imageless_mode": False}, [], ["{sha}.p1-15", "{sha}.p16-30"]),
    ],
)
def test_batch_is_chosen_for_pdfs_past_the_online_limits(
    settings: dict[str, Any], batched: list[str], online: list[str]
) -> None:
    """With a bucket, `auto` batches what online requests cannot take whole, `always` everything, `off` nothing."""
    source = Batcher()
    config = DocumentAISettings(processor=PROCESSOR, gcs_uri="gs://staging-bucket", **settings)
    assert isinstance(DocumentAIIngestor(config, source).ingest(RECORD_30P), DocumentBundle)
    sha = hashlib.sha256(RECORD_30P.read_bytes()).hexdigest()
    assert source.batched == [key.format(sha=sha) for key in batched]
    assert [key for key, _ in source.sent if key not in source.batched] == [
        key.format(sha=sha) for key in online
    ]


def test_recorded_parts_replay_whatever_the_pages_per_request() -> None:
    """record-30p's two recorded 15-page parts replay with the 30-page default: the recording's partition wins."""
    bundle = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), ReplaySource(REPLAY)).ingest(
        RECORD_30P
    )
    assert isinstance(bundle, DocumentBundle), bundle
    local = ingest_pdf(RECORD_30P)
    assert isinstance(local, DocumentBundle)
    assert [p.text for p in bundle.pages] == [p.text for p in local.pages]


def test_parts_that_do_not_cover_the_pdf_are_not_replayed(tmp_path: Path) -> None:
    """Only recorded parts tiling every page count; one part alone is a missing recording, never half a PDF."""
    sha = hashlib.sha256(RECORD_30P.read_bytes()).hexdigest()
    (tmp_path / f"{sha}.p1-15.json").write_bytes((REPLAY / f"{sha}.p1-15.json").read_bytes())
    result = DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path)).ingest(
        RECORD_30P
    )
    assert isinstance(result, IngestFailure)
    assert "No recorded Document AI response" in result.message


@pytest.mark.parametrize(
    ("env", "words"),
    [
        (
            {"ARBITER_DOCUMENTAI_PAGES_PER_REQUEST": "31"},
            "at most 30 pages per online request in imageless mode",
        ),
        (
            {"ARBITER_DOCUMENTAI_PAGES_PER_REQUEST": "16", "ARBITER_DOCUMENTAI_IMAGELESS": "off"},
            "at most 15 pages",
        ),
        ({"ARBITER_DOCUMENTAI_IMAGELESS": "maybe"}, "ARBITER_DOCUMENTAI_IMAGELESS must be true or false"),
        ({"ARBITER_DOCUMENTAI_BATCH": "always"}, "needs a Cloud Storage folder"),
        ({"ARBITER_DOCUMENTAI_BATCH": "sometimes"}, "use auto, off or always"),
        ({"ARBITER_DOCUMENTAI_GCS_URI": "s3://bucket/prefix"}, "is not a Cloud Storage folder"),
        ({"ARBITER_DOCUMENTAI_GCS_URI": "gs://"}, "is not a Cloud Storage folder"),
        ({"ARBITER_DOCUMENTAI_GCS_URI": "gs://Bucket"}, "is not a Cloud Storage folder"),
        ({"ARBITER_DOCUMENTAI_GCS_URI": "gs://bucket/a/../b"}, "is not a Cloud Storage folder"),
        ({"ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S": "soon"}, "must be a number of seconds"),
        ({"ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S": "0"}, "batch timeout must be a positive number"),
    ],
)
def test_bad_limit_and_batch_settings_are_config_errors(env: dict[str, str], words: str) -> None:
    """Each wrong limit or batch setting stops the run with one line saying what to give instead."""
    with pytest.raises(ConfigError, match=words):
        DocumentAISettings.from_env(env, processor=PROCESSOR)


@pytest.mark.parametrize(
    ("uri", "bucket", "prefix"),
    [
        ("gs://staging-bucket", "staging-bucket", ""),
        ("gs://staging-bucket/", "staging-bucket", ""),
        ("gs://staging-bucket/docai/runs/", "staging-bucket", "docai/runs"),
        ("  gs://my.bucket.example/x  ", "my.bucket.example", "x"),
    ],
)
def test_the_cloud_storage_folder_is_read_as_bucket_and_prefix(uri: str, bucket: str, prefix: str) -> None:
    """ARBITER_DOCUMENTAI_GCS_URI names a bucket and an optional prefix; batch is then on (auto)."""
    settings = DocumentAISettings.from_env({"ARBITER_DOCUMENTAI_GCS_URI": uri}, processor=PROCESSOR)
    assert (settings.bucket, settings.prefix, settings.batch_enabled) == (bucket, prefix, True)
    assert settings.batch_timeout_s == 1800.0


def test_pdfs_past_the_batch_page_limit_go_as_batch_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF longer than one batch document may be (500 pages; 10 here) goes as consecutive batch parts."""
    monkeypatch.setattr("arbiter.ingest.documentai.ingestor.BATCH_PAGES", 10)
    source = Batcher()
    config = DocumentAISettings(processor=PROCESSOR, gcs_uri="gs://staging-bucket", imageless_mode=False)
    bundle = DocumentAIIngestor(config, source).ingest(RECORD_30P)
    assert isinstance(bundle, DocumentBundle)
    sha = hashlib.sha256(RECORD_30P.read_bytes()).hexdigest()
    assert source.batched == [f"{sha}.p1-10", f"{sha}.p11-20", f"{sha}.p21-30"]
    assert [p.page_num for p in bundle.pages] == list(range(1, 31))
