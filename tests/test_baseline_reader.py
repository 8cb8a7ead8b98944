"""The baseline classifier with its own learned page reader ([baseline.reader], the shipped profile): pages
typed by the reader, lines it reads quoted verbatim as evidence, forms held at the floor, a pinned file that
is not the content check's, and no input that crashes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.classify.base import ClassificationError
from arbiter.classify.baseline import BaselineClassifier
from arbiter.contracts import BlockType, ClassificationOutput, DocumentBundle, LineBox, Page, Paragraph
from arbiter.contracts.profile import load_profile
from arbiter.errors import ConfigError
from arbiter.reader.model import resolve
from tests.test_classifiers import (
    BLANK_PREAUTH,
    CUE_LINES,
    assert_complete,
    bundle_of,
    dominant,
    make_bundle,
    make_page,
)

PROFILE = load_profile()
REPO = Path(__file__).resolve().parents[1]

# A pharmacogenomic result: star alleles, phenotypes, rsIDs, and none of the baseline's genomic cue phrases.
PGX = [
    "Medication response summary",
    "CYP2C19 *1/*2 Intermediate metabolizer",
    "CYP2D6 *1/*4 Intermediate metabolizer",
    "SLCO1B1 rs4149056 T/C Decreased function",
    "Clopidogrel: consider an alternative antiplatelet therapy (CPIC level A).",
    "Genotype results were obtained by targeted allele testing.",
]
# A clinic letter with nothing a lexicon lists as a note's title.
LETTER = [
    "Dear Dr. Alvarez,",
    "Thank you for asking me to see Mrs. Okafor, who attended clinic today with her daughter.",
    "She describes three months of breathlessness on exertion and ankle swelling.",
    "On examination her chest was clear and there was pitting oedema to the mid shin.",
    "I have increased her furosemide and will review her in six weeks.",
    "Yours sincerely,",
]


def classify(bundle: DocumentBundle) -> ClassificationOutput:
    return ClassificationOutput.model_validate(json.loads(BaselineClassifier().classify(bundle, PROFILE).raw))


def test_the_shipped_profile_gives_the_baseline_a_reader_of_its_own() -> None:
    """The baseline's reader is a different file than the content check's, and reads only the words view."""
    assert PROFILE.baseline is not None
    assert PROFILE.baseline.reader is not None
    assert PROFILE.content.reader is not None
    mine, check = resolve(PROFILE.baseline.reader.model), resolve(PROFILE.content.reader.model)
    assert mine != check
    assert json.loads(mine.read_text())["view"] == "words"
    assert json.loads(check.read_text())["view"] == "full"


@pytest.mark.parametrize(
    ("lines", "expected"), [(PGX, "GENOMIC_REPORT"), (LETTER, "CLINICAL_NOTE")], ids=["pgx", "letter"]
)
def test_pages_are_typed_by_the_reader(lines: list[str], expected: str) -> None:
    """A page no cue phrase names is typed by what the reader reads, with a confident, evidenced answer."""
    bundle = make_bundle([make_page(1, lines)])
    out = classify(bundle)
    assert_complete(out, bundle)
    assert [s.dominant_type for s in out.segments] == [expected]
    kind = next(t for t in out.segments[0].types if t.document_type == expected)
    assert kind.evidence
    assert "read as this type" in out.segments[0].classification_reasoning


def test_two_documents_of_different_types_are_two_segments() -> None:
    """A letter followed by a pharmacogenomic page is split where the reader's type changes."""
    bundle = make_bundle([make_page(1, LETTER), make_page(2, PGX)])
    out = classify(bundle)
    assert_complete(out, bundle)
    assert [(s.start_page, s.end_page, s.dominant_type) for s in out.segments] == [
        (1, 1, "CLINICAL_NOTE"),
        (2, 2, "GENOMIC_REPORT"),
    ]


def test_evidence_quotes_whole_lines_of_its_own_pages() -> None:
    """Each snippet is a line printed on the page it names."""
    bundle = make_bundle([make_page(1, LETTER), make_page(2, PGX)])
    out = classify(bundle)
    texts = {p.page_num: p.text for p in bundle.pages}
    for seg in out.segments:
        for kind in seg.types:
            for ev in kind.evidence:
                assert seg.start_page <= ev.page <= seg.end_page
                assert ev.snippet in texts[ev.page]


@pytest.mark.parametrize(
    "lines",
    [
        BLANK_PREAUTH,
        ["Test name: ______", "Family history: ______", "Hemoglobin: ______", "Reference range: ______"],
        ["Complete Blood Count:", "Hemoglobin:", "Hematocrit:", "Platelet count:"],
        ["Surgical Pathology Report:", "Final diagnosis:", "Gross description:"],
    ],
    ids=["preauth", "blanks", "cbc-labels", "pathology-labels"],
)
def test_a_blank_form_is_never_a_confident_report(lines: list[str]) -> None:
    """Field labels that name a test or a diagnosis never make a confident report, whatever the reader reads."""
    try:
        out = classify(make_bundle([make_page(1, lines)]))
    except ClassificationError:
        return
    doc_type, confidence = dominant(out)
    assert doc_type == "ADMINISTRATIVE" or confidence < 0.6, (doc_type, confidence)


def test_a_profile_pinning_another_file_is_refused(tmp_path: Path) -> None:
    """A [baseline.reader] whose sha256 is not the file's is refused when the profile loads."""
    text = (REPO / "arbiter" / "profiles" / "medical.toml").read_text()
    assert PROFILE.baseline is not None
    assert PROFILE.baseline.reader is not None
    broken = text.replace(PROFILE.baseline.reader.sha256, "0" * 64)
    path = tmp_path / "profile.toml"
    path.write_text(broken)
    with pytest.raises(ConfigError, match=r"\[baseline.reader\]"):
        load_profile(path)


@given(
    st.lists(
        st.tuples(
            st.lists(st.one_of(st.text(max_size=60), st.sampled_from(CUE_LINES + PGX + LETTER)), max_size=6),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_arbitrary_pages_never_crash_the_learned_baseline(specs: list[tuple[list[str], bool, bool]]) -> None:
    """Any page texts give a complete, schema-valid output, or a ClassificationError saying why not."""
    bundle = bundle_of(specs)
    try:
        out = classify(bundle)
    except ClassificationError as exc:
        message = str(exc)
        assert "classif" in message
        return
    assert_complete(out, bundle)


NOTE_ONE = [
    "Consultation Note",
    "Primary care consultation, day 1",
    'Presenting complaint: "I have had a sore throat for three days"',
    "History: sore throat, fever on the first day, no cough. Eating and drinking normally.",
    "Examination: tonsils enlarged without exudate. Temperature 37.8 C.",
    "Impression: viral pharyngitis.",
    "Plan: fluids, paracetamol, safety-netting advice; review in one week if no better.",
]
NOTE_TWO = [
    "Consultation Note",
    "Primary care consultation, day 2",
    'Presenting complaint: "My ankle has been swollen since I fell"',
    "History: inversion injury playing football yesterday, able to weight bear with pain.",
    "Examination: swelling over the lateral malleolus, no bony tenderness.",
    "Impression: lateral ankle sprain.",
    "Plan: rest, ice, compression, elevation; review if unable to weight bear.",
]


def _laid_out(num: int, lines: list[str], ends_at: float) -> Page:
    """A page whose lines are spread from the top margin down to `ends_at` of its height."""
    text, boxes, paragraphs = "", [], []
    top, step = 740.0, (740.0 - 792.0 * (1 - ends_at)) / max(len(lines) - 1, 1)
    for i, line in enumerate(lines):
        start = len(text)
        text += line + "\n"
        bottom = top - i * step
        boxes.append(LineBox(start=start, end=start + len(line), box=(72.0, bottom, 540.0, bottom + 10)))
        block = BlockType.HEADING if i == 0 else BlockType.PARAGRAPH
        paragraphs.append(Paragraph(text=line, block_type=block, start=start, end=start + len(line)))
    return Page(page_num=num, text=text, paragraphs=paragraphs, lines=boxes, width=612.0, height=792.0)


@pytest.mark.parametrize(
    ("first_ends_at", "second", "segments"),
    [
        (0.35, NOTE_TWO, 2),  # the first note stops a third of the way down; the next opens on its title
        (0.92, NOTE_TWO, 1),  # the first page runs to the foot of the page: the next page continues it
        (0.35, ["Addendum", *NOTE_TWO[2:]], 1),  # an addendum belongs to the note before it
        (0.35, ["and the patient was advised to return if symptoms persist.", *NOTE_TWO[2:]], 1),
    ],
)
def test_a_page_after_one_that_stopped_early_and_opening_on_a_title_starts_a_document(
    first_ends_at: float, second: list[str], segments: int
) -> None:
    """The baseline splits two documents of one type where the first page stops early and the next opens
    on a title; a page that runs to its foot, an addendum or a sentence carried over is a continuation."""
    out = classify(make_bundle([_laid_out(1, NOTE_ONE, first_ends_at), _laid_out(2, second, 0.35)]))
    assert len(out.segments) == segments, [(s.start_page, s.end_page, s.dominant_type) for s in out.segments]
