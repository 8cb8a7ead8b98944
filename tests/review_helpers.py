"""Shared helpers for the review-app tests: a SQLite store seeded by running the real pipeline over
fixture PDFs with the demo classifications, plus accounts, and an AppTest wired to that store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.classify import get_classifier
from arbiter.classify.production import load_production
from arbiter.contracts import DocumentRecord
from arbiter.contracts.profile import Sampling, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.record.mirrors import FileStore
from arbiter.review.settings import ENV_AUTH, ENV_DB, ENV_DOCS, ENV_OUTPUT
from arbiter.run.document import Pipeline
from arbiter.store import Store

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
PDFS = FIXTURES / "pdfs"
APP = REPO / "review_app" / "app.py"
PASSWORD = "correct-horse-9"
# Escalated by the demo classifications: a blocker, a schema failure, a non-fixable major; one accepted.
ESCALATED = ("admin-requisition-03", "path-breast-02", "note-injection-03", "gen-guardant-02")
ACCEPTED = ("gen-foundation-01",)


class _Capture(FileStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.records: list[DocumentRecord] = []

    def save(self, record: DocumentRecord) -> None:
        super().save(record)
        self.records.append(record)


def run_fixtures(
    out_dir: Path,
    doc_ids: tuple[str, ...] = ESCALATED + ACCEPTED,
    *,
    sample_all: bool = False,
    pdfs: Path = PDFS,
    classifications: Path = FIXTURES / "demo",
    production: Path = FIXTURES / "production.csv",
) -> list[DocumentRecord]:
    """Verify fixture PDFs with the demo classifications; bundles land under out_dir/bundles. Blind samples
    are off (the queue holds exactly the escalations), or every document is sampled with sample_all."""
    capture = _Capture(out_dir)
    share = 1.0 if sample_all else 0.0
    profile = load_profile()
    profile = profile.model_copy(update={"sampling": Sampling(audit_share=share, second_review_share=share)})
    pipeline = Pipeline(
        profile=profile,
        classifier=get_classifier("file", classifications_dir=classifications, llm=None),
        store=capture,
        run_id="run-review-test",
        ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
        production=load_production(production),
    )
    for doc_id in doc_ids:
        pipeline.process(pdfs / f"{doc_id}.pdf", doc_id, force=True)
    return capture.records


@dataclass
class Seeded:
    store: Store
    url: str
    out_dir: Path
    records: list[DocumentRecord]
    docs: Path = PDFS

    def packet_id(self, doc_id: str) -> str:
        record = next(r for r in self.records if r.doc_id == doc_id)
        assert record.packet is not None
        return record.packet.packet_id

    def env(self) -> dict[str, str]:
        return {ENV_DB: self.url, ENV_DOCS: str(self.docs), ENV_OUTPUT: str(self.out_dir), ENV_AUTH: "local"}


def seed(
    tmp_path: Path, doc_ids: tuple[str, ...] = ESCALATED + ACCEPTED, *, sample_all: bool = False
) -> Seeded:
    """A migrated SQLite store holding the fixtures' packets and ground truth, and four accounts."""
    out_dir = tmp_path / "output"
    url = f"sqlite:///{tmp_path / 'arbiter.db'}"
    store = Store(url)
    store.migrate()
    records = run_fixtures(out_dir, doc_ids, sample_all=sample_all)
    for record in records:
        store.records.record(record)
    store.users.add("alice", "reviewer", PASSWORD)
    store.users.add("bob", "reviewer", PASSWORD)
    store.users.add("root", "admin", PASSWORD)
    store.users.add("proxied", "reviewer", None)
    return Seeded(store, url, out_dir, records)


# A file name and a production answer written as Markdown: an image, a link, emphasis, a heading, a colour.
HOSTILE_NAME = "![f](f.png) [l](l) _x_ #1 :blue[r]"
HOSTILE_TYPE = "![p](http://127.0.0.1:{port}/x.png)"


def seed_hostile(tmp_path: Path, port: int = 9) -> Seeded:
    """Like seed(), plus one escalated document whose PDF file name and production dominant_type are Markdown
    (an image whose URL points at 127.0.0.1:`port`); the app's documents folder holds it and the fixtures."""
    import csv
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(PDFS, docs)
    source = "admin-requisition-03"
    shutil.copy(PDFS / f"{source}.pdf", docs / f"{HOSTILE_NAME}.pdf")
    classifications = tmp_path / "classifications"
    shutil.copytree(FIXTURES / "demo", classifications)
    shutil.copy(FIXTURES / "demo" / f"{source}.json", classifications / f"{HOSTILE_NAME}.json")
    production = tmp_path / "production.csv"
    with production.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "dominant_type"])
        writer.writerow([HOSTILE_NAME, HOSTILE_TYPE.format(port=port)])
    data = seed(tmp_path)
    for record in run_fixtures(
        data.out_dir, (HOSTILE_NAME,), pdfs=docs, classifications=classifications, production=production
    ):
        data.store.records.record(record)
        data.records.append(record)
    data.docs = docs
    return data


@contextmanager
def app_pointed(data: Seeded, monkeypatch: Any) -> Iterator[Seeded]:
    """The app pointed at `data`'s store; Streamlit's and the documents' caches emptied around the block."""
    import streamlit as st

    from arbiter.review import documents

    for key, value in data.env().items():
        monkeypatch.setenv(key, value)
    st.cache_resource.clear()
    st.cache_data.clear()
    documents.clear_cache()
    try:
        yield data
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()


@contextmanager
def app_on(tmp_path: Path, monkeypatch: Any, *, sample_all: bool = False) -> Iterator[Seeded]:
    """A fresh seeded store with the app pointed at it (app_pointed), the store disposed after the block."""
    data = seed(tmp_path, sample_all=sample_all)
    try:
        with app_pointed(data, monkeypatch):
            yield data
    finally:
        data.store.dispose()


def app_test(timeout: float = 30) -> Any:
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(APP), default_timeout=timeout)


def sign_in(at: Any, name: str = "alice", password: str = PASSWORD) -> Any:
    """Run the app and sign in through the form."""
    at.run()
    at.text_input(key="sign_in_name").input(name)
    at.text_input(key="sign_in_password").input(password)
    at.button[0].click().run()
    if "arbiter_signed_in" in at.session_state:
        at.run()  # the sign-in page ends with st.rerun(); show what the next run shows
    return at
