"""The Document AI client and ingestor: Google's client driven over a fake HTTP adapter (request shape,
credentials, errors as input failures, retries), the network switch, recording and replay, local
pre-flight, page parts and the extractor-keyed bundle cache."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pypdfium2
import pytest
import requests
from google.auth import credentials as ga_credentials
from google.auth.exceptions import DefaultCredentialsError
from google.cloud import documentai
from google.oauth2.credentials import Credentials
from hypothesis import given
from hypothesis import strategies as st
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from arbiter.classify import get_classifier
from arbiter.contracts import DocumentBundle, Extractor
from arbiter.contracts.profile import load_profile
from arbiter.errors import ConfigError
from arbiter.ingest import IngestFailure, IngestResult, ingest_pdf
from arbiter.ingest.cache import BundleCache
from arbiter.ingest.documentai.client import DocumentAIClient, service_client
from arbiter.ingest.documentai.factory import open_documentai
from arbiter.ingest.documentai.ingestor import DocumentAIIngestor
from arbiter.ingest.documentai.mapping import document_of
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.ingest.documentai.sources import LiveSource, ReplaySource
from arbiter.net import switch as network
from arbiter.record.mirrors import FileStore
from arbiter.run.batch import new_run_id
from arbiter.run.document import Pipeline
from tests.conftest import FIXTURES

PROCESSOR = "projects/demo-project/locations/us/processors/abc123"
URL = f"https://us-documentai.googleapis.com/v1/{PROCESSOR}:process"
REPLAY = FIXTURES / "documentai" / "replay"
PDF = FIXTURES / "pdfs" / "lab-quest-01.pdf"
LOCKED = FIXTURES / "damaged" / "locked-lab-report.pdf"
LOCKED_PASSWORD = "clinic-2026"  # arbiter/demo/damaged.py
_FIELDS = ["document", "documentLayout", "blocks", "textBlock", "tableBlock", "listBlock", "text", "pageSpan",
           "pageStart", "bodyRows", "cells", "listEntries", "pages", "pageNumber", "layout", "textAnchor"]  # fmt: skip


def recorded(pdf: Path) -> dict[str, Any]:
    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    return json.loads((REPLAY / f"{sha}.json").read_text(encoding="utf-8"))


class FakeCredentials(ga_credentials.Credentials):
    """A fixed bearer token; counts the requests it authorised and the refreshes asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.token = "test-token"
        self.calls = 0
        self.refreshes = 0

    def refresh(self, request: Any) -> None:
        self.refreshes += 1

    def before_request(self, request: Any, method: str, url: str, headers: Any) -> None:
        self.calls += 1
        super().before_request(request, method, url, headers)


Answer = tuple[int, Any, dict[str, str]] | Callable[[requests.PreparedRequest], Any]


def reply(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Answer:
    """An HTTP answer: a JSON body (or text when `body` is a str) with these headers."""
    return (status, body, headers or {})


class Server(BaseAdapter):
    """A requests adapter mounted on Google's client's session: answers with the queued responses (the last
    one repeats) and keeps each request; nothing reaches a socket."""

    def __init__(self, *answers: Answer) -> None:
        super().__init__()
        self.answers = list(answers)
        self.requests: list[requests.PreparedRequest] = []
        self.timeouts: list[Any] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        self.timeouts.append(kwargs.get("timeout"))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if callable(answer):
            answer(request)  # raises
        status, body, headers = answer  # type: ignore[misc]
        response = requests.Response()
        response.status_code = status
        response._content = (body if isinstance(body, str) else json.dumps(body)).encode()
        response.headers = CaseInsensitiveDict(
            {"content-type": "text/plain" if isinstance(body, str) else "application/json", **headers}
        )
        response.request = request
        response.url = request.url or ""
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        return None


def mounted(server: Server) -> Callable[[DocumentAISettings, Any], documentai.DocumentProcessorServiceClient]:
    """Builds Google's real client (REST transport) with `server` under its authorised session."""

    def make(settings: DocumentAISettings, credentials: Any) -> documentai.DocumentProcessorServiceClient:
        service = service_client(settings, credentials)
        # the REST transport's google-auth session: credentials are applied, then the adapter answers
        service.transport._session.mount("https://", server)
        return service

    return make


def client(
    server: Server, config: DocumentAISettings, *, credentials: Any = None, sleeps: list[float] | None = None
) -> DocumentAIClient:
    return DocumentAIClient(
        config,
        credentials=credentials if credentials is not None else FakeCredentials(),
        service=mounted(server),
        sleep=(sleeps if sleeps is not None else []).append,
        rng=random.Random(0),
    )


def ingestor(
    server: Server,
    *,
    credentials: Any = None,
    sleeps: list[float] | None = None,
    **settings: Any,
) -> DocumentAIIngestor:
    config = DocumentAISettings(**{"processor": PROCESSOR, "timeout_s": 5.0, **settings})
    return DocumentAIIngestor(
        config, LiveSource(client(server, config, credentials=credentials, sleeps=sleeps))
    )


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets the client past the network switch; the fake adapter still keeps every byte local."""
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)


def failure(result: IngestResult) -> IngestFailure:
    assert isinstance(result, IngestFailure), result
    return result


@pytest.mark.usefixtures("online")
def test_request_shape_and_a_bundle_from_the_response() -> None:
    """One POST to the regional :process URL with the PDF inline (base64), a bearer token, layout options
    and the per-attempt timeout, through Google's client."""
    server = Server(reply(200, recorded(PDF)))
    credentials = FakeCredentials()
    with ingestor(server, credentials=credentials) as docai:
        bundle = docai.ingest(PDF)
    assert isinstance(bundle, DocumentBundle)
    assert [p.text for p in bundle.pages] == [p.text for p in ingest_pdf(PDF).pages]  # type: ignore[union-attr]
    (request,) = server.requests
    assert (request.method, (request.url or "").split("?")[0]) == ("POST", URL)
    assert request.headers["authorization"] == "Bearer test-token"
    assert request.headers["content-type"] == "application/json"
    body = json.loads(request.body or b"")
    assert base64.b64decode(body["rawDocument"]["content"]) == PDF.read_bytes()
    assert body["rawDocument"]["mimeType"] == "application/pdf"
    assert body["skipHumanReview"] is True
    assert body["processOptions"] == {"layoutConfig": {"returnBoundingBoxes": True}}
    assert credentials.calls == 1
    assert server.timeouts == [5.0]


@pytest.mark.usefixtures("online")
def test_ocr_processors_get_no_layout_options() -> None:
    """With processor type ocr the request carries no layoutConfig, which other processors reject."""
    server = Server(reply(200, {"document": {}}))
    with ingestor(server, processor_type="ocr") as docai:
        docai.ingest(PDF)
    assert "processOptions" not in json.loads(server.requests[0].body or b"")


@pytest.mark.parametrize(
    ("processor", "location", "url"),
    [
        (PROCESSOR, None, URL),
        (
            "projects/p/locations/eu/processors/x/processorVersions/pretrained-layout-parser-v1.0",
            "eu",
            "https://eu-documentai.googleapis.com/v1/projects/p/locations/eu/processors/x/processorVersions/"
            "pretrained-layout-parser-v1.0:process",
        ),
    ],
)
def test_endpoint_is_the_processors_regional_process_url(
    processor: str, location: str | None, url: str
) -> None:
    """The URL is https://{location}-documentai.googleapis.com/v1/{processor or version name}:process."""
    assert DocumentAISettings(processor=processor, location=location).endpoint == url


@pytest.mark.usefixtures("online")
def test_a_regional_processor_is_called_on_its_regional_endpoint() -> None:
    """Google's client is pointed at the processor's location: an eu processor is called on eu-documentai."""
    server = Server(reply(200, {"document": {}}))
    with ingestor(server, processor="projects/p/locations/eu/processors/x") as docai:
        docai.ingest(PDF)
    url = (server.requests[0].url or "").split("?")[0]
    assert url == "https://eu-documentai.googleapis.com/v1/projects/p/locations/eu/processors/x:process"


@pytest.mark.usefixtures("online")
def test_google_credentials_set_the_bearer_token_and_quota_project() -> None:
    """ADC-style credentials are applied by Google's client: the access token and the quota project header."""
    server = Server(reply(200, {"document": {}}))
    credentials = Credentials(token="ya29.token", quota_project_id="billing-project")
    with ingestor(server, credentials=credentials) as docai:
        docai.ingest(PDF)
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer ya29.token"
    assert headers["x-goog-user-project"] == "billing-project"


@pytest.mark.usefixtures("online")
def test_credentials_that_cannot_be_refreshed_make_an_input_failure() -> None:
    """Expired credentials that cannot refresh fail the document in plain words; nothing is sent."""
    server = Server(reply(200, {"document": {}}))
    with ingestor(server, credentials=Credentials(token=None)) as docai:
        result = failure(docai.ingest(PDF))
    assert result.kind == "extractor_failed"
    assert "credentials could not be used" in result.message
    assert server.requests == []


def _error(status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": 400, "status": status, "message": message}}


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize(
    ("response", "kind", "words", "sent", "slept"),
    [
        (reply(400, _error("INVALID_ARGUMENT", "Unsupported input file format.")), "extractor_failed", "rejected the PDF (HTTP 400 INVALID_ARGUMENT: Unsupported input file format.)", 1, 0),
        # google-auth's session refreshes the credentials on a 401 and sends again, twice at most
        (reply(401, _error("UNAUTHENTICATED", "Request had invalid credentials.")), "extractor_failed", "refused the credentials (HTTP 401 UNAUTHENTICATED", 3, 0),
        (reply(403, _error("PERMISSION_DENIED", "Permission denied.")), "extractor_failed", "Document AI API User role", 1, 0),
        (reply(404, "Not Found"), "extractor_failed", f"has no processor {PROCESSOR} (HTTP 404)", 1, 0),
        (reply(500, _error("INTERNAL", "Internal error.")), "extractor_failed", "kept failing (HTTP 500 INTERNAL: Internal error.) after 4 attempts.", 4, 3),
        (reply(429, _error("RESOURCE_EXHAUSTED", "Quota exceeded.")), "extractor_failed", "lower ARBITER_DOCUMENTAI_RPM", 4, 3),
        (reply(200, "<html>proxy</html>"), "extractor_failed", "not JSON", 1, 0),
        (reply(200, [1, 2]), "extractor_failed", "unexpected response shape", 1, 0),
        (reply(200, {"document": {"documentLayout": {"blocks": "x"}}}), "extractor_failed", "cannot read (documentLayout.blocks does not fit a Document)", 1, 0),
    ],
)  # fmt: skip
def test_http_failures_become_input_failures(
    response: Answer, kind: str, words: str, sent: int, slept: int
) -> None:
    """Each refusal is a plain-English input failure; 429 and 5xx are retried with backoff first."""
    server = Server(response)
    sleeps: list[float] = []
    with ingestor(server, sleeps=sleeps) as docai:
        result = failure(docai.ingest(PDF))
    assert result.kind == kind
    assert words in result.message
    assert len(server.requests) == sent
    assert len(sleeps) == slept


@pytest.mark.usefixtures("online")
def test_retry_after_is_honoured_and_a_later_success_counts() -> None:
    """A 503 asking to wait 2 s is retried after exactly that pause, and the next answer is used."""
    server = Server(reply(503, {}, {"Retry-After": "2"}), reply(200, recorded(PDF)))
    sleeps: list[float] = []
    with ingestor(server, sleeps=sleeps) as docai:
        assert isinstance(docai.ingest(PDF), DocumentBundle)
    assert sleeps == [2.0]


@pytest.mark.usefixtures("online")
def test_a_429_is_retried_after_its_retry_info_delay() -> None:
    """A REST 429 (which the library's default retry would not retry) waits the RetryInfo delay, then succeeds."""
    body = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "message": "Quota exceeded.",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}],
        }
    }
    server = Server(reply(429, body), reply(200, recorded(PDF)))
    sleeps: list[float] = []
    with ingestor(server, sleeps=sleeps) as docai:
        assert isinstance(docai.ingest(PDF), DocumentBundle)
    assert sleeps == [7.0]
    assert len(server.requests) == 2


@pytest.mark.usefixtures("online")
def test_the_rate_limiter_is_asked_before_every_attempt() -> None:
    """With ARBITER_DOCUMENTAI_RPM set, each attempt (retries included) books a slot of the run's limiter."""
    server = Server(reply(500, _error("INTERNAL", "Internal error.")), reply(200, {"document": {}}))
    config = DocumentAISettings(processor=PROCESSOR, rpm=60)
    docai_client = client(server, config)
    assert docai_client.limiter is not None
    booked: list[int] = []
    docai_client.limiter.acquire = lambda: booked.append(1)  # type: ignore[method-assign]
    docai_client.process(PDF.read_bytes())
    assert (len(booked), len(server.requests)) == (2, 2)


def _raise(error: type[requests.RequestException]) -> Callable[[requests.PreparedRequest], Any]:
    def handler(request: requests.PreparedRequest) -> Any:
        raise error("simulated", request=request)

    return handler


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize(
    ("error", "kind", "words"),
    [
        (requests.exceptions.ReadTimeout, "timeout", "did not answer within 5 s, after 4 attempts"),
        (requests.exceptions.ConnectTimeout, "timeout", "did not answer within 5 s, after 4 attempts"),
        (requests.exceptions.ConnectionError, "extractor_failed", "Could not reach Google Document AI at us-documentai.googleapis.com (ConnectionError)"),
    ],
)  # fmt: skip
def test_timeouts_and_connection_errors_are_retried_then_fail(
    error: type[requests.RequestException], kind: str, words: str
) -> None:
    """Transport errors are retried; the failure says what happened without a traceback."""
    server = Server(_raise(error))
    with ingestor(server) as docai:
        result = failure(docai.ingest(PDF))
    assert (result.kind, len(server.requests)) == (kind, 4)
    assert words in result.message


def test_network_switch_off_refuses_before_any_request() -> None:
    """With the test session's network switch off, a live ingestor fails the document and sends nothing."""
    assert network.ALLOW_NETWORK is False
    server = Server(reply(200, recorded(PDF)))
    credentials = FakeCredentials()
    with ingestor(server, credentials=credentials) as docai:
        result = failure(docai.ingest(PDF))
    assert "switched off" in result.message
    assert (server.requests, credentials.calls) == ([], 0)


def test_a_live_run_with_the_network_off_does_not_look_for_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """open_documentai leaves finding credentials to the first request when the network switch is off."""

    def refuse(**_: Any) -> Any:
        raise AssertionError("google.auth.default must not be called")

    monkeypatch.setattr("google.auth.default", refuse)
    with open_documentai({"processor": PROCESSOR}) as docai:
        assert docai.extractor == Extractor(name="documentai", version="v1+abc123+map2")


@pytest.mark.usefixtures("online")
def test_missing_credentials_stop_a_live_run_with_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Application Default Credentials is a ConfigError naming GOOGLE_APPLICATION_CREDENTIALS."""

    def missing(**_: Any) -> Any:
        raise DefaultCredentialsError("none")

    monkeypatch.setattr("google.auth.default", missing)
    with pytest.raises(ConfigError, match="GOOGLE_APPLICATION_CREDENTIALS"):
        open_documentai({"processor": PROCESSOR})


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({}, "needs a processor"),
        ({"processor": "abc123"}, "not a processor resource name"),
        ({"processor": "projects/p/locations/us/processors/"}, "not a processor resource name"),
        ({"processor": PROCESSOR, "location": "eu"}, "differs from the processor's"),
        ({"replay_dir": "x", "location": "US West"}, "not a location"),
        ({"replay_dir": "x", "processor_type": "form"}, "Unknown Document AI processor type"),
        ({"replay_dir": "x", "pages_per_request": 0}, "pages per request must be at least 1"),
        ({"replay_dir": "x", "timeout_s": 0}, "timeout must be a positive number"),
    ],
)
def test_bad_settings_are_config_errors(given: dict[str, Any], words: str) -> None:
    """Each wrong setting is a one-line ConfigError saying what to give instead."""
    with pytest.raises(ConfigError, match=words):
        DocumentAISettings.from_env({}, **given)


def test_settings_come_from_the_environment_and_options_win() -> None:
    """ARBITER_DOCUMENTAI_* fill the settings; a command-line value overrides its variable."""
    env = {
        "ARBITER_DOCUMENTAI_PROCESSOR": "projects/p/locations/eu/processors/x",
        "ARBITER_DOCUMENTAI_PAGES_PER_REQUEST": "10",
        "ARBITER_DOCUMENTAI_RPM": "120",
        "ARBITER_DOCUMENTAI_PROCESSOR_TYPE": "ocr",
    }
    settings = DocumentAISettings.from_env(env, processor=PROCESSOR)
    assert (settings.processor, settings.location) == (PROCESSOR, "us")
    assert (settings.pages_per_request, settings.rpm, settings.processor_type) == (10, 120, "ocr")
    with pytest.raises(ConfigError, match="ARBITER_DOCUMENTAI_RPM must be a whole number"):
        DocumentAISettings.from_env({"ARBITER_DOCUMENTAI_RPM": "fast"}, processor=PROCESSOR)


@pytest.mark.parametrize(
    ("given", "version"),
    [
        ({"processor": PROCESSOR}, "v1+abc123+map2"),
        ({"processor": "projects/p/locations/us/processors/abc/processorVersions/rc2"}, "v1+abc@rc2+map2"),
        ({"replay_dir": "recorded"}, "v1+replay+map2"),
    ],
)
def test_extractor_version_names_the_processor(given: dict[str, Any], version: str) -> None:
    """The bundles' extractor version names the API, the processor (and its version) and the mapping."""
    assert DocumentAISettings(**given).version == version


@pytest.mark.usefixtures("online")
def test_recorded_responses_replay_to_the_same_bundle(tmp_path: Path) -> None:
    """A live run with a record folder writes <sha256>.json; replaying it gives the same pages offline."""
    server = Server(reply(200, recorded(PDF)))
    config = DocumentAISettings(processor=PROCESSOR)
    with DocumentAIIngestor(config, LiveSource(client(server, config), record_dir=tmp_path)) as docai:
        live = docai.ingest(PDF)
    sha = hashlib.sha256(PDF.read_bytes()).hexdigest()
    assert [p.name for p in tmp_path.iterdir()] == [f"{sha}.json"]
    with DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path)) as docai:
        replayed = docai.ingest(PDF)
    assert isinstance(live, DocumentBundle)
    assert isinstance(replayed, DocumentBundle)
    assert replayed.pages == live.pages


def test_a_missing_or_unreadable_recording_is_a_clear_failure(tmp_path: Path) -> None:
    """Replay never falls back: no recording, or a broken one, fails the document and says how to record."""
    docai = DocumentAIIngestor(DocumentAISettings(replay_dir=tmp_path), ReplaySource(tmp_path))
    missing = failure(docai.ingest(PDF))
    assert "No recorded Document AI response" in missing.message
    assert "ARBITER_DOCUMENTAI_RECORD_DIR" in missing.message
    sha = hashlib.sha256(PDF.read_bytes()).hexdigest()
    assert f"there is no {sha}" in missing.message  # the recording it looked for, by its whole name
    (tmp_path / f"{sha}.json").write_text("{not json", encoding="utf-8")
    assert "cannot be read (JSONDecodeError)" in failure(docai.ingest(PDF)).message


class Recorder:
    """A DocumentSource that keeps what it was sent and answers with empty Documents."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def document(self, content: bytes, key: str) -> Mapping[str, Any]:
        self.sent.append((key, content))
        return {}

    def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("pdf", "kind"),
    [
        (FIXTURES / "damaged" / "empty-upload.pdf", "empty"),
        (FIXTURES / "damaged" / "not-really-a-pdf.pdf", "not_pdf"),
        (FIXTURES / "damaged" / "truncated-transfer.pdf", "broken"),
        (LOCKED, "encrypted"),
        (FIXTURES / "pdfs" / "no-such-file.pdf", "unreadable"),
    ],
)
def test_files_that_fail_locally_are_never_sent(pdf: Path, kind: str) -> None:
    """Empty, non-PDF, damaged, locked and missing files fail as local ingestion does, at no cost."""
    source = Recorder()
    result = failure(DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), source).ingest(pdf))
    assert result.kind == kind
    assert source.sent == []
    local = ingest_pdf(pdf)
    assert isinstance(local, IngestFailure)
    assert local.kind == kind


def test_a_locked_pdf_is_sent_decrypted_with_the_password() -> None:
    """With --password the service gets a decrypted copy (it cannot open a locked file); its text layer counts."""
    source = Recorder()
    docai = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), source)
    bundle = docai.ingest(LOCKED, password=LOCKED_PASSWORD)
    assert isinstance(bundle, DocumentBundle)
    ((key, content),) = source.sent
    assert key == hashlib.sha256(LOCKED.read_bytes()).hexdigest()
    copy = pypdfium2.PdfDocument(content)  # opens without a password
    assert len(copy) == bundle.total_pages
    copy.close()


def test_long_pdfs_are_sent_in_parts_and_numbered_back() -> None:
    """A 30-page PDF with 10 pages per request goes as three 10-page PDFs keyed by page range."""
    source = Recorder()
    pdf = FIXTURES / "pdfs" / "record-30p.pdf"
    bundle = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY, pages_per_request=10), source).ingest(
        pdf
    )
    assert isinstance(bundle, DocumentBundle)
    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    assert [key for key, _ in source.sent] == [f"{sha}.p1-10", f"{sha}.p11-20", f"{sha}.p21-30"]
    for _, content in source.sent:
        part = pypdfium2.PdfDocument(io.BytesIO(content))
        assert len(part) == 10
        part.close()
    assert [p.page_num for p in bundle.pages] == list(range(1, 31))


def test_recorded_parts_replay_into_one_bundle() -> None:
    """record-30p's two recorded 15-page parts become one 30-page bundle whose page 16 is part two's page 1."""
    pdf = FIXTURES / "pdfs" / "record-30p.pdf"
    bundle = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), ReplaySource(REPLAY)).ingest(pdf)
    assert isinstance(bundle, DocumentBundle)
    local = ingest_pdf(pdf)
    assert isinstance(local, DocumentBundle)
    assert bundle.pages[15].page_num == 16
    assert bundle.pages[15].text == local.pages[15].text


def test_a_request_over_the_size_limit_is_never_sent() -> None:
    """A PDF (or part) larger than max_request_bytes fails as too_large and names the setting to lower."""
    source = Recorder()
    result = failure(
        DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY, max_request_bytes=1000), source).ingest(PDF)
    )
    assert result.kind == "too_large"
    assert "ARBITER_DOCUMENTAI_PAGES_PER_REQUEST" in result.message
    assert source.sent == []


def test_bundle_cache_and_skip_key_are_keyed_on_the_extractor(tmp_path: Path) -> None:
    """A bundle cached by one extractor is not served to a pipeline using another, and skip keys differ."""
    cache = BundleCache(tmp_path / "cache")
    local = ingest_pdf(PDF)
    assert isinstance(local, DocumentBundle)
    docai_extractor = Extractor(name="documentai", version=local.extractor.version)  # same version string
    calls: list[str] = []

    def ingest(path: Path, doc_id: str) -> IngestResult:
        calls.append(doc_id)
        return local.model_copy(update={"extractor": docai_extractor})

    def pipeline(extractor: Extractor | None) -> Pipeline:
        return Pipeline(
            profile=load_profile(),
            classifier=get_classifier("file", classifications_dir=FIXTURES / "classifications"),
            store=FileStore(tmp_path / "out"),
            run_id=new_run_id(),
            ingest=ingest,
            cache=cache,
            extractor=extractor,
        )

    cache.put(local)
    sha = local.file_sha256
    assert pipeline(None)._bundle(PDF, "lab-quest-01", sha) == local
    assert calls == []
    assert isinstance(pipeline(docai_extractor)._bundle(PDF, "lab-quest-01", sha), DocumentBundle)
    assert calls == ["lab-quest-01"]
    assert pipeline(None).skip_key("lab-quest-01", sha) != pipeline(docai_extractor).skip_key(
        "lab-quest-01", sha
    )


class EveryPage(Recorder):
    """Answers with one paragraph of text on every page of the PDF it is sent."""

    def document(self, content: bytes, key: str) -> Mapping[str, Any]:
        super().document(content, key)
        pdf = pypdfium2.PdfDocument(content)
        count = len(pdf)
        pdf.close()
        blocks = [
            {
                "pageSpan": {"pageStart": n, "pageEnd": n},
                "textBlock": {"type": "paragraph", "text": f"Read on page {n}"},
            }
            for n in range(1, count + 1)
        ]
        return {"documentLayout": {"blocks": blocks}}


def test_text_on_a_scanned_page_counts_as_ocr_by_the_processor() -> None:
    """The scanned page of packet-07-scanned has no usable text layer; Document AI's text there is OCR."""
    bundle = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), EveryPage()).ingest(
        FIXTURES / "pdfs" / "packet-07-scanned.pdf"
    )
    assert isinstance(bundle, DocumentBundle)
    scanned, typed = bundle.pages[3], bundle.pages[0]
    assert (scanned.has_text_layer, scanned.ocr_applied, scanned.ocr_status) == (False, True, "applied")
    assert (typed.has_text_layer, typed.ocr_applied, typed.ocr_status) == (True, False, "not_needed")


class Answers(Recorder):
    """Answers every request with the given payload, unwrapped as the live source unwraps it."""

    def __init__(self, payload: Any) -> None:
        super().__init__()
        self.payload = payload

    def document(self, content: bytes, key: str) -> Mapping[str, Any]:
        super().document(content, key)
        return document_of(self.payload)


_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_FIELDS), inner, max_size=4),
    max_leaves=25,
)


@given(payload=_ANY_JSON)
def test_any_response_becomes_a_bundle_or_an_input_failure(payload: Any) -> None:
    """Whatever JSON the service answers, the document gets a bundle or an IngestFailure; nothing is raised."""
    result = DocumentAIIngestor(DocumentAISettings(replay_dir=REPLAY), Answers(payload)).ingest(PDF)
    if isinstance(result, IngestFailure):
        assert result.kind == "extractor_failed"
        assert "Google Document AI returned a response Arbiter cannot read" in result.message
    else:
        assert result.total_pages == len(result.pages) == 2
