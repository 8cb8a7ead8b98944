"""The primary classifiers: the offline baseline (page scoring, verbatim evidence) and pre-computed files."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from arbiter.classify import (
    BaselineClassifier,
    ClassificationError,
    FileClassifier,
    get_classifier,
)
from arbiter.classify.cues import form_fields, form_line
from arbiter.contracts import (
    BlockType,
    ClassificationOutput,
    DocumentBundle,
    Extractor,
    LineBox,
    OcrStatus,
    Page,
    Paragraph,
)
from arbiter.contracts.profile import Baseline, Profile, load_profile
from arbiter.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]

SHIPPED = load_profile()
assert SHIPPED.baseline is not None
# These tests pin the cue phrases' reading (a profile without [baseline.reader] classifies by them alone);
# tests/test_baseline_reader.py tests the learned reader the shipped profile adds.
PROFILE = SHIPPED.model_copy(update={"baseline": SHIPPED.baseline.model_copy(update={"reader": None})})
TYPES = PROFILE.taxonomy.document_types


def make_page(
    num: int,
    lines: list[str],
    *,
    header: str | None = None,
    footer: str | None = None,
    text_layer: bool = True,
) -> Page:
    """A page as ingestion builds it: first line a heading, optional running header/footer, offsets set."""
    if not text_layer:
        return Page(page_num=num, text="", has_text_layer=False)
    items = [(header, BlockType.HEADER)] if header else []
    items += [(line, BlockType.HEADING if i == 0 else BlockType.PARAGRAPH) for i, line in enumerate(lines)]
    items += [(footer, BlockType.FOOTER)] if footer else []
    text = ""
    paragraphs, boxes = [], []
    for line, block in items:
        start = len(text)
        text += line + "\n"
        paragraphs.append(Paragraph(text=line, block_type=block, start=start, end=start + len(line)))
        boxes.append(LineBox(start=start, end=start + len(line), box=(72.0, 700.0, 540.0, 712.0)))
    return Page(page_num=num, text=text, paragraphs=paragraphs, lines=boxes)


def make_bundle(pages: list[Page], doc_id: str = "packet-7") -> DocumentBundle:
    return DocumentBundle(
        doc_id=doc_id,
        file_path=f"/data/{doc_id}.pdf",
        file_sha256="0" * 64,
        total_pages=len(pages),
        pages=pages,
        extractor=Extractor(name="test", version="1"),
        processing_timestamp=datetime(2026, 11, 1, tzinfo=UTC),
    )


FAX = ["FAX COVER SHEET", "To: Oncology Clinic", "Number of pages: 5 including cover"]
FAX_NOTICE = "CONFIDENTIALITY NOTICE: This facsimile is intended only for the named recipient."
GENOMIC = [
    [
        "FoundationOne CDx",
        "Comprehensive Genomic Profiling Report",
        "Genomic Alterations Identified: KRAS G12D",
    ],
    ["Tumor Mutational Burden: 12 Muts/Mb", "Microsatellite status: MS-Stable", "TP53 R273H"],
    ["Variant allele frequency by gene", "Methods: next-generation sequencing of 324 genes"],
]
REQUISITION = [
    "Test Requisition Form",
    "Ordering physician: Dr. A. Smith",
    "Insurance information: see attached",
]
CBC = [
    "Quest Diagnostics",
    "COMPLETE BLOOD COUNT (CBC) WITH DIFFERENTIAL",
    "Specimen collected: 10/02/2026 08:15",
    "Test Name  Result  Flag  Reference Range  Units",
    "Hemoglobin  11.2  L  13.2-17.1  g/dL",
    "Hematocrit  34.1  L  38.5-50.0  %",
    "Platelet count  250  150-400  Thousand/uL",
]


def faxed_genomic_packet() -> DocumentBundle:
    pages = [make_page(1, [*FAX, FAX_NOTICE], footer="Fax: (617) 555-0142")]
    pages += [
        make_page(i, lines, header="Foundation Medicine, Inc.", footer=f"Page {i - 1} of 3")
        for i, lines in enumerate(GENOMIC, start=2)
    ]
    pages.append(make_page(5, REQUISITION))
    return make_bundle(pages)


def quest_cbc() -> DocumentBundle:
    return make_bundle([make_page(1, CBC, footer="Page 1 of 1")], doc_id="quest-cbc")


def genomic_with_scan() -> DocumentBundle:
    """A genomic report whose middle page is an image with no text layer."""
    pages = [make_page(1, GENOMIC[0]), make_page(2, [], text_layer=False), make_page(3, GENOMIC[2])]
    return make_bundle(pages, doc_id="with-scan")


def classify(bundle: DocumentBundle, profile: Profile = PROFILE) -> ClassificationOutput:
    raw = BaselineClassifier().classify(bundle, profile).raw
    return ClassificationOutput.model_validate_json(raw)


def assert_complete(out: ClassificationOutput, bundle: DocumentBundle) -> None:
    """Every structural promise of the baseline: what V1/V2 check, and verbatim evidence."""
    assert out.doc_id == bundle.doc_id
    assert out.number_of_segments == len(out.segments)
    expected_start = 1
    weighted = dict.fromkeys(TYPES, 0.0)
    for index, seg in enumerate(out.segments, start=1):
        assert seg.segment_index == index
        assert seg.start_page == expected_start
        assert seg.segment_page_count == seg.end_page - seg.start_page + 1
        expected_start = seg.end_page + 1
        assert [t.document_type for t in seg.types] == TYPES
        shares = {t.document_type: t.share for t in seg.types}
        assert sum(round(s * 10_000) for s in shares.values()) == 10_000
        assert shares[seg.dominant_type] == max(shares.values())
        for t in seg.types:
            assert (t.presence_level == PROFILE.taxonomy.no_evidence_level) == (t.share == 0.0)
            assert 0.0 <= t.confidence <= 1.0
            if t.share > 0 and seg.start_page <= seg.end_page:
                assert t.evidence or not any(t.evidence for t in seg.types)
            for ev in t.evidence:
                assert seg.start_page <= ev.page <= seg.end_page
                page = bundle.page(ev.page)
                assert page is not None
                assert page.has_text_layer or page.ocr_applied
                assert ev.snippet in page.text
                assert ev.anchor is not None
                assert ev.anchor in ev.snippet
                assert len(ev.snippet) <= 160
            weighted[t.document_type] += t.share * seg.segment_page_count / len(bundle.pages)
    assert expected_start == len(bundle.pages) + 1
    assert [m.document_type for m in out.document_mixture] == TYPES
    mixture = {m.document_type: m.share for m in out.document_mixture}
    assert sum(round(s * 10_000) for s in mixture.values()) == 10_000
    for doc_type in TYPES:
        assert mixture[doc_type] == pytest.approx(weighted[doc_type], abs=2e-4)
    assert mixture[out.dominant_type] == max(mixture.values())


def test_faxed_genomic_packet_has_three_segments() -> None:
    """A fax cover, a 3-page genomic report and a requisition become three segments of the right types."""
    out = classify(faxed_genomic_packet())
    assert [(s.start_page, s.end_page, s.dominant_type) for s in out.segments] == [
        (1, 1, "ADMINISTRATIVE"),
        (2, 4, "GENOMIC_REPORT"),
        (5, 5, "ADMINISTRATIVE"),
    ]
    assert out.dominant_type == "GENOMIC_REPORT"
    assert out.vendor_signals == ["Foundation Medicine", "FoundationOne"]


def test_evidence_is_verbatim_and_on_the_segments_pages() -> None:
    """Every snippet is copied from its page's text, its anchor is the cue as written there."""
    bundle = faxed_genomic_packet()
    out = classify(bundle)
    assert_complete(out, bundle)
    fax = out.segments[0].types[TYPES.index("ADMINISTRATIVE")].evidence
    assert fax[0].snippet == "FAX COVER SHEET"
    assert fax[0].anchor == "FAX COVER SHEET"
    genomic = out.segments[1].types[TYPES.index("GENOMIC_REPORT")]
    assert genomic.presence_level == "PRIMARY"
    assert 1 <= len(genomic.evidence) <= 2


def test_header_and_footer_text_is_never_evidence() -> None:
    """Running headers/footers are not scored and no snippet contains a page number or fax number."""
    out = classify(faxed_genomic_packet())
    snippets = [ev.snippet for seg in out.segments for t in seg.types for ev in t.evidence]
    assert snippets
    assert not any("555-0142" in s or "Page " in s or "Foundation Medicine, Inc." in s for s in snippets)


def test_quest_cbc_is_a_lab_report() -> None:
    """A Quest CBC scores as a lab report, with Quest as a vendor signal."""
    bundle = quest_cbc()
    out = classify(bundle)
    assert_complete(out, bundle)
    assert [s.dominant_type for s in out.segments] == ["LAB_REPORT"]
    assert out.dominant_type == "LAB_REPORT"
    assert out.vendor_signals == ["Quest Diagnostics"]
    lab = out.segments[0].types[TYPES.index("LAB_REPORT")]
    assert lab.presence_level == "PRIMARY"
    assert any("COMPLETE BLOOD COUNT" in ev.snippet for ev in lab.evidence)


def test_page_without_text_layer_inherits_its_neighbours_type() -> None:
    """A scanned page inside a report joins the report's segment and provides no evidence."""
    bundle = genomic_with_scan()
    out = classify(bundle)
    assert_complete(out, bundle)
    assert [(s.start_page, s.end_page, s.dominant_type) for s in out.segments] == [(1, 3, "GENOMIC_REPORT")]
    assert all(ev.page != 2 for t in out.segments[0].types for ev in t.evidence)
    assert "Page 2 has no readable text" in out.segments[0].classification_reasoning


def test_leading_page_without_text_takes_the_next_type() -> None:
    """A first page with no text layer takes the type of the page after it."""
    bundle = make_bundle([make_page(1, [], text_layer=False), make_page(2, CBC)])
    out = classify(bundle)
    assert [(s.start_page, s.end_page, s.dominant_type) for s in out.segments] == [(1, 2, "LAB_REPORT")]


def test_ocr_page_provides_evidence() -> None:
    """A scanned page whose text came from OCR is scored and quoted like any other."""
    page = make_page(1, CBC).model_copy(update={"has_text_layer": False, "ocr_applied": True})
    out = classify(make_bundle([page]))
    lab = out.segments[0].types[TYPES.index("LAB_REPORT")]
    assert lab.presence_level == "PRIMARY"
    assert lab.evidence[0].page == 1


def test_fax_cover_title_wins_over_report_wording() -> None:
    """A page titled as a fax cover is administrative even when its body talks about the genomic report."""
    body = "Re: genomic alterations, tumor mutational burden and microsatellite instability results attached."
    bundle = make_bundle([make_page(1, ["Fax Cover Sheet", body]), make_page(2, GENOMIC[0])])
    out = classify(bundle)
    assert [s.dominant_type for s in out.segments] == ["ADMINISTRATIVE", "GENOMIC_REPORT"]


def test_untitled_continuation_page_stays_with_its_document() -> None:
    """A discharge summary's second page listing labs continues the note instead of starting a lab report."""
    note = ["DISCHARGE SUMMARY", "History of present illness: fatigue.", "Review of systems: negative."]
    labs = [
        "LABORATORY DATA",
        "Hemoglobin 11.7 L, potassium 4.1, creatinine 0.9 (reference range on file)",
        "Assessment and plan: continue current regimen.",
    ]
    out = classify(make_bundle([make_page(1, note), make_page(2, labs)]))
    assert [(s.start_page, s.end_page, s.dominant_type) for s in out.segments] == [(1, 2, "CLINICAL_NOTE")]
    assert "Page 2 has no title of its own" in out.segments[0].classification_reasoning


def test_titled_page_starts_a_new_document() -> None:
    """A page with its own strong title starts a new segment even right after a related report."""
    note = ["PROGRESS NOTE", "Assessment and plan: order CBC."]
    out = classify(make_bundle([make_page(1, note), make_page(2, CBC[1:])]))
    assert [s.dominant_type for s in out.segments] == ["CLINICAL_NOTE", "LAB_REPORT"]


def test_fixture_pdfs_are_segmented_like_their_truth() -> None:
    """On the generated fixture PDFs the baseline finds the true segments and dominant types."""
    from arbiter import ingest

    pdfs = sorted((REPO / "fixtures" / "pdfs").glob("*.pdf"))
    assert pdfs, "the committed fixture PDFs are missing"
    wrong = []
    for pdf in pdfs:
        truth = json.loads((REPO / "fixtures" / "classifications" / f"{pdf.stem}.json").read_text())
        out = classify(ingest.ingest_pdf(pdf))
        got = [(s.start_page, s.end_page, s.dominant_type) for s in out.segments]
        if got != [(s["start_page"], s["end_page"], s["dominant_type"]) for s in truth["segments"]]:
            wrong.append(pdf.stem)
    assert len(wrong) <= len(pdfs) // 10, wrong


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ([], "has no pages"),
        ([make_page(1, [], text_layer=False), make_page(2, [], text_layer=False)], "has readable text"),
        ([make_page(1, ["Hello", "Nothing here to see."])], "recognises"),
    ],
)
def test_unclassifiable_document_is_a_classification_error(pages: list[Page], message: str) -> None:
    """A blank, scanned or unrecognisable document fails in plain English instead of guessing."""
    with pytest.raises(ClassificationError, match=message):
        BaselineClassifier().classify(make_bundle(pages), PROFILE)


def test_output_is_deterministic() -> None:
    """The same bundle gives byte-identical JSON, from the same or a new classifier."""
    bundle = faxed_genomic_packet()
    first = BaselineClassifier().classify(bundle, PROFILE)
    assert BaselineClassifier().classify(bundle, PROFILE) == first
    assert BaselineClassifier().classify(faxed_genomic_packet(), PROFILE).raw == first.raw
    assert first.producer == "baseline/1.0.0"


@pytest.mark.parametrize(
    "bundle", [faxed_genomic_packet(), quest_cbc(), genomic_with_scan()], ids=["fax-genomic", "cbc", "scan"]
)
def test_raw_json_is_standard_indented_json(bundle: DocumentBundle) -> None:
    """The raw text is exactly what json.dumps(indent=2, ensure_ascii=False) writes for the same data."""
    raw = BaselineClassifier().classify(bundle, PROFILE).raw
    assert raw == json.dumps(json.loads(raw), indent=2, ensure_ascii=False)


def test_lone_surrogate_in_text_still_gives_utf8_json() -> None:
    """A broken text layer (a lone surrogate) is escaped, so the JSON can be written as UTF-8."""
    bundle = make_bundle([make_page(1, ["Complete Blood Count \ud800 panel", "Hemoglobin 13.1"])])
    raw = BaselineClassifier().classify(bundle, PROFILE).raw
    raw.encode("utf-8")
    assert "\\ud800" in raw


def test_output_is_identical_across_processes() -> None:
    """Hash randomisation does not change the output: an interpreter with another hash seed writes the same
    bytes as this one."""
    script = (
        "import sys, hashlib; sys.path.insert(0, 'tests'); import test_classifiers as t; "
        "raw = t.BaselineClassifier().classify(t.faxed_genomic_packet(), t.PROFILE).raw; "
        "print(hashlib.sha256(raw.encode()).hexdigest())"
    )
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    there = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONHASHSEED": other_seed},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = hashlib.sha256(
        BaselineClassifier().classify(faxed_genomic_packet(), PROFILE).raw.encode()
    ).hexdigest()
    assert there == here


def test_baseline_output_is_accepted_by_the_verifiers() -> None:
    """On clean documents the baseline's answer passes V1-V4 with no issue and is auto-accepted."""
    from arbiter.decide import governor

    for bundle in (faxed_genomic_packet(), quest_cbc(), genomic_with_scan()):
        raw = BaselineClassifier().classify(bundle, PROFILE).raw
        outcome = governor.verify_with_retries(raw, bundle, PROFILE)
        assert [i.code for i in outcome.final_issues] == []
        assert outcome.final_decision == "AUTO_ACCEPT"


def test_normalised_cues_keep_their_original_spelling_as_anchor() -> None:
    """Ligatures, dashes and case are normalised for matching; the anchor is the text as printed."""
    lines = [
        "SURGICAL PATHOLOGY REPORT",
        "ﬁnal diagnosis: adenocarcinoma",
        "Next‑generation sequencing pending",
    ]
    bundle = make_bundle([make_page(1, lines)])
    out = classify(bundle)
    assert_complete(out, bundle)
    anchors = {ev.anchor for t in out.segments[0].types for ev in t.evidence}
    assert "SURGICAL PATHOLOGY REPORT" in {ev.snippet for t in out.segments[0].types for ev in t.evidence}
    assert "Next‑generation sequencing" in anchors


def test_cue_glued_to_a_bullet_is_found() -> None:
    """A list bullet printed without a space does not hide the cue after it."""
    bundle = make_bundle([make_page(1, ["Laboratory Report", "•Hemoglobin 13.1 g/dL", "•Glucose 98 mg/dL"])])
    hits = {ev.anchor for t in classify(bundle).segments[0].types for ev in t.evidence}
    assert "Hemoglobin" in hits


def test_long_line_is_trimmed_around_the_cue() -> None:
    """A long line is cut at spaces to at most 160 characters and still holds the cue verbatim."""
    filler = "lorem ipsum dolor sit amet " * 12
    line = f"{filler}the final diagnosis is invasive ductal carcinoma {filler}"
    bundle = make_bundle([make_page(1, ["Surgical Pathology Report", line])])
    out = classify(bundle)
    assert_complete(out, bundle)
    snippets = [ev.snippet for ev in out.segments[0].types[TYPES.index("PATHOLOGY_REPORT")].evidence]
    long = next(s for s in snippets if "final diagnosis" in s)
    assert len(long) <= 160
    assert long == long.strip()


def test_header_footer_text_inside_a_line_is_cut_out_of_the_snippet() -> None:
    """On a page without paragraphs, page numbers on a cue's line are left out of its snippet."""
    text = "Page 1 of 2   Comprehensive Metabolic Panel\nGlucose 98 mg/dL\n"
    bundle = make_bundle([Page(page_num=1, text=text)])
    out = classify(bundle)
    assert_complete(out, bundle)
    evidence = out.segments[0].types[TYPES.index("LAB_REPORT")].evidence
    assert evidence[0].snippet == "Comprehensive Metabolic Panel"


def test_type_without_quotable_line_is_not_claimed() -> None:
    """A cue split over two lines cannot be quoted, so its type stays NO_EVIDENCE with share 0."""
    page = make_page(1, ["Complete Blood Count", "Hemoglobin 13.1 g/dL"])
    split = "Surgical\npathology"
    page = page.model_copy(
        update={
            "text": page.text + split,
            "paragraphs": [
                *page.paragraphs,
                Paragraph(text=split, start=len(page.text), end=len(page.text) + 18),
            ],
        }
    )
    out = classify(make_bundle([page]))
    pathology = out.segments[0].types[TYPES.index("PATHOLOGY_REPORT")]
    assert (pathology.presence_level, pathology.share) == ("NO_EVIDENCE", 0.0)
    assert "No line could be quoted for PATHOLOGY_REPORT" in out.segments[0].classification_reasoning


def test_profile_without_baseline_section_is_a_config_error() -> None:
    """A site profile without [baseline] cannot run the baseline; the message says what to add."""
    profile = PROFILE.model_copy(update={"baseline": None, "name": "site"})
    with pytest.raises(ConfigError, match=r"\[baseline\]"):
        BaselineClassifier().classify(quest_cbc(), profile)


def test_baseline_cue_of_unknown_type_is_a_config_error() -> None:
    """Cues for a type outside the taxonomy are a profile mistake, not silently ignored."""
    assert PROFILE.baseline is not None
    settings = PROFILE.baseline.model_copy(update={"cues": {"RADIOLOGY": {"impression": 1.0}}})
    profile = PROFILE.model_copy(update={"baseline": settings, "name": "site-2"})
    with pytest.raises(ConfigError, match="RADIOLOGY"):
        BaselineClassifier().classify(quest_cbc(), profile)


# Lines that each hold a cue strong enough to type a page on its own.
CUE_LINES = [
    "FAX COVER SHEET",
    *REQUISITION,
    *CBC,
    *(line for page in GENOMIC for line in page),
    "Surgical Pathology",
    "Chief complaint: cough",
]


def bundle_of(specs: list[tuple[list[str], bool, bool]]) -> DocumentBundle:
    """A bundle of generated pages: (lines, has a text layer, laid out in paragraphs) for each."""
    pages = []
    for num, (lines, text_layer, with_paragraphs) in enumerate(specs, start=1):
        if with_paragraphs:
            pages.append(make_page(num, [ln.replace("\n", " ") for ln in lines], text_layer=text_layer))
        else:
            pages.append(Page(page_num=num, text="\n".join(lines), has_text_layer=text_layer))
    return make_bundle(pages)


@given(
    st.lists(
        st.tuples(
            st.lists(st.one_of(st.text(max_size=60), st.sampled_from(CUE_LINES)), max_size=6),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_arbitrary_pages_never_crash_the_baseline(specs: list[tuple[list[str], bool, bool]]) -> None:
    """Any page texts give a complete, schema-valid output, or a ClassificationError when nothing is recognised."""
    bundle = bundle_of(specs)
    try:
        out = classify(bundle)
    except ClassificationError:
        assert not any(line in CUE_LINES for (lines, layer, _) in specs if layer for line in lines)
        return
    assert_complete(out, bundle)


# --- honest confidence and fill-in forms ------------------------------------------------------------------


def dominant(out: ClassificationOutput, index: int = 0) -> tuple[str, float]:
    """The segment's dominant type and that type's confidence."""
    seg = out.segments[index]
    return seg.dominant_type, next(t.confidence for t in seg.types if t.document_type == seg.dominant_type)


REPORT_TYPES = set(PROFILE.taxonomy.report_types)
BLANK_PREAUTH = [
    "Genetic Testing Preauthorization Request",
    "Test name:",
    "Family history, including age at diagnosis:",
    "Member ID:",
    "Ordering provider signature: ____",
]


def test_blank_genetic_testing_preauthorization_form_is_administrative() -> None:
    """A blank preauthorization form whose labels name a test and a family history is a confident form."""
    bundle = make_bundle([make_page(1, BLANK_PREAUTH)])
    out = classify(bundle)
    assert_complete(out, bundle)
    assert dominant(out) == ("ADMINISTRATIVE", pytest.approx(0.95))
    reasoning = out.segments[0].classification_reasoning
    assert '"test name" (field label)' in reasoning
    assert "fill-in form fields" in reasoning


@pytest.mark.parametrize(
    "lines",
    [
        BLANK_PREAUTH,
        BLANK_PREAUTH[1:],
        ["Genetic Testing Request", *BLANK_PREAUTH[1:]],
        ["Request", "Test name:", "Family history, including age at diagnosis:"],
        ["Test name: ______", "Family history: ______", "Hemoglobin: ______", "Reference range: ______"],
        ["Complete Blood Count:", "Hemoglobin:", "Hematocrit:", "Platelet count:"],
        ["Surgical Pathology Report:", "Final diagnosis:", "Gross description:"],
    ],
    ids=["titled", "untitled", "unknown-title", "two-labels", "blanks", "cbc-labels", "pathology-labels"],
)
def test_blank_form_is_never_a_confident_report(lines: list[str]) -> None:
    """Field labels that name a test or a diagnosis never make a confident report; the page reads as a form."""
    try:
        out = classify(make_bundle([make_page(1, lines)]))
    except ClassificationError:
        return  # nothing but labels naming things: no guess at all is honest too
    doc_type, confidence = dominant(out)
    assert doc_type == "ADMINISTRATIVE" or confidence < 0.6, (doc_type, confidence)


FORM_FIELDS = [
    "Patient name:",
    "Member ID #:",
    "Prescriber NPI:",
    "Signature: Date:",
    "☐ New request ☐ Renewal",
    "[ ] Urgent [ ] Standard",
    "Is the patient currently on this drug? Yes No",
]


@pytest.mark.parametrize(
    "lines",
    [
        ["Prior Authorization Request Form", "Requested drug name:", *FORM_FIELDS[:3]],
        ["PRE-AUTHORIZATION REQUEST", "Please complete all fields and fax to the plan.", *FORM_FIELDS[:3]],
        ["Precertification", "Procedure requested:", *FORM_FIELDS[:3]],
        ["Request for Authorization", "Service requested:", *FORM_FIELDS[3:]],
        ["Outpatient Drug Authorization Form", *FORM_FIELDS],
        ["Enrollment", *FORM_FIELDS],
        ["FAX", "To: Oncology Clinic", "From: Medical Records", "Re: referral", "Pages: 4"],
        [
            "Advance Directive",
            "I appoint the person named below as my healthcare agent.",
            "This living will states my wishes for life-sustaining treatment.",
            "Signed before a witness and a notary public.",
        ],
        [
            "Power of Attorney for Health Care",
            "My health care agent may decide for me when I cannot.",
            "Witness 1: ______ Witness 2: ______",
        ],
    ],
    ids=[
        "prior-auth-form",
        "pre-authorization",
        "precertification",
        "request-for-authorization",
        "drug-authorization-form",
        "untitled-fill-in-form",
        "fax-cover-fields",
        "advance-directive",
        "health-care-poa",
    ],
)
def test_administrative_wording_is_recognised_with_confidence(lines: list[str]) -> None:
    """Authorization requests, fill-in forms, fax covers and advance directives in real-world wording."""
    bundle = make_bundle([make_page(1, lines)])
    out = classify(bundle)
    assert_complete(out, bundle)
    doc_type, confidence = dominant(out)
    assert (doc_type, confidence >= 0.8) == ("ADMINISTRATIVE", True), out.segments[0].classification_reasoning


def test_section_headings_ending_in_a_colon_are_not_a_form() -> None:
    """A note's "MEDICATIONS:" heading is followed by its content, so the note is no fill-in form."""
    note = [
        "PROGRESS NOTE",
        "CHIEF COMPLAINT:",
        "Cough for three weeks.",
        "MEDICATIONS:",
        "Lisinopril 10 mg daily",
        "ALLERGIES:",
        "None known",
        "ASSESSMENT AND PLAN:",
        "Likely viral bronchitis.",
    ]
    out = classify(make_bundle([make_page(1, note)]))
    doc_type, confidence = dominant(out)
    assert (doc_type, confidence >= 0.8) == ("CLINICAL_NOTE", True)
    assert "fill-in" not in out.segments[0].classification_reasoning
    assert "field label" not in out.segments[0].classification_reasoning


UNRECOGNISED = ["Lorem ipsum dolor sit amet.", "Consectetur adipiscing elit, sed do eiusmod tempor."]
BLANK_SHEET = Page(page_num=2, text="", has_text_layer=False, ocr_status=OcrStatus.NO_TEXT)


@pytest.mark.parametrize(
    ("pages", "low", "high", "says"),
    [
        ([make_page(1, CBC)], 0.8, 1.0, None),
        (
            [make_page(1, ["Visit", "Urinalysis ordered.", "Past medical history reviewed."])],
            0.0,
            0.6,
            "tied",
        ),
        (
            [
                make_page(
                    1,
                    [
                        "Visit",
                        "Lipid panel and urinalysis ordered.",
                        "Chief complaint and past medical history reviewed; allergies none.",
                    ],
                )
            ],
            0.0,
            0.6,
            "nearly tied",
        ),
        (
            [make_page(1, ["Complete blood count:", "Comprehensive metabolic panel:"])],
            0.0,
            0.6,
            "fill-in field labels",
        ),
        ([make_page(1, CBC), make_page(2, UNRECOGNISED)], 0.0, 0.6, "has no recognisable wording"),
        (list(genomic_with_scan().pages), 0.6, 0.8, "has no readable text"),
        (
            [make_page(1, ["Surgical Pathology Report", "Final diagnosis: adenoma"]), BLANK_SHEET],
            0.8,
            1.0,
            "blank",
        ),
        ([make_page(1, ["Progress note", "Hemoglobin 11.2"])], 0.8, 1.0, None),
        (
            [make_page(1, ["Visit", "Office visit; allergies none.", "Hemoglobin 11.2, hematocrit 34."])],
            0.6,
            0.8,
            "holds a share",
        ),
    ],
    ids=[
        "clear-cbc",
        "tie",
        "near-tie",
        "labels-only",
        "half-unrecognised",
        "third-unreadable",
        "blank-back-page",
        "decisive-title",
        "second-type-share",
    ],
)
def test_confidence_follows_the_evidence(
    pages: list[Page], low: float, high: float, says: str | None
) -> None:
    """Ties, label-only evidence and guessed pages give low confidence, and the reasoning says why."""
    bundle = make_bundle(pages)
    out = classify(bundle)
    assert_complete(out, bundle)
    assert len(out.segments) == 1
    _, confidence = dominant(out)
    assert low <= confidence < high or confidence == high == 1.0, confidence
    reasoning = out.segments[0].classification_reasoning
    if says is None:
        assert "held down" not in reasoning
    else:
        assert says in reasoning


def test_a_tie_is_not_presented_as_a_decision() -> None:
    """When two types tie the reasoning names both and says the pick is only taxonomy order."""
    out = classify(
        make_bundle([make_page(1, ["Visit", "Urinalysis ordered.", "Past medical history reviewed."])])
    )
    reasoning = out.segments[0].classification_reasoning
    assert "LAB_REPORT and CLINICAL_NOTE are tied" in reasoning
    assert "only because it comes first in the taxonomy" in reasoning


def footer_pages(footers: list[str], lines: list[str] = CBC) -> list[Page]:
    return [make_page(i, lines, footer=f) for i, f in enumerate(footers, start=1)]


@pytest.mark.parametrize(
    ("footers", "segments"),
    [
        (["Page 1 of 1", "Page 1 of 2", "Page 2 of 2"], [(1, 1), (2, 3)]),
        (["Page 1 of 2", "Page 2 of 2", "Page 1 of 1", "Page 1 of 1"], [(1, 2), (3, 3), (4, 4)]),
        (["Page 1 of 3", "Page 2 of 3", "Page 3 of 3"], [(1, 3)]),
        (["Page 1 of 3", "Page 1 of 3", "Page 1 of 3"], [(1, 1), (2, 2), (3, 3)]),
        (["Confidential", "Page 1 of 2", "Page 2 of 2"], [(1, 1), (2, 3)]),
        (["1 | Page", "2 | Page", "1 | Page"], [(1, 2), (3, 3)]),
        (["Fax from Quest Page 1 of 3", "Fax from Quest Page 2 of 3", "Page 1 of 1"], [(1, 2), (3, 3)]),
        (["Page 1 of 2", "Fax to clinic Page 1 of 2"], [(1, 2)]),
        # A page after one numbered as its document's last starts another (issue 26), numbered or not.
        (["Page 1 of 1", "Confidential"], [(1, 1), (2, 2)]),
        (["Page 1 of 2", "Page 2 of 2", "Confidential"], [(1, 2), (3, 3)]),
    ],
    ids=[
        "labcorp",
        "one-page-reports",
        "one-report",
        "first-page-repeated",
        "unnumbered-then-numbered",
        "bar-page",
        "fax-counter",
        "fax-only",
        "unnumbered-after-last",
        "unnumbered-after-last-of-two",
    ],
)
def test_page_numbering_that_restarts_starts_a_new_segment(
    footers: list[str], segments: list[tuple[int, int]]
) -> None:
    """Two reports of one type back to back are split where "Page 1 of N" restarts or after a page numbered
    as its document's last ("Page 2 of 2"), and only there."""
    bundle = make_bundle(footer_pages(footers))
    out = classify(bundle)
    assert_complete(out, bundle)
    assert [(s.start_page, s.end_page) for s in out.segments] == segments
    assert {s.dominant_type for s in out.segments} == {"LAB_REPORT"}
    for seg in out.segments[1:]:
        assert (
            "page numbering restarts" in seg.classification_reasoning
            or "numbered as its document's last" in seg.classification_reasoning
        )


def test_restart_split_can_be_turned_off() -> None:
    """split_on_page_restart = false keeps same-type pages together whatever their numbering."""
    assert PROFILE.baseline is not None
    settings = PROFILE.baseline.model_copy(update={"split_on_page_restart": False})
    profile = PROFILE.model_copy(update={"baseline": settings, "name": "no-restart"})
    out = classify(make_bundle(footer_pages(["Page 1 of 1", "Page 1 of 2"])), profile)
    assert [(s.start_page, s.end_page) for s in out.segments] == [(1, 2)]


@pytest.mark.parametrize(
    ("line", "field", "label"),
    [
        ("patient name:", True, "patient name:"),
        ("member id #:", True, "member id #:"),
        ("signature: date:", True, "signature:"),
        ("ordering provider signature: ____", True, "ordering provider signature:"),
        ("☐ new request ☐ reauthorization", True, None),
        ("[ ] urgent [x] standard", True, None),
        ("is this drug for opioid dependence? yes no", True, None),
        ("signature ______________ date ________", True, None),
        ("patient name: jane doe", False, None),
        ("time: 10:30", False, None),
        ("hemoglobin 13.2 g/dl", False, None),
        ("hemoglobin .......... 13.2", False, None),
        (":", False, None),
        (
            "the following medications were started during the stay and are to be continued at home:",
            True,
            None,
        ),
    ],
)
def test_form_line_reading(line: str, field: bool, label: str | None) -> None:
    """Label-only lines, blanks, check boxes and yes/no questions are fillable; filled-in values are not."""
    read = form_line(line, 100)
    assert read.fillable == field
    if label is not None:
        assert read.label == label


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        (["patient name:", "member id:", "signature:"], [True, True, True]),
        (["medications:", "lisinopril 10 mg daily", "allergies:", "none"], [False, False, False, False]),
        (["history:", "notes follow", "name: dose:", "plan:"], [False, False, True, True]),
        (["diagnosis: ____", "plan of care"], [True, False]),
    ],
    ids=["labels", "headings", "multi-label-and-last", "blank"],
)
def test_a_lone_label_is_a_field_only_among_fields(lines: list[str], fields: list[bool]) -> None:
    """A bare "Label:" counts as a field when the next line is fillable too or it ends the page."""
    assert [f is not None for f in form_fields(lines, 100)] == fields


LABEL_WORDS = st.sampled_from(
    sorted({p for per_type in PROFILE.baseline.cues.values() for p in per_type} if PROFILE.baseline else [])
)
LABEL_LINES = st.builds(
    lambda words, blank: " ".join(words).replace(":", "") + ":" + blank,
    st.lists(
        st.one_of(LABEL_WORDS, st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True)), min_size=1, max_size=3
    ),
    st.sampled_from(["", " ", " ____", " __________"]),
)


@given(st.lists(LABEL_LINES, min_size=1, max_size=12))
def test_a_page_of_labels_never_makes_a_confident_report(lines: list[str]) -> None:
    """A page made only of label lines never yields a report type with confidence >= 0.6."""
    bundle = make_bundle([make_page(1, lines)])
    try:
        out = classify(bundle)
    except ClassificationError:
        return
    assert_complete(out, bundle)
    for seg in out.segments:
        for t in seg.types:
            if t.document_type in REPORT_TYPES and t.share > 0:
                assert t.confidence < 0.6, (lines, seg.classification_reasoning)


@given(
    floor=st.floats(0, 1),
    span=st.floats(0, 1),
    decisive=st.floats(0.01, 1),
    full=st.floats(0.01, 50),
    coverage_floor=st.floats(0, 0.99),
    factor=st.floats(0, 1),
)
def test_confidence_is_always_between_0_and_1(
    floor: float, span: float, decisive: float, full: float, coverage_floor: float, factor: float
) -> None:
    """Whatever the profile's confidence settings, every confidence stays in [0, 1]."""
    assert PROFILE.baseline is not None
    settings = PROFILE.baseline.model_copy(
        update={
            "confidence_floor": floor,
            "confidence_ceiling": floor + (1 - floor) * span,
            "decisive_margin": decisive,
            "full_evidence_score": full,
            "coverage_floor": coverage_floor,
            "label_cue_factor": factor,
        }
    )
    profile = PROFILE.model_copy(update={"baseline": settings, "name": "any-confidence"})
    for pages in ([make_page(1, BLANK_PREAUTH)], [make_page(1, CBC), make_page(2, UNRECOGNISED)]):
        out = classify(make_bundle(pages), profile)
        assert all(0.0 <= t.confidence <= 1.0 for seg in out.segments for t in seg.types)


def test_confidence_floor_above_ceiling_is_refused() -> None:
    """A profile whose confidence floor exceeds its ceiling is invalid."""
    assert PROFILE.baseline is not None
    data = {**PROFILE.baseline.model_dump(), "confidence_floor": 0.9, "confidence_ceiling": 0.5}
    with pytest.raises(ValidationError, match="confidence_floor"):
        Baseline.model_validate(data)


@pytest.mark.parametrize(
    ("pages", "decision", "codes"),
    [
        ([make_page(1, BLANK_PREAUTH)], "AUTO_ACCEPT", set()),
        (
            [make_page(1, ["Visit", "Urinalysis ordered.", "Past medical history reviewed."])],
            "ESCALATE_TO_SME",
            {"V2.PRIMARY_LOW_CONFIDENCE", "V2.PRIMARY_TYPE_TIE"},
        ),
    ],
    ids=["blank-preauth-form", "tie"],
)
def test_verifiers_act_on_the_baselines_doubt(pages: list[Page], decision: str, codes: set[str]) -> None:
    """A confident blank form is accepted as ADMINISTRATIVE; a tie the baseline admits to is escalated."""
    from arbiter.decide import governor

    bundle = make_bundle(pages)
    outcome = governor.verify_with_retries(
        BaselineClassifier().classify(bundle, PROFILE).raw, bundle, PROFILE
    )
    assert outcome.final_decision == decision
    assert codes <= {i.code for i in outcome.final_issues}


# --- the file classifier -------------------------------------------------------------------------------


def test_file_classifier_reads_text_verbatim(tmp_path: Path) -> None:
    """The file's text is passed on untouched, even when it is not valid JSON (V1 reports that)."""
    (tmp_path / "packet-7.json").write_text('{"doc_id": "packet-7", broken', encoding="utf-8")
    out = FileClassifier(tmp_path).classify(faxed_genomic_packet(), PROFILE)
    assert out.raw == '{"doc_id": "packet-7", broken'
    assert out.producer == f"file:{tmp_path / 'packet-7.json'}"


def test_file_classifier_passes_garbled_bytes_on_as_replacement_characters(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 reach V1 as text with replacement characters; a BOM is dropped."""
    (tmp_path / "packet-7.json").write_bytes(b'{"a": "\xff\xfe"}')
    assert FileClassifier(tmp_path).classify(faxed_genomic_packet(), PROFILE).raw == '{"a": "\ufffd\ufffd"}'
    (tmp_path / "packet-7.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert FileClassifier(tmp_path).classify(faxed_genomic_packet(), PROFILE).raw == '{"a": 1}'


def test_file_classifier_missing_file_is_a_classification_error(tmp_path: Path) -> None:
    """A document without a classification file fails with the file name and directory."""
    with pytest.raises(ClassificationError, match=f"No classification file packet-7.json in {tmp_path}"):
        FileClassifier(tmp_path).classify(faxed_genomic_packet(), PROFILE)


@pytest.mark.parametrize("doc_id", ["../secret", "a/b", "..", ".", "", "  ", "/etc/passwd", "a\\b", "x\x00y"])
def test_file_classifier_refuses_ids_that_leave_the_directory(tmp_path: Path, doc_id: str) -> None:
    """A doc_id that names another directory is refused, and has no input digest."""
    inside = tmp_path / "dir"
    inside.mkdir()
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    classifier = FileClassifier(inside)
    with pytest.raises(ClassificationError, match="cannot be used"):
        classifier.classify(make_bundle([make_page(1, CBC)], doc_id=doc_id), PROFILE)
    assert classifier.input_digest(doc_id) is None


def test_file_classifier_input_digest(tmp_path: Path) -> None:
    """input_digest is the sha256 of the file's bytes, None when the file is missing."""
    data = b'{"doc_id": "packet-7"}'
    (tmp_path / "packet-7.json").write_bytes(data)
    classifier = FileClassifier(tmp_path)
    assert classifier.input_digest("packet-7") == hashlib.sha256(data).hexdigest()
    assert classifier.input_digest("packet-8") is None


def test_file_classifier_needs_an_existing_directory(tmp_path: Path) -> None:
    """Pointing the file classifier at a missing directory is a configuration error."""
    with pytest.raises(ConfigError, match="does not exist"):
        FileClassifier(tmp_path / "nope")


# --- the registry ----------------------------------------------------------------------------------------


def test_get_classifier_returns_the_named_classifier(tmp_path: Path) -> None:
    """`baseline` and `file` are available by name."""
    assert isinstance(get_classifier("baseline"), BaselineClassifier)
    file = get_classifier("file", classifications_dir=tmp_path)
    assert isinstance(file, FileClassifier)
    assert file.name == "file"


@pytest.mark.parametrize(
    ("name", "directory", "message"),
    [("gpt", None, "Unknown classifier 'gpt'"), ("file", None, "needs a directory")],
)
def test_get_classifier_errors(name: str, directory: Path | None, message: str) -> None:
    """An unknown name, or `file` without a directory, is a configuration error."""
    with pytest.raises(ConfigError, match=message):
        get_classifier(name, classifications_dir=directory)


def test_baseline_rerun_key_is_its_version() -> None:
    """The baseline has no input file, so re-runs key on its version (the pipeline checks input_digest)."""
    assert not hasattr(BaselineClassifier(), "input_digest")
    assert BaselineClassifier.version == "1.0.0"
