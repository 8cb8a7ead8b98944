"""Fakes for the runner, policy, auto-fix and governor tests: scripted verifiers, issue builders, a tiny bundle."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import (
    DocumentBundle,
    Extractor,
    Issue,
    Page,
    Severity,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import Profile, load_profile
from arbiter.verifiers.base import Subject, VerifyContext

NAMES = ("V1", "V2", "V3", "V4")

IssueScript = Callable[[Any], list[Issue]]


def bundle(doc_id: str = "doc-1", pages: int = 2) -> DocumentBundle:
    """A small document: every page has a little text."""
    return DocumentBundle(
        doc_id=doc_id,
        file_path=f"{doc_id}.pdf",
        file_sha256="0" * 64,
        total_pages=pages,
        pages=[Page(page_num=n, text=f"Page {n} text.") for n in range(1, pages + 1)],
        extractor=Extractor(name="fake", version="0"),
        processing_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


def subject(data: Any = None) -> Subject:
    """A Subject for data that is JSON (the model is not needed by the fakes)."""
    data = {"x": 0} if data is None else data
    return Subject(raw=json.dumps(data), data=data)


def tiny_loader(raw: str | bytes) -> Subject:
    """Parse JSON only; no schema. Keeps governor tests independent of the real schema."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        return Subject(raw=text, data=json.loads(text))
    except ValueError:
        return Subject(raw=text, parse_error="not JSON")


_counter = iter(range(1, 1_000_000))


def issue(
    verifier: str,
    severity: Severity = Severity.MAJOR,
    *,
    fix: list[dict[str, Any]] | None = None,
    message: str = "Something is wrong on page 1.",
    code: str | None = None,
) -> Issue:
    """One issue; fixable exactly when a fix is given."""
    return Issue(
        issue_id=f"{verifier}-{next(_counter):04d}",
        code=code or f"{verifier}.FAKE_{severity}",
        verifier=verifier,
        severity=severity,
        message=message,
        auto_fixable=fix is not None,
        fix=fix,
    )


def replace(verifier: str, path: str, value: Any, **kwargs: Any) -> Issue:
    """A fixable MAJOR issue whose fix replaces `path` with `value`."""
    return issue(verifier, fix=[{"op": "replace", "path": path, "value": value}], **kwargs)


def result(name: str, issues: Sequence[Issue] = (), status: VerifierStatus | None = None) -> VerifierResult:
    if status is None:
        status = VerifierStatus.FAILED if issues else VerifierStatus.PASSED
    return VerifierResult(verifier=name, version="test", status=status, issues=list(issues))


@dataclass
class FakeVerifier:
    """Reports canned issues: `script` is a list (one issue list per call, the last repeating) or a function
    of the subject's data. Records the data it was called with."""

    name: str
    script: list[list[Issue]] | IssueScript = field(default_factory=list)
    version: str = "test"
    output_file: str = "fake.json"
    calls: list[Any] = field(default_factory=list)

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        self.calls.append(subject.data)
        if callable(self.script):
            found = self.script(subject.data)
        elif self.script:
            found = self.script[min(len(self.calls), len(self.script)) - 1]
        else:
            found = []
        return result(self.name, found)


@dataclass
class CrashingVerifier:
    """Raises with a message that quotes patient text, as a careless verifier might."""

    name: str = "V3"
    version: str = "test"
    output_file: str = "crash.json"
    error: type[Exception] = KeyError

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        raise self.error("Patient Jane Doe, DOB 01/02/1950")


@dataclass
class GatedVerifier:
    """Passes after optional hand-offs with other verifiers, with no sleeping: it meets `barrier` (proving
    it ran alongside another), waits until `after` has finished, then runs `work`. Records the thread it
    ran on, and appends its name to `finished` when done (the order the verifiers ended in)."""

    name: str
    barrier: threading.Barrier | None = None
    after: GatedVerifier | None = None
    work: Callable[[], None] | None = None
    finished: list[str] = field(default_factory=list)
    version: str = "test"
    output_file: str = "gated.json"
    threads: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        self.threads.append(threading.current_thread().name)
        if self.barrier is not None:
            self.barrier.wait(timeout=5)
        if self.after is not None and not self.after.done.wait(timeout=5):
            raise TimeoutError(f"{self.after.name} never finished")
        if self.work is not None:
            self.work()
        self.finished.append(self.name)
        self.done.set()
        return result(self.name)


def fakes(**scripts: list[list[Issue]] | IssueScript) -> list[FakeVerifier]:
    """V1..V4 fakes that pass, except those given a script by name: fakes(V2=[[...]])."""
    return [FakeVerifier(name, scripts.get(name, [])) for name in NAMES]


def profile_with(**changes: Any) -> Profile:
    """The default profile with top-level sections changed, e.g. profile_with(retry={"max_retries": 1})."""
    data = load_profile().model_dump()
    for section, value in changes.items():
        if isinstance(value, dict) and isinstance(data.get(section), dict):
            data[section] = {**data[section], **value}
        else:
            data[section] = value
    return Profile.model_validate(data)


def rules_profile(rules: list[dict[str, Any]], **arbiter: Any) -> Profile:
    """The default profile with its arbiter rules replaced (the escalating fallback is appended)."""
    fallback = {"name": "safety_fallback", "when": {}, "decision": "ESCALATE_TO_SME", "reason": "Fallback."}
    return profile_with(arbiter={"rules": [*rules, fallback], **arbiter})
