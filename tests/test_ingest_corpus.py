"""Ingestion over the shared external corpora (../shared/corpora): every file gets a result, none crashes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arbiter.contracts.bundle import BlockType, DocumentBundle
from arbiter.ingest import IngestFailure, IngestResult, IsolatedIngestor
from tests.conftest import corpora_missing

pytestmark = pytest.mark.corpus

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
FOLDERS = ("robustness", "medical")


@pytest.fixture(scope="module")
def sweep() -> dict[Path, IngestResult]:
    if corpora_missing():
        pytest.skip(f"the shared corpora are not at {CORPORA}")
    assert all((CORPORA / folder).is_dir() for folder in FOLDERS), f"{CORPORA} lacks {FOLDERS}"
    files = sorted(p for folder in FOLDERS for p in (CORPORA / folder).rglob("*") if p.is_file())
    with IsolatedIngestor(workers=2, timeout_s=20.0) as ingestor, ThreadPoolExecutor(2) as pool:
        results = list(pool.map(ingestor.ingest, files))
    return dict(zip(files, results, strict=True))


def in_folder(sweep: dict[Path, IngestResult], kind: str) -> list[IngestResult]:
    return [r for p, r in sweep.items() if p.parent.name == kind and "robustness" in p.parts]


def test_every_file_gets_a_bundle_or_a_clear_failure(sweep: dict[Path, IngestResult]) -> None:
    """Each corpus file yields a bundle or a failure with a plain-English sentence."""
    assert len(sweep) > 400
    for path, result in sweep.items():
        assert isinstance(result, DocumentBundle | IngestFailure), path
        if isinstance(result, IngestFailure):
            assert result.message[:1].isupper(), path
            assert result.message.endswith("."), path
            assert result.file_path == str(path)


def test_bundles_keep_offsets_consistent(sweep: dict[Path, IngestResult]) -> None:
    """In every bundle, lines and paragraphs slice page.text exactly, whatever the PDF's fonts."""
    bundles = {path: result for path, result in sweep.items() if isinstance(result, DocumentBundle)}
    assert bundles
    for path, result in bundles.items():
        assert result.total_pages == len(result.pages), path
        for page in result.pages:
            for line in page.lines:
                piece = page.text[line.start : line.end]
                assert piece.strip(), path
                assert "\n" not in piece, path
            for para in page.paragraphs:
                assert page.text[para.start : para.end] == para.text, path


def test_encrypted_files_are_reported_or_open_with_the_empty_password(
    sweep: dict[Path, IngestResult],
) -> None:
    """Nearly all encrypted files either open without a password or fail as "encrypted"."""
    results = in_folder(sweep, "encrypted")
    handled = [r for r in results if isinstance(r, DocumentBundle) or r.kind == "encrypted"]
    assert len(handled) >= 0.9 * len(results)
    assert any(isinstance(r, IngestFailure) and r.kind == "encrypted" for r in results)


def test_image_only_files_have_pages_without_text_layer(sweep: dict[Path, IngestResult]) -> None:
    """Nearly all image-only files open, with pages marked as having no text layer."""
    bundles = [r for r in in_folder(sweep, "image_only") if isinstance(r, DocumentBundle)]
    no_text = [b for b in bundles if any(not page.has_text_layer for page in b.pages)]
    assert len(no_text) >= 0.9 * len(in_folder(sweep, "image_only"))


def test_ordinary_files_open(sweep: dict[Path, IngestResult]) -> None:
    """Nearly all ordinary files give a bundle."""
    results = in_folder(sweep, "ordinary")
    assert sum(isinstance(r, DocumentBundle) for r in results) >= 0.9 * len(results)


def test_labcorp_report_is_read_with_its_layout(sweep: dict[Path, IngestResult]) -> None:
    """The real LabCorp report gives 3 text pages, keeps U+2212 in phone numbers and finds footers."""
    bundle = sweep[CORPORA / "medical" / "164947.pdf"]
    assert isinstance(bundle, DocumentBundle)
    assert bundle.total_pages == 3
    assert all(page.has_text_layer and "LabCorp" in page.text for page in bundle.pages)
    assert "800−631−5250" in bundle.pages[0].text
    assert all(
        any(p.block_type == BlockType.FOOTER and "Page" in p.text for p in page.paragraphs)
        for page in bundle.pages
    )
