"""OCR with the real Tesseract: the page shape it produces, boxes on the right words, highlights on the
page image, fuzzy V4 on OCR'd text, and every scanned fixture reaching its expected decision with OCR
and without it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from ocr_helpers import LAB_LINES, draw_page, image_pdf, ocr_bundle, text_only_bundle
from PIL import Image

from arbiter.contracts import BlockType, DocumentBundle, OcrStatus
from arbiter.contracts.profile import load_profile
from arbiter.contracts.schemas import load_subject
from arbiter.decide.governor import verify_with_retries
from arbiter.ingest import OcrConfig, ingest_pdf
from arbiter.ingest.ocr import probe
from arbiter.review.render import MarkKind, page_marks, render_page
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.textmatch import PageIndex
from arbiter.verifiers.v4_evidence import V4Evidence
from tests.conftest import FIXTURES

SCANNED: list[dict[str, Any]] = json.loads(
    (FIXTURES / "scanned" / "expected.json").read_text(encoding="utf-8")
)
PROFILE = load_profile()


def test_tesseract_is_installed() -> None:
    """The machine running the tests has Tesseract with English data (.ci/system-deps.sh installs it)."""
    found = probe("tesseract", "eng")
    assert found.engine is not None, found.problem


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DocumentBundle, list[Any]]:
    image, words = draw_page(LAB_LINES)
    pdf = image_pdf(tmp_path_factory.mktemp("scan") / "lab.pdf", [image])
    bundle = ingest_pdf(pdf, ocr=OcrConfig())
    assert isinstance(bundle, DocumentBundle), bundle
    return pdf, bundle, words


def test_ocr_page_has_the_bundle_shape(drawn: tuple[Path, DocumentBundle, list[Any]]) -> None:
    """An OCR'd page reads its words, in lines and paragraphs that slice page.text, marked as OCR'd."""
    _, bundle, _ = drawn
    page = bundle.pages[0]
    assert (page.has_text_layer, page.ocr_applied, page.ocr_status) == (False, True, OcrStatus.APPLIED)
    assert page.ocr_confidence is not None
    assert 50 < page.ocr_confidence <= 100
    assert page.text.splitlines()[0] == "LABORATORY REPORT"
    assert "Hemoglobin 10.4 g/dL low" in page.text
    assert (page.width, page.height) == (612.0, 792.0)
    for para in page.paragraphs:
        assert page.text[para.start : para.end] == para.text
    assert page.paragraphs[0].block_type is BlockType.HEADING
    for line in page.lines:
        assert page.text[line.start : line.end].strip()
        assert "\n" not in page.text[line.start : line.end]
        assert line.words
        left, bottom, right, top = line.box
        assert 0 <= left < right <= 612
        assert 0 <= bottom < top <= 792
        for word in line.words:
            assert line.start <= word.start < word.end <= line.end


def test_boxes_in_points_cover_the_drawn_words(drawn: tuple[Path, DocumentBundle, list[Any]]) -> None:
    """Each drawn word, found in the OCR'd text, has a box within 2 points of where it was drawn."""
    _, bundle, words = drawn
    index = PageIndex(bundle)
    for word in words:
        match = index.find(word.text, 1)
        assert match is not None, word.text
        (box,) = match.boxes
        assert box == pytest.approx(word.points(), abs=2.0), word.text


def test_ocr_evidence_is_highlighted_on_the_page_image(drawn: tuple[Path, DocumentBundle, list[Any]]) -> None:
    """An evidence snippet on an OCR'd page is drawn over its words, and not over the other lines."""
    pdf, bundle, words = drawn
    classification = {
        "segments": [{"types": [{"evidence": [{"page": 1, "snippet": "Hemoglobin 10.4 g/dL"}]}]}]
    }
    marks = page_marks(bundle, classification, [], 1)
    assert [m.kind for m in marks] == [MarkKind.EVIDENCE]
    plain = Image.open(io.BytesIO(render_page(pdf, 1, dpi=72))).convert("RGB")
    marked = Image.open(io.BytesIO(render_page(pdf, 1, marks, dpi=72))).convert("RGB")

    def centre(word: Any) -> tuple[int, int]:
        x0, _, x1, y1 = (v * 72 / 300 for v in word.box)
        return round((x0 + x1) / 2), round(y1 + 1)  # just below the ink: the tint, not a glyph

    by_text = {w.text: w for w in words}
    for inside in ("Hemoglobin", "10.4", "g/dL"):
        assert plain.getpixel(centre(by_text[inside])) != marked.getpixel(centre(by_text[inside])), inside
    for outside in ("Platelets", "REPORT", "low"):
        assert plain.getpixel(centre(by_text[outside])) == marked.getpixel(centre(by_text[outside])), outside


def test_fuzzy_match_on_an_ocr_page_verifies_with_its_score() -> None:
    """A snippet off by recognition errors verifies on the OCR'd page with a score under 100 (and a note);
    the same snippet on the digital original is not found."""
    bundle = ocr_bundle("scanned/pdfs/path-colon-03-scan.pdf")
    raw = json.loads(
        (FIXTURES / "scanned/classifications/path-colon-03-scan.json").read_text(encoding="utf-8")
    )
    snippets = [
        e["snippet"] for s in raw["segments"] for t in s["types"] for e in t["evidence"] if e["page"] == 1
    ]
    snippet = max(snippets, key=len)
    assert len(snippet) >= 40
    garbled = snippet.replace("e", "c", 2)  # two recognition errors
    assert garbled != snippet
    raw["segments"][0]["types"][0]["evidence"] = [{"page": 1, "snippet": garbled}]
    result = V4Evidence().verify(load_subject(json.dumps(raw)), bundle, PROFILE, VerifyContext())
    (check,) = [c for c in result.evidence_checks if c.path == "/segments/0/types/0/evidence/0"]
    assert check.status == "verified"
    assert check.found is not None
    assert PROFILE.tolerances.fuzzy_match_threshold <= check.found.score < 100
    assert check.found.boxes
    assert any("matched the recognised text approximately" in note for note in result.notes)
    digital = text_only_bundle("pdfs/path-colon-03.pdf").model_copy(update={"doc_id": bundle.doc_id})
    assert PageIndex(digital).find(garbled, 1) is None


@pytest.mark.parametrize("case", SCANNED, ids=[c["case"] for c in SCANNED])
def test_scanned_case_with_ocr_matches_its_digital_original(case: dict[str, Any]) -> None:
    """With OCR, each scanned fixture reaches the decision its digital original reaches."""
    expected = case["with_ocr"]
    bundle = ocr_bundle(case["pdf"])
    assert all(p.ocr_applied for p in bundle.pages)
    outcome = verify_with_retries((FIXTURES / case["classification"]).read_bytes(), bundle, PROFILE)
    codes = {i.code for r in outcome.attempts[0].verifier_results for i in r.issues}
    assert set(expected["expected_codes"]) <= codes, (case["note"], sorted(codes))
    assert outcome.final_decision == expected["expected_decision"], (outcome.escalation_reason, sorted(codes))
    assert outcome.escalation_reason == expected["expected_reason"]
    assert outcome.accepted_after_fixes == expected["accepted_after_fixes"]


@pytest.mark.parametrize("case", SCANNED, ids=[c["case"] for c in SCANNED])
def test_scanned_case_without_ocr_escalates_and_says_why(case: dict[str, Any]) -> None:
    """With OCR off, every scanned fixture escalates on V4.PAGE_NO_TEXT_LAYER, naming OCR as the reason."""
    expected = case["without_ocr"]
    bundle = text_only_bundle(case["pdf"])
    outcome = verify_with_retries((FIXTURES / case["classification"]).read_bytes(), bundle, PROFILE)
    issues = [i for i in outcome.attempts[0].verifier_results[3].issues if i.code == "V4.PAGE_NO_TEXT_LAYER"]
    assert outcome.final_decision == expected["expected_decision"]
    assert outcome.escalation_reason == expected["expected_reason"]
    assert issues
    assert all("OCR is turned off" in i.message for i in issues)


def test_correct_scanned_packet_is_accepted_with_every_snippet_highlighted() -> None:
    """The multi-segment scanned packet is accepted, and each evidence snippet has boxes on its page image."""
    case = next(c for c in SCANNED if c["case"] == "packet-06-scan__correct")
    bundle = ocr_bundle(case["pdf"])
    raw = json.loads((FIXTURES / case["classification"]).read_text(encoding="utf-8"))
    outcome = verify_with_retries(json.dumps(raw).encode(), bundle, PROFILE)
    assert outcome.final_decision == "AUTO_ACCEPT"
    (v4,) = [r for r in outcome.attempts[-1].verifier_results if r.verifier == "V4"]
    assert v4.evidence_checks
    for check in v4.evidence_checks:
        assert check.status == "verified"
        assert check.found is not None
        assert check.found.boxes
    for page in {c.claimed_page for c in v4.evidence_checks}:
        marks = page_marks(bundle, raw, [], page)
        assert marks
        assert all(m.kind is MarkKind.EVIDENCE for m in marks)


@pytest.mark.parametrize("ocr", [True, False], ids=["ocr", "no-ocr"])
def test_evidence_on_a_blank_scanned_back_is_unverifiable_either_way(ocr: bool) -> None:
    """packet-07's blank back page has nothing to read even for OCR: the main fixture case holds both ways."""
    case = next(
        c
        for c in json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
        if c["case"] == "packet-07-scanned__evidence-on-scanned-page"
    )
    bundle = ocr_bundle(case["pdf"]) if ocr else text_only_bundle(case["pdf"])
    statuses = [p.ocr_status for p in bundle.pages]
    expected_addendum = OcrStatus.APPLIED if ocr else OcrStatus.DISABLED
    assert statuses[3:] == [expected_addendum, OcrStatus.NO_TEXT if ocr else OcrStatus.DISABLED]
    outcome = verify_with_retries((FIXTURES / case["classification"]).read_bytes(), bundle, PROFILE)
    assert outcome.final_decision == case["expected_decision"]
    assert outcome.escalation_reason == case["expected_reason"]
    (issue,) = [i for i in outcome.final_issues if i.code == "V4.PAGE_NO_TEXT_LAYER"]
    assert ("OCR found no readable text" in issue.message) is ocr
