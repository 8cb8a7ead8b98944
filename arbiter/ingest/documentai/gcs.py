"""The four Cloud Storage calls batch processing needs, on the JSON API through google-auth's session.

    upload(name, data)    POST   /upload/storage/v1/b/BUCKET/o?uploadType=media&name=NAME
    names(prefix)         GET    /storage/v1/b/BUCKET/o?prefix=PREFIX  (every page of the listing)
    download(name)        GET    /storage/v1/b/BUCKET/o/NAME?alt=media
    delete(name)          DELETE /storage/v1/b/BUCKET/o/NAME

That is all Arbiter asks of Cloud Storage, so it needs neither google-cloud-storage nor gcsfs: the
requests go through `google.auth.transport.requests.AuthorizedSession` (google-auth[requests] is already a
dependency) with the credentials Document AI uses, each attempt under the same timeout, retry policy and
network switch as the processor's calls. Every object name is checked to lie inside the configured
bucket and prefix, and no error quotes an object's content.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import requests
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.requests import AuthorizedSession

from arbiter.ingest.documentai.client import DocumentAIError
from arbiter.net import google as google_errors
from arbiter.net.retry import Retryable, RetryPolicy, call_with_retries, retry_after_s
from arbiter.net.switch import require_network

API = "https://storage.googleapis.com"
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
MAX_LISTED = 10_000  # objects one listing may name before it is taken as the wrong folder

SessionFactory = Callable[[Any], requests.Session]


def authorized_session(credentials: Any) -> requests.Session:
    """google-auth's requests session: the bearer token applied and refreshed on every request."""
    return AuthorizedSession(credentials)  # type: ignore[no-untyped-call]


class Storage:
    """One bucket, confined to a prefix: every name given or listed must start with it. `credentials` is
    called for the credentials on the first request (the processor's, looked up once)."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        credentials: Callable[[], Any],
        *,
        timeout_s: float = 120.0,
        session: SessionFactory = authorized_session,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.bucket = bucket
        self.prefix = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._credentials = credentials
        self._make_session = session
        self._session: requests.Session | None = None
        self._lock = threading.Lock()

    def uri(self, name: str) -> str:
        return f"gs://{self.bucket}/{self._inside(name)}"

    def upload(self, name: str, data: bytes, content_type: str) -> None:
        url = f"{API}/upload/storage/v1/b/{quote(self.bucket, safe='')}/o"
        params = {"uploadType": "media", "name": self._inside(name)}
        self._call("POST", url, "upload a PDF to", params=params, data=data, content_type=content_type)

    def names(self, prefix: str) -> list[str]:
        """Every object name under `prefix` (which must lie inside the configured one), in listing order."""
        url = f"{API}/storage/v1/b/{quote(self.bucket, safe='')}/o"
        found: list[str] = []
        token: str | None = None
        while True:
            params = {"prefix": self._inside(prefix), "fields": "items(name),nextPageToken"}
            if token:
                params["pageToken"] = token
            page = self._call("GET", url, "list", params=params).json()
            items = page.get("items", []) if isinstance(page, dict) else None
            if not isinstance(items, list):
                raise self._unreadable("list")
            for item in items:
                name = item.get("name") if isinstance(item, dict) else None
                if not isinstance(name, str):
                    raise self._unreadable("list")
                found.append(self._inside(name))
            token = page.get("nextPageToken")
            if not token or len(found) > MAX_LISTED:
                break
        if len(found) > MAX_LISTED:
            raise DocumentAIError(
                "extractor_failed",
                f"Cloud Storage lists more than {MAX_LISTED:,} objects under one batch output folder.",
            )
        return found

    def download(self, name: str) -> bytes:
        url = f"{API}/storage/v1/b/{quote(self.bucket, safe='')}/o/{quote(self._inside(name), safe='')}"
        return self._call("GET", url, "read", params={"alt": "media"}).content

    def delete(self, name: str) -> None:
        url = f"{API}/storage/v1/b/{quote(self.bucket, safe='')}/o/{quote(self._inside(name), safe='')}"
        self._call("DELETE", url, "delete", ok_missing=True)

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def session(self) -> requests.Session:
        with self._lock:
            if self._session is None:
                self._session = self._make_session(self._credentials())
            return self._session

    def _inside(self, name: str) -> str:
        parts = name.split("/")
        if not name.startswith(self.prefix) or any(part in (".", "..") for part in parts):
            raise DocumentAIError(
                "extractor_failed",
                f"A Cloud Storage object outside gs://{self.bucket}/{self.prefix} was named; Arbiter "
                "reads and writes only inside ARBITER_DOCUMENTAI_GCS_URI.",
            )
        return name

    def _unreadable(self, verb: str) -> DocumentAIError:
        return DocumentAIError(
            "extractor_failed",
            f"Cloud Storage answered a request to {verb} objects with an unexpected shape.",
        )

    def _call(
        self,
        method: str,
        url: str,
        verb: str,
        *,
        params: dict[str, str] | None = None,
        data: bytes | None = None,
        content_type: str | None = None,
        ok_missing: bool = False,
    ) -> requests.Response:
        require_network("Google Cloud Storage", lambda message: DocumentAIError("extractor_failed", message))
        session = self.session()
        headers = {"content-type": content_type} if content_type else {}

        def attempt() -> requests.Response:
            try:
                response = session.request(
                    method, url, params=params, data=data, headers=headers, timeout=self.timeout_s
                )
            except requests.Timeout:
                raise Retryable(
                    DocumentAIError(
                        "timeout",
                        f"Google Cloud Storage did not answer within {self.timeout_s:g} s, after "
                        f"{self.retry.attempts} attempts.",
                    )
                ) from None
            except GoogleAuthError as exc:
                raise DocumentAIError(
                    "extractor_failed",
                    f"The Google credentials could not be used for Cloud Storage ({type(exc).__name__}); check "
                    "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` again.",
                ) from None
            except requests.RequestException as exc:
                raise Retryable(
                    DocumentAIError(
                        "extractor_failed",
                        f"Could not reach Google Cloud Storage ({type(exc).__name__}), after "
                        f"{self.retry.attempts} attempts.",
                    )
                ) from None
            if response.ok or (ok_missing and response.status_code == 404):
                return response
            raise self._refusal(response, verb)

        return call_with_retries(
            attempt, self.retry, sleep=self.sleep, rng=self.rng, label=f"gcs {method.lower()}"
        )

    def _refusal(self, response: requests.Response, verb: str) -> DocumentAIError | Retryable:
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        detail = google_errors.body_summary(body)
        where = f"gs://{self.bucket}/{self.prefix}"
        if status in _RETRY_STATUSES:
            wait = retry_after_s(response.headers.get("retry-after"))
            return Retryable(
                DocumentAIError(
                    "extractor_failed",
                    f"Google Cloud Storage kept failing (HTTP {status}{detail}) after {self.retry.attempts} "
                    "attempts.",
                ),
                wait if wait is not None else google_errors.retry_delay_s(body),
            )
        if status in (401, 403):
            message = (
                f"Google Cloud Storage refused to {verb} objects in {where} (HTTP {status}{detail}); the "
                "account needs the Storage Object User role on the bucket, and the processor's Document AI "
                "service agent needs to read and write it too."
            )
        elif status == 404:
            message = (
                f"Google Cloud Storage has no bucket {self.bucket} or no such object (HTTP 404{detail}); "
                "check ARBITER_DOCUMENTAI_GCS_URI."
            )
        else:
            message = f"Google Cloud Storage refused to {verb} objects in {where} (HTTP {status}{detail})."
        return DocumentAIError("extractor_failed", message)
