"""A profile whose page reader decides alone (`[content.reader] lexicons_too = false`) reads no lexicon cues
(the only rules that use them do not run), and every other part of a page's reading — its lines, fill-in
fields, numbering marks, title, continuation mark and order flag — is what it is with the lexicons on."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile
from arbiter.ingest import ingest_pdf
from arbiter.verifiers.content import read_page
from tests.conftest import FIXTURES
from tests.v34_helpers import PROFILE

assert PROFILE.content.reader is not None
assert PROFILE.content.reader.lexicons_too  # the shipped default
READER_ALONE: Profile = PROFILE.model_copy(
    update={
        "content": PROFILE.content.model_copy(
            update={"reader": PROFILE.content.reader.model_copy(update={"lexicons_too": False})}
        )
    }
)
PDFS = sorted((FIXTURES / "pdfs").glob("*.pdf"))


@pytest.mark.parametrize("pdf", PDFS, ids=[p.stem for p in PDFS])
def test_the_reader_alone_reads_everything_but_the_cues(pdf: Path) -> None:
    """Every fixture page: no cue and no lexicon score; lines, fields, marks, title and flags unchanged."""
    bundle = ingest_pdf(pdf, doc_id=pdf.stem)
    assert isinstance(bundle, DocumentBundle), (
        pdf.stem
    )  # every fixture PDF reads (a scan as pages without text)
    for page in bundle.pages:
        full, alone = read_page(page, PROFILE), read_page(page, READER_ALONE)
        assert (alone.cues, alone.scores) == ([], {})
        for part in ("readable", "lines", "fields", "marks", "title", "title_seen", "continuation", "orders"):
            assert getattr(alone, part) == getattr(full, part), (pdf.stem, page.page_num, part)


def test_the_shipped_profile_still_reads_the_cues() -> None:
    """With lexicons_too on (the default) a results table and a value pattern are read as cues."""
    bundle = ingest_pdf(FIXTURES / "pdfs" / "lab-quest-01.pdf", doc_id="lab")
    assert any(read_page(page, PROFILE).cues for page in bundle.pages)
