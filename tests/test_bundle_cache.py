"""The bundle cache (issue 14.9 and 14.10): an entry is served only for the PDF it was extracted from
(sealed with the PDF's hash and the bundle's), --force extracts again, and the bundle of an encrypted PDF
is never served to a run that did not open the PDF with the right password."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from arbiter.classify import get_classifier
from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import load_profile
from arbiter.ingest import IngestResult, ingest_pdf
from arbiter.ingest.cache import BundleCache
from arbiter.record.mirrors import FileStore
from arbiter.run.batch import new_run_id
from arbiter.run.document import Pipeline
from arbiter.run.job import RunOptions, execute
from tests.conftest import FIXTURES

PATHOLOGY = FIXTURES / "pdfs" / "path-breast-02.pdf"
NOTE = FIXTURES / "pdfs" / "note-progress-01.pdf"
LOCKED = FIXTURES / "damaged" / "locked-lab-report.pdf"
RIGHT = "clinic-2026"


def bundle_of(pdf: Path, password: str | None = None) -> DocumentBundle:
    result = ingest_pdf(pdf, doc_id=pdf.stem, password=password)
    assert isinstance(result, DocumentBundle)
    return result


@pytest.fixture(scope="module")
def pathology() -> DocumentBundle:
    return bundle_of(PATHOLOGY)


@pytest.fixture(scope="module")
def note() -> DocumentBundle:
    return bundle_of(NOTE)


def version(bundle: DocumentBundle) -> str:
    return bundle.extractor.version


def test_another_documents_entry_under_this_pdfs_hash_is_not_served(
    tmp_path: Path, pathology: DocumentBundle, note: DocumentBundle
) -> None:
    """A note's cache file copied under the pathology report's hash is a miss."""
    cache = BundleCache(tmp_path)
    cache.put(note)
    target = cache.path_for(pathology.file_sha256, version(pathology))
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(cache.path_for(note.file_sha256, version(note)), target)
    assert cache.get(pathology.file_sha256, version(pathology)) is None


def test_a_relabelled_bundle_is_not_served(
    tmp_path: Path, pathology: DocumentBundle, note: DocumentBundle
) -> None:
    """The note's bundle claiming the pathology report's hash, with the header's content hash recomputed
    (everything but the keyed seal), is a miss; so is an unsealed bundle file (the old format)."""
    cache = BundleCache(tmp_path)
    cache.put(pathology)
    path = cache.path_for(pathology.file_sha256, version(pathology))
    head, _, _ = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    forged = note.model_copy(update={"file_sha256": pathology.file_sha256}).model_dump_json().encode()
    header["bundle_sha256"] = hashlib.sha256(forged).hexdigest()
    path.write_bytes(json.dumps(header).encode() + b"\n" + forged)
    assert cache.get(pathology.file_sha256, version(pathology)) is None
    path.write_bytes(forged)
    assert cache.get(pathology.file_sha256, version(pathology)) is None


def test_an_edited_bundle_is_not_served(tmp_path: Path, pathology: DocumentBundle) -> None:
    """Any byte of the bundle changed after it was sealed: a miss."""
    cache = BundleCache(tmp_path)
    cache.put(pathology)
    path = cache.path_for(pathology.file_sha256, version(pathology))
    data = path.read_bytes()
    path.write_bytes(
        data.replace(b"PATHOLOGY", b"CLINICAL", 1) if b"PATHOLOGY" in data else data[:-2] + b" }"
    )
    assert cache.get(pathology.file_sha256, version(pathology)) is None
    cache.put(pathology)
    assert cache.get(pathology.file_sha256, version(pathology)) == pathology


@pytest.mark.parametrize("kept", [0, 1, 200, -1])
def test_an_entry_a_crash_cut_short_is_a_miss(tmp_path: Path, pathology: DocumentBundle, kept: int) -> None:
    """Entries are not fsynced: one a crash left empty or cut anywhere is a miss (its seal covers the bundle's
    hash), never a bundle served, and the next put writes it whole."""
    cache = BundleCache(tmp_path)
    cache.put(pathology)
    path = cache.path_for(pathology.file_sha256, version(pathology))
    data = path.read_bytes()
    path.write_bytes(data[:kept])
    assert cache.get(pathology.file_sha256, version(pathology)) is None
    cache.put(pathology)
    assert cache.get(pathology.file_sha256, version(pathology)) == pathology


def pipeline(root: Path, cache: BundleCache, calls: list[str], *, password: str | None = None) -> Pipeline:
    def ingest(path: Path, doc_id: str) -> IngestResult:
        calls.append(doc_id)
        return ingest_pdf(path, doc_id=doc_id, password=password)

    return Pipeline(
        profile=load_profile(),
        classifier=get_classifier("baseline"),
        store=FileStore(root / "out"),
        run_id=new_run_id(),
        ingest=ingest,
        cache=cache,
        password=password,
    )


def test_a_tampered_entry_is_extracted_again_by_the_pipeline(
    tmp_path: Path, pathology: DocumentBundle, note: DocumentBundle
) -> None:
    """The pathology report with the note's bundle planted under its hash: the pipeline extracts the PDF
    again and decides on its real content (and the cache is repaired)."""
    cache = BundleCache(tmp_path / "cache")
    cache.put(note)
    planted = cache.path_for(pathology.file_sha256, version(pathology))
    planted.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(cache.path_for(note.file_sha256, version(note)), planted)
    calls: list[str] = []
    pipeline(tmp_path, cache, calls).process(PATHOLOGY, "path-breast-02")
    assert calls == ["path-breast-02"]
    repaired = cache.get(pathology.file_sha256, version(pathology))
    assert repaired is not None
    assert repaired.pages == pathology.pages


def test_force_extracts_again_even_with_a_valid_entry(tmp_path: Path, pathology: DocumentBundle) -> None:
    """--force never reads the cache: the PDF is extracted again."""
    cache = BundleCache(tmp_path / "cache")
    cache.put(pathology)
    calls: list[str] = []
    pipe = pipeline(tmp_path, cache, calls)
    pipe.process(PATHOLOGY, "path-breast-02")
    assert calls == []  # served from the cache
    pipe.process(PATHOLOGY, "path-breast-02", force=True)
    assert calls == ["path-breast-02"]


def test_an_encrypted_pdfs_bundle_needs_the_password_that_opened_it(tmp_path: Path) -> None:
    """Stored under a keyed tag of the password: served to the same password only, never without one or
    with another; the password itself is not written anywhere in the cache."""
    locked = bundle_of(LOCKED, RIGHT)
    cache = BundleCache(tmp_path)
    cache.put(locked, password=RIGHT)
    sha, ver = locked.file_sha256, version(locked)
    assert cache.get(sha, ver, password=RIGHT) == locked
    assert cache.get(sha, ver) is None
    assert cache.get(sha, ver, password="wrong") is None
    assert all(RIGHT.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert (tmp_path / ".key").stat().st_mode & 0o077 == 0


def test_a_wrong_password_run_does_not_read_the_cached_decrypted_bundle(tmp_path: Path) -> None:
    """Issue 14.10 end to end: after a run with the right password, runs with a wrong one or none (with
    --force, as `arbiter demo` runs) report the PDF as encrypted; the right password still works."""
    out = tmp_path / "out"

    def run(password: str | None, force: bool) -> dict[str, object]:
        options = RunOptions(inputs=[str(LOCKED)], out_dir=str(out), workers=1, force=force)
        return execute(options, password=password)

    first = run(RIGHT, False)
    assert first["errors"] == 0
    for password in ("wrong", None):
        again = run(password, True)
        assert again["errors_by_reason"] == {"pdf_encrypted": 1}, password
    assert run(RIGHT, True)["errors"] == 0


def test_an_entry_written_from_the_mirrors_json_reads_back_the_same_bundle(
    tmp_path: Path, pathology: DocumentBundle
) -> None:
    """A bundle stored from its already-serialized (indented) JSON is served back equal to itself."""
    cache = BundleCache(tmp_path)
    cache.put(pathology, body=pathology.model_dump_json(indent=2).encode("utf-8"))
    assert cache.get(pathology.file_sha256, pathology.extractor.version) == pathology
