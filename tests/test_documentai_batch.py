"""Batch processing through Cloud Storage, driven through Google's real client over fake HTTP transports: a
fake Document AI (`:batchProcess`, the long-running operation polled and cancelled) and a fake Cloud
Storage JSON API (upload, listing in pages, download, delete) under google-auth's session."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import requests
from google.auth.transport.requests import AuthorizedSession
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from arbiter.contracts import DocumentBundle
from arbiter.errors import ConfigError
from arbiter.ingest import IngestFailure
from arbiter.ingest.documentai.batch import BatchRunner
from arbiter.ingest.documentai.client import DocumentAIError
from arbiter.ingest.documentai.factory import open_documentai
from arbiter.ingest.documentai.gcs import Storage
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.request import FIELD_MASK
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.sources import LiveSource, ReplaySource
from arbiter.net import switch
from tests.conftest import FIXTURES
from tests.test_documentai_client import PROCESSOR, REPLAY, FakeCredentials, client

BUCKET, PREFIX = "staging-bucket", "docai/runs"
PDF = FIXTURES / "pdfs" / "record-30p.pdf"
SHA = hashlib.sha256(PDF.read_bytes()).hexdigest()
OPERATION = "projects/123/locations/us/operations/4242"
METADATA = "type.googleapis.com/google.cloud.documentai.v1.BatchProcessMetadata"


def respond(request: requests.PreparedRequest, status: int, body: Any) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    response._content = raw
    kind = "application/octet-stream" if isinstance(body, bytes) else "application/json"
    response.headers = CaseInsensitiveDict({"content-type": kind})
    response.request, response.url, response.encoding = request, request.url or "", "utf-8"
    return response


class FakeStorage(BaseAdapter):
    """Cloud Storage's JSON API for one bucket, in memory; lists two names a page, in name order as GCS does."""

    def __init__(self) -> None:
        super().__init__()
        self.objects: dict[str, bytes] = {}
        self.requests: list[requests.PreparedRequest] = []
        self.refuse: dict[str, int] = {}  # method -> HTTP status to answer instead

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        url = urlsplit(request.url or "")
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        method = request.method or ""
        if method in self.refuse:
            status = self.refuse[method]
            return respond(
                request, status, {"error": {"code": status, "status": "PERMISSION_DENIED", "message": "no"}}
            )
        listing = f"/storage/v1/b/{BUCKET}/o"
        if method == "POST" and url.path == f"/upload/storage/v1/b/{BUCKET}/o":
            assert query["uploadType"] == "media"
            self.objects[query["name"]] = bytes(request.body or b"")  # type: ignore[arg-type]
            return respond(request, 200, {"bucket": BUCKET, "name": query["name"]})
        if method == "GET" and url.path == listing:
            names = sorted(n for n in self.objects if n.startswith(query["prefix"]))
            start = int(query.get("pageToken", "0"))
            page: dict[str, Any] = {"items": [{"name": n} for n in names[start : start + 2]]}
            if start + 2 < len(names):
                page["nextPageToken"] = str(start + 2)
            return respond(request, 200, page)
        name = unquote(url.path.removeprefix(listing + "/"))
        if name not in self.objects:
            return respond(request, 404, {"error": {"code": 404, "message": "No such object"}})
        if method == "GET" and query.get("alt") == "media":
            return respond(request, 200, self.objects[name])
        if method == "DELETE":
            del self.objects[name]
            return respond(request, 204, {})
        raise AssertionError(f"unexpected {method} {url.path}")

    def close(self) -> None:
        return None


def layout_shards(count: int) -> list[dict[str, Any]]:
    """record-30p's layout answer as one 30-page Document (its two recorded parts joined, the second's pages
    renumbered 16-30), cut into `count` shards of consecutive blocks, as a batch operation writes it."""

    def shift(value: Any, by: int) -> Any:
        if isinstance(value, list):
            return [shift(v, by) for v in value]
        if not isinstance(value, dict):
            return value
        return {
            k: ({p: n + by for p, n in v.items()} if k == "pageSpan" else shift(v, by))
            for k, v in value.items()
        }

    first, second = (json.loads((REPLAY / f"{SHA}.{part}.json").read_text()) for part in ("p1-15", "p16-30"))
    blocks = first["document"]["documentLayout"]["blocks"] + shift(
        second["document"]["documentLayout"]["blocks"], 15
    )
    size = -(-len(blocks) // count)
    return [
        {
            "documentLayout": {"blocks": blocks[i * size : (i + 1) * size]},
            "shardInfo": {"shardIndex": str(i), "shardCount": str(count)},
        }
        for i in range(count)
    ]


class FakeProcessor(BaseAdapter):
    """Document AI's batch side: `:batchProcess` starts an operation that is done after `polls` GETs, having
    written `shards` where the request asked (shard i as `{stem}-{i}.json`, like the service)."""

    def __init__(self, storage: FakeStorage, shards: list[Any], *, polls: int = 3, **finish: Any) -> None:
        super().__init__()
        self.storage = storage
        self.shards = shards
        self.polls = polls
        self.finish = finish  # overrides of the finished operation: error, state, status, destination
        self.requests: list[requests.PreparedRequest] = []
        self.body: dict[str, Any] = {}

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        path = urlsplit(request.url or "").path
        if request.method == "POST" and path.endswith(":batchProcess"):
            self.body = json.loads(request.body or b"")
            return respond(request, 200, {"name": OPERATION, "metadata": self.metadata("RUNNING")})
        if request.method == "POST" and path.endswith(":cancel"):
            return respond(request, 200, {})
        assert (request.method, path) == ("GET", f"/v1/{OPERATION}")
        self.polls -= 1
        if self.polls > 0:
            return respond(request, 200, {"name": OPERATION, "metadata": self.metadata("RUNNING")})
        destination = self.output_uri() + "4242/0"
        prefix = destination.removeprefix(f"gs://{BUCKET}/")
        for index, shard in enumerate(self.shards):
            self.storage.objects[f"{prefix}/{SHA}-{index}.json"] = json.dumps(shard).encode()
        answer: dict[str, Any] = {
            "name": OPERATION,
            "done": True,
            "metadata": self.metadata(
                self.finish.get("state", "SUCCEEDED"), self.finish.get("destination", destination)
            ),
            "response": {"@type": "type.googleapis.com/google.cloud.documentai.v1.BatchProcessResponse"},
        }
        if "error" in self.finish:
            answer["error"] = self.finish["error"]
            del answer["response"]
        return respond(request, 200, answer)

    def input_uri(self) -> str:
        return str(self.body["inputDocuments"]["gcsDocuments"]["documents"][0]["gcsUri"])

    def output_uri(self) -> str:
        return str(self.body["documentOutputConfig"]["gcsOutputConfig"]["gcsUri"])

    def metadata(self, state: str, destination: str = "") -> dict[str, Any]:
        status = {"inputGcsSource": self.input_uri(), "status": self.finish.get("status", {})}
        if destination and not self.finish.get("status"):
            status["outputGcsDestination"] = destination
        return {"@type": METADATA, "state": state, "individualProcessStatuses": [status]}

    def close(self) -> None:
        return None


class Clock:
    """Monotonic time that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def batch_ingestor(
    processor: FakeProcessor, storage: FakeStorage, clock: Clock, **settings: Any
) -> DocumentAIIngestor:
    """The ingestor a run gets with a bucket configured, its two HTTP sides answered by the fakes."""
    config = DocumentAISettings(
        processor=PROCESSOR,
        gcs_uri=f"gs://{BUCKET}/{PREFIX}",
        imageless_mode=False,
        timeout_s=5.0,
        **settings,
    )
    docai = client(processor, config)  # type: ignore[arg-type]

    def session(credentials: Any) -> requests.Session:
        authorized = AuthorizedSession(credentials)
        authorized.mount("https://", storage)
        return authorized

    gcs = Storage(BUCKET, PREFIX, FakeCredentials, session=session, sleep=clock.sleep, rng=random.Random(0))
    runner = BatchRunner(docai, gcs, config, clock=lambda: clock.now, sleep=clock.sleep, token=lambda: "job1")
    return DocumentAIIngestor(config, LiveSource(docai, config.record_dir, runner))


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets the clients past the network switch; the fake adapters keep every byte local."""
    monkeypatch.setattr(switch, "ALLOW_NETWORK", True)


def replayed_parts() -> DocumentBundle:
    bundle = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), ReplaySource(REPLAY)).ingest(PDF)
    assert isinstance(bundle, DocumentBundle)
    return bundle


@pytest.mark.usefixtures("online")
def test_a_long_pdf_goes_through_one_batch_operation_and_maps_like_the_online_parts() -> None:
    """Upload, :batchProcess, polling until done, twelve shards read in shard order (GCS lists -10 before -2)
    and merged, the job's objects deleted: the 30-page bundle equals the one the two online parts give."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(12), polls=3)
    with batch_ingestor(processor, storage, clock) as docai:
        bundle = docai.ingest(PDF)
    assert isinstance(bundle, DocumentBundle), bundle
    assert bundle.pages == replayed_parts().pages
    upload = storage.requests[0]
    assert upload.method == "POST"
    assert upload.headers["content-type"] == "application/pdf"
    assert upload.body == PDF.read_bytes()
    assert upload.headers["authorization"] == "Bearer test-token"
    job = f"gs://{BUCKET}/{PREFIX}/arbiter-job1/"
    assert processor.body == {
        "inputDocuments": {
            "gcsDocuments": {
                "documents": [{"gcsUri": f"{job}input/{SHA}.pdf", "mimeType": "application/pdf"}]
            }
        },
        "documentOutputConfig": {
            "gcsOutputConfig": {
                "gcsUri": f"{job}output/",
                "fieldMask": ",".join(_camel(p) for p in FIELD_MASK),
            }
        },
        "skipHumanReview": True,
        "processOptions": {"layoutConfig": {"returnBoundingBoxes": True}},
    }
    calls = [(r.method, urlsplit(r.url or "").path.rsplit("/", 1)[-1]) for r in processor.requests]
    assert calls == [("POST", "abc123:batchProcess"), ("GET", "4242"), ("GET", "4242"), ("GET", "4242")]
    assert clock.sleeps == [5.0, 10.0]
    assert storage.objects == {}  # the PDF and the answer are gone
    downloads = [r for r in storage.requests if r.method == "GET" and "alt=media" in (r.url or "")]
    assert len(downloads) == 12


def _camel(path: str) -> str:
    return ".".join(
        part.split("_")[0] + "".join(w.capitalize() for w in part.split("_")[1:]) for part in path.split(".")
    )


@pytest.mark.usefixtures("online")
def test_an_operation_that_does_not_finish_is_cancelled_at_the_bound() -> None:
    """Polling stops after ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S: the operation is cancelled, the document fails
    as a timeout, and the uploaded PDF is deleted."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(2), polls=10**6)
    with batch_ingestor(processor, storage, clock, batch_timeout_s=30.0) as docai:
        result = docai.ingest(PDF)
    assert isinstance(result, IngestFailure)
    assert result.kind == "timeout"
    assert "did not finish within 30 s and was cancelled" in result.message
    assert "ARBITER_DOCUMENTAI_BATCH_TIMEOUT_S" in result.message
    assert clock.sleeps == [5.0, 10.0, 15.0]  # the last pause ends at the bound
    assert (processor.requests[-1].method, (processor.requests[-1].url or "").endswith(":cancel")) == (
        "POST",
        True,
    )
    assert storage.objects == {}


_FAILED = {"code": 3, "message": "Document pages exceed the limit: 500 got 600"}


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize(
    ("finish", "shards", "words"),
    [
        ({"error": _FAILED}, 2, "batch operation failed (INVALID_ARGUMENT: Document pages exceed the limit"),
        ({"status": _FAILED}, 2, "batch processing of this PDF failed (INVALID_ARGUMENT"),
        ({"state": "FAILED"}, 2, "did not succeed (FAILED)"),
        ({"destination": f"gs://{BUCKET}/elsewhere/4242/0"}, 2, "outside the folder it was given"),
        ({"destination": f"gs://{BUCKET}/{PREFIX}/arbiter-job1/output/../../x"}, 2, "outside the folder"),
        ({}, 0, "wrote no answer for this PDF"),
    ],
)  # fmt: skip
def test_a_failed_batch_operation_fails_the_document_in_plain_words(
    finish: dict[str, Any], shards: int, words: str
) -> None:
    """Each way the operation can end without an answer is an input failure naming it; nothing is left behind."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(shards) if shards else [], polls=1, **finish)
    with batch_ingestor(processor, storage, clock) as docai:
        result = docai.ingest(PDF)
    assert isinstance(result, IngestFailure)
    assert result.kind == "extractor_failed"
    assert words in result.message
    assert [n for n in storage.objects if "/input/" in n] == []


@pytest.mark.usefixtures("online")
def test_a_shard_set_with_one_missing_is_refused() -> None:
    """An answer whose shards do not form one complete set fails the document, never a PDF with pages missing."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(3)[:2], polls=1)
    with batch_ingestor(processor, storage, clock) as docai:
        result = docai.ingest(PDF)
    assert isinstance(result, IngestFailure)
    assert "shardInfo" in result.message


@pytest.mark.usefixtures("online")
def test_cloud_storage_refusing_the_upload_names_the_roles_needed() -> None:
    """A 403 from Cloud Storage says which roles the account and the service agent need; no operation starts."""
    storage, clock = FakeStorage(), Clock()
    storage.refuse = {"POST": 403}
    processor = FakeProcessor(storage, layout_shards(2))
    with batch_ingestor(processor, storage, clock) as docai:
        result = docai.ingest(PDF)
    assert isinstance(result, IngestFailure)
    assert f"refused to upload a PDF to objects in gs://{BUCKET}/{PREFIX}/ (HTTP 403" in result.message
    assert "Storage Object User" in result.message
    assert processor.requests == []


@pytest.mark.usefixtures("online")
def test_recorded_batch_shards_replay_to_the_same_bundle(tmp_path: Path) -> None:
    """With a record folder, the answer's shards are kept as <sha256>/shard-NNNN.json; replaying them offline
    gives the same pages."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(3), polls=1)
    with batch_ingestor(processor, storage, clock, record_dir=tmp_path) as docai:
        live = docai.ingest(PDF)
    assert sorted(p.name for p in (tmp_path / SHA).iterdir()) == [
        "shard-0000.json",
        "shard-0001.json",
        "shard-0002.json",
    ]
    replayed = DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path)).ingest(PDF)
    assert isinstance(live, DocumentBundle)
    assert isinstance(replayed, DocumentBundle)
    assert replayed.pages == live.pages


def test_with_the_network_off_nothing_is_uploaded() -> None:
    """The network switch stops a batch before any upload or request."""
    storage, clock = FakeStorage(), Clock()
    processor = FakeProcessor(storage, layout_shards(2))
    with batch_ingestor(processor, storage, clock) as docai:
        result = docai.ingest(PDF)
    assert isinstance(result, IngestFailure)
    assert "switched off" in result.message
    assert (storage.requests, processor.requests) == ([], [])


def test_a_live_run_with_a_bucket_gets_a_batch_runner_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """ARBITER_DOCUMENTAI_GCS_URI gives the live source a batch runner confined to that bucket and prefix."""
    monkeypatch.setenv("ARBITER_DOCUMENTAI_GCS_URI", f"gs://{BUCKET}/{PREFIX}/")
    with open_documentai({"processor": PROCESSOR}) as docai:
        source = docai.source
        assert isinstance(source, LiveSource)
        assert source.batch is not None
        assert (source.batch.storage.bucket, source.batch.storage.prefix) == (BUCKET, f"{PREFIX}/")
    monkeypatch.setenv("ARBITER_DOCUMENTAI_BATCH", "always")
    monkeypatch.delenv("ARBITER_DOCUMENTAI_GCS_URI")
    with pytest.raises(ConfigError, match="ARBITER_DOCUMENTAI_GCS_URI=gs://BUCKET/PREFIX"):
        open_documentai({"processor": PROCESSOR})


def test_storage_never_names_an_object_outside_its_prefix() -> None:
    """Every object name Storage is given or lists must lie inside the configured prefix."""
    calls: list[Callable[[Storage], Any]] = [
        lambda s: s.uri("other/x.pdf"),
        lambda s: s.download(f"{PREFIX}/../secret.json"),
        lambda s: s.delete(f"{PREFIX}x/y"),
    ]
    storage = Storage(BUCKET, PREFIX, FakeCredentials)
    for call in calls:
        with pytest.raises(DocumentAIError, match="outside gs://staging-bucket/docai/runs/"):
            call(storage)
