"""The content rules (V2 CONTENT/BOUNDARY/SPANS/PRIMARY_*, V4 EVIDENCE_*): a table of small documents."""

from __future__ import annotations

from typing import Any

import pytest

from arbiter.contracts import Page
from arbiter.verifiers.content import read_bundle, read_page, read_snippet
from arbiter.verifiers.v2_consistency import V2Consistency
from arbiter.verifiers.v4_evidence import V4Evidence
from tests.v34_helpers import LEXICONS, PROFILE, classification, make_bundle, make_page, run, segment

CONTENT_CODES = {
    "V2.CONTENT_CONTRADICTS_TYPE",
    "V2.BOUNDARY_INSIDE_DOCUMENT",
    "V2.SEGMENT_SPANS_DOCUMENTS",
    "V2.PRIMARY_LOW_CONFIDENCE",
    "V2.PRIMARY_TYPE_TIE",
    "V4.EVIDENCE_READS_AS_OTHER_TYPE",
    "V4.EVIDENCE_FORM_LABEL_ONLY",
}


def page(num: int, *paragraphs: tuple[str, str]) -> Page:
    return make_page(num, paragraphs=list(paragraphs))


def lab(num: int, footer: str = "") -> Page:
    paras = [
        ("Northfield Regional Laboratory", "header"),
        ("Chemistry and Hematology Results", "heading"),
        ("Test Result Units Reference Range", "table"),
        ("Hemoglobin 11.2 L g/dL 12.0-15.5 g/dL\nPotassium 5.9 H mmol/L 3.5-5.1 mmol/L", "table"),
        ("Specimen collected 03/02/2026 07:40", "paragraph"),
    ]
    return page(num, *paras, *([(footer, "footer")] if footer else []))


def lab_full_page(num: int) -> Page:
    """A lab report's first page whose results run to the foot of the page (the report goes on overleaf)."""
    rows = "\n".join(
        f"Analyte {chr(65 + i % 26)}{i} {4 + i % 5}.{i % 10} mmol/L 3.5-9.9 mmol/L" for i in range(44)
    )
    return page(
        num,
        ("Northfield Regional Laboratory", "header"),
        ("Chemistry and Hematology Results", "heading"),
        ("Test Result Units Reference Range", "table"),
        (rows, "table"),
    )


def lab_results_continued(num: int) -> Page:
    """A later page of a lab report: more result rows and the director's line, no letterhead or title."""
    return page(
        num,
        (
            "Sodium 139 mmol/L 136-145 mmol/L\nChloride 101 mmol/L 98-107 mmol/L\n"
            "Glucose 182 H mg/dL 70-99 mg/dL\nCreatinine 1.1 mg/dL 0.6-1.2 mg/dL",
            "table",
        ),
        ("Reviewed by: J. Park, MD, Laboratory Director", "paragraph"),
    )


def pathology(num: int, footer: str = "") -> Page:
    paras = [
        ("Surgical Pathology Report", "heading"),
        ("Gross Description", "heading"),
        ("Received in formalin a portion of colon measuring 12.0 x 3.1 x 2.0 cm.", "paragraph"),
        ("Final Diagnosis", "heading"),
        ("Adenocarcinoma, moderately differentiated; margins negative; pT3N1a.", "paragraph"),
    ]
    return page(num, *paras, *([(footer, "footer")] if footer else []))


def note(num: int, footer: str = "") -> Page:
    paras = [
        ("Office Visit - Progress Note", "heading"),
        ("Chief Complaint: shortness of breath for two weeks.", "paragraph"),
        ("History of Present Illness", "heading"),
        ("The patient reports worsening dyspnea. BP 142/88, HR 96.", "paragraph"),
        ("Assessment and Plan", "heading"),
        ("Start furosemide 20 mg p.o. daily; follow up in one week.", "paragraph"),
    ]
    return page(num, *paras, *([(footer, "footer")] if footer else []))


def comments(num: int, *footers: str) -> Page:
    """A report's last page with nothing typed on it: a comment and the page's numbering."""
    return page(
        num,
        ("Interpretive comments", "heading"),
        (
            "Results were reviewed by the laboratory director. Repeat testing is advised if needed.",
            "paragraph",
        ),
        *((footer, "footer") for footer in footers),
    )


COMMENT_EV = {"CLINICAL_NOTE": [(2, "Results were reviewed by the laboratory director")]}


def blank_form(num: int) -> Page:
    return page(
        num,
        ("Genetic Testing Preauthorization Request", "heading"),
        ("Patient name: Date of birth:", "paragraph"),
        ("Member ID: Group number:", "paragraph"),
        ("Test name:", "paragraph"),
        ("Family history, including age at diagnosis:", "paragraph"),
        ("Ordering provider signature: ____________ Date: ______", "paragraph"),
    )


def cover_letter(num: int) -> Page:
    """A letter sending a genomic report: its subject line names the report it is about."""
    return page(
        num,
        ("Riverside Oncology Associates", "header"),
        ("Dear Dr. Patel,", "paragraph"),
        ("Re: Comprehensive genomic profiling results", "heading"),
        (
            "Please find enclosed the comprehensive genomic profiling report for our mutual patient. "
            "We will discuss it at the next tumor board.",
            "paragraph",
        ),
        ("Sincerely,\nDr. A. Smith", "paragraph"),
    )


def requisition(num: int) -> Page:
    """A filled-in test requisition: the tests it orders, by name, and no results."""
    return page(
        num,
        ("Northfield Regional Laboratory", "header"),
        ("Test Requisition", "heading"),
        ("Patient: Jane Roe    DOB: 04/12/1961", "paragraph"),
        ("Tests ordered", "heading"),
        (
            "Complete blood count with differential\nComprehensive metabolic panel\nLipid panel\n"
            "Thyroid panel\nUrinalysis",
            "paragraph",
        ),
        ("Specimen collected: 03/02/2026 07:40", "paragraph"),
        ("Ordering provider: Dr. A. Smith", "paragraph"),
    )


def prior_auth(num: int) -> Page:
    """A prior-authorization request for a genomic test."""
    return page(
        num,
        ("Prior Authorization Request", "heading"),
        ("Member ID: W123456789    Health plan: Evergreen Health Plan", "paragraph"),
        ("Requested service", "heading"),
        ("Service: comprehensive genomic profiling. CPT code: 81455", "paragraph"),
        ("Clinical justification", "heading"),
        ("The patient requires genomic testing to select targeted therapy.", "paragraph"),
    )


def genetic_requisition(num: int) -> Page:
    """A genetic testing requisition in its own wording: the genes it orders, a consent, no results."""
    return page(
        num,
        ("HEREDITARY CANCER GENETIC TESTING REQUISITION", "heading"),
        ("Cindergate Genomics Laboratory  |  Client services (555) 908-4400", "paragraph"),
        ("Patient: Alice Pemberton-Ross    DOB: 11/19/1979    Sex: [X] F [ ] M", "paragraph"),
        ("TEST SELECTION", "heading"),
        (
            "[X] Breast/Gynecologic Cancer Panel (21 genes): ATM, BARD1, BRCA1, BRCA2, BRIP1, CDH1, CHEK2,\n"
            "EPCAM, MLH1, MSH2, MSH6, NBN, NF1, PALB2, PMS2, PTEN, RAD51C, RAD51D, STK11, TP53\n"
            "Sequencing and deletion/duplication analysis; germline variants classified per ACMG\n"
            "[ ] Lynch syndrome panel: MLH1, MSH2, MSH6, PMS2, EPCAM    [ ] Single-site variant testing\n"
            "[ ] Pharmacogenomic panel: CYP2C19, CYP2D6, CYP2C9, VKORC1, SLCO1B1, TPMT, NUDT15, DPYD",
            "paragraph",
        ),
        ("Specimen: [X] Blood (EDTA)  [ ] Saliva    Collected: 03/02/2026", "paragraph"),
        ("Patient consent for genetic testing signed: [X] Yes", "paragraph"),
    )


def lab_naming_its_order(num: int) -> Page:
    """A lab report that prints its requisition number and the tests ordered above its results."""
    return page(
        num,
        ("Northfield Regional Laboratory", "header"),
        ("Requisition #: 0012345", "paragraph"),
        ("Tests ordered: Comprehensive metabolic panel", "heading"),
        ("Test Result Units Reference Range", "table"),
        ("Sodium 139 mmol/L 136-145 mmol/L\nPotassium 5.9 H mmol/L 3.5-5.1 mmol/L", "table"),
    )


LAB_EV = {"LAB_REPORT": [(1, "Test Result Units Reference Range")]}
PATH_EV = {"PATHOLOGY_REPORT": [(1, "Final Diagnosis")]}
NOTE_EV = {"CLINICAL_NOTE": [(1, "History of Present Illness")]}


def seg(start: int, end: int, dominant: str, ev: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return dict(segment(start, end, dominant, ev), **changes)


def relabelled(data: dict[str, Any]) -> dict[str, Any]:
    return data


def low_confidence(data: dict[str, Any]) -> dict[str, Any]:
    entry = next(t for t in data["segments"][0]["types"] if t["document_type"] == "LAB_REPORT")
    entry["confidence"] = 0.5
    return data


def tied(data: dict[str, Any]) -> dict[str, Any]:
    types = {t["document_type"]: t for t in data["segments"][0]["types"]}
    types["LAB_REPORT"]["share"] = 0.52
    types["CLINICAL_NOTE"].update(
        share=0.48, presence_level="PRIMARY", evidence=[{"page": 1, "snippet": "Specimen collected"}]
    )
    return data


# (id, pages, segments, mutate, expected content codes)
CASES: list[tuple[str, list[Page], list[dict[str, Any]], Any, set[str]]] = [
    ("correct_lab", [lab(1)], [seg(1, 1, "LAB_REPORT", LAB_EV)], None, set()),
    ("correct_note", [note(1)], [seg(1, 1, "CLINICAL_NOTE", NOTE_EV)], None, set()),
    (
        "lab_called_pathology_evidence_moved",
        [lab(1)],
        [seg(1, 1, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": LAB_EV["LAB_REPORT"]})],
        None,
        {"V2.CONTENT_CONTRADICTS_TYPE", "V4.EVIDENCE_READS_AS_OTHER_TYPE"},
    ),
    (
        "pathology_called_note_other_line",
        [pathology(1)],
        [seg(1, 1, "CLINICAL_NOTE", {"CLINICAL_NOTE": [(1, "Received in formalin a portion of colon")]})],
        None,
        {"V2.CONTENT_CONTRADICTS_TYPE"},
    ),
    (
        "blank_form_called_lab",
        [blank_form(1)],
        [seg(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Test name:"), (1, "Family history, including age")]})],
        None,
        {"V2.CONTENT_CONTRADICTS_TYPE", "V4.EVIDENCE_FORM_LABEL_ONLY"},
    ),
    (
        "blank_form_as_administrative",
        [blank_form(1)],
        [seg(1, 1, "ADMINISTRATIVE", {"ADMINISTRATIVE": [(1, "Test name:")]})],
        None,
        set(),
    ),
    (
        "boundary_inside_page_numbering",
        [lab(1, "Page 1 of 2"), lab(2, "Page 2 of 2")],
        [
            seg(1, 1, "LAB_REPORT", LAB_EV),
            seg(2, 2, "LAB_REPORT", {"LAB_REPORT": [(2, "Test Result Units")]}),
        ],
        None,
        {"V2.BOUNDARY_INSIDE_DOCUMENT"},
    ),
    (
        "two_reports_numbered_apart",
        [lab(1, "Page 1 of 1"), lab(2, "Page 1 of 1")],
        [
            seg(1, 1, "LAB_REPORT", LAB_EV),
            seg(2, 2, "LAB_REPORT", {"LAB_REPORT": [(2, "Test Result Units")]}),
        ],
        None,
        set(),
    ),
    (
        "same_type_split_with_nothing_new",
        [lab_full_page(1), lab_results_continued(2)],
        [
            seg(1, 1, "LAB_REPORT", LAB_EV),
            seg(2, 2, "LAB_REPORT", {"LAB_REPORT": [(2, "Test Result Units")]}),
        ],
        None,
        {"V2.BOUNDARY_INSIDE_DOCUMENT"},
    ),
    (
        "merged_documents_numbering_restarts",
        [lab(1, "Page 1 of 1"), lab(2, "Page 1 of 1")],
        [seg(1, 2, "LAB_REPORT", LAB_EV)],
        None,
        {"V2.SEGMENT_SPANS_DOCUMENTS"},
    ),
    (
        "merged_documents_new_title",
        [note(1), pathology(2)],
        [seg(1, 2, "CLINICAL_NOTE", NOTE_EV)],
        None,
        {"V2.SEGMENT_SPANS_DOCUMENTS", "V2.CONTENT_CONTRADICTS_TYPE"},
    ),
    (
        "continuation_marker_split",
        [
            note(1),
            page(2, ("Assessment and Plan (continued)", "heading"), ("Recheck labs in a week.", "paragraph")),
        ],
        [
            seg(1, 1, "CLINICAL_NOTE", NOTE_EV),
            seg(2, 2, "LAB_REPORT", {"LAB_REPORT": [(2, "Recheck labs in a week.")]}),
        ],
        None,
        {"V2.BOUNDARY_INSIDE_DOCUMENT"},
    ),
    (
        "split_inside_document_numbered_like_the_file",
        [lab(1, "Page 1 of 2"), comments(2, "Page 2 of 2")],
        [seg(1, 1, "LAB_REPORT", LAB_EV), seg(2, 2, "CLINICAL_NOTE", COMMENT_EV)],
        None,
        # The page reader also reads the comments page as the laboratory's, not a note.
        {"V2.BOUNDARY_INSIDE_DOCUMENT", "V2.CONTENT_CONTRADICTS_TYPE"},
    ),
    (
        "packet_stamp_with_own_numbering_restarting",
        [lab(1, "Page 1 of 2"), comments(2, "Page 2 of 2", "Page 1 of 1")],
        [seg(1, 1, "LAB_REPORT", LAB_EV), seg(2, 2, "CLINICAL_NOTE", COMMENT_EV)],
        None,
        # No boundary finding (the stamp restarts); the reader still reads the page as a laboratory's.
        {"V2.CONTENT_CONTRADICTS_TYPE"},
    ),
    (
        "merge_under_packet_stamp",
        [lab(1, "Page 1 of 2"), pathology(2, "Page 2 of 2")],
        [seg(1, 2, "LAB_REPORT", LAB_EV)],
        None,
        {"V2.SEGMENT_SPANS_DOCUMENTS", "V2.CONTENT_CONTRADICTS_TYPE"},
    ),
    (
        "fax_machine_numbering_joins_nothing",
        [lab(1, "Fax from 555-0100 Page 1/2"), pathology(2, "Fax from 555-0100 Page 2/2")],
        [
            seg(1, 1, "LAB_REPORT", LAB_EV),
            seg(2, 2, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": [(2, "Final Diagnosis")]}),
        ],
        None,
        set(),
    ),
    (
        "cover_letter_about_genomic_results",
        [cover_letter(1)],
        [
            seg(
                1,
                1,
                "ADMINISTRATIVE",
                {"ADMINISTRATIVE": [(1, "Re: Comprehensive genomic profiling results")]},
            )
        ],
        None,
        set(),
    ),
    (
        "requisition_as_administrative",
        [requisition(1)],
        [seg(1, 1, "ADMINISTRATIVE", {"ADMINISTRATIVE": [(1, "Test Requisition")]})],
        None,
        set(),
    ),
    (
        "prior_auth_then_requisition",
        [prior_auth(1), requisition(2)],
        [
            seg(1, 1, "ADMINISTRATIVE", {"ADMINISTRATIVE": [(1, "Prior Authorization Request")]}),
            seg(2, 2, "ADMINISTRATIVE", {"ADMINISTRATIVE": [(2, "Test Requisition")]}),
        ],
        None,
        set(),
    ),
    (
        "genetic_requisition_as_administrative",
        [genetic_requisition(1)],
        [
            seg(
                1,
                1,
                "ADMINISTRATIVE",
                {"ADMINISTRATIVE": [(1, "HEREDITARY CANCER GENETIC TESTING REQUISITION")]},
            )
        ],
        None,
        set(),
    ),
    (
        "requisition_called_lab",
        [requisition(1)],
        [seg(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Complete blood count with differential")]})],
        None,
        # The page reader gives this short list of test names LAB_REPORT 0.79; the lexicons, a second opinion
        # (lexicons_too), read it as an order.
        {"V2.CONTENT_CONTRADICTS_TYPE", "V4.EVIDENCE_READS_AS_OTHER_TYPE"},
    ),
    (
        "lab_called_administrative",
        [lab(1)],
        [seg(1, 1, "ADMINISTRATIVE", {"ADMINISTRATIVE": LAB_EV["LAB_REPORT"]})],
        None,
        {"V2.CONTENT_CONTRADICTS_TYPE", "V4.EVIDENCE_READS_AS_OTHER_TYPE"},
    ),
    (
        "lab_naming_its_order_called_administrative",
        [lab_naming_its_order(1)],
        [seg(1, 1, "ADMINISTRATIVE", {"ADMINISTRATIVE": LAB_EV["LAB_REPORT"]})],
        None,
        {"V2.CONTENT_CONTRADICTS_TYPE", "V4.EVIDENCE_READS_AS_OTHER_TYPE"},
    ),
    (
        "low_confidence",
        [lab(1)],
        [seg(1, 1, "LAB_REPORT", LAB_EV)],
        low_confidence,
        {"V2.PRIMARY_LOW_CONFIDENCE"},
    ),
    ("tie", [lab(1)], [seg(1, 1, "LAB_REPORT", LAB_EV)], tied, {"V2.PRIMARY_TYPE_TIE"}),
]


@pytest.mark.parametrize(
    ("pages", "segments", "mutate", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_content_rule(
    pages: list[Page], segments: list[dict[str, Any]], mutate: Any, expected: set[str]
) -> None:
    """Each document gets exactly the expected content codes, MAJOR and never fixable."""
    data = classification(*segments)
    if mutate:
        data = mutate(data)
    bundle = make_bundle(*pages)
    issues = [
        i for r in (run(V2Consistency(), data, bundle), run(V4Evidence(), data, bundle)) for i in r.issues
    ]
    found = [i for i in issues if i.code in CONTENT_CODES]
    assert {i.code for i in found} == expected, [i.message for i in found]
    assert all(i.severity == "MAJOR" and not i.auto_fixable and i.fix is None for i in found)


def test_packet_wide_page_stamp_joins_nothing() -> None:
    """A stamp numbering every page of the file ("Page k of N", N the file's pages) is not a document's own."""
    data = classification(seg(1, 1, "LAB_REPORT", LAB_EV), seg(2, 2, "PATHOLOGY_REPORT", PATH_EV))
    data["segments"][1]["types"][2]["evidence"] = [{"page": 2, "snippet": "Final Diagnosis", "anchor": None}]
    bundle = make_bundle(lab(1, "Page 1 of 2"), pathology(2, "Page 2 of 2"))
    issues = run(V2Consistency(), data, bundle).issues
    assert [i.code for i in issues if i.code in CONTENT_CODES] == []


def test_reader_contradiction_message_names_probability_and_words() -> None:
    """With the page reader, the message gives its probabilities and the page's words that moved it."""
    data = classification(seg(1, 1, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": LAB_EV["LAB_REPORT"]}))
    result = run(V2Consistency(), data, make_bundle(lab(1)))
    (issue,) = [i for i in result.issues if i.code == "V2.CONTENT_CONTRADICTS_TYPE"]
    assert "the page reader reads its pages as LAB_REPORT" in issue.message
    assert "gives PATHOLOGY_REPORT 0.0" in issue.message
    assert '"Laboratory"' in issue.message or '"Range"' in issue.message


def test_contradiction_message_names_pages_and_words() -> None:
    """The message says which page reads as what, quoting the words seen, and that nothing supports the label."""
    data = classification(seg(1, 1, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": LAB_EV["LAB_REPORT"]}))
    result = run(V2Consistency(), data, make_bundle(lab(1)), LEXICONS)
    (issue,) = [i for i in result.issues if i.code == "V2.CONTENT_CONTRADICTS_TYPE"]
    assert "read as LAB_REPORT" in issue.message
    assert "page 1" in issue.message
    assert "Test Result Units Reference Range" in issue.message
    assert "Nothing on these pages reads as PATHOLOGY_REPORT" in issue.message


def test_boundary_message_quotes_the_numbering() -> None:
    """A split inside one run of page numbers quotes both numbers."""
    data = classification(
        seg(1, 1, "LAB_REPORT", LAB_EV), seg(2, 2, "LAB_REPORT", {"LAB_REPORT": [(2, "Test Result Units")]})
    )
    data = classification(
        *data["segments"], seg(3, 3, "PATHOLOGY_REPORT", {"PATHOLOGY_REPORT": [(3, "Final Diagnosis")]})
    )
    bundle = make_bundle(lab(1, "Page 1 of 2"), lab(2, "Page 2 of 2"), pathology(3, "Page 1 of 1"))
    result = run(V2Consistency(), data, bundle)
    (issue,) = [i for i in result.issues if i.code == "V2.BOUNDARY_INSIDE_DOCUMENT"]
    assert '"Page 1 of 2", then "Page 2 of 2"' in issue.message
    assert issue.location.segment_index == 2
    assert issue.location.page == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hemoglobin 11.2 g/dL 12.0-15.5 g/dL", "LAB_REPORT"),
        ("KRAS p.G12C (c.34G>T), VAF 23%", "GENOMIC_REPORT"),
        ("Final diagnosis: invasive carcinoma, pT2N0", "PATHOLOGY_REPORT"),
        ("History of present illness: cough", "CLINICAL_NOTE"),
        ("Prior authorization request form", "ADMINISTRATIVE"),
        ("Comprehensive genomic profiling results", "GENOMIC_REPORT"),
        ("Re: Comprehensive genomic profiling results", "ADMINISTRATIVE"),
        ("Please find enclosed the final pathology report.", "ADMINISTRATIVE"),
        ("Tests requested: lipid panel, thyroid panel", "ADMINISTRATIVE"),
        ("Re: your visit. Final diagnosis: invasive carcinoma", "PATHOLOGY_REPORT"),
    ],
)
def test_snippet_reading(text: str, expected: str) -> None:
    """A snippet's own words point to its type; a phrase after "Re:", "enclosed", "requested" to paperwork."""
    scores = read_snippet(text, PROFILE)
    assert max(scores, key=lambda t: scores[t]) == expected


@pytest.mark.parametrize(
    ("line", "is_field"),
    [
        ("Patient name: Date of birth:", True),
        ("Provider signature: ____________", True),
        ("[ ] Hereditary cancer panel", True),
        ("Is this a new request? Yes No", True),
        ("Hemoglobin: 13.2 g/dL", False),
        ("Diagnosis: adenocarcinoma", False),
    ],
)
def test_fill_in_fields(line: str, is_field: bool) -> None:
    """Labels with nothing after them, blanks, check boxes and bare Yes/No choices are fill-in fields."""
    reading = read_page(page(1, (line, "paragraph")), PROFILE)
    assert reading.fields == int(is_field)


def test_heading_block_with_one_label_is_a_heading() -> None:
    """A one-label line in a heading block ("DISCHARGE DIAGNOSES:") is a section heading, not a field."""
    reading = read_page(page(1, ("DISCHARGE DIAGNOSES:", "heading")), PROFILE)
    assert reading.fields == 0
    assert reading.scores.get("CLINICAL_NOTE", 0) > 0


def test_reading_is_shared_per_bundle() -> None:
    """V2 and V4 read a bundle once: the same reading object comes back."""
    bundle = make_bundle(lab(1))
    assert read_bundle(bundle, PROFILE) is read_bundle(bundle, PROFILE)


@pytest.mark.parametrize(
    ("line", "numbered"),
    [
        ("Page 2 of 5", (2, 5)),
        ("Consent form - Page 1 of 2", (1, 2)),
        ("2 | P a g e", (2, None)),
        ("Page 3 of | uADD | Version 16", (3, None)),
        ("Fax from 555-0100 Page 2/3", None),
        ("Sent: 03/04 10:12 Page 2 of 9", None),
    ],
)
def test_page_numbering_lines(line: str, numbered: tuple[int, int | None] | None) -> None:
    """A document's own page number is read; a fax machine's transmission counter is not."""
    marks = read_page(page(1, ("Body text.", "paragraph"), (line, "footer")), PROFILE).marks
    assert [(m.number, m.total) for m in marks] == ([numbered] if numbered else [])


@pytest.mark.parametrize(
    ("line", "header"),
    [
        ("TESTS RESULT FLAG UNITS REFERENCE INTERVAL LAB", True),
        ("Test Result Units Reference Range", True),
        ("Values outside the reference range are flagged H (high) or L (low) in the result column.", False),
    ],
)
def test_results_table_header(line: str, header: bool) -> None:
    """A row of column names is a results-table header; a sentence about reference ranges is not."""
    reading = read_page(page(1, (line, "table")), PROFILE)
    assert any(c.kind == "table" for c in reading.cues) is header


def test_capitals_line_in_a_paragraph_is_a_heading() -> None:
    """A typed report's "GROSS DESCRIPTION:" line, with its text under it, is a section heading."""
    reading = read_page(
        page(
            1,
            (
                "GROSS DESCRIPTION:\nReceived in formalin, two fragments.\nDIAGNOSIS:\nTubular adenoma.",
                "paragraph",
            ),
        ),
        PROFILE,
    )
    assert reading.fields == 0
    assert reading.scores.get("PATHOLOGY_REPORT", 0) >= 4


def test_capitals_labels_of_a_form_stay_fields() -> None:
    """An all-capitals form's labels, one under another, are still empty fields."""
    text = "PATIENT NAME:\nDATE OF BIRTH:\nMEMBER ID:\nPRESCRIBER NPI:\nSIGNATURE:"
    assert read_page(page(1, (text, "paragraph")), PROFILE).fields == 5


def test_lexicons_read_a_requisition_called_lab() -> None:
    """Without the page reader, the lexicons read a requisition's test names as an order, not a lab report."""
    data = classification(
        seg(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Complete blood count with differential")]})
    )
    result = run(V2Consistency(), data, make_bundle(requisition(1)), LEXICONS)
    assert "V2.CONTENT_CONTRADICTS_TYPE" in {i.code for i in result.issues}


@pytest.mark.parametrize(
    ("line", "orders"),
    [
        ("hereditary cancer genetic testing requisition", True),
        ("advanced imaging pre-certification request", True),
        ("consent for clinical exome sequencing (trio)", True),
        ("test requisition", True),
        ("requisition #: 0012345", False),  # a report's field, not a title
        ("requisition 0012345", False),
        ("laboratory report", False),
        ("requested by dr smith", False),  # a word inside another word is not the word
    ],
)
def test_order_title_lines(line: str, orders: bool) -> None:
    """A title-region line with no digit or colon that names an order, request or consent makes an order page."""
    from arbiter.contracts.profile import load_profile
    from arbiter.verifiers.content import _order_title

    words = load_profile().content.order_words
    assert _order_title(line, words) is orders


def test_a_remembered_snippet_reading_is_the_reading_made_afresh() -> None:
    """read_snippet's memo answers as reading the snippet afresh does, per `orders`, and a caller's change to
    an answer does not reach the next one."""
    from arbiter.verifiers.content import _read_snippet

    texts = [
        "Final diagnosis: invasive ductal carcinoma",
        "Re: comprehensive genomic profiling results",
        "Hemoglobin 13.2 g/dL 12.0-16.0",
        "Member ID: ABC123456",
        "x" * 600,  # longer than the memo keeps
    ]
    for text in texts:
        for orders in (False, True):
            first = read_snippet(text, PROFILE, orders=orders)
            assert first == _read_snippet(PROFILE.content, text, orders)
            first["PATHOLOGY"] = 99.0
            assert read_snippet(text, PROFILE, orders=orders) == _read_snippet(PROFILE.content, text, orders)
