"""PDF builders and worker targets for the ingestion tests (targets must be importable by worker processes)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import reportlab.rl_config
from PIL import Image, ImageDraw
from reportlab.lib.pagesizes import letter
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from arbiter.ingest import IngestResult, ingest_pdf

reportlab.rl_config.invariant = 1

WIDTH, HEIGHT = letter

PARAGRAPH_LINES = (
    "The patient was admitted with chest pain and was observed",
    "overnight. Troponin levels were normal on two draws.",
    "She was discharged home in stable condition.",
)
SECOND_PARAGRAPH = ("Follow-up with cardiology was arranged for next week.",)


def draw_clinical_page(c: canvas.Canvas, page_num: int, total: int) -> None:
    """A page with a running header and footer, a heading, paragraphs, a table and a list."""
    c.setFont("Helvetica", 9)
    c.drawString(72, HEIGHT - 30, f"General Hospital   Page {page_num} of {total}")
    c.setFont("Helvetica-Bold", 18)
    c.drawString(72, HEIGHT - 150, f"Discharge Summary {page_num}")
    c.setFont("Helvetica", 11)
    y = HEIGHT - 180
    for line in PARAGRAPH_LINES:
        c.drawString(72, y, line)
        y -= 14
    y -= 24
    for line in SECOND_PARAGRAPH:
        c.drawString(72, y, line)
        y -= 14
    y -= 24
    c.drawString(72, y, "LABORATORY RESULTS")
    y -= 24
    for row in (("Test", "Result", "Units"), ("Sodium", "140", "mmol/L"), ("Potassium", "4.1", "mmol/L")):
        for x, cell in zip((72, 250, 400), row, strict=True):
            c.drawString(x, y, cell)
        y -= 14
    y -= 24
    for item in ("• Aspirin 81 mg daily", "• Atorvastatin 40 mg nightly"):
        c.drawString(72, y, item)
        y -= 14
    c.setFont("Helvetica", 8)
    c.drawString(72, 30, "Confidential patient information")


def make_clinical_pdf(path: Path, pages: int = 1, **canvas_kwargs: Any) -> Path:
    """A text PDF of `pages` clinical pages."""
    c = canvas.Canvas(str(path), pagesize=letter, **canvas_kwargs)
    for n in range(1, pages + 1):
        draw_clinical_page(c, n, pages)
        c.showPage()
    c.save()
    return path


def make_text_pdf(
    path: Path, pages: Sequence[Sequence[tuple[float, float, str]]], **canvas_kwargs: Any
) -> Path:
    """A PDF whose pages hold the given (x, y, text) strings in 11-point Helvetica."""
    c = canvas.Canvas(str(path), pagesize=letter, **canvas_kwargs)
    for strings in pages:
        c.setFont("Helvetica", 11)
        for x, y, text in strings:
            c.drawString(x, y, text)
        c.showPage()
    c.save()
    return path


def make_image_only_pdf(path: Path) -> Path:
    """One page holding only a picture of text, as a scanner makes."""
    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "Scanned lab report", fill="black")
    c = canvas.Canvas(str(path), pagesize=letter)
    c.drawImage(ImageReader(image), 72, 400, width=400, height=200)
    c.showPage()
    c.save()
    return path


def make_encrypted_pdf(path: Path, user_password: str, owner_password: str) -> Path:
    """A one-page PDF encrypted with these passwords (an empty user password opens without one)."""
    encryption = StandardEncryption(user_password, ownerPassword=owner_password, canPrint=0)
    return make_text_pdf(path, [[(72, 700, "Confidential results")]], encrypt=encryption)


def make_zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [] /Count 0 >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def behaving_target(path: Path, **kwargs: Any) -> IngestResult:
    """An ingest target that misbehaves on request, by file name: slow, crash, raise; else ingests."""
    name = Path(path).name
    if "slow" in name:
        time.sleep(60)
    if "crash" in name:
        os._exit(3)
    if "raise" in name:
        raise RuntimeError("boom")
    return ingest_pdf(path, **kwargs)
