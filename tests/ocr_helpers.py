"""Shared pieces of the OCR tests: scanned PDFs drawn with known word positions, a scripted stand-in for
the Tesseract program (for failures and timeouts), and OCR'd fixture bundles made once per session."""

from __future__ import annotations

import io
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import reportlab
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from arbiter.contracts import DocumentBundle
from arbiter.ingest import OcrConfig, ingest_pdf
from tests.conftest import FIXTURES

FONT = Path(reportlab.__file__).parent / "fonts" / "Vera.ttf"
DPI = 300
WIDTH_PX, HEIGHT_PX = round(8.5 * DPI), round(11 * DPI)


@dataclass(frozen=True)
class Drawn:
    """A word drawn on a scanned page: its text and ink box in pixels (x0, y0, x1, y1) from top-left."""

    text: str
    box: tuple[int, int, int, int]

    def points(self, page_height: float = 792.0) -> tuple[float, float, float, float]:
        """The ink box in PDF points from the bottom-left, as ingestion reports boxes."""
        x0, y0, x1, y1 = self.box
        scale = 72 / DPI
        return (x0 * scale, page_height - y1 * scale, x1 * scale, page_height - y0 * scale)


def draw_page(lines: list[tuple[int, int, str]], size: int = 42) -> tuple[Image.Image, list[Drawn]]:
    """A 300 dpi letter page with each (x, y, line) drawn in Vera; the ink box of every word."""
    image = Image.new("L", (WIDTH_PX, HEIGHT_PX), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), size)
    drawn: list[Drawn] = []
    for x, y, line in lines:
        draw.text((x, y), line, fill=0, font=font)
        cursor = x
        for word in line.split(" "):
            box = draw.textbbox((cursor, y), word, font=font)
            drawn.append(Drawn(word, (box[0], box[1], box[2], box[3])))
            cursor += round(draw.textlength(word + " ", font=font))
    return image, drawn


def image_pdf(path: Path, images: list[Image.Image]) -> Path:
    """A PDF whose letter pages are these images only (no text layer), as a scanner writes one."""
    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    for image in images:
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        buf.seek(0)
        c.drawImage(ImageReader(buf), 0, 0, width=letter[0], height=letter[1])
        c.showPage()
    c.save()
    return path


LAB_LINES = [
    (300, 300, "LABORATORY REPORT"),
    (300, 420, "Hemoglobin 10.4 g/dL low"),
    (300, 500, "Platelets 232 normal"),
    (300, 580, "Reviewed by the pathologist"),
]


def fake_tesseract(tmp: Path, tsv_rows: list[str], *, sleep: float = 0.0, status: int = 0) -> str:
    """A program answering like Tesseract: a version, an 'eng' language, then the given TSV word rows
    (after `sleep` seconds, exiting with `status`). Returns its path."""
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    body = "\\n".join([header, *tsv_rows])
    script = tmp / f"fake-tesseract-{abs(hash((tuple(tsv_rows), sleep, status)))}"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        '  --version) echo "tesseract 9.9.9"; exit 0;;\n'
        "  --list-langs) printf 'List of available languages in \"/x\" (1):\\neng\\n'; exit 0;;\n"
        "esac\n"
        "cat > /dev/null\n"
        f"sleep {sleep}\n"
        f"printf '{body}\\n'\n"
        f"exit {status}\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def word_row(
    text: str, left: int, top: int, conf: float = 95.0, line: tuple[int, int, int] = (1, 1, 1)
) -> str:
    """One TSV word row (level 5) as Tesseract prints it."""
    width, height = 30 * len(text), 40
    return f"5\t1\t{line[0]}\t{line[1]}\t{line[2]}\t1\t{left}\t{top}\t{width}\t{height}\t{conf}\t{text}"


@cache
def ocr_bundle(pdf: str) -> DocumentBundle:
    """A fixture PDF (path relative to fixtures/) ingested with OCR on, once per test session."""
    result = ingest_pdf(FIXTURES / pdf, ocr=OcrConfig())
    assert isinstance(result, DocumentBundle), result
    return result


@cache
def text_only_bundle(pdf: str) -> DocumentBundle:
    """A fixture PDF ingested with OCR off."""
    result = ingest_pdf(FIXTURES / pdf, ocr=OcrConfig(enabled=False))
    assert isinstance(result, DocumentBundle), result
    return result
