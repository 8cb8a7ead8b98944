"""Deterministic synthetic benchmark data: multi-segment medical-record documents as specs, rendered as
in-memory DocumentBundles, correct classifications (optionally with one fixable defect) and PDFs.

Everything derives from (doc_id, seed), so a re-run produces identical data. Files go under
output/bench/data (git-ignored) and are never committed.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "output" / "bench" / "data"

TYPES = ["GENOMIC_REPORT", "LAB_REPORT", "PATHOLOGY_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE"]
TITLES = {
    "GENOMIC_REPORT": "Comprehensive Genomic Profiling Report",
    "LAB_REPORT": "Laboratory Report",
    "PATHOLOGY_REPORT": "Surgical Pathology Report",
    "CLINICAL_NOTE": "Progress Note",
    "ADMINISTRATIVE": "Fax Cover Sheet",
}
# Lines that only one document type would contain; {n}, {x}, {g} are filled per line.
CONTENT = {
    "GENOMIC_REPORT": [
        "Comprehensive genomic profiling identified {n} genomic alterations in the tumor sample.",
        "{g} mutation detected with a variant allele frequency of {x} percent in tumor tissue.",
        "Tumor mutational burden measured {n} mutations per megabase, considered intermediate.",
        "Microsatellite instability status was stable across all {n} loci examined by sequencing.",
        "A variant of uncertain significance was reported in {g} and requires clinical correlation.",
        "Next-generation sequencing of {n} cancer-related genes was performed by Foundation Medicine.",
        "Therapies with clinical benefit were listed for the {g} alteration found in this specimen.",
        "Copy number analysis showed amplification of {g} at an estimated {n} copies per cell.",
    ],
    "LAB_REPORT": [
        "Hemoglobin {x} g/dL with a reference range of 12.0 to 16.0 g/dL for adult patients.",
        "Complete blood count with differential was resulted by Quest Diagnostics this morning.",
        "Platelet count {n} thousand per microliter, within the laboratory reference interval.",
        "Glucose {n} mg/dL fasting; the comprehensive metabolic panel was otherwise unremarkable.",
        "Creatinine {x} mg/dL and sodium {n} mmol/L were reported on the basic metabolic panel.",
        "White blood cell count {x} thousand per microliter with a normal differential pattern.",
        "Potassium {x} mmol/L; specimen collected by venipuncture and received at room temperature.",
        "Lipid panel results show total cholesterol {n} mg/dL and triglycerides {n} mg/dL.",
    ],
    "PATHOLOGY_REPORT": [
        "Gross description: received in formalin is a tan core biopsy measuring {x} cm in length.",
        "Microscopic description shows invasive adenocarcinoma with moderate gland formation.",
        "Final diagnosis: infiltrating ductal carcinoma, histologic grade 2 of 3, tumor size {x} cm.",
        "Surgical margins are negative for carcinoma; the closest margin is {x} mm from the tumor.",
        "Immunohistochemistry for {g} was performed with appropriate positive and negative controls.",
        "The pathologist reviewed frozen section slides and agrees with the intraoperative diagnosis.",
        "Lymphovascular invasion is not identified in the {n} tissue blocks submitted for review.",
        "Specimen labeled left breast core biopsy was received with {n} cores in the container.",
    ],
    "CLINICAL_NOTE": [
        "Chief complaint: fatigue and intermittent abdominal pain for the past {n} weeks.",
        "History of present illness: the patient reports gradual weight loss of {n} pounds.",
        "Review of systems is negative for fever, chills, night sweats or shortness of breath.",
        "Physical exam reveals a well-appearing adult in no acute distress, abdomen soft.",
        "Assessment and plan: continue current chemotherapy and repeat imaging in {n} weeks.",
        "Past medical history includes hypertension, type 2 diabetes and prior appendectomy.",
        "Medications reviewed and reconciled; allergies to penicillin noted in the chart.",
        "Vital signs stable with blood pressure {n} over {n} and a heart rate of {n} beats.",
    ],
    "ADMINISTRATIVE": [
        "Insurance information on file was verified with the primary carrier on the visit date.",
        "Policy number and member ID were confirmed for the ordering physician's office.",
        "Billing information is attached for the claim submitted on behalf of the patient.",
        "Confidentiality notice: this message is intended only for the named intended recipient.",
        "Number of pages including cover: {n}; please call the sender if any pages are missing.",
        "Prior authorization was approved for the requested service through the next quarter.",
    ],
}
NEUTRAL = [
    "The patient was seen in the outpatient oncology clinic accompanied by a family member.",
    "Results were discussed with the patient, who expressed understanding of the findings.",
    "Records were received from the referring institution and reviewed in full.",
    "Further details are available in the electronic health record for this encounter.",
    "Follow-up was arranged with the treating team at the patient's convenience.",
    "This document was prepared for continuity of care between treating providers.",
]
GENES = ["KRAS", "BRAF", "TP53", "PIK3CA", "EGFR", "ERBB2", "ALK", "BRCA2"]
CORPUS_VERSION = 1  # bump when the generated content changes, so cached PDFs are rebuilt
SHARES = (0.7, 0.2, 0.1)  # dominant, secondary, mentioned share of each segment
PRESENCE = ("PRIMARY", "SECONDARY", "MENTIONED")


@dataclass(frozen=True)
class Line:
    kind: str  # header | title | body | footer
    text: str
    doc_type: str | None = None  # the type whose content this body line carries


@dataclass(frozen=True)
class SegmentSpec:
    start: int
    end: int
    types: tuple[str, str, str]  # dominant, secondary, mentioned


@dataclass(frozen=True)
class DocSpec:
    doc_id: str
    pages: list[list[Line]]
    segments: list[SegmentSpec]


def _fill(rng: random.Random, template: str) -> str:
    out = template
    while "{n}" in out:
        out = out.replace("{n}", str(rng.randint(2, 480)), 1)
    while "{x}" in out:
        out = out.replace("{x}", f"{rng.uniform(0.5, 40):.1f}", 1)
    return out.replace("{g}", rng.choice(GENES))


def _boundaries(rng: random.Random, n_pages: int, n_segments: int) -> list[tuple[int, int]]:
    n_segments = max(1, min(n_segments, n_pages))
    cuts = sorted(rng.sample(range(2, n_pages + 1), n_segments - 1))
    starts = [1, *cuts]
    ends = [c - 1 for c in cuts] + [n_pages]
    return list(zip(starts, ends, strict=True))


def make_doc(
    doc_id: str, *, pages: int = 10, segments: int = 3, lines_per_page: int = 40, seed: int = 0
) -> DocSpec:
    """One document: `segments` runs of pages, each dominated by one type with two others present."""
    rng = random.Random(f"{seed}:{doc_id}")
    specs: list[SegmentSpec] = []
    page_lines: list[list[Line]] = []
    clinic = rng.choice(["Riverside Oncology Associates", "Lakeview Medical Group", "St. Anne Cancer Center"])
    account = rng.randint(10_000_000, 99_999_999)
    for start, end in _boundaries(rng, pages, segments):
        dominant = rng.choice(TYPES)
        # A genomic segment never mentions lab content (its routine-lab vendor would be a V3 trap), and
        # an administrative type is only dominant (its title would otherwise trap a report segment).
        others = [t for t in TYPES if t not in (dominant, "ADMINISTRATIVE")]
        if dominant == "GENOMIC_REPORT":
            others.remove("LAB_REPORT")
        secondary, mentioned = rng.sample(others, 2)
        seg = SegmentSpec(start, end, (dominant, secondary, mentioned))
        specs.append(seg)
        for page in range(start, end + 1):
            lines = [Line("header", f"{clinic}    MRN: {account}    Account {account % 100_000:05d}")]
            if page == start:
                lines.append(Line("title", TITLES[dominant].upper()))
            body = lines_per_page - len(lines) - 1
            for i in range(body):
                # Secondary and mentioned content sit past the title region, on every page of the segment.
                if i in (6, 18):
                    doc_type: str | None = secondary
                elif i == 27:
                    doc_type = mentioned
                elif i % 5 == 4:
                    doc_type = None
                else:
                    doc_type = dominant
                template = rng.choice(CONTENT[doc_type] if doc_type else NEUTRAL)
                lines.append(Line("body", _fill(rng, template), doc_type))
            lines.append(Line("footer", f"Page {page} of {pages}"))
            page_lines.append(lines)
    return DocSpec(doc_id, page_lines, specs)


def page_text(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


# ---- in-memory DocumentBundle -------------------------------------------------------------------


def bundle_dict(spec: DocSpec) -> dict[str, Any]:
    """The DocumentBundle ingestion would produce: text, line boxes and typed paragraphs per page."""
    return {
        "doc_id": spec.doc_id,
        "file_path": f"bench/{spec.doc_id}.pdf",
        "file_sha256": hashlib.sha256(spec.doc_id.encode()).hexdigest(),
        "total_pages": len(spec.pages),
        "pages": [_page_dict(num, lines) for num, lines in enumerate(spec.pages, start=1)],
        "extractor": {"name": "bench-synthetic", "version": "1"},
        "processing_timestamp": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
    }


def _page_dict(num: int, lines: list[Line]) -> dict[str, Any]:
    text = page_text(lines)
    boxes: list[dict[str, Any]] = []
    paragraphs: list[dict[str, Any]] = []
    pos, y = 0, 752.0
    group: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        start, end = pos, pos + len(line.text)
        pos = end + 1
        y = 30.0 if line.kind == "footer" else y - 17.5
        right = min(552.0, 60.0 + 4.9 * len(line.text))
        boxes.append({"start": start, "end": end, "box": (60.0, y, round(right, 2), y + 9.5)})
        if line.kind == "body":
            group.append((start, end))
            if i % 4 != 0:  # body paragraphs of four lines
                continue
        if group:
            s, e = group[0][0], group[-1][1]
            paragraphs.append({"text": text[s:e], "block_type": "paragraph", "start": s, "end": e})
            group = []
        if line.kind != "body":
            kind = {"header": "header", "footer": "footer", "title": "heading"}[line.kind]
            paragraphs.append({"text": line.text, "block_type": kind, "start": start, "end": end})
    return {
        "page_num": num,
        "text": text,
        "paragraphs": paragraphs,
        "has_tables": False,
        "has_text_layer": True,
        "ocr_applied": False,
        "width": 612.0,
        "height": 792.0,
        "lines": boxes,
    }


# ---- the correct classification, and fixable defects ----------------------------------------------

DEFECTS = ("page_count", "evidence_page", "mixture_scale")


def classification_dict(spec: DocSpec, *, defect: str | None = None) -> dict[str, Any]:
    """The correct answer for `spec`; `defect` injects one fault that Arbiter can fix automatically."""
    segments: list[dict[str, Any]] = []
    weights = dict.fromkeys(TYPES, 0.0)
    for index, seg in enumerate(spec.segments, start=1):
        count = seg.end - seg.start + 1
        shares = dict(zip(seg.types, SHARES, strict=True))
        types = []
        for doc_type in TYPES:
            share = shares.get(doc_type, 0.0)
            weights[doc_type] += share * count
            if doc_type not in shares:
                types.append(
                    {
                        "document_type": doc_type,
                        "presence_level": "NO_EVIDENCE",
                        "share": 0.0,
                        "confidence": 0.9,
                        "evidence": [],
                    }
                )
                continue
            presence = PRESENCE[seg.types.index(doc_type)]
            evidence: list[dict[str, Any]] = []
            for page in range(seg.start, seg.end + 1):
                for line in spec.pages[page - 1]:
                    if line.doc_type == doc_type and len(evidence) < 2:
                        evidence.append(
                            {"page": page, "snippet": line.text, "anchor": " ".join(line.text.split()[:2])}
                        )
            types.append(
                {
                    "document_type": doc_type,
                    "presence_level": presence,
                    "share": share,
                    "confidence": 0.9,
                    "evidence": evidence,
                }
            )
        segments.append(
            {
                "segment_index": index,
                "start_page": seg.start,
                "end_page": seg.end,
                "segment_page_count": count,
                "dominant_type": seg.types[0],
                "classification_reasoning": f"{TITLES[seg.types[0]]} on pages {seg.start}-{seg.end}.",
                "types": types,
            }
        )
    total = sum(weights.values())
    mixture = [{"document_type": t, "share": round(weights[t] / total, 4)} for t in TYPES]
    dominant = max(TYPES, key=lambda t: (weights[t], -TYPES.index(t)))
    vendors = sorted(
        v
        for v in ("Foundation Medicine", "Quest Diagnostics")
        if any(v in line.text for page in spec.pages for line in page)
    )
    data = {
        "doc_id": spec.doc_id,
        "producer": {"name": "bench-synthetic", "version": "1"},
        "number_of_segments": len(segments),
        "dominant_type": dominant,
        "vendor_signals": vendors,
        "segments": segments,
        "document_mixture": mixture,
    }
    _inject(data, spec, defect)
    return data


def _inject(data: dict[str, Any], spec: DocSpec, defect: str | None) -> None:
    if defect is None:
        return
    if defect == "page_count":
        data["segments"][0]["segment_page_count"] += 1
    elif defect == "evidence_page":
        # Claim the snippet on another page of the same segment (only when the segment has one).
        for seg in data["segments"]:
            if seg["end_page"] > seg["start_page"]:
                ev = seg["types"][TYPES.index(seg["dominant_type"])]["evidence"][0]
                ev["page"] = seg["end_page"] if ev["page"] != seg["end_page"] else seg["start_page"]
                return
        data["segments"][0]["segment_page_count"] += 1
    elif defect == "mixture_scale":
        for entry in data["document_mixture"]:
            entry["share"] = round(entry["share"] * 0.9, 4)
    else:
        raise ValueError(f"unknown defect {defect!r}")


def defect_for(index: int, rate: float) -> str | None:
    """Deterministically, about `rate` of documents carry one fixable defect, cycling through DEFECTS."""
    if rate <= 0:
        return None
    period = max(1, round(1 / rate))
    return DEFECTS[(index // period) % len(DEFECTS)] if index % period == period - 1 else None


def json_pair(spec: DocSpec, defect: str | None = None) -> tuple[str, str]:
    """(bundle JSON, classification JSON) as a producer would hand them over."""
    return json.dumps(bundle_dict(spec)), json.dumps(classification_dict(spec, defect=defect), indent=2)


# ---- PDFs ------------------------------------------------------------------------------------------


def render_pdf(spec: DocSpec) -> bytes:
    """The document as a text PDF (embedded TrueType font, like most real producers), identical each run."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    font, bold = _fonts()
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=letter, invariant=1)
    for lines in spec.pages:
        y = 752.0
        for line in lines:
            if line.kind == "footer":
                pdf.setFont(font, 8)
                pdf.drawString(280, 30, line.text)
                continue
            y -= 17.5
            pdf.setFont(bold if line.kind == "title" else font, 13 if line.kind == "title" else 9.5)
            pdf.drawString(60, y, line.text)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def _fonts() -> tuple[str, str]:
    import reportlab
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    names = ("BenchVera", "BenchVeraBold")
    if names[0] not in pdfmetrics.getRegisteredFontNames():
        fonts = Path(reportlab.__file__).parent / "fonts"
        pdfmetrics.registerFont(TTFont(names[0], str(fonts / "Vera.ttf")))
        pdfmetrics.registerFont(TTFont(names[1], str(fonts / "VeraBd.ttf")))
    return names


def write_pdfs(
    directory: Path,
    count: int,
    *,
    pages: int | tuple[int, int] = 10,
    segments: int = 3,
    prefix: str = "doc",
    seed: int = 0,
) -> list[Path]:
    """`count` distinct PDFs in `directory`, reused when already there (the content is deterministic)."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / ".params.json"
    params = json.dumps({"pages": pages, "segments": segments, "seed": seed, "version": CORPUS_VERSION})
    if not stamp.exists() or stamp.read_text() != params:
        for old in directory.glob(f"{prefix}-*.pdf"):
            old.unlink()
        stamp.write_text(params)
    paths = []
    for i in range(count):
        path = directory / f"{prefix}-{i:05d}.pdf"
        paths.append(path)
        if path.exists() and path.stat().st_size > 0:
            continue
        n_pages = pages if isinstance(pages, int) else random.Random(f"{seed}:pages:{i}").randint(*pages)
        spec = make_doc(path.stem, pages=n_pages, segments=min(segments, n_pages), seed=seed)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(render_pdf(spec))
        tmp.replace(path)
    return paths
