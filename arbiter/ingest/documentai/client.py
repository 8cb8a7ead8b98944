"""Google Document AI through Google's own client (google-cloud-documentai), and recorded responses.

    DocumentAIError(kind, message)   every way getting a Document can fail; the document then becomes
                                     an input failure with this kind and plain-English message

`DocumentProcessorServiceClient` does the call: Application Default Credentials (found once, refreshed
by google-auth), the regional endpoint `{location}-documentai.googleapis.com`, the request and response
types, the per-attempt timeout. It uses the REST transport, the same JSON the REST reference documents
and recordings hold, through an HTTP/1.1 proxy where gRPC may not pass. Arbiter plugs into the library's
own `retry=` slot the shared policy of arbiter.net.retry instead of the library's default, because that
default (measured on google-cloud-documentai 3.16.0 / google-api-core 2.44.0): retries only
DeadlineExceeded, ResourceExhausted and ServiceUnavailable, so a REST 429 (TooManyRequests) and a 500
are not retried; waits up to 90 s between attempts within a 300 s deadline, longer than a document's
whole bound; ignores the server's Retry-After and RetryInfo delays; and has no hook for the run's rate
limiter, which must be asked before every attempt. Like every real request, a call refuses to go out
while the network switch (arbiter.net.switch) is off, as it is for the whole test session.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

import google.auth
import requests
from google.api_core import exceptions as api_exceptions
from google.api_core import retry as retries
from google.api_core.client_options import ClientOptions
from google.api_core.timeout import ConstantTimeout
from google.auth.exceptions import DefaultCredentialsError, GoogleAuthError
from google.cloud import documentai
from google.protobuf import json_format

from arbiter import atomic
from arbiter.errors import ServiceError
from arbiter.ingest.documentai.mapping import document_of
from arbiter.ingest.documentai.proto import CanonicalDocument, canonical_of_message, error_path, merge_shards
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.net import google as google_errors
from arbiter.net.limiter import RateLimiter
from arbiter.net.retry import Retryable, RetryPolicy, call_with_retries, retry_after_s
from arbiter.net.switch import require_network

log = logging.getLogger(__name__)

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
ErrorKind = Literal[
    "extractor_failed", "timeout", "too_large"
]  # the IngestFailure kinds a request can end in
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

ServiceFactory = Callable[[DocumentAISettings, Any], documentai.DocumentProcessorServiceClient]


class DocumentAIError(ServiceError):
    """No Document for this PDF. `message` is plain English about the service, never the document's text."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


def _offline(message: str) -> DocumentAIError:
    return DocumentAIError("extractor_failed", message)


def load_credentials() -> Any:
    """Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file or the metadata
    server; DocumentAIError when there are none."""
    try:
        credentials, _project = google.auth.default(scopes=SCOPES)
    except DefaultCredentialsError:
        raise DocumentAIError(
            "extractor_failed",
            "No Google credentials were found for Document AI: set GOOGLE_APPLICATION_CREDENTIALS to "
            "a service account key file, or run `gcloud auth application-default login`.",
        ) from None
    return credentials


def service_client(
    settings: DocumentAISettings, credentials: Any
) -> documentai.DocumentProcessorServiceClient:
    """Google's client for the processor's regional endpoint, over REST, with these credentials."""
    return documentai.DocumentProcessorServiceClient(
        credentials=credentials,
        transport="rest",
        client_options=ClientOptions(api_endpoint=settings.host),
    )


class DocumentAIClient:
    """One processor's `process_document`, answering the official ProcessResponse message."""

    def __init__(
        self,
        settings: DocumentAISettings,
        *,
        credentials: Any = None,
        service: ServiceFactory = service_client,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if settings.processor is None:
            raise ValueError("a live Document AI client needs a processor")
        self.settings = settings
        self.credentials = credentials
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.limiter = RateLimiter(settings.rpm) if settings.rpm > 0 else None
        self._make_service = service
        self._service: documentai.DocumentProcessorServiceClient | None = None
        self._lock = threading.Lock()

    def request(self, content: bytes) -> documentai.ProcessRequest:
        """The ProcessRequest for one PDF (public so tests can read its shape)."""
        request = documentai.ProcessRequest(
            name=self.settings.processor,
            raw_document=documentai.RawDocument(content=content, mime_type="application/pdf"),
            skip_human_review=True,
        )
        if self.settings.processor_type == "layout":
            request.process_options = documentai.ProcessOptions(
                layout_config=documentai.ProcessOptions.LayoutConfig(return_bounding_boxes=True)
            )
        return request

    def process(self, content: bytes, *, label: str = "") -> documentai.ProcessResponse:
        """The ProcessResponse for one PDF; DocumentAIError when there is none after the retries."""
        require_network("Google Document AI", _offline)
        request = self.request(content)
        try:
            return self.service().process_document(
                request=request,
                retry=PolicyRetry(self, label),
                # each attempt's own timeout, not one deadline shared by all attempts (the library's default)
                timeout=ConstantTimeout(self.settings.timeout_s),  # type: ignore[no-untyped-call]
            )
        except DocumentAIError:
            raise
        except Exception as exc:  # anything the library raised outside an attempt
            failure = self.failure_of(exc)
            raise (failure.error if isinstance(failure, Retryable) else failure) from None

    def service(self) -> documentai.DocumentProcessorServiceClient:
        """Google's client, built on first use (credentials are looked up then, never at import)."""
        with self._lock:
            if self._service is None:
                try:
                    credentials = self.credentials if self.credentials is not None else load_credentials()
                    self._service = self._make_service(self.settings, credentials)
                except DocumentAIError:
                    raise
                except (GoogleAuthError, ValueError) as exc:
                    raise self.failure_of(exc) from None
            return self._service

    def close(self) -> None:
        with self._lock:
            if self._service is not None:
                self._service.transport.close()  # type: ignore[no-untyped-call]
                self._service = None

    def failure_of(self, exc: BaseException) -> DocumentAIError | Retryable:
        """What one attempt's exception means: a Retryable carrying the error, or the error itself."""
        attempts = self.retry.attempts
        if isinstance(exc, DocumentAIError | Retryable):
            return exc
        if isinstance(exc, requests.Timeout):
            return Retryable(
                DocumentAIError(
                    "timeout",
                    f"Google Document AI did not answer within {self.settings.timeout_s:g} s, after "
                    f"{attempts} attempts.",
                )
            )
        if isinstance(exc, requests.ConnectionError):
            return Retryable(
                DocumentAIError(
                    "extractor_failed",
                    f"Could not reach Google Document AI at {self.settings.host} ({type(exc).__name__}), "
                    f"after {attempts} attempts.",
                )
            )
        if isinstance(exc, GoogleAuthError):
            return DocumentAIError(
                "extractor_failed",
                f"The Google credentials could not be used for Document AI ({type(exc).__name__}); check "
                "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` again.",
            )
        if isinstance(exc, api_exceptions.GoogleAPICallError):
            return self._refusal(exc)
        if isinstance(exc, json_format.ParseError):
            return DocumentAIError("extractor_failed", _unparsable(str(exc)))
        return DocumentAIError(
            "extractor_failed",
            f"The call to Google Document AI failed unexpectedly ({type(exc).__name__}).",
        )

    def _refusal(self, exc: api_exceptions.GoogleAPICallError) -> DocumentAIError | Retryable:
        status = exc.code if isinstance(exc.code, int) else 0
        response = exc.response
        body: Any = None
        if isinstance(response, requests.Response):
            try:
                body = response.json()
            except ValueError:
                body = None
        detail = google_errors.body_summary(body)
        if status in _RETRY_STATUSES:
            headers = response.headers if isinstance(response, requests.Response) else {}
            wait = retry_after_s(headers.get("retry-after"))
            if wait is None:
                wait = google_errors.retry_delay_s(body)
            return Retryable(
                DocumentAIError(
                    "extractor_failed",
                    f"Google Document AI kept failing (HTTP {status}{detail}) after {self.retry.attempts} "
                    "attempts"
                    + ("; lower ARBITER_DOCUMENTAI_RPM or try again later." if status == 429 else "."),
                ),
                wait,
            )
        if status == 401:
            message = (
                f"Google Document AI refused the credentials (HTTP 401{detail}); check "
                "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` again."
            )
        elif status == 403:
            message = (
                f"Google Document AI denied access (HTTP 403{detail}); the account needs the Document AI API "
                "User role on the processor's project, and the Document AI API must be enabled there."
            )
        elif status == 404:
            message = (
                f"Google Document AI has no processor {self.settings.processor} (HTTP 404{detail}); check "
                "ARBITER_DOCUMENTAI_PROCESSOR and its location."
            )
        else:
            message = f"Google Document AI rejected the PDF (HTTP {status}{detail})."
        return DocumentAIError("extractor_failed", message)


class PolicyRetry(retries.Retry):
    """The library's retry slot filled with arbiter.net.retry's policy: each attempt (the library's own HTTP
    call, under its timeout) is tried again on 429, 5xx, timeouts and connection errors, after the
    server's delay when it gives one, with the run's rate limiter asked before every attempt."""

    def __init__(self, client: DocumentAIClient, label: str) -> None:
        super().__init__()
        self._client = client
        self._label = label

    def __call__(
        self, func: Callable[..., Any], on_error: Callable[..., Any] | None = None
    ) -> Callable[..., Any]:
        client = self._client

        def once(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                raise client.failure_of(exc) from None

        def retried(*args: Any, **kwargs: Any) -> Any:
            return call_with_retries(
                lambda: once(*args, **kwargs),
                client.retry,
                sleep=client.sleep,
                rng=client.rng,
                before_attempt=client.limiter.acquire if client.limiter is not None else None,
                label=f"documentai {self._label}",
            )

        return retried


def _unparsable(message: str) -> str:
    """Why the library could not parse an answer, from protobuf's ParseError: the field's path, never a value."""
    if message.startswith("Failed to load JSON"):
        return "Google Document AI answered with something that is not JSON."
    path = error_path(message)
    if path == "document" or path.startswith("document."):
        where = path.removeprefix("document").removeprefix(".") or "document"
        return (
            f"Google Document AI returned a response Arbiter cannot read ({where} does not fit a Document)."
        )
    return "Google Document AI answered with an unexpected response shape (not a ProcessResponse)."


def response_json(response: documentai.ProcessResponse) -> dict[str, Any]:
    """A ProcessResponse as the REST API writes it (lowerCamelCase JSON), for recordings."""
    return dict(json_format.MessageToDict(documentai.ProcessResponse.pb(response)))


class DocumentSource(Protocol):
    """Where Documents come from: the live processor, or recordings. `key` names the PDF (and page range)."""

    def document(self, content: bytes, key: str) -> Mapping[str, Any]: ...

    def close(self) -> None: ...


class LiveSource:
    """The processor itself; with `record_dir`, each response is also written there as `<key>.json`."""

    def __init__(self, client: DocumentAIClient, record_dir: Path | None = None) -> None:
        self.client = client
        self.record_dir = record_dir

    def document(self, content: bytes, key: str) -> CanonicalDocument:
        response = self.client.process(content, label=key[:12])
        if self.record_dir is not None:
            atomic.write_json(self.record_dir / f"{key}.json", response_json(response))
        return canonical_of_message(documentai.Document.pb(response.document))

    def close(self) -> None:
        self.client.close()


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
