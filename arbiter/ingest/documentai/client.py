"""Google Document AI over REST: a processor's `:process` method called with httpx, and recorded responses.

    DocumentAIError(kind, message)   every way getting a Document can fail; the document then becomes
                                     an input failure with this kind and plain-English message

Requests carry the PDF inline (`rawDocument`, base64) and an OAuth token from Application Default
Credentials (google.auth.default). Transport retries (429, 5xx, timeouts, connection errors) back off
with jitter; other HTTP errors fail at once. Like every real backend, the client refuses to call out
while the network switch (arbiter.llm.network) is off, as it is for the whole test session.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx

from arbiter import atomic
from arbiter.ingest.documentai.mapping import document_of
from arbiter.ingest.documentai.proto import merge_shards
from arbiter.ingest.documentai.settings import DocumentAISettings
from arbiter.net.limiter import RateLimiter
from arbiter.net.retry import RetryPolicy
from arbiter.net.switch import NetworkDisabled, require_network

log = logging.getLogger(__name__)

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
ErrorKind = Literal[
    "extractor_failed", "timeout", "too_large"
]  # the IngestFailure kinds a request can end in
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class DocumentAIError(Exception):
    """No Document for this PDF. `message` is plain English about the service, never the document's text."""

    def __init__(self, kind: ErrorKind, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.retry_after_s = retry_after_s


class Authorizer(Protocol):
    """Adds credentials to a request's headers (refreshing them first when needed)."""

    def authorize(self, headers: dict[str, str], url: str) -> None: ...


class GoogleAuthorizer:
    """Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file or the metadata
    server, found once and refreshed when they expire (one thread at a time)."""

    def __init__(self, credentials: Any = None) -> None:
        self._credentials = credentials
        self._request: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """The credentials, found on first use; DocumentAIError when there are none."""
        with self._lock:
            return self._load()

    def _load(self) -> Any:
        if self._credentials is None:
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                self._credentials, _project = google.auth.default(scopes=SCOPES)
            except DefaultCredentialsError:
                raise DocumentAIError(
                    "extractor_failed",
                    "No Google credentials were found for Document AI: set GOOGLE_APPLICATION_CREDENTIALS to "
                    "a service account key file, or run `gcloud auth application-default login`.",
                ) from None
        return self._credentials

    def authorize(self, headers: dict[str, str], url: str) -> None:
        from google.auth.exceptions import GoogleAuthError
        from google.auth.transport.requests import Request

        with self._lock:
            credentials = self._load()
            if self._request is None:
                self._request = Request()
            try:
                credentials.before_request(self._request, "POST", url, headers)
            except GoogleAuthError as exc:
                raise DocumentAIError(
                    "extractor_failed",
                    f"The Google credentials could not be used for Document AI ({type(exc).__name__}); check "
                    "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` again.",
                ) from None


class _Retryable(Exception):
    def __init__(self, error: DocumentAIError) -> None:
        super().__init__(error.message)
        self.error = error


class DocumentAIClient:
    """POST {location}-documentai.googleapis.com/v1/{processor}:process; answers the ProcessResponse JSON."""

    def __init__(
        self,
        settings: DocumentAISettings,
        *,
        authorizer: Authorizer | None = None,
        http_client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if settings.processor is None:
            raise ValueError("a live Document AI client needs a processor")
        self.settings = settings
        self.url = settings.endpoint
        self.authorizer = authorizer or GoogleAuthorizer()
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.limiter = RateLimiter(settings.rpm) if settings.rpm > 0 else None
        self._client = http_client
        self._owns_client = http_client is None
        self._client_lock = threading.Lock()

    def request_body(self, content: bytes) -> dict[str, Any]:
        """The ProcessRequest for one PDF (public so tests can read its shape)."""
        body: dict[str, Any] = {
            "rawDocument": {
                "content": base64.b64encode(content).decode("ascii"),
                "mimeType": "application/pdf",
            },
            "skipHumanReview": True,
        }
        if self.settings.processor_type == "layout":
            body["processOptions"] = {"layoutConfig": {"returnBoundingBoxes": True}}
        return body

    def process(self, content: bytes, *, label: str = "") -> dict[str, Any]:
        """The ProcessResponse for one PDF; DocumentAIError when there is none after the retries."""
        try:
            require_network("Google Document AI")
        except NetworkDisabled as exc:
            raise DocumentAIError("extractor_failed", exc.message) from None
        body = self.request_body(content)
        for attempt in range(1, self.retry.attempts + 1):
            if self.limiter is not None:
                self.limiter.acquire()
            try:
                return self._post(body)
            except _Retryable as failure:
                wait = failure.error.retry_after_s
                if attempt >= self.retry.attempts or (
                    wait is not None and wait > self.retry.max_retry_after_s
                ):
                    log.warning("documentai: giving up on %s after %d attempt(s)", label, attempt)
                    raise failure.error from None
                delay = wait if wait is not None else self.retry.backoff(attempt, self.rng)
                log.info("documentai: retry %s attempt=%d delay_s=%.2f", label, attempt, delay)
                self.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=httpx.Timeout(self.settings.timeout_s))
            return self._client

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        self.authorizer.authorize(headers, self.url)
        timeout = self.settings.timeout_s
        try:
            response = self._http().post(self.url, json=body, headers=headers, timeout=httpx.Timeout(timeout))
        except httpx.TimeoutException:
            raise _Retryable(
                DocumentAIError(
                    "timeout",
                    f"Google Document AI did not answer within {timeout:g} s, after {self.retry.attempts} attempts.",
                )
            ) from None
        except httpx.TransportError as exc:
            raise _Retryable(
                DocumentAIError(
                    "extractor_failed",
                    f"Could not reach Google Document AI at {httpx.URL(self.url).host} ({type(exc).__name__}), "
                    f"after {self.retry.attempts} attempts.",
                )
            ) from None
        status = response.status_code
        if status in _RETRY_STATUSES:
            wait = _retry_after(response)
            raise _Retryable(
                DocumentAIError(
                    "extractor_failed",
                    f"Google Document AI kept failing (HTTP {status}{_google_error(response)}) after "
                    f"{self.retry.attempts} attempts"
                    + ("; lower ARBITER_DOCUMENTAI_RPM or try again later." if status == 429 else "."),
                    retry_after_s=wait,
                )
            )
        if status >= 400:
            raise DocumentAIError("extractor_failed", self._refusal(status, response))
        try:
            payload = response.json()
        except ValueError:
            raise DocumentAIError(
                "extractor_failed", "Google Document AI answered with something that is not JSON."
            ) from None
        if not isinstance(payload, dict):
            raise DocumentAIError(
                "extractor_failed", "Google Document AI answered with an unexpected response shape."
            )
        return payload

    def _refusal(self, status: int, response: httpx.Response) -> str:
        detail = _google_error(response)
        if status == 401:
            return (
                f"Google Document AI refused the credentials (HTTP 401{detail}); check "
                "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` again."
            )
        if status == 403:
            return (
                f"Google Document AI denied access (HTTP 403{detail}); the account needs the Document AI API "
                "User role on the processor's project, and the Document AI API must be enabled there."
            )
        if status == 404:
            return (
                f"Google Document AI has no processor {self.settings.processor} (HTTP 404{detail}); check "
                "ARBITER_DOCUMENTAI_PROCESSOR and its location."
            )
        return f"Google Document AI rejected the PDF (HTTP {status}{detail})."


def _google_error(response: httpx.Response) -> str:
    """ " STATUS: message" from a Google error body ({"error": {"status", "message"}}), shortened; or ""."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    status = error.get("status") if isinstance(error.get("status"), str) else ""
    message = " ".join(str(error.get("message") or "").split())
    if len(message) > 200:
        message = message[:199] + "…"
    found = ": ".join(part for part in (status, message) if part)
    return f" {found}" if found else ""


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class DocumentSource(Protocol):
    """Where Documents come from: the live processor, or recordings. `key` names the PDF (and page range)."""

    def document(self, content: bytes, key: str) -> Mapping[str, Any]: ...

    def close(self) -> None: ...


class LiveSource:
    """The processor itself; with `record_dir`, each response is also written there as `<key>.json`."""

    def __init__(self, client: DocumentAIClient, record_dir: Path | None = None) -> None:
        self.client = client
        self.record_dir = record_dir

    def document(self, content: bytes, key: str) -> Mapping[str, Any]:
        payload = self.client.process(content, label=key[:12])
        if self.record_dir is not None:
            atomic.write_json(self.record_dir / f"{key}.json", payload)
        return document_of(payload)

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
            f"No recorded Document AI response for this PDF ({key[:12]}…) in {self.replay_dir}. Record "
            f"one by running with a live processor and ARBITER_DOCUMENTAI_RECORD_DIR={self.replay_dir}.",
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
