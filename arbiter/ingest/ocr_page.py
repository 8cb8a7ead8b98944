"""A page drawn for OCR (`render_gray`): PDFium renders it straight into the memory of the binary PGM file
Tesseract reads, an anonymous in-memory file where the system has one; and whether it holds any ink worth
reading (`is_blank`)."""

from __future__ import annotations

import ctypes
import mmap
import os
from typing import Any

import numpy as np
import pypdfium2.raw as pdfium_c
from PIL import Image

from arbiter.errors import ExtractionError

# A page larger than MAX_PIXELS at the asked resolution (a poster, a drawing) is rendered smaller rather than
# exhausting memory.
MAX_PIXELS = 40_000_000
# Pixels darker than BLANK_LEVEL are ink. A rendered page with less ink than MIN_INK_SHARE of its pixels
# (about one short word; scanner dust on the blank back of a sheet is a tenth of that) has nothing
# worth reading: Tesseract is not run on it.
BLANK_LEVEL = 160
MIN_INK_SHARE = 0.0001


class OcrError(ExtractionError):
    """Tesseract failed on one page (timeout, crash, unreadable answer); the message names no content."""


class Rendered:
    """A page drawn for OCR: the image, its scale (pixels per point), the same pixels as an array (no copy) for
    counting ink, and the same memory again as a binary PGM file (a header before the pixels) that Tesseract
    reads: in an in-memory file where the system has one (`page_file`), else in this process's memory.
    `release` lets go of the pixels once Tesseract has the file: its memory goes when Tesseract has read it,
    rather than staying mapped in the worker, a second copy, while Tesseract reads the page."""

    __slots__ = ("image", "page_file", "pgm", "pixels", "scale")

    def __init__(
        self, image: Image.Image, scale: float, pixels: np.ndarray, pgm: memoryview, page_file: PageFile
    ) -> None:
        self.image = image
        self.scale = scale
        self.pixels = pixels
        self.pgm = pgm
        self.page_file = page_file

    def release(self) -> None:
        """Drop this process's hold on the page's memory (the mapping of the in-memory file): the image, the
        array and the PGM are gone from here on; the scale stays."""
        for name in ("image", "pixels", "pgm"):
            if hasattr(self, name):
                delattr(self, name)


class PageFile:
    """The descriptor of the anonymous in-memory file (Linux's memfd) a page is drawn into, or None: handed to
    one Tesseract run (`take`), else closed when the page is let go (a blank page is never read)."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd

    def take(self) -> int | None:
        fd, self._fd = self._fd, None
        return fd

    def __del__(self) -> None:
        fd = self.take()
        if fd is not None:
            os.close(fd)


def render_gray(page: Any, width: float, height: float, dpi: float, *, in_file: bool = True) -> Rendered:
    """The page as an 8-bit grayscale image; the caller holds PDFIUM_LOCK. The page is drawn as a viewer shows
    it (crop box, rotation, annotations), by PDFium straight into the memory of the PGM file Tesseract reads:
    a 300-dpi letter page is 8.4 MB, which was held two and three times over (PDFium's bitmap, its copy, the
    encoded file) while a worker OCRed a page. in_file=False: in this process's memory, not an in-memory file."""
    scale = dpi / 72.0
    if width * height * scale * scale > MAX_PIXELS:
        scale = (MAX_PIXELS / (width * height)) ** 0.5
    w, h = max(1, round(width * scale)), max(1, round(height * scale))
    header = f"P5\n{w} {h}\n255\n".encode("ascii")
    fd, memory = _page_memory(len(header) + w * h) if in_file else (None, bytearray(len(header) + w * h))
    page_file = PageFile(fd)
    memory[: len(header)] = header
    pixels = np.frombuffer(memory, dtype=np.uint8, count=w * h, offset=len(header)).reshape(h, w)
    bitmap = pdfium_c.FPDFBitmap_CreateEx(
        w, h, pdfium_c.FPDFBitmap_Gray, pixels.ctypes.data_as(ctypes.c_void_p), w
    )
    if not bitmap:
        raise OcrError("the page could not be rendered (no memory for the bitmap)")
    try:
        pdfium_c.FPDFBitmap_FillRect(bitmap, 0, 0, w, h, 0xFFFFFFFF)
        pdfium_c.FPDF_RenderPageBitmap(bitmap, page, 0, 0, w, h, 0, pdfium_c.FPDF_ANNOT)
    finally:
        pdfium_c.FPDFBitmap_Destroy(bitmap)  # the pixels are ours: PDFium frees nothing of them
    image = Image.frombuffer("L", (w, h), pixels, "raw", "L", 0, 1)
    return Rendered(image, scale, pixels, memoryview(memory), page_file)


def _page_memory(size: int) -> tuple[int | None, mmap.mmap | bytearray]:
    """`size` bytes to draw a page into: the shared mapping of a new in-memory file (memfd) that Tesseract can
    open by its /dev/fd path, or, where there is none (another system, no /proc), plain memory."""
    create = getattr(os, "memfd_create", None)
    if create is not None:
        try:
            fd = int(create("arbiter-ocr-page", getattr(os, "MFD_CLOEXEC", 0)))
        except OSError:
            fd = None
        if fd is not None:
            try:
                if os.path.exists(f"/dev/fd/{fd}"):
                    os.ftruncate(fd, size)
                    return fd, mmap.mmap(fd, size)
            except (OSError, ValueError):
                pass
            os.close(fd)
    return None, bytearray(size)


# Rows counted at a time by is_blank: a page with ink is known after its first band or two that hold any.
BLANK_BAND_ROWS = 256


def is_blank(pixels: np.ndarray) -> bool:
    """True when the 8-bit pixels hold (almost) no ink: less than MIN_INK_SHARE of them are darker than
    BLANK_LEVEL. Counted band by band, stopping once there is enough ink (a page with text is decided in a
    millisecond; PIL's histogram of a whole 300-dpi letter page took 25 ms)."""
    limit = MIN_INK_SHARE * pixels.size
    ink = 0
    for top in range(0, pixels.shape[0], BLANK_BAND_ROWS):
        ink += int(np.count_nonzero(pixels[top : top + BLANK_BAND_ROWS] < BLANK_LEVEL))
        if ink >= limit:
            return False
    return True
