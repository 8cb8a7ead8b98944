"""Where verifiers run: on the caller's thread for rules-only checks, concurrently when a model is involved."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from arbiter.contracts import DocumentBundle, VerifierResult
from arbiter.contracts.profile import Profile, load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.ingest import ingest_pdf
from arbiter.verifiers.base import IssueList, Subject, VerifyContext, result
from tests.conftest import FIXTURES


@dataclass
class ThreadSpy:
    name: str
    version: str = "1"
    output_file: str = "spy.json"
    threads: set[str] = field(default_factory=set)

    def verify(
        self, subject: Subject, bundle: DocumentBundle, profile: Profile, context: VerifyContext
    ) -> VerifierResult:
        self.threads.add(threading.current_thread().name)
        return result(self, IssueList(self.name))


def spies() -> list[ThreadSpy]:
    return [ThreadSpy(name) for name in ("V1", "V2", "V3", "V4")]


def test_rules_only_checks_run_on_the_callers_thread() -> None:
    """Without an LLM, V1–V4 run one after another on the calling thread (no thread start-up cost)."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    bundle = ingest_pdf(pdf)
    assert isinstance(bundle, DocumentBundle)
    checks = spies()
    verify_with_retries(
        (FIXTURES / "classifications" / f"{pdf.stem}.json").read_bytes(),
        bundle,
        load_profile(),
        verifiers=checks,
    )
    assert {t for spy in checks for t in spy.threads} == {threading.current_thread().name}


def test_checks_with_a_model_run_concurrently() -> None:
    """With an LLM in the context, V1–V4 run on pool threads so their model calls overlap."""
    pdf = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]
    bundle = ingest_pdf(pdf)
    assert isinstance(bundle, DocumentBundle)
    checks = spies()
    verify_with_retries(
        (FIXTURES / "classifications" / f"{pdf.stem}.json").read_bytes(),
        bundle,
        load_profile(),
        verifiers=checks,
        context=VerifyContext(llm=object()),
    )
    assert threading.current_thread().name not in {t for spy in checks for t in spy.threads}
